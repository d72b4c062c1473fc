/**
 * The turn-aware hang watchdog of `warden acp`, end to end: warden launched as an editor
 * launches it (the bare `warden` through PATH), with the bare `claude` and `codex` on the
 * PATH being the fakes that replay recorded transcripts. A tool that runs long and silently
 * is no hang; silence while the agent owes output (no tool running) is. The limits are
 * scaled down with `--hang-after 1 --tool-hang-after 60` so that a test takes seconds; the
 * defaults themselves (120 s, 30 min, on) are checked on the parsed command line.
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AdapterAgentOptions } from '../../src/adapters/adapter-agent.js';
import { agentFor } from '../../src/adapters/agent-factory.js';
import { agentOptionsOf, acpUsage, parseAcpArgs, type AcpCommandOptions } from '../../src/cli/acp.js';
import { waitUntil } from '../support/processes.js';
import { binDirectory, initializedEditor, stopAll, type SdkEditor } from '../support/path-editor.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));
const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

/** A tool run four times as long as `--hang-after`: on main's watchdog, killed as hung. */
const toolMs = 4000;
const scaled = ['--hang-after', '1', '--tool-hang-after', '60'];

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error);
  expect(outcome, 'the request should have failed').to.not.equal(undefined);
  return outcome as { code: number; message: string; data?: Record<string, unknown> };
}

/** How many times the fake CLI was started (it logs one line per start). */
function starts(log: string): number {
  try {
    return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

const prompt = (editor: SdkEditor, sessionId: string, text: string) =>
  editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

describe('warden acp: a watchdog that knows the turn', function () {
  this.timeout(120_000);
  let dir: string;
  let bin: string;
  let argvLog: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-watchdog-')));
    bin = binDirectory(dir, { claude: fakeClaude, codex: fakeCodex });
    argvLog = join(dir, 'argv.log');
  });

  afterEach(async () => {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Claude Code: a Bash tool silent for 4x --hang-after is not killed; the turn ends normally in one CLI', async () => {
    const editor = await initializedEditor(bin, ['--agent', 'claude', '--store', ':memory:', ...scaled, '--env', 'FAKE_CLAUDE_FIXTURE=tool-bash-readonly', '--env', `FAKE_CLAUDE_TOOL_MS=${toolMs}`, '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const result = await prompt(editor, sessionId, 'TOOL:bash please');
    expect(result.stopReason).to.equal('end_turn');
    const statuses = editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'tool_call_update').map((entry) => entry.update.status);
    expect(statuses).to.include('completed');
    expect(starts(argvLog), 'CLI starts').to.equal(1);
    expect(await editor.close()).to.equal(0);
  });

  it('Claude Code: silent while it owes output (no tool running) for --hang-after: killed as hung, the prompt settles, and the CLI is restarted', async () => {
    const editor = await initializedEditor(bin, ['--agent', 'claude', '--on-crash', 'fail', '--store', ':memory:', ...scaled, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_STALL_MS=600000', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const hung = await rejection(prompt(editor, sessionId, 'hello'));
    expect(hung.data?.reason).to.equal('agent_crashed');
    expect(hung.data?.exit).to.deep.equal({ kind: 'hung', idleMs: 1000 });
    await waitUntil(() => starts(argvLog) === 2, 'the CLI restarted after the hang', 20_000);
  });

  it('Codex: an approved command silent for 4x --hang-after is not killed; the turn ends normally in one app-server', async () => {
    const editor = await initializedEditor(bin, ['--agent', 'codex', '--store', ':memory:', ...scaled, '--env', 'FAKE_CODEX_FIXTURE=tool-approval', '--env', `FAKE_CODEX_TOOL_MS=${toolMs}`, '--env', `FAKE_CODEX_ARGV_LOG=${argvLog}`], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const result = await prompt(editor, sessionId, 'run the command');
    expect(result.stopReason).to.equal('end_turn');
    const statuses = editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'tool_call_update').map((entry) => entry.update.status);
    expect(statuses).to.include('completed');
    expect(starts(argvLog), 'app-server starts').to.equal(1);
    expect(await editor.close()).to.equal(0);
  });

  it('Codex: silent before turn/completed (no tool running) for --hang-after: killed as hung and the prompt settles', async () => {
    const editor = await initializedEditor(bin, ['--agent', 'codex', '--on-crash', 'fail', '--store', ':memory:', ...scaled, '--env', 'FAKE_CODEX_FIXTURE=hello', '--env', 'FAKE_CODEX_STALL_MS=600000', '--env', `FAKE_CODEX_ARGV_LOG=${argvLog}`], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const hung = await rejection(prompt(editor, sessionId, 'hello'));
    expect(hung.data?.reason).to.equal('agent_crashed');
    expect(hung.data?.exit).to.deep.equal({ kind: 'hung', idleMs: 1000 });
  });

  it('a native ACP agent (acp:sdk-agent on PATH): a tool call in_progress silent for 4x --hang-after is not killed; the turn ends in one process', async () => {
    bin = binDirectory(dir, { claude: fakeClaude, codex: fakeCodex, 'sdk-agent': sdkAgent });
    const editor = await initializedEditor(bin, ['--agent', 'acp:sdk-agent', '--store', ':memory:', ...scaled], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const result = await prompt(editor, sessionId, `tool ${toolMs}`);
    expect(result.stopReason).to.equal('end_turn');
    const statuses = editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'tool_call_update').map((entry) => entry.update.status);
    expect(statuses).to.deep.equal(['completed']);
    // Nothing restarted it: no notice of a restart reached the editor.
    expect(editor.updates.filter((entry) => (entry.update as { sessionUpdate: string }).sessionUpdate === 'notice')).to.deep.equal([]);
    expect(await editor.close()).to.equal(0);
  });

  it('a native ACP agent (acp:sdk-agent on PATH): silent while it owes the answer for --hang-after: killed as hung and the prompt settles', async () => {
    bin = binDirectory(dir, { claude: fakeClaude, codex: fakeCodex, 'sdk-agent': sdkAgent });
    const editor = await initializedEditor(bin, ['--agent', 'acp:sdk-agent', '--store', ':memory:', ...scaled], dir);
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const hung = await rejection(prompt(editor, sessionId, 'stall 600000'));
    expect(hung.data?.reason).to.equal('agent_crashed');
    // Flat, as the CLI adapters' (above): data.exit is the port's exit reason, the hang.
    expect(hung.data?.exit).to.deep.equal({ kind: 'hung', idleMs: 1000 });
    expect(hung.data).to.have.property('stderrTail').that.is.a('string');
  });
});

describe('warden acp: the watchdog is on by default', () => {
  const parsed = (args: string[]) => parseAcpArgs(['--agent', 'claude', ...args]) as AcpCommandOptions;

  it('without flags: 120 s while the agent owes output, 30 min while a tool runs', () => {
    expect(parsed([])).to.deep.include({ hangAfterMs: 120_000, toolHangAfterMs: 1_800_000 });
  });

  it('--hang-after and --tool-hang-after set them; --hang-after 0 turns the watchdog off', () => {
    expect(parsed(['--hang-after', '30', '--tool-hang-after', '600'])).to.deep.include({ hangAfterMs: 30_000, toolHangAfterMs: 600_000 });
    expect(parsed(['--hang-after', '0'])).to.deep.include({ hangAfterMs: 0 });
  });

  it('a bad value names the flag and the fix', () => {
    expect((parseAcpArgs(['--agent', 'claude', '--hang-after', 'soon']) as { error: string }).error).to.contain('--hang-after expects a number of seconds (0 turns the watchdog off), got "soon"');
    expect((parseAcpArgs(['--agent', 'claude', '--tool-hang-after', '0']) as { error: string }).error).to.contain('--tool-hang-after expects a positive number');
  });

  it('the defaults reach the agent processes: every Claude Code and Codex port runs with both limits; --hang-after 0 runs none', () => {
    for (const name of ['claude', 'codex']) {
      const options = (args: string[]) => ({ ...agentOptionsOf(parseAcpArgs(['--agent', name, ...args]) as AcpCommandOptions), agentCommand: process.execPath });
      const watchdogOf = (args: string[]) => (agentFor(name, options(args)).input as AdapterAgentOptions).definition.port?.watchdog;
      expect(watchdogOf([]), name).to.deep.equal({ idleMs: 120_000, toolIdleMs: 1_800_000 });
      expect(watchdogOf(['--hang-after', '5', '--tool-hang-after', '90']), name).to.deep.equal({ idleMs: 5000, toolIdleMs: 90_000 });
      expect(watchdogOf(['--hang-after', '0']), name).to.equal(undefined);
    }
  });

  it('--help says both defaults', () => {
    expect(acpUsage).to.match(/^ {2}--hang-after SECONDS[\s\S]*default 120[\s\S]*0 turns the watchdog off/mu);
    expect(acpUsage).to.match(/^ {2}--tool-hang-after SECONDS[\s\S]*default\s+1800/mu);
  });
});
