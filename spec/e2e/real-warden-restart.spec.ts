/**
 * SIGKILL of warden itself, with the real Claude Code 2.1.332 and Codex 0.171.0 CLIs against
 * the fake model servers (issue 6: the recovery scenarios of spec/cli/acp-recovery.spec.ts
 * with the real CLIs). Over real stdio, as an editor would: the official ACP SDK client
 * launches `warden acp --agent claude|codex --store <temp file>` in its own process group,
 * `warden` and the CLI found by bare name through PATH (warden's shim first, then the
 * agents' bin of .cache/agents), opens a session, runs a turn, and SIGKILLs warden's
 * process. The orphan reaper must take the real CLI down with it; a new warden on the same
 * journal must list the session with its title, replay it on `session/load` (the user's
 * prompt and the agent's text, before the answer) and resume it on the agent side, so that
 * the next prompt ends `end_turn` and the model sees the turn from before the SIGKILL. At the
 * end no process of the test is left.
 *
 * The CLIs come from `npm run agents:install` (into .cache/agents, git-ignored); without
 * them these tests skip with a message. WARDEN_E2E_TIMINGS=1 prints how long each step took.
 */
import { client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { startFakeAnthropic, type FakeModelServer, type RecordedRequest } from '../support/fake-anthropic-server.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { binDirectory } from '../support/path-editor.js';
import {
  agentProcessOf,
  agentsBin,
  anthropicUserTexts,
  claudeBin,
  claudeEnv,
  cliUnder,
  codexBin,
  codexEnv,
  descendants,
  envArgs,
  expectNoLeftovers,
  leftovers,
  openaiUserTexts,
  skipMessage,
  workspace,
  writeCodexHome,
  type ProcessRow,
  type Workspace,
} from '../support/real-agents-harness.js';

/** How long any one ACP request may take (a real CLI starting, resuming, answering). */
const REQUEST_DEADLINE_MS = 90_000;
/** How long the orphan reaper may take to kill the CLI after warden's SIGKILL (it needs ~1 s). */
const REAP_DEADLINE_MS = 30_000;

interface Update {
  sessionId: string;
  update: { sessionUpdate: string; content?: { type: string; text?: string }; _meta?: Record<string, unknown> | null };
}

interface Warden {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Every `session/update` received, in order. */
  readonly updates: Update[];
  readonly stderr: () => string;
  /** Resolves with the exit code (or the signal) once the process has exited. */
  readonly exited: Promise<number | string | null>;
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
}

const launched: ChildProcess[] = [];

/** Rejects after `ms`, naming `what` and warden's stderr, if `promise` has not settled. */
async function within<T>(ms: number, what: string, promise: Promise<T>, warden?: Warden): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer to ${what} within ${ms} ms; warden's stderr:\n${warden?.stderr() ?? ''}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `warden acp <args>` as an editor launches it: the bare `warden` through PATH (`bin`'s shim,
 * then the agents' bin, where the bare `claude` and `codex` are found), in `cwd`, its own
 * process group, stdio pipes, the SDK's client; initialized.
 */
async function launch(bin: string, args: string[], cwd: string): Promise<Warden> {
  // Only the PATH leads to the CLI: no CLAUDE_CODE_EXECUTABLE or CODEX_PATH of the test's environment.
  const { CLAUDE_CODE_EXECUTABLE: _claude, CODEX_PATH: _codex, ...inherited } = process.env;
  const child = spawn('warden', ['acp', ...args], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...inherited, PATH: [bin, agentsBin, process.env.PATH ?? ''].join(':') },
  });
  launched.push(child);
  if (child.pid === undefined) throw new Error(`warden was not found through PATH (${bin})`);
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  // A write to the stdin of a warden that was SIGKILLed must not crash the test run.
  child.stdin?.on('error', () => {});
  const updates: Update[] = [];
  const stream = ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>);
  const app = client({ name: 'real-restart-test-editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as unknown as Update);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      const allow = params.options.find((option) => option.kind === 'allow_once');
      return { outcome: allow ? { outcome: 'selected' as const, optionId: allow.optionId } : { outcome: 'cancelled' as const } };
    });
  const agent = app.connect(stream).agent as unknown as { request(method: string, params: unknown): Promise<unknown> };
  const warden: Warden = {
    process: child,
    pid: child.pid,
    updates,
    stderr: () => stderr,
    exited,
    request: (method, params) => within(REQUEST_DEADLINE_MS, method, agent.request(method, params), warden) as Promise<never>,
  };
  await warden.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'real-restart-test-editor', version: '1' } });
  return warden;
}

/**
 * The agent's text in `updates` for `sessionId`. The host's notices reach this client (which
 * does not advertise `session.notices`) as agent messages marked with `_meta["acp-warden/notice"]`:
 * they are warden's words, not the model's, and are left out.
 */
function agentText(updates: Update[], sessionId: string): string {
  return updates
    .filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk')
    .filter((entry) => !entry.update._meta?.['acp-warden/notice'])
    .map((entry) => entry.update.content?.text ?? '')
    .join('');
}

function userText(updates: Update[], sessionId: string): string {
  return updates
    .filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'user_message_chunk')
    .map((entry) => entry.update.content?.text ?? '')
    .join('');
}

const timings: string[] = [];

/** What one agent's run of the scenario needs. */
interface Agent {
  /** `--agent`: also the bare command found through PATH. */
  readonly name: 'claude' | 'codex';
  /** The path of the model requests on the fake server. */
  readonly modelPath: string;
  /** What the fake answers to "hello". */
  readonly hello: string;
}

interface Outcome {
  readonly sessionId: string;
  readonly firstCli: ProcessRow;
  readonly secondCli: ProcessRow;
  /** The fake server's model requests made by the first warden's CLI, then by the second's. */
  readonly firstRequests: RecordedRequest[];
  readonly secondRequests: RecordedRequest[];
}

/**
 * Whether the agent process warden started is the one the bare name on the PATH leads to:
 * `node <agents bin>/<name>` (the npm bin link), or, for Codex where Node has
 * `process.execve` (22.15 and later), the native binary its launcher (bin/codex.js) replaced
 * itself with, in the same process, from the same install.
 */
function startedFromPath(started: ProcessRow | undefined, name: string): boolean {
  if (!started) return false;
  if (started.cmdline.includes(join(agentsBin, name))) return true;
  return name === 'codex' && started.cmdline.startsWith(`${realpathSync(join(agentsBin, '..'))}/@openai/`);
}

/**
 * The scenario: warden, session/new, "hello"; SIGKILL warden; its CLI dies; a second warden on
 * the same store lists, loads (replay before the answer) and prompts; closed by the editor,
 * it exits 0. Returns what the model checks need.
 */
async function sigkillWardenAndRestart(agent: Agent, server: FakeModelServer, space: Workspace, env: Record<string, string>): Promise<Outcome> {
  const project = space.project();
  const store = join(space.base, 'journal.sqlite');
  const args = ['--agent', agent.name, '--store', store, ...envArgs(env)];
  const bin = binDirectory(space.base);
  const modelRequests = () => server.requests.filter((request) => request.path === agent.modelPath);
  const step = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    try {
      return await run();
    } finally {
      timings.push(`${agent.name}: ${what}: ${Date.now() - started} ms`);
    }
  };

  // The first warden: a completed turn.
  const first = await step('first warden up (initialize)', () => launch(bin, args, project));
  const { sessionId } = await step('session/new', () => first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: project, mcpServers: [] }));
  const answered = await step('prompt "hello"', () => first.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
  expect(answered.stopReason, first.stderr()).to.equal('end_turn');
  const said = agentText(first.updates, sessionId);
  expect(said).to.equal(agent.hello);
  const firstRequests = modelRequests();
  expect(firstRequests, 'the model requests of the first turn').to.not.have.length(0);

  // SIGKILL of warden's process (only it: the CLI and the reaper live in their own groups).
  const firstCli = cliUnder(first.pid);
  expect(firstCli, `the real CLI under warden ${first.pid}`).to.not.equal(undefined);
  // The one the PATH leads to: the bare name resolved in the agents' bin.
  expect(startedFromPath(agentProcessOf(first.pid), agent.name), 'the agent process warden started').to.equal(true);
  const firstTree = descendants(first.pid);
  // The orphan reaper is one of them. (Both real CLIs also exit by themselves on EOF of stdin,
  // so their death alone cannot tell the reaper's work from theirs: the reaper must be there.)
  expect(firstTree.map((row) => row.cmdline).join('\n'), 'the orphan reaper under the first warden').to.contain('acp-warden-orphan-reaper');
  process.kill(first.pid, 'SIGKILL');
  expect(await within(10_000, 'the exit of the SIGKILLed warden', first.exited)).to.equal('SIGKILL');
  // The orphan reaper takes everything the first warden started down with it.
  await step('SIGKILL → the first warden\'s CLI and reaper gone', () =>
    waitUntil(() => firstTree.every((row) => !isAlive(row.pid)), `the first warden's processes to die (left: ${firstTree.filter((row) => isAlive(row.pid)).map((row) => `${row.pid} ${row.cmdline}`).join('; ')})`, REAP_DEADLINE_MS, 50),
  );

  // A second warden on the same journal.
  const second = await step('second warden up (initialize)', () => launch(bin, args, project));
  const listed = await step('session/list', () => second.request<{ sessions: Array<{ sessionId: string; title?: string | null; cwd: string }> }>(methods.agent.session.list, {}));
  expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([sessionId]);
  expect(listed.sessions[0]?.title).to.equal('hello');
  expect(listed.sessions[0]?.cwd).to.equal(project);

  const before = second.updates.length;
  await step('session/load (replay, agent side resumed)', () => second.request(methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] }));
  // What arrived before the answer: the replay, the user's prompt first.
  const replayed = second.updates.slice(before);
  expect(userText(replayed, sessionId)).to.equal('hello');
  expect(agentText(replayed, sessionId), second.stderr()).to.equal(said);
  const firstUser = replayed.findIndex((entry) => entry.update.sessionUpdate === 'user_message_chunk');
  const firstAgent = replayed.findIndex((entry) => entry.update.sessionUpdate === 'agent_message_chunk');
  expect(firstUser, 'the user prompt is replayed before the agent text').to.be.within(0, firstAgent);

  const afterLoad = second.updates.length;
  const next = await step('prompt "hello" after the restart', () => second.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] }));
  expect(next.stopReason, second.stderr()).to.equal('end_turn');
  expect(agentText(second.updates.slice(afterLoad), sessionId)).to.equal(agent.hello);
  const secondRequests = modelRequests().slice(firstRequests.length);
  const secondCli = cliUnder(second.pid);
  expect(secondCli, `the real CLI under warden ${second.pid}`).to.not.equal(undefined);

  // The editor goes away: warden stops its CLI gracefully and exits 0.
  const secondTree = descendants(second.pid);
  second.process.stdin?.end();
  expect(await step('stdin closed → second warden exited', () => within(30_000, 'the exit of the second warden', second.exited, second))).to.equal(0);
  await waitUntil(() => secondTree.every((row) => !isAlive(row.pid)), 'the second warden\'s processes to stop with it', 20_000, 50);
  return { sessionId, firstCli: firstCli as ProcessRow, secondCli: secondCli as ProcessRow, firstRequests, secondRequests };
}

/** Kills what a test launched (each warden's process group, then whatever is left under `base`). */
async function cleanUp(space: Workspace | undefined): Promise<void> {
  for (const child of launched.splice(0)) {
    if (child.pid && isAlive(child.pid)) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  if (space) {
    try {
      await expectNoLeftovers(space.base, 20_000);
    } finally {
      rmSync(space.base, { recursive: true, force: true });
    }
  }
}

describe('SIGKILL of warden itself with the real agent CLIs (fake model servers)', function () {
  this.timeout(240_000);

  after(function () {
    if (timings.length > 0 && process.env.WARDEN_E2E_TIMINGS) console.log(`      warden-restart timings:\n${timings.map((line) => `        ${line}`).join('\n')}`);
  });

  describe('real Claude Code 2.1.332 (fake Anthropic server)', function () {
    let server: FakeModelServer | undefined;
    let space: Workspace | undefined;

    before(function () {
      if (!existsSync(claudeBin)) {
        console.log(`      ${skipMessage('real Claude Code')}`);
        this.skip();
      }
    });

    beforeEach(async () => {
      server = await startFakeAnthropic();
      space = workspace('warden-restart-claude-');
    });

    afterEach(async () => {
      try {
        await cleanUp(space);
      } finally {
        await server?.close();
        server = undefined;
        space = undefined;
      }
    });

    it('a new warden on the same --store lists, replays and resumes the session (--resume <id>, the model sees the earlier turn); the CLI died with the first; nothing is left', async () => {
      const fake = server as FakeModelServer;
      const outcome = await sigkillWardenAndRestart(
        { name: 'claude', modelPath: '/v1/messages', hello: 'Hello from the fake Anthropic server.' },
        fake,
        space as Workspace,
        claudeEnv(fake.url, space as Workspace),
      );
      const claudeSession = outcome.firstRequests[0]?.headers['x-claude-code-session-id'];
      expect(claudeSession).to.match(/^[0-9a-f-]{36}$/u);
      // The new CLI resumes Claude's own session: `--resume=<id>`, and the same session id on the wire.
      expect(outcome.firstCli.cmdline).to.not.include('--resume');
      expect(outcome.secondCli.cmdline).to.include(`--resume=${String(claudeSession)}`);
      const last = outcome.secondRequests.at(-1);
      expect(last, 'a model request from the second warden\'s CLI').to.not.equal(undefined);
      expect(last?.headers['x-claude-code-session-id']).to.equal(claudeSession);
      // The model sees the turn from before the SIGKILL.
      const texts = anthropicUserTexts(last?.body).filter((text) => text === 'hello');
      expect(texts, JSON.stringify(anthropicUserTexts(last?.body))).to.deep.equal(['hello', 'hello']);
      await expectNoLeftovers((space as Workspace).base, 20_000);
      expect(leftovers((space as Workspace).base)).to.deep.equal([]);
    });
  });

  describe('real Codex 0.171.0 app-server (fake OpenAI server)', function () {
    let server: FakeModelServer | undefined;
    let space: Workspace | undefined;
    let codexHome = '';

    before(function () {
      if (!existsSync(codexBin)) {
        console.log(`      ${skipMessage('real Codex')}`);
        this.skip();
      }
    });

    beforeEach(async () => {
      server = await startFakeOpenAI();
      space = workspace('warden-restart-codex-');
      codexHome = writeCodexHome(space, server.url);
    });

    afterEach(async () => {
      try {
        await cleanUp(space);
      } finally {
        await server?.close();
        server = undefined;
        space = undefined;
      }
    });

    it('a new warden on the same --store lists, replays and resumes the session (thread/resume, the model sees the earlier turn); the CLI died with the first; nothing is left', async () => {
      const fake = server as FakeModelServer;
      const outcome = await sigkillWardenAndRestart(
        { name: 'codex', modelPath: '/v1/responses', hello: 'Hello from the fake OpenAI server.' },
        fake,
        space as Workspace,
        codexEnv(space as Workspace, codexHome),
      );
      const first = outcome.firstRequests[0];
      const last = outcome.secondRequests.at(-1);
      expect(last, 'a model request from the second warden\'s CLI').to.not.equal(undefined);
      // The same thread after the restart, with the earlier turn in its input.
      expect(first?.headers['thread-id']).to.be.a('string');
      expect(last?.headers['thread-id']).to.equal(first?.headers['thread-id']);
      const texts = openaiUserTexts(last?.body).filter((text) => text === 'hello');
      expect(texts, JSON.stringify(openaiUserTexts(last?.body))).to.deep.equal(['hello', 'hello']);
      expect(outcome.secondCli.pid).to.not.equal(outcome.firstCli.pid);
      await expectNoLeftovers((space as Workspace).base, 20_000);
      expect(leftovers((space as Workspace).base)).to.deep.equal([]);
    });
  });
});
