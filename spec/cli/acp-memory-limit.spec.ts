/**
 * `warden acp --max-memory` end to end (issue 32): warden launched as an editor launches it,
 * the bare `claude` on the PATH being the fake (spec/support/fake-claude.mjs) made to leak
 * memory from its first prompt on, as Claude Code does. Over the hard limit, the agent's
 * tree is killed mid-turn: the prompt fails as in a crash, with exit reason memory_exceeded,
 * and the CLI is restarted (resumed). Over the soft limit, the turn ends normally and the CLI
 * is recycled after it. A tool in its own session (`setsid`) dies with the tree.
 * The bar "killed before the limit + one poll interval" is asserted on the port's samples in
 * spec/port/memory-limit.spec.ts; here the limits' wiring, the editor's view and the journal.
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive, waitUntil } from '../support/processes.js';
import { binDirectory, initializedEditor, stopAll, type SdkEditor } from '../support/path-editor.js';
import { cgroupSupport } from '../../src/port/agent-cgroup.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const mib = 1024 * 1024;

/** Lines of a log file the fake appends to (empty when not written yet). */
function lines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

const prompt = (editor: SdkEditor, sessionId: string, text: string) =>
  editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

const noticesOf = (editor: SdkEditor, sessionId: string) =>
  editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'notice').map((entry) => entry.update as unknown as { severity: string; title: string; description?: string });

describe('warden acp: memory limits on the agent process tree', function () {
  this.timeout(120_000);
  let dir: string;
  let bin: string;
  let argvLog: string;
  let toolLog: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-memory-')));
    bin = binDirectory(dir, { claude: fakeClaude });
    argvLog = join(dir, 'argv.log');
    toolLog = join(dir, 'tools.log');
  });

  afterEach(async () => {
    await stopAll();
    const left = lines(toolLog).map(Number).filter((pid) => isAlive(pid));
    for (const pid of left) process.kill(pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    expect(left, 'setsid tools left running').to.deep.equal([]);
  });

  it('a CLI leaking 50 MB/s mid-turn under --max-memory 300 --max-memory-hard 300 (--on-crash fail): its tree is killed (a setsid tool too), the prompt fails agent_crashed with exit memory_exceeded, the CLI is restarted with --resume', async () => {
    // The failure itself is what is checked: with the default (continue) the restarted CLI would leak again.
    const editor = await initializedEditor(bin, [
      '--agent', 'claude', '--store', ':memory:', '--on-crash', 'fail', '--max-memory', '300', '--max-memory-hard', '300', '--memory-poll', '0.1',
      '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_STALL_MS=600000', '--env', 'FAKE_CLAUDE_LEAK_MB_PER_S=50',
      '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', `FAKE_CLAUDE_SETSID_LOG=${toolLog}`,
    ], dir, { session: { notices: {} } });
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const failure = await prompt(editor, sessionId, 'hello').then(() => undefined, (error: unknown) => error as { data?: Record<string, unknown> });
    expect(failure, 'the prompt should have failed').to.not.equal(undefined);
    expect(failure?.data?.reason).to.equal('agent_crashed');
    const exit = failure?.data?.exit as { kind: string; limit: string; limitBytes: number; rssBytes: number; method: string };
    expect(exit).to.include({ kind: 'memory_exceeded', limit: 'hard', limitBytes: 300 * mib, method: 'proc' });
    expect(exit.rssBytes).to.be.at.least(300 * mib);
    // The tool in its own session died with the tree.
    const tools = lines(toolLog).map(Number);
    expect(tools).to.have.length(1);
    await waitUntil(() => !isAlive(tools[0]), 'the setsid tool to be gone');
    // Restarted, resuming the conversation; the editor was told why.
    await waitUntil(() => lines(argvLog).length === 2, 'the CLI restarted', 30_000);
    expect((JSON.parse(lines(argvLog)[1] as string) as { args: string[] }).args.some((arg) => arg.startsWith('--resume'))).to.equal(true);
    await waitUntil(() => noticesOf(editor, sessionId).some((notice) => notice.title === 'claude restarted'), 'the restart notice');
    const restarted = noticesOf(editor, sessionId).find((notice) => notice.title === 'claude restarted');
    expect(restarted?.description).to.match(/over its hard limit of 300 MiB, and was killed/u);
    expect(await editor.close()).to.equal(0);
  });

  it('a CLI leaking 50 MB/s mid-turn under --max-memory 300 --max-memory-hard 300 (--memory-poll 0.1), default --on-crash continue: killed within one poll of 300 MiB, the turn continued by the resumed CLI to end_turn', async () => {
    const editor = await initializedEditor(bin, [
      '--agent', 'claude', '--store', ':memory:', '--max-memory', '300', '--max-memory-hard', '300', '--memory-poll', '0.1',
      '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_STALL_MS=600000', '--env', 'FAKE_CLAUDE_STALL_FIRST=1', '--env', 'FAKE_CLAUDE_LEAK_MB_PER_S=50',
      '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`,
    ], dir, { session: { notices: {} } });
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    expect((await prompt(editor, sessionId, 'hello')).stopReason).to.equal('end_turn');
    expect(lines(argvLog)).to.have.length(2);
    const restarted = noticesOf(editor, sessionId).find((notice) => /over its hard limit of 300 MiB/u.test(notice.description ?? ''));
    const used = Number(/used (\d+) MiB/u.exec(restarted?.description ?? '')?.[1]);
    // One poll (0.1 s) of a 50 MB/s leak is 5 MB; the fake grows in steps of 5 MiB.
    expect(used, restarted?.description).to.be.within(300, 310);
    expect(noticesOf(editor, sessionId).some((notice) => notice.title === 'Answer restarted'), 'the continuation notice').to.equal(true);
    expect(await editor.close()).to.equal(0);
  });

  it('over --max-memory (soft) during a turn: the turn ends end_turn in the same CLI, then the CLI is recycled (stdin closed, resumed) with exit memory_exceeded soft', async () => {
    const editor = await initializedEditor(bin, [
      '--agent', 'claude', '--store', ':memory:', '--max-memory', '100', '--max-memory-hard', '4096', '--memory-poll', '0.1',
      '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_DELAY_MS=200', '--env', 'FAKE_CLAUDE_LEAK_MB_PER_S=100', '--env', 'FAKE_CLAUDE_LEAK_UP_TO_MB=150',
      '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', `FAKE_CLAUDE_SETSID_LOG=${toolLog}`,
    ], dir, { session: { notices: {} } });
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const result = await prompt(editor, sessionId, 'hello');
    expect(result.stopReason).to.equal('end_turn');
    await waitUntil(() => noticesOf(editor, sessionId).some((notice) => notice.title === 'claude restarted'), 'the recycle notice', 30_000);
    const recycled = noticesOf(editor, sessionId).find((notice) => notice.title === 'claude restarted');
    expect(recycled?.description).to.match(/over its soft limit of 100 MiB, and was recycled between turns/u);
    await waitUntil(() => lines(argvLog).length === 2, 'the CLI started again', 30_000);
    expect((JSON.parse(lines(argvLog)[1] as string) as { args: string[] }).args.some((arg) => arg.startsWith('--resume'))).to.equal(true);
    // The recycle killed the tree: the tool the first CLI left in its own session is gone.
    const tools = lines(toolLog).map(Number);
    await waitUntil(() => !isAlive(tools[0]), 'the setsid tool to be gone');
    // The recycled CLI takes the next prompt.
    await waitUntil(() => noticesOf(editor, sessionId).some((notice) => notice.title === 'claude is back'), 'the recovery notice', 30_000);
    expect(await editor.close()).to.equal(0);
  });

  it('a CLI that leaks in every life, recycled after each of 4 turns under --restart-intensity 1/60: the recycles of a CLI that served a turn are not counted; every prompt ends end_turn, the session never fails', async () => {
    const editor = await initializedEditor(bin, [
      '--agent', 'claude', '--store', ':memory:', '--max-memory', '100', '--max-memory-hard', '4096', '--memory-poll', '0.1', '--restart-intensity', '1/60',
      '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_LOOP=1', '--env', 'FAKE_CLAUDE_DELAY_MS=200', '--env', 'FAKE_CLAUDE_LEAK_MB_PER_S=100', '--env', 'FAKE_CLAUDE_LEAK_UP_TO_MB=150', '--env', 'FAKE_CLAUDE_LEAK_ALWAYS=1',
      '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`,
    ], dir, { session: { notices: {} } });
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    for (let turn = 1; turn <= 4; turn++) {
      expect((await prompt(editor, sessionId, 'hello')).stopReason, `turn ${turn}`).to.equal('end_turn');
      await waitUntil(() => lines(argvLog).length === turn + 1, `the CLI recycled after turn ${turn}`, 30_000);
    }
    const recycles = noticesOf(editor, sessionId).filter((notice) => /over its soft limit of 100 MiB, and was recycled between turns/u.test(notice.description ?? ''));
    expect(recycles).to.have.length.at.least(4);
    expect(noticesOf(editor, sessionId).some((notice) => /failed/iu.test(notice.title)), JSON.stringify(noticesOf(editor, sessionId))).to.equal(false);
    expect(await editor.close()).to.equal(0);
  });
});

describe('warden acp --max-cpu: the CPU limit of the agent process tree', function () {
  this.timeout(60_000);
  let dir: string;

  before(function () {
    const { cpuV1, missingCpu } = cgroupSupport();
    if (!cpuV1) {
      console.log(`      skipped: ${missingCpu}`);
      this.skip();
    }
  });
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-cpu-')));
  });
  afterEach(async () => {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('--max-cpu 20: the agent CLI runs in a cpu cgroup of its own with a quota of 20 ms per 100 ms, and a prompt works', async () => {
    const argvLog = join(dir, 'argv.log');
    const bin = binDirectory(dir, { claude: fakeClaude });
    const editor = await initializedEditor(bin, ['--agent', 'claude', '--store', ':memory:', '--max-cpu', '20', '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    expect((await prompt(editor, sessionId, 'hello')).stopReason).to.equal('end_turn');
    const { pid } = JSON.parse(lines(argvLog)[0] as string) as { pid: number };
    const cpuLine = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((line) => line.split(':')[1]?.split(',').includes('cpu')) ?? '';
    const path = cpuLine.split(':')[2] ?? '';
    expect(path, 'the CLI\'s cpu cgroup').to.match(/\/acp-warden-\d+-\d+$/u);
    const dirOf = join(cgroupSupport().cpuV1 as string, path.slice(path.lastIndexOf('/')));
    expect(readFileSync(join(dirOf, 'cpu.cfs_quota_us'), 'utf8').trim()).to.equal('20000');
    expect(readFileSync(join(dirOf, 'cpu.cfs_period_us'), 'utf8').trim()).to.equal('100000');
    expect(await editor.close()).to.equal(0);
  });
});
