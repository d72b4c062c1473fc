/**
 * What the Claude and Codex adapter agents tell the host about their sessions (the session
 * lifecycle outputs of the native agent contract), and sessions resumed from the host's
 * journal: the adapter agent driven directly, as the host drives it, against the fake CLIs
 * that replay the recorded transcripts.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESUME_META_KEY, type AgentHandlerOutput } from '../../src/protocol/native-agent.js';
import type { AdapterDefinition } from '../../src/adapters/adapter.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import type { CrashChoice } from '../../src/adapters/crash-policy.js';
import { claudeAdapter } from '../../src/adapters/claude/adapter.js';
import { codexAdapter } from '../../src/adapters/codex/adapter.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { driveAgent, resultOf, type Driver } from './native-driver.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));
/** The session id in the Claude transcripts' `system:init`. */
const recordedClaudeSession = '64dc14b7-5438-426f-9829-9210cc56949d';
/** The thread the Codex transcripts started. */
const recordedThread = '01a22bbb-6e57-7a52-b8be-e2dcb9d419da';

interface Harness {
  readonly driver: Driver;
  readonly cwd: string;
  /** Each start of the fake CLI: its pid and arguments. */
  starts(): Array<{ pid: number; args: string[] }>;
  /** Lines of a log file the fake writes (in the session's directory). */
  log(name: string): string[];
}

const harnesses: Harness[] = [];

function start(definition: AdapterDefinition, executable: string, env: (cwd: string) => Record<string, string>, crash?: CrashChoice): Harness {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), `warden-lifecycle-${definition.name}-`)));
  const driver = driveAgent(createAdapterAgent({ definition, executable, env: env(cwd), ...(crash ? { crash } : {}) }));
  const lines = (name: string) => (existsSync(join(cwd, name)) ? readFileSync(join(cwd, name), 'utf8').split('\n').filter(Boolean) : []);
  const harness: Harness = {
    driver,
    cwd,
    starts: () => lines('.argv.log').map((line) => JSON.parse(line) as { pid: number; args: string[] }),
    log: lines,
  };
  harnesses.push(harness);
  return harness;
}

const claude = (fixture: string, extra: Record<string, string> = {}) =>
  start(claudeAdapter, fakeClaude, (cwd) => ({ FAKE_CLAUDE_FIXTURE: fixture, FAKE_CLAUDE_ARGV_LOG: join(cwd, '.argv.log'), FAKE_CLAUDE_USER_LOG: join(cwd, '.user.log'), ...extra }));
const codex = (fixture: string, extra: Record<string, string> = {}, crash?: CrashChoice) =>
  start(codexAdapter, fakeCodex, (cwd) => ({ FAKE_CODEX_FIXTURE: fixture, FAKE_CODEX_ARGV_LOG: join(cwd, '.argv.log'), FAKE_CODEX_METHOD_LOG: join(cwd, '.methods.log'), ...extra }), crash);

async function open(harness: Harness): Promise<string> {
  const answer = await harness.driver.answer(harness.driver.request('session.new', 'session/new', { cwd: harness.cwd, mcpServers: [] }));
  return resultOf(answer).sessionId as string;
}

async function turn(harness: Harness, sessionId: string, text: string) {
  const requestId = harness.driver.request('session.prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  return { requestId, answer: await harness.driver.answer(requestId) };
}

const indexOf = (outputs: AgentHandlerOutput[], predicate: (output: AgentHandlerOutput) => boolean) => outputs.findIndex(predicate);
const answerTo = (requestId: string) => (output: AgentHandlerOutput) => (output.type === 'acp.respond' || output.type === 'acp.error') && output.requestId === requestId;
const notices = (outputs: AgentHandlerOutput[]) =>
  outputs.filter((output) => output.type === 'acp.update' && (output.update as { sessionUpdate: string }).sessionUpdate === 'notice').map((output) => (output as { update: { severity: string; title: string } }).update);

describe('session lifecycle and resume (adapter agents driven as the host drives them)', function () {
  this.timeout(40_000);

  afterEach(async () => {
    for (const harness of harnesses.splice(0)) {
      harness.driver.stop();
      try {
        for (const { pid } of harness.starts()) await waitUntil(() => !isAlive(pid), `fake CLI ${pid} to be gone`, 15_000);
      } finally {
        rmSync(harness.cwd, { recursive: true, force: true });
      }
    }
  });

  describe('Claude Code', () => {
    it('session.resumeState: Claude\'s session id once system:init reported it, before the turn is answered', async () => {
      const harness = claude('hello');
      const sessionId = await open(harness);
      expect(harness.driver.lifecycle(), 'nothing to resume before a turn').to.deep.equal([]);
      const { requestId, answer } = await turn(harness, sessionId, 'hi');
      expect(resultOf(answer)).to.deep.equal({ stopReason: 'end_turn' });
      expect(harness.driver.lifecycle()).to.deep.equal([{ type: 'session.resumeState', sessionId, state: { claudeSessionId: recordedClaudeSession } }]);
      const outputs = harness.driver.outputs;
      expect(indexOf(outputs, (output) => output.type === 'session.resumeState')).to.be.lessThan(indexOf(outputs, answerTo(requestId)));
    });

    it('kill -9 of the CLI between turns: session.restarting (0 restarts so far, the signal), then session.recovered (1) once the new CLI is initialized', async () => {
      const harness = claude('hello');
      const sessionId = await open(harness);
      expect(resultOf((await turn(harness, sessionId, 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
      process.kill((harness.starts()[0] as { pid: number }).pid, 'SIGKILL');
      await harness.driver.waitFor((output) => output.type === 'session.recovered', 'session.recovered');
      expect(harness.driver.lifecycle()).to.deep.equal([
        { type: 'session.resumeState', sessionId, state: { claudeSessionId: recordedClaudeSession } },
        { type: 'session.restarting', sessionId, restarts: 0, exit: { reason: { kind: 'signaled', signal: 'SIGKILL' } } },
        { type: 'session.recovered', sessionId, restarts: 1 },
      ]);
      expect(harness.starts()[1]?.args.at(-1)).to.equal(`--resume=${recordedClaudeSession}`);
      expect(resultOf((await turn(harness, sessionId, 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('a CLI that keeps dying: session.restarting for every restart scheduled, then session.failed once; the session/new fails', async () => {
      const harness = claude('hello', { FAKE_CLAUDE_CRASH_ALWAYS: '1' });
      const requestId = harness.driver.request('session.new', 'session/new', { cwd: harness.cwd, mcpServers: [] });
      const answer = await harness.driver.answer(requestId);
      expect(answer.type).to.equal('acp.error');
      const data = (answer as { error: { data: { reason: string; sessionId: string } } }).error.data;
      expect(data.reason).to.equal('session_failed');
      const lifecycle = harness.driver.lifecycle();
      // Restarts are delayed (backoff); the one refused by intensity is refused when its delay ends.
      expect(lifecycle.filter((output) => output.type === 'session.restarting').map((output) => (output as { restarts: number }).restarts)).to.deep.equal([0, 1, 2, 3]);
      for (const output of lifecycle.filter((entry) => entry.type === 'session.restarting')) {
        expect((output as { exit: { reason: unknown } }).exit.reason).to.deep.equal({ kind: 'signaled', signal: 'SIGKILL' });
      }
      const failed = lifecycle.at(-1) as { type: string; sessionId: string; restarts: number; reason: string };
      expect(failed).to.include({ type: 'session.failed', sessionId: data.sessionId, restarts: 3 });
      expect(failed.reason).to.contain('reached_max_restart_intensity');
      expect(lifecycle.filter((output) => output.type === 'session.failed')).to.have.length(1);
      expect(lifecycle.some((output) => output.type === 'session.recovered')).to.equal(false);
      expect(harness.starts()).to.have.length(4);
    });

    it('session/resume with a journaled { claudeSessionId }: the first CLI already runs --resume <id>, the answer is the setup without sessionId, the turn goes on under that id', async () => {
      const harness = claude('hello');
      const journaled = 'c1a0de00-0000-4000-8000-00000000beef';
      const answer = await harness.driver.answer(harness.driver.request('session.resume', 'session/resume', { sessionId: 'claude-journaled1', cwd: harness.cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: { claudeSessionId: journaled } } }));
      const setup = resultOf(answer);
      expect(setup).to.not.have.property('sessionId');
      expect(setup).to.have.property('modes').that.deep.includes({ currentModeId: 'default' });
      expect(setup.configOptions).to.be.an('array').that.is.not.empty;
      expect(harness.starts()).to.have.length(1);
      expect(harness.starts()[0]?.args.at(-1)).to.equal(`--resume=${journaled}`);
      expect(resultOf((await turn(harness, 'claude-journaled1', 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
      expect(harness.log('.user.log')).to.deep.equal([journaled]);
      // The CLI went on under the journaled id: nothing new to journal.
      expect(harness.driver.lifecycle()).to.deep.equal([]);
    });

    it('session/resume of a live session answers its setup again, with no second CLI', async () => {
      const harness = claude('hello');
      const sessionId = await open(harness);
      const again = resultOf(await harness.driver.answer(harness.driver.request('session.resume', 'session/resume', { sessionId, cwd: harness.cwd, mcpServers: [] })));
      expect(again).to.not.have.property('sessionId');
      expect(again).to.have.property('modes');
      expect(harness.starts()).to.have.length(1);
      expect(resultOf((await turn(harness, sessionId, 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('session/load of a conversation Claude no longer has: the CLI refuses --resume and exits; the session goes on in a new conversation, with a notice', async () => {
      const missing = 'dead0000-0000-4000-8000-000000000000';
      const harness = claude('hello', { FAKE_CLAUDE_NO_CONVERSATION: missing });
      const answer = await harness.driver.answer(harness.driver.request('session.load', 'session/load', { sessionId: 'claude-gone1', cwd: harness.cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: { claudeSessionId: missing } } }));
      expect(resultOf(answer)).to.have.property('modes');
      expect(harness.starts().map((entry) => entry.args.some((arg) => arg.startsWith('--resume')))).to.deep.equal([true, false]);
      expect(notices(harness.driver.outputs).map((notice) => notice.severity)).to.deep.equal(['warning']);
      const [forgotten, restarting, recovered] = harness.driver.lifecycle('claude-gone1');
      expect(forgotten).to.deep.equal({ type: 'session.resumeState', sessionId: 'claude-gone1', state: {} });
      expect(restarting).to.deep.include({ type: 'session.restarting', restarts: 0 });
      expect((restarting as { exit: { reason: unknown; stderrTail: string } }).exit.reason).to.deep.equal({ kind: 'exited', code: 1 });
      expect((restarting as { exit: { stderrTail: string } }).exit.stderrTail).to.contain(`No conversation found with session ID: ${missing}`);
      expect(recovered).to.deep.equal({ type: 'session.recovered', sessionId: 'claude-gone1', restarts: 1 });
      expect(resultOf((await turn(harness, 'claude-gone1', 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
      expect(harness.driver.lifecycle('claude-gone1').at(-1)).to.deep.equal({ type: 'session.resumeState', sessionId: 'claude-gone1', state: { claudeSessionId: recordedClaudeSession } });
    });

    it('session/close during a prompt: the prompt ends cancelled, the CLI stops, and the host hears no restart or failure', async () => {
      const harness = claude('hello', { FAKE_CLAUDE_DELAY_MS: '1000' });
      const sessionId = await open(harness);
      const prompt = harness.driver.request('session.prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
      const close = harness.driver.request('session.close', 'session/close', { sessionId });
      expect(resultOf(await harness.driver.answer(close))).to.deep.equal({});
      expect(resultOf(await harness.driver.answer(prompt))).to.deep.equal({ stopReason: 'cancelled' });
      const { pid } = harness.starts()[0] as { pid: number };
      await waitUntil(() => !isAlive(pid), 'the closed session\'s CLI to stop', 15_000);
      expect(harness.driver.outputs.filter(answerTo(prompt)), 'answered once').to.have.length(1);
      // (The CLI may still report its session id while it stops: that is a resume state, not a failure.)
      expect(harness.driver.lifecycle().filter((output) => output.type !== 'session.resumeState')).to.deep.equal([]);
      expect(harness.starts()).to.have.length(1);
    });
    it('session/new while another session is still closing waits for the sessions supervisor, then starts (found by the chaos walk: it failed "not started" and the session started later, unowned)', async () => {
      const harness = claude('hello');
      const first = await open(harness);
      // The close keeps the sessions supervisor busy until the CLI has exited (OTP's terminate).
      const close = harness.driver.request('session.close', 'session/close', { sessionId: first });
      const second = await open(harness);
      expect(resultOf(await harness.driver.answer(close))).to.deep.equal({});
      expect(second).to.be.a('string').and.not.equal(first);
      expect(resultOf((await turn(harness, second, 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
      const [closed, running] = harness.starts();
      await waitUntil(() => !isAlive((closed as { pid: number }).pid), 'the closed session\'s CLI to stop', 15_000);
      expect(isAlive((running as { pid: number }).pid), 'the new session\'s CLI').to.equal(true);
      expect(harness.starts()).to.have.length(2);
    });

    it('session/resume of a session still closing waits for its end, then starts it again from its resume state', async () => {
      const harness = claude('hello');
      const sessionId = await open(harness);
      expect(resultOf((await turn(harness, sessionId, 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
      const close = harness.driver.request('session.close', 'session/close', { sessionId });
      const resume = harness.driver.request('session.resume', 'session/resume', { sessionId, cwd: harness.cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: { claudeSessionId: recordedClaudeSession } } });
      expect(resultOf(await harness.driver.answer(close))).to.deep.equal({});
      expect(resultOf(await harness.driver.answer(resume))).to.have.property('modes');
      const [first, second] = harness.starts();
      expect(isAlive((first as { pid: number }).pid), 'the closed CLI').to.equal(false);
      expect(second?.args.at(-1)).to.equal(`--resume=${recordedClaudeSession}`);
      expect(resultOf((await turn(harness, sessionId, 'hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
    });
  });

  describe('Codex', () => {
    it('session.resumeState: the thread id once thread/start answered, right after session/new is answered (the host journals the session first)', async () => {
      const harness = codex('hello');
      const requestId = harness.driver.request('session.new', 'session/new', { cwd: harness.cwd, mcpServers: [] });
      const sessionId = resultOf(await harness.driver.answer(requestId)).sessionId as string;
      expect(harness.driver.lifecycle()).to.deep.equal([{ type: 'session.resumeState', sessionId, state: { threadId: recordedThread } }]);
      const outputs = harness.driver.outputs;
      expect(indexOf(outputs, (output) => output.type === 'session.resumeState')).to.be.greaterThan(indexOf(outputs, answerTo(requestId)));
    });

    it('kill -9 of the app-server mid-turn (--on-crash fail): session.restarting then session.recovered (1) after thread/resume; the next turn works', async () => {
      const harness = codex('hello', { FAKE_CODEX_CRASH_AFTER: '2' }, { onCrash: 'fail' });
      const sessionId = await open(harness);
      const first = await turn(harness, sessionId, 'say hi');
      expect(first.answer.type).to.equal('acp.error');
      await harness.driver.waitFor((output) => output.type === 'session.recovered', 'session.recovered');
      expect(harness.driver.lifecycle()).to.deep.equal([
        { type: 'session.resumeState', sessionId, state: { threadId: recordedThread } },
        { type: 'session.restarting', sessionId, restarts: 0, exit: { reason: { kind: 'signaled', signal: 'SIGKILL' } } },
        { type: 'session.recovered', sessionId, restarts: 1 },
      ]);
      expect(resultOf((await turn(harness, sessionId, 'say hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('session/resume of a thread Codex never saved (no rollout: it had no turn): a new thread, a notice, and its id to journal', async () => {
      const unsaved = '01a22bbb-0000-7000-8000-0000000000aa';
      const harness = codex('hello', { FAKE_CODEX_NO_ROLLOUT: unsaved });
      const answer = await harness.driver.answer(harness.driver.request('session.resume', 'session/resume', { sessionId: 'codex-unsaved1', cwd: harness.cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: { threadId: unsaved } } }));
      expect(resultOf(answer)).to.have.property('modes');
      expect(resultOf(answer)).to.not.have.property('sessionId');
      expect(harness.log('.methods.log').filter((line) => line.startsWith('thread/'))).to.deep.equal([`thread/resume ${JSON.stringify(unsaved)}`, 'thread/start null']);
      expect(notices(harness.driver.outputs).map((notice) => notice.severity)).to.deep.equal(['warning']);
      expect(harness.driver.lifecycle()).to.deep.equal([{ type: 'session.resumeState', sessionId: 'codex-unsaved1', state: { threadId: recordedThread } }]);
      expect(resultOf((await turn(harness, 'codex-unsaved1', 'say hi')).answer)).to.deep.equal({ stopReason: 'end_turn' });
    });
  });
});
