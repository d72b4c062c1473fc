/**
 * `warden acp` recovery, end to end over real stdio: the official SDK's client launches
 * `warden acp --agent claude --agent-command <fake claude replaying recorded transcripts>`,
 * kills the agent mid-prompt, exceeds restart intensity, SIGKILLs warden itself and starts
 * it again on the same journal (also while it continues a turn the agent's crash cut); and
 * checks that no process is left behind.
 */
import { client, methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childrenOf, isAlive, waitUntil } from '../support/processes.js';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf, wardenMain as main } from '../support/warden-process.js';
import { CONTINUED_NOTICE_TITLE } from '../../src/adapters/continuation-text.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

interface Update {
  sessionId: string;
  update: { sessionUpdate: string; content?: { type: string; text?: string } };
}

interface Warden {
  readonly process: ChildProcess;
  readonly updates: Update[];
  readonly stderr: () => string;
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  /** Closes stdin (the editor goes away) and waits for warden to exit. */
  close(): Promise<number | null>;
}

/** Launches warden as an editor would: its own process group, stdio pipes, the SDK's client. */
async function launch(args: string[], env: Record<string, string> = {}, permissionDelayMs = 0): Promise<Warden> {
  const agentArgs = args.includes('--agent') ? [] : ['--agent', 'claude', '--agent-command', fakeClaude];
  const child = spawn(process.execPath, [main, 'acp', ...agentArgs, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, ...env },
  });
  launched.push(child);
  const stderr = stderrOf(child);
  const updates: Update[] = [];
  const app = client({ name: 'recovery-test-editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as unknown as Update);
    })
    // A person who takes their time: the answer comes after permissionDelayMs.
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      await new Promise((resolve) => setTimeout(resolve, permissionDelayMs));
      const allow = params.options.find((option) => option.kind === 'allow_once');
      return { outcome: allow ? { outcome: 'selected' as const, optionId: allow.optionId } : { outcome: 'cancelled' as const } };
    });
  const agent = connectOverStdio(app, child);
  const exited = exitCodeOf(child);
  const warden: Warden = {
    process: child,
    updates,
    stderr,
    request: (method, params) => agent.request(method, params) as Promise<never>,
    async close() {
      child.stdin?.end();
      return exited;
    },
  };
  await warden.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'recovery-test-editor', version: '1' } });
  return warden;
}

const launched: ChildProcess[] = [];
const textOf = (updates: Update[], sessionId: string, kind = 'agent_message_chunk') =>
  updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === kind).map((entry) => entry.update.content?.text ?? '').join('');

/** Pids of every fake claude started (the fake logs one JSON line per start). */
function startsIn(log: string): Array<{ pid: number; args: string[] }> {
  try {
    return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number; args: string[] });
  } catch {
    return [];
  }
}

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error);
  expect(outcome, 'the request should have failed').to.not.equal(undefined);
  return outcome as { code: number; message: string; data?: Record<string, unknown> };
}

describe('warden acp: recovery end to end (SDK client, fake Claude Code)', function () {
  this.timeout(120_000);
  let dir: string;
  let argvLog: string;
  let store: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-recovery-')));
    argvLog = join(dir, 'starts.ndjson');
    store = join(dir, 'journal.sqlite');
  });

  afterEach(async () => {
    await killGroups(launched);
    // Every fake CLI any warden started is gone (orphans included).
    for (const start of startsIn(argvLog)) await waitUntil(() => !isAlive(start.pid), `fake claude ${start.pid} to be gone`, 20_000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('kill -9 of the agent mid-prompt: the prompt settles naming the crash, the editor is told, the next prompt works in the resumed conversation', async () => {
    const warden = await launch(['--on-crash', 'fail', '--store', store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_CRASH_AFTER=1']);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const crashed = await rejection(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
    expect(crashed.code).to.equal(-32603);
    expect(crashed.message).to.contain('stopped during the prompt');
    expect(crashed.data?.reason).to.equal('agent_crashed');
    // No session.notices advertised: the notice arrives as a short agent message naming the restart.
    await waitUntil(() => textOf(warden.updates, sessionId).includes('restart 1'), 'the restart notice');
    const next = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.stopReason).to.equal('end_turn');
    const starts = startsIn(argvLog);
    expect(starts).to.have.length(2);
    expect(starts[1]?.args.some((arg) => arg.startsWith('--resume='))).to.equal(true);
    const listed = await warden.request<{ sessions: Array<{ sessionId: string; _meta: Record<string, unknown> }> }>(methods.agent.session.list, {});
    expect(listed.sessions[0]?._meta['acp-warden/restarts']).to.equal(1);
    expect(await warden.close()).to.equal(0);
  });

  it('kill -9 of the agent mid-text with the default --on-crash continue: the prompt ends end_turn with the whole answer after the "Answer restarted" notice; one prompt, two CLIs', async () => {
    const textLog = join(dir, 'texts.ndjson');
    const warden = await launch(['--store', store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_CRASH_AFTER=2', '--env', `FAKE_CLAUDE_TEXT_LOG=${textLog}`]);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const answer = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(answer.stopReason).to.equal('end_turn');
    // No session.notices advertised: the notice is a signed agent message; the answer comes again after it, whole.
    const text = textOf(warden.updates, sessionId);
    const notice = text.indexOf(`[acp-warden warning] ${CONTINUED_NOTICE_TITLE}: `);
    expect(notice, 'the restart notice').to.be.greaterThan(0);
    expect(text.slice(0, notice)).to.contain('Hello from the fake Anthropic server.');
    expect(text.slice(notice)).to.contain('Hello from the fake Anthropic server.');
    const sent = readFileSync(textLog, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { text: string }).text);
    expect(sent).to.deep.equal(['hello', 'hello']);
    expect(startsIn(argvLog)).to.have.length(2);
    const next = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.stopReason).to.equal('end_turn');
    expect(await warden.close()).to.equal(0);
  });

  it('a continued prompt whose agent keeps dying past the restart intensity: answered (the session failed), never left hanging', async () => {
    const warden = await launch(['--store', store, '--restart-intensity', '1/60', '--max-continuations', '5', '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_CRASH_AFTER=2', '--env', 'FAKE_CLAUDE_CRASH_RESUMED=1']);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const failed = await rejection(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
    expect(failed.code).to.equal(-32603);
    expect(failed.data?.reason).to.equal('session_failed');
    expect(textOf(warden.updates, sessionId)).to.contain(CONTINUED_NOTICE_TITLE);
    expect(await warden.close()).to.equal(0);
  });

  it('the editor closing stdin stops every agent gracefully (its stdin closed, no signal), then warden exits 0', async () => {
    const eofLog = join(dir, 'eof.log');
    const warden = await launch(['--store', store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', `FAKE_CLAUDE_EOF_LOG=${eofLog}`]);
    for (const name of ['one', 'two']) {
      mkdirSync(join(dir, name));
      await warden.request(methods.agent.session.new, { cwd: join(dir, name), mcpServers: [] });
    }
    const pids = startsIn(argvLog).map((start) => start.pid);
    expect(pids).to.have.length(2);
    expect(await warden.close()).to.equal(0);
    // Both CLIs saw their stdin close (they log it and exit 0): nobody was SIGKILLed first.
    expect(readFileSync(eofLog, 'utf8').trim().split('\n').map(Number).sort()).to.deep.equal([...pids].sort());
  });

  it('restart intensity exceeded: that session fails cleanly, another session keeps working', async () => {
    const failing = join(dir, 'crashes');
    const healthy = join(dir, 'works');
    mkdirSync(failing);
    mkdirSync(healthy);
    const warden = await launch([
      '--on-crash', 'fail', '--store', store, '--restart-intensity', '1/60',
      '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_CRASH_AFTER=1', '--env', 'FAKE_CLAUDE_CRASH_CWD=crashes',
    ]);
    const good = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: healthy, mcpServers: [] });
    const bad = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: failing, mcpServers: [] });
    // The first crash is restarted (with --resume, which the fake survives); the restarted CLI
    // then crashes too (the crash is forced again below by killing it), exceeding 1 restart.
    await rejection(warden.request(methods.agent.session.prompt, { sessionId: bad.sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
    await waitUntil(() => startsIn(argvLog).filter((start) => start.args.some((arg) => arg.startsWith('--resume='))).length === 1, 'the restart');
    const resumed = startsIn(argvLog).find((start) => start.args.some((arg) => arg.startsWith('--resume=')));
    await waitUntil(() => textOf(warden.updates, bad.sessionId).includes('is back'), 'the recovery notice');
    process.kill(resumed?.pid as number, 'SIGKILL');
    await waitUntil(() => textOf(warden.updates, bad.sessionId).includes('stopped'), 'the failure notice', 20_000);
    const refused = await rejection(warden.request(methods.agent.session.prompt, { sessionId: bad.sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
    expect(refused.message).to.contain('failed');
    const ok = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId: good.sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(ok.stopReason).to.equal('end_turn');
    const listed = await warden.request<{ sessions: Array<{ sessionId: string; _meta: Record<string, unknown> }> }>(methods.agent.session.list, {});
    expect(listed.sessions.find((session) => session.sessionId === bad.sessionId)?._meta['acp-warden/state']).to.equal('failed');
    expect(await warden.close()).to.equal(0);
  });

  it('a hang (SIGSTOP) mid-prompt: the watchdog of --hang-after kills it as hung, the prompt settles, the next prompt works', async () => {
    const warden = await launch(['--on-crash', 'fail', '--store', store, '--hang-after', '1', '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_DELAY_MS=200']);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const prompt = rejection(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
    await waitUntil(() => warden.updates.some((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk'), 'the first words');
    const frozen = startsIn(argvLog)[0]?.pid as number;
    process.kill(frozen, 'SIGSTOP');
    const hung = await prompt;
    expect(hung.data?.reason).to.equal('agent_crashed');
    expect(JSON.stringify(hung.data?.exit)).to.contain('hung');
    await waitUntil(() => !isAlive(frozen), 'the frozen CLI to be killed');
    const next = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.stopReason).to.equal('end_turn');
    expect(await warden.close()).to.equal(0);
  });

  it('a CLI gone 100% CPU and silent mid-prompt (the spin fault), default --on-crash continue: the watchdog kills it as hung, and the prompt ends end_turn with the whole answer from the resumed CLI', async () => {
    const warden = await launch(['--store', store, '--hang-after', '1', '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_DELAY_MS=200']);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const prompt = warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    await waitUntil(() => warden.updates.some((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk'), 'the first words');
    const spinning = startsIn(argvLog)[0]?.pid as number;
    writeFileSync(join(dir, '.fake-fault'), 'spin');
    process.kill(spinning, 'SIGUSR2');
    expect((await prompt).stopReason).to.equal('end_turn');
    await waitUntil(() => !isAlive(spinning), 'the spinning CLI to be killed');
    const texts = warden.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => (entry.update as { content: { text: string } }).content.text).join('');
    expect(texts).to.contain('Answer restarted');
    expect(texts.endsWith('Hello from the fake Anthropic server.'), texts).to.equal(true);
    expect(startsIn(argvLog)).to.have.length(2);
    expect(await warden.close()).to.equal(0);
  });

  it('waiting for a slow permission answer is not a hang', async () => {
    const warden = await launch(['--store', store, '--hang-after', '1', '--env', 'FAKE_CLAUDE_FIXTURE=tool-write-permission-allow', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`], {}, 2500);
    const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const result = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'write the file' }] });
    expect(result.stopReason).to.equal('end_turn');
    expect(startsIn(argvLog)).to.have.length(1); // never restarted
    expect(await warden.close()).to.equal(0);
  });

  it('SIGKILL of warden itself: a new warden on the same journal lists, replays and resumes the session; nothing is left behind', async () => {
    const args = ['--store', store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`];
    const first = await launch(args);
    const { sessionId } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const answered = await first.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(answered.stopReason).to.equal('end_turn');
    const said = textOf(first.updates, sessionId);
    expect(said).to.not.equal('');
    const firstCli = startsIn(argvLog)[0]?.pid as number;
    process.kill(first.process.pid as number, 'SIGKILL');
    // The orphan reaper takes the first warden's CLI down with it.
    await waitUntil(() => !isAlive(firstCli), 'the first CLI to die with its warden', 20_000);

    const second = await launch(args);
    const listed = await second.request<{ sessions: Array<{ sessionId: string; title: string | null }> }>(methods.agent.session.list, {});
    expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([sessionId]);
    expect(listed.sessions[0]?.title).to.equal('hello');
    await second.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
    // Everything acknowledged before the SIGKILL is replayed.
    expect(textOf(second.updates, sessionId, 'user_message_chunk')).to.equal('hello');
    expect(textOf(second.updates, sessionId)).to.equal(said);
    const next = await second.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.stopReason).to.equal('end_turn');
    // The agent side resumed its own conversation: the new CLI ran with --resume <its session id>.
    const secondStart = startsIn(argvLog)[1];
    expect(secondStart?.args.some((arg) => arg.startsWith('--resume='))).to.equal(true);
    expect(await second.close()).to.equal(0);
    await waitUntil(() => !isAlive(secondStart?.pid), 'the second CLI to stop with warden');
  });

  it('SIGKILL of warden while it continues a turn the agent\'s crash cut: the next warden ends that turn once (shutdown, continuations 1); a keyed retry gets that end, nothing sent again', async () => {
    // The CLI dies after two lines; started again with --resume it reads nothing until the gate exists.
    const gate = join(dir, 'resume-gate');
    const textLog = join(dir, 'texts.ndjson');
    const args = ['--store', store, '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`, '--env', 'FAKE_CLAUDE_CRASH_AFTER=2', '--env', `FAKE_CLAUDE_RESUME_GATE=${gate}`, '--env', `FAKE_CLAUDE_TEXT_LOG=${textLog}`];
    const first = await launch(args);
    const { sessionId } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    const params = { sessionId, prompt: [{ type: 'text', text: 'hello' }], _meta: { 'acp-warden/idempotencyKey': 'continued-then-killed' } };
    const cut = first.request(methods.agent.session.prompt, params).then(() => 'answered', () => 'connection lost');
    await waitUntil(() => startsIn(argvLog).length === 2, 'the CLI started again to continue the turn', 60_000);
    process.kill(first.process.pid as number, 'SIGKILL');
    expect(await cut, 'the killed warden never answered the prompt').to.equal('connection lost');
    for (const start of startsIn(argvLog)) await waitUntil(() => !isAlive(start.pid), `fake claude ${start.pid} to die with its warden`, 20_000);
    writeFileSync(gate, '');

    const second = await launch(args);
    await second.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
    const retry = await rejection(second.request(methods.agent.session.prompt, params));
    expect(retry.code).to.equal(-32603);
    expect(retry.data).to.deep.equal({ reason: 'shutdown', sessionId, continuations: 1 });
    const journal = sqliteJournal(store);
    const entries = journal.entries(sessionId).map((record) => record.entry);
    journal.close();
    expect(entries.filter((entry) => entry.kind === 'prompt'), 'one prompt').to.have.length(1);
    expect(entries.filter((entry) => entry.kind === 'stop' || entry.kind === 'error'), 'one end').to.have.length(1);
    const sent = readFileSync(textLog, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { text: string }).text);
    expect(sent, 'the prompt reached the agent once; no continuation went out').to.deep.equal(['hello']);
    const next = await second.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.stopReason).to.equal('end_turn');
    expect(await second.close()).to.equal(0);
  });

  describe('--agent demo (the demo agent as a real subprocess)', () => {
    const demoProcess = (warden: Warden) => childrenOf(warden.process.pid as number).find((child) => child.cmdline.includes('demo-agent'))?.pid;

    it('kill -9 of the demo agent mid-prompt: the prompt settles, the session is re-attached, the next prompt works', async () => {
      const warden = await launch(['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=50']);
      const { sessionId } = await warden.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const victim = demoProcess(warden) as number;
      expect(victim).to.be.a('number');
      const prompt = rejection(warden.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'a long answer' }] }));
      await waitUntil(() => textOf(warden.updates, sessionId).includes('You said'), 'the first words');
      process.kill(victim, 'SIGKILL');
      const crashed = await prompt;
      expect(crashed.data?.reason).to.equal('agent_crashed');
      await waitUntil(() => textOf(warden.updates, sessionId).includes('is back'), 'the recovery notice', 20_000);
      const next = await warden.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
      expect(next.stopReason).to.equal('end_turn');
      expect(demoProcess(warden)).to.not.equal(victim);
      expect(await warden.close()).to.equal(0);
      await waitUntil(() => !isAlive(victim), 'the old demo agent to be gone');
    });

    it('SIGKILL of warden: the next warden lists, replays and continues the demo session; no demo agent is left', async () => {
      const args = ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=1'];
      const first = await launch(args);
      const { sessionId } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      await first.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'remember' }] });
      const said = textOf(first.updates, sessionId);
      const orphan = demoProcess(first) as number;
      process.kill(first.process.pid as number, 'SIGKILL');
      await waitUntil(() => !isAlive(orphan), 'the first demo agent to die with its warden', 20_000);
      const second = await launch(args);
      const listed = await second.request<{ sessions: Array<{ sessionId: string; cwd: string; title: string | null; _meta: Record<string, unknown> }> }>(methods.agent.session.list, {});
      expect(listed.sessions.map(({ sessionId: id, cwd, title }) => ({ sessionId: id, cwd, title }))).to.deep.equal([{ sessionId, cwd: dir, title: 'remember' }]);
      expect(listed.sessions[0]?._meta['acp-warden/agent']).to.equal('demo');
      await second.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      expect(textOf(second.updates, sessionId, 'user_message_chunk')).to.equal('remember');
      expect(textOf(second.updates, sessionId)).to.equal(said);
      const next = await second.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'again' }] });
      expect(next.stopReason).to.equal('end_turn');
      const last = demoProcess(second) as number;
      expect(await second.close()).to.equal(0);
      await waitUntil(() => !isAlive(last), 'the demo agent to stop with warden');
    });
  });
});
