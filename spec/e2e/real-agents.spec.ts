/**
 * The real agent CLIs, end to end: `warden acp --agent claude|codex` serving the real Claude
 * Code (2.1.332) and Codex (0.171.0) binaries, which talk to fake model servers on 127.0.0.1
 * (spec/support/fake-anthropic-server.ts, fake-openai-server.ts), driven as an editor would:
 * by the official SDK client (spec/support/sdk-client.mjs) and, for a crash mid-turn, by our
 * own ACP client over a port running `warden acp`. Both launch warden as an editor does: the
 * bare `warden` through PATH, which also leads warden to the bare `claude` and `codex`.
 *
 * The CLIs come from `npm run agents:install` (into .cache/agents, git-ignored); without
 * them these tests skip with a message. Each CLI gets its own HOME, TMPDIR (and CODEX_HOME)
 * under one temp directory, removed at the end, and no process may be left behind.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, initialize, newSession, prompt } from '../../src/acp/agent-client.js';
import { portTransport } from '../../src/jsonrpc/port-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { portLogic } from '../../src/port/port.js';
import { SHUTDOWN_EVENT } from '../../src/supervision/events.js';
import { startFakeAnthropic, type FakeModelServer } from '../support/fake-anthropic-server.js';
import { slowText } from '../support/local-model-server.js';
import { CONTINUED_NOTICE_TITLE } from '../../src/adapters/continuation-text.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import { binDirectory } from '../support/path-editor.js';
import { spawnedPid } from '../support/port-pid.js';
import { isAlive, waitUntil } from '../support/processes.js';
import {
  agentsBin,
  anthropicUserTexts,
  claudeBin,
  claudeEnv,
  claudeTranscriptUserTexts,
  cliUnder,
  codexBin,
  descendants,
  codexEnv,
  envArgs,
  expectNoLeftovers,
  openaiUserTexts,
  repo,
  skipMessage,
  workspace,
  writeCodexHome,
  type ProcessRow,
  type Workspace,
} from '../support/real-agents-harness.js';

const sdkClient = join(repo, 'spec', 'support', 'sdk-client.mjs');

/** The directory of the `warden` shim (this checkout's CLI), made before the suite runs. */
let wardenBin = '';

/**
 * An editor's environment: PATH leads to the bare `warden` (the shim), then to the agents' bin,
 * where warden finds the bare `claude` and `codex`; no CLAUDE_CODE_EXECUTABLE or CODEX_PATH of
 * the test's environment.
 */
function editorEnv(): Record<string, string | undefined> {
  const { CLAUDE_CODE_EXECUTABLE: _claude, CODEX_PATH: _codex, ...inherited } = process.env;
  return { ...inherited, PATH: [wardenBin, agentsBin, process.env.PATH ?? ''].join(':') };
}

// ---------------------------------------------------------------------------------------------
// Drivers (workspaces, binaries, the CLIs' environment, processes: ../support/real-agents-harness.ts)
// ---------------------------------------------------------------------------------------------

interface SdkReport {
  ok: boolean;
  error?: { message: string };
  summary: Record<string, any>;
  steps: Array<Record<string, any>>;
  served: Array<Record<string, any>>;
  agentExit: { code: number | null; signal: string | null; duringScenario: boolean } | null;
  durationMs: number;
}

/** The SDK client runs `scenario` against `warden acp <wardenArgs>`, in `cwd`. */
function drive(scenario: string, cwd: string, wardenArgs: string[], extra: string[] = []): Promise<SdkReport & { stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [sdkClient, '--scenario', scenario, '--cwd', cwd, '--step-timeout', '60000', ...extra, '--', 'warden', 'acp', ...wardenArgs],
      { cwd: repo, env: editorEnv(), timeout: 110_000, maxBuffer: 64 * 1024 * 1024 },
      (_error, stdout, stderr) => {
        try {
          resolve({ ...(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as SdkReport), stderr });
        } catch {
          reject(new Error(`sdk-client printed no report:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

interface WardenHarness {
  readonly port: AnyActorRef;
  readonly client: AnyActorRef;
  /** What warden wrote to stderr (for failure messages). */
  readonly stderr: string[];
  readonly wardenPid: number;
}

/**
 * `warden acp <wardenArgs>` as a port, with our ACP client on it (permissions: allow once),
 * once the port has spawned it (its pid is known only then: the first port of a process spawns
 * after execa has loaded).
 */
async function startWarden(wardenArgs: string[]): Promise<WardenHarness> {
  const port = createActor(portLogic, { input: { command: 'warden', args: ['acp', ...wardenArgs], cwd: repo, env: { parent: editorEnv() } } });
  const stderr: string[] = [];
  port.on('port.stderr', (event: { text: string }) => stderr.push(event.text));
  port.subscribe({ error: () => {} });
  port.start();
  const client = createActor(agentClientLogic, {
    input: {
      transport: portTransport(port),
      handler: {
        permission: (request) => {
          const allow = request.options.find((option) => option.kind === 'allow_once');
          return allow ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' };
        },
      },
    },
  }).start();
  try {
    return { port, client, stderr, wardenPid: await spawnedPid(port, 30_000) };
  } catch (error) {
    client.stop();
    port.stop();
    throw new Error(`warden did not start: ${stderr.join('')}`, { cause: error });
  }
}

/** Closes the client, then warden gracefully (stdin closed, SIGTERM, SIGKILL), and waits for it. */
async function stopWarden(harness: WardenHarness): Promise<void> {
  if (harness.client.getSnapshot().status === 'active') harness.client.stop();
  if (harness.port.getSnapshot().status === 'active') {
    const ended = new Promise<void>((resolve) => harness.port.subscribe({ complete: resolve, error: () => resolve() }));
    harness.port.send({ type: SHUTDOWN_EVENT });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
    clearTimeout(timer);
    if (harness.port.getSnapshot().status === 'active') harness.port.stop();
  }
  await waitUntil(() => !isAlive(harness.wardenPid), `warden ${harness.wardenPid} to exit`, 15_000, 50);
}

/**
 * What the agent said. The host's notices ("claude restarted", "… is back") reach this client,
 * which does not advertise `session.notices`, as agent messages marked with
 * `_meta["acp-warden/notice"]`: they are warden's words, not the model's, and are left out.
 */
function textOf(updates: SessionUpdate[]): string {
  return updates
    .filter((update) => update.sessionUpdate === 'agent_message_chunk')
    .filter((update) => !(update as { _meta?: Record<string, unknown> | null })._meta?.['acp-warden/notice'])
    .map((update) => (update as { content: { text?: string } }).content.text ?? '')
    .join('');
}

interface CrashOutcome {
  readonly oldCli: ProcessRow;
  readonly newCli: ProcessRow;
  readonly error: unknown;
  readonly after: { stopReason: string; text: string };
  /** When the test killed the CLI (Date.now()). */
  readonly killedAt: number;
  readonly msKillToError: number;
  readonly msKillToNextEndTurn: number;
}

/**
 * A `slow` prompt; once text streams, SIGKILL the real CLI; the prompt must fail naming the
 * crash; then a `hello` prompt in the same session (the restarted CLI) must end normally.
 */
async function crashMidTurn(harness: WardenHarness, cwd: string): Promise<CrashOutcome> {
  const { client } = harness;
  await initialize(client);
  const { sessionId } = await newSession(client, { cwd });
  const warm = prompt(client, sessionId, [{ type: 'text', text: 'hello' }]);
  expect((await warm.result).stopReason).to.equal('end_turn');
  const run = prompt(client, sessionId, [{ type: 'text', text: 'slow' }]);
  for await (const update of run.updates) if (update.sessionUpdate === 'agent_message_chunk') break;
  const oldCli = cliUnder(harness.wardenPid);
  expect(oldCli, `the real CLI under warden ${harness.wardenPid}`).to.not.equal(undefined);
  const killedAt = Date.now();
  process.kill((oldCli as ProcessRow).pid, 'SIGKILL');
  const error = await run.result.then(
    (result) => new Error(`the prompt ended with ${JSON.stringify(result)} instead of failing`),
    (caught: unknown) => caught,
  );
  const msKillToError = Date.now() - killedAt;
  await waitUntil(() => {
    const now = cliUnder(harness.wardenPid);
    return now !== undefined && now.pid !== (oldCli as ProcessRow).pid;
  }, 'the restarted CLI', 30_000, 50);
  const newCli = cliUnder(harness.wardenPid) as ProcessRow;
  const next = prompt(client, sessionId, [{ type: 'text', text: 'hello' }]);
  const updates: SessionUpdate[] = [];
  for await (const update of next.updates) updates.push(update);
  const result = await next.result;
  return { oldCli: oldCli as ProcessRow, newCli, error, after: { stopReason: result.stopReason, text: textOf(updates) }, killedAt, msKillToError, msKillToNextEndTurn: Date.now() - killedAt };
}

/**
 * A `slow` prompt whose real CLI is killed -9 once text streams, with the default `--on-crash
 * continue`: the prompt must end `end_turn`, the "Answer restarted" notice (a `notice` update:
 * this client takes them) between the words before the kill and the whole answer again after it.
 */
async function continuedMidText(harness: WardenHarness, cwd: string): Promise<{ oldCli: ProcessRow; newCli: ProcessRow; killedAt: number }> {
  const { client } = harness;
  await initialize(client);
  const { sessionId } = await newSession(client, { cwd });
  // A first turn, so that the conversation is saved before the kill: Claude Code killed in its
  // first turn may have nothing to resume (docs/recovery.md; spec/adapters/claude.spec.ts covers that case).
  expect((await prompt(client, sessionId, [{ type: 'text', text: 'hello' }]).result).stopReason).to.equal('end_turn');
  const run = prompt(client, sessionId, [{ type: 'text', text: 'slow' }]);
  const updates: SessionUpdate[] = [];
  let oldCli: ProcessRow | undefined;
  let killedAt = 0;
  for await (const update of run.updates) {
    updates.push(update);
    if (oldCli === undefined && update.sessionUpdate === 'agent_message_chunk') {
      oldCli = cliUnder(harness.wardenPid);
      expect(oldCli, `the real CLI under warden ${harness.wardenPid}`).to.not.equal(undefined);
      killedAt = Date.now();
      process.kill((oldCli as ProcessRow).pid, 'SIGKILL');
    }
  }
  const result = await run.result;
  expect(result.stopReason, harness.stderr.join('')).to.equal('end_turn');
  const notice = updates.findIndex((update) => JSON.stringify(update).includes(CONTINUED_NOTICE_TITLE));
  expect(notice, JSON.stringify(updates.slice(0, 3))).to.be.greaterThan(0);
  expect(textOf(updates.slice(0, notice))).to.match(/^word1/u);
  expect(textOf(updates.slice(notice + 1))).to.equal(slowText(60));
  const newCli = cliUnder(harness.wardenPid) as ProcessRow;
  expect(newCli.pid).to.not.equal((oldCli as ProcessRow).pid);
  return { oldCli: oldCli as ProcessRow, newCli, killedAt };
}

/**
 * kill -9 of the real CLI while a command it ran (approved by the editor) is still running:
 * `TOOL:sh sleep 3; echo done`, killed `killAfterMs` after the tool call shows (Claude asks the
 * editor first: half a second lets the allowed command start; Codex announces it running: at
 * once). `cliOf` finds the process to kill (Codex's app-server, not the sandbox helper below it).
 * The prompt must
 * end `end_turn` after the "Answer restarted" notice, the resumed CLI having been told the call
 * may have partly run. Returns the user texts of the resumed CLI's last model request.
 */
async function continuedMidTool(harness: WardenHarness, cwd: string, userTexts: (body: unknown) => string[], server: FakeModelServer, path: string, killAfterMs: number, cliOf: (wardenPid: number) => ProcessRow | undefined = cliUnder): Promise<string[]> {
  const { client } = harness;
  await initialize(client);
  const { sessionId } = await newSession(client, { cwd });
  expect((await prompt(client, sessionId, [{ type: 'text', text: 'hello' }]).result).stopReason).to.equal('end_turn');
  const before = server.requests.length;
  const run = prompt(client, sessionId, [{ type: 'text', text: 'TOOL:sh sleep 3; echo done' }]);
  const updates: SessionUpdate[] = [];
  let oldCli: ProcessRow | undefined;
  let kill: NodeJS.Timeout | undefined;
  for await (const update of run.updates) {
    updates.push(update);
    if (kill === undefined && (update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update')) {
      kill = setTimeout(() => {
        oldCli = cliOf(harness.wardenPid);
        if (oldCli) process.kill(oldCli.pid, 'SIGKILL');
      }, killAfterMs);
    }
  }
  const result = await run.result;
  expect(oldCli, 'the CLI was killed mid-tool').to.not.equal(undefined);
  expect(result.stopReason, harness.stderr.join('')).to.equal('end_turn');
  expect(updates.some((update) => JSON.stringify(update).includes(CONTINUED_NOTICE_TITLE)), 'the "Answer restarted" notice').to.equal(true);
  const newCli = cliOf(harness.wardenPid) as ProcessRow;
  expect(newCli.pid).to.not.equal((oldCli as ProcessRow).pid);
  const last = server.requests.slice(before).filter((request) => request.path === path).at(-1);
  return userTexts(last?.body);
}

/** Codex's app-server under warden (mid-tool, its command's sandbox helper from the same package is a leaf below it). */
const appServerUnder = (wardenPid: number) => descendants(wardenPid).find((row) => row.cmdline.includes('.cache/agents') && row.cmdline.includes('app-server'));

function expectCrashError(error: unknown): void {
  expect(error, String(error)).to.be.instanceOf(RpcError);
  const data = (error as RpcError).data as { reason?: string; exit?: { kind?: string; signal?: string } };
  expect(data?.reason, JSON.stringify(data)).to.equal('agent_crashed');
}

const timings: string[] = [];
const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
  const started = Date.now();
  try {
    return await run();
  } finally {
    timings.push(`${what}: ${Date.now() - started} ms`);
  }
};

describe('real agent CLIs against fake model servers', function () {
  let shims = '';
  before(() => {
    shims = mkdtempSync(join(tmpdir(), 'warden-e2e-bin-'));
    wardenBin = binDirectory(shims);
  });
  after(function () {
    rmSync(shims, { recursive: true, force: true });
    // WARDEN_E2E_TIMINGS=1: how long each real-CLI run took.
    if (timings.length > 0 && process.env.WARDEN_E2E_TIMINGS) console.log(`      real-agent timings:\n${timings.map((line) => `        ${line}`).join('\n')}`);
  });

  // ---------------------------------------------------------------------------------------------
  // Claude Code
  // ---------------------------------------------------------------------------------------------

  describe('real Claude Code 2.1.332 through warden acp (fake Anthropic server)', function () {
    this.timeout(120_000);
    let server: FakeModelServer | undefined;
    let space: Workspace | undefined;

    const wardenArgs = () => [
      '--agent', 'claude',
      '--store', ':memory:',
      ...envArgs(claudeEnv((server as FakeModelServer).url, space as Workspace)),
    ];

    before(async function () {
      if (!existsSync(claudeBin)) {
        console.log(`      ${skipMessage('real Claude Code')}`);
        this.skip();
      }
      server = await startFakeAnthropic();
      space = workspace('warden-e2e-claude-');
    });

    after(async function () {
      await server?.close();
      if (space) {
        await expectNoLeftovers(space.base);
        rmSync(space.base, { recursive: true, force: true });
      }
    });

    it('a text turn: "hello" gets the fake\'s text and end_turn; modes and the model work', async () => {
      const report = await timed('claude lifecycle (sdk-client)', () => drive('lifecycle', (space as Workspace).project(), wardenArgs()));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      const summary = report.summary;
      expect(summary.agentInfo.name).to.equal('claude-code');
      expect(summary.prompt).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake Anthropic server.', error: null });
      expect(summary.modes.currentModeId).to.equal('default');
      expect(summary.setMode).to.deep.equal({ modeId: 'acceptEdits' });
      expect(summary.configOptionIds).to.include('model');
      expect(summary.setConfigOption.error, JSON.stringify(summary.setConfigOption)).to.equal(undefined);
      expect(summary.setConfigOption.returnedValue).to.equal(summary.setConfigOption.value);
      const last = (server as FakeModelServer).requests.filter((request) => request.path === '/v1/messages').at(-1);
      expect(last?.headers['user-agent']).to.match(/^claude-cli\/2\.1\.332 /u);
      expect(anthropicUserTexts(last?.body)).to.include('hello');
    });

    it('a tool turn: Write asks permission, the editor allows it, the file is written', async () => {
      const project = (space as Workspace).project();
      const report = await timed('claude permission allow (sdk-client)', () => drive('permission', project, wardenArgs()));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      const summary = report.summary;
      expect(summary.stopReason).to.equal('end_turn');
      expect(summary.permissionRequests).to.have.length(1);
      expect(summary.permissionRequests[0].options).to.have.members(['allow_always', 'allow', 'reject']);
      expect(summary.toolCallStatuses).to.include('tool_call_update:completed');
      expect(summary.text).to.include('Tool finished: File created successfully');
      expect(readFileSync(join(project, 'new.txt'), 'utf8')).to.equal('hello\n');
    });

    it('a tool turn refused: the write fails, nothing is written, the turn ends normally', async () => {
      const project = (space as Workspace).project();
      const report = await timed('claude permission reject (sdk-client)', () => drive('permission', project, wardenArgs(), ['--permission', 'reject']));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      expect(report.summary.stopReason).to.equal('end_turn');
      expect(report.summary.permissionRequests).to.have.length(1);
      expect(report.summary.toolCallStatuses).to.include('tool_call_update:failed');
      expect(existsSync(join(project, 'new.txt'))).to.equal(false);
    });

    it('cancel: a slow turn ends cancelled soon after session/cancel, and the next prompt works', async () => {
      const report = await timed('claude cancel (sdk-client)', () => drive('cancel', (space as Workspace).project(), wardenArgs()));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      const summary = report.summary;
      expect(summary.stopReason).to.equal('cancelled');
      expect(summary.msFromCancelToStop).to.be.below(5000);
      expect(summary.afterCancel).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake Anthropic server.', error: null });
      expect((server as FakeModelServer).requests.some((request) => request.reply === 'slow')).to.equal(true);
    });

    it('an API error (HTTP 400) fails the prompt naming it; the session goes on', async () => {
      const harness = await startWarden(wardenArgs());
      try {
        await timed('claude api error (our client)', async () => {
          await initialize(harness.client);
          const { sessionId } = await newSession(harness.client, { cwd: (space as Workspace).project() });
          const failing = prompt(harness.client, sessionId, [{ type: 'text', text: 'ERROR400' }]);
          const error = await failing.result.then((result) => new Error(`ended with ${JSON.stringify(result)}`), (caught: unknown) => caught);
          expect(error).to.be.instanceOf(RpcError);
          expect((error as RpcError).message).to.match(/400/u);
          const next = prompt(harness.client, sessionId, [{ type: 'text', text: 'hello' }]);
          const updates: SessionUpdate[] = [];
          for await (const update of next.updates) updates.push(update);
          expect((await next.result).stopReason).to.equal('end_turn');
          expect(textOf(updates)).to.equal('Hello from the fake Anthropic server.');
        });
      } finally {
        await stopWarden(harness);
      }
    });

    it('kill -9 of the real CLI mid-turn: the prompt fails (agent_crashed, --on-crash fail), Claude restarts with --resume, the next prompt works', async () => {
      const harness = await startWarden([...wardenArgs(), '--on-crash', 'fail']);
      try {
        const requestsBefore = (server as FakeModelServer).requests.length;
        const outcome = await timed('claude kill -9 and resume (our client)', () => crashMidTurn(harness, (space as Workspace).project()));
        expectCrashError(outcome.error);
        expect(outcome.after, harness.stderr.join('')).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake Anthropic server.' });
        const mine = (server as FakeModelServer).requests.slice(requestsBefore).filter((request) => request.path === '/v1/messages');
        const claudeSession = mine[0]?.headers['x-claude-code-session-id'];
        expect(claudeSession).to.match(/^[0-9a-f-]{36}$/u);
        // The restarted CLI resumes Claude's own session: `--resume=<id>`, and the same session id on the wire.
        expect(outcome.oldCli.cmdline).to.not.include('--resume');
        expect(outcome.newCli.cmdline).to.include(`--resume=${String(claudeSession)}`);
        const last = mine.at(-1);
        expect(last?.headers['x-claude-code-session-id']).to.equal(claudeSession);
        // The model sees the earlier turns as Claude's own transcript has them. Claude Code writes a
        // prompt there lazily (on a quiet machine often not yet when its text streams), so the turn
        // cut by the kill is in the resumed history when the CLI had written it before it died, and
        // only then. warden sends that prompt once: never again to the restarted CLI.
        const written = claudeTranscriptUserTexts((space as Workspace).home, String(claudeSession)).filter((row) => row.text === 'slow');
        expect(written.length, JSON.stringify(written)).to.be.at.most(1);
        expect(written.every((row) => row.atMs <= outcome.killedAt), `"slow" written after the kill: ${JSON.stringify(written)}`).to.equal(true);
        expect(mine.filter((request) => request.reply === 'slow'), 'requests for "slow": one, from the CLI that was killed').to.have.length(1);
        const texts = anthropicUserTexts(last?.body).filter((text) => text === 'hello' || text === 'slow');
        expect(texts, JSON.stringify(anthropicUserTexts(last?.body))).to.deep.equal(written.length === 1 ? ['hello', 'slow', 'hello'] : ['hello', 'hello']);
        timings.push(`claude kill→prompt error: ${outcome.msKillToError} ms; kill→next end_turn: ${outcome.msKillToNextEndTurn} ms`);
      } finally {
        await stopWarden(harness);
      }
    });

    it('kill -9 of the real CLI mid-text with the default --on-crash continue: the same prompt ends end_turn with the whole answer after the "Answer restarted" notice; the resumed Claude got the prompt again', async () => {
      const harness = await startWarden(wardenArgs());
      try {
        const requestsBefore = (server as FakeModelServer).requests.length;
        const { newCli, killedAt } = await continuedMidText(harness, (space as Workspace).project());
        expect(newCli.cmdline).to.include('--resume=');
        const mine = (server as FakeModelServer).requests.slice(requestsBefore).filter((request) => request.path === '/v1/messages');
        expect(mine.filter((request) => request.reply === 'slow'), 'requests for "slow": the killed CLI\'s and the resumed one\'s').to.have.length(2);
        // The resumed CLI's request ends with the prompt sent again (its transcript may or may not hold the first one: Claude writes it lazily).
        expect(anthropicUserTexts(mine.at(-1)?.body).at(-1)).to.equal('slow');
        timings.push(`claude kill→continued end_turn: ${Date.now() - killedAt} ms`);
      } finally {
        await stopWarden(harness);
      }
    });

    /** One prompt through a fresh warden: its outcome, the updates, the model requests' replies, whether the CLI stayed the same process. */
    async function promptOnce(text: string, extra: string[]) {
      const harness = await startWarden([...wardenArgs(), ...extra]);
      try {
        await initialize(harness.client);
        const { sessionId } = await newSession(harness.client, { cwd: (space as Workspace).project() });
        const before = (server as FakeModelServer).requests.length;
        const first = cliUnder(harness.wardenPid)?.pid;
        const run = prompt(harness.client, sessionId, [{ type: 'text', text }]);
        const updates: SessionUpdate[] = [];
        for await (const update of run.updates) updates.push(update);
        const outcome = await run.result.then((result) => ({ result, error: undefined }), (error: unknown) => ({ result: undefined, error: error as RpcError }));
        const replies = (server as FakeModelServer).requests.slice(before).filter((request) => request.path === '/v1/messages').map((request) => request.reply);
        const notices = updates.filter((update) => JSON.stringify(update).includes('"Rate limited"'));
        return { ...outcome, replies, notices, sameCli: first !== undefined && cliUnder(harness.wardenPid)?.pid === first };
      } finally {
        await stopWarden(harness);
      }
    }

    it('HTTP 429 twice (retry-after 1 s): Claude Code retries by itself and the turn ends end_turn; warden sends nothing again, restarts nothing', async () => {
      const { result, replies, notices, sameCli } = await promptOnce('RATE429 2', []);
      expect(result?.stopReason).to.equal('end_turn');
      expect(replies).to.deep.equal(['429', '429', 'text']);
      expect(notices).to.deep.equal([]);
      expect(sameCli).to.equal(true);
    });

    it('HTTP 429 past Claude Code\'s own retries (CLAUDE_CODE_MAX_RETRIES=1): its error result is a rate limit to warden, which waits and sends the prompt again (--rate-limit-retries 1), then answers the last 429 error; the CLI is never restarted', async () => {
      const { error, replies, notices, sameCli } = await promptOnce('RATE429 always', ['--env', 'CLAUDE_CODE_MAX_RETRIES=1', '--rate-limit-retries', '1']);
      expect((error?.data as { apiErrorStatus?: number } | undefined)?.apiErrorStatus, String(error)).to.equal(429);
      // Two attempts of the prompt (warden's first and its retry), each one request and Claude's own retry.
      expect(replies).to.deep.equal(['429', '429', '429', '429']);
      expect(notices).to.have.length(1);
      expect(sameCli).to.equal(true);
    });

    it('kill -9 of the real CLI mid-tool (an approved Bash command running): the prompt ends end_turn after the "Answer restarted" notice; the resumed Claude was told the command may have partly run', async () => {
      const harness = await startWarden(wardenArgs());
      try {
        const texts = await continuedMidTool(harness, (space as Workspace).project(), anthropicUserTexts, server as FakeModelServer, '/v1/messages', 500);
        const continuation = texts.find((text) => text.startsWith('[acp-warden]')) ?? '';
        expect(continuation, JSON.stringify(texts)).to.contain('it was approved or running when the process died, so it may have partly run');
        expect(continuation).to.contain('sleep 3; echo done');
      } finally {
        await stopWarden(harness);
      }
    });
  });

  // ---------------------------------------------------------------------------------------------
  // Codex
  // ---------------------------------------------------------------------------------------------

  describe('real Codex 0.171.0 (app-server) through warden acp (fake OpenAI server)', function () {
    this.timeout(120_000);
    let server: FakeModelServer | undefined;
    let space: Workspace | undefined;
    let codexHome = '';

    const wardenArgs = () => [
      '--agent', 'codex',
      '--store', ':memory:',
      ...envArgs(codexEnv(space as Workspace, codexHome)),
    ];

    before(async function () {
      if (!existsSync(codexBin)) {
        console.log(`      ${skipMessage('real Codex')}`);
        this.skip();
      }
      server = await startFakeOpenAI();
      space = workspace('warden-e2e-codex-');
      codexHome = writeCodexHome(space, server.url);
    });

    after(async function () {
      await server?.close();
      if (space) {
        await expectNoLeftovers(space.base);
        rmSync(space.base, { recursive: true, force: true });
      }
    });

    it('a text turn: "hello" gets the fake\'s text and end_turn; modes work', async () => {
      const report = await timed('codex lifecycle (sdk-client)', () => drive('lifecycle', (space as Workspace).project(), wardenArgs()));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      const summary = report.summary;
      expect(summary.agentInfo.name).to.equal('codex');
      expect(summary.prompt).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake OpenAI server.', error: null });
      expect(summary.modes.currentModeId).to.equal('untrusted');
      expect(summary.setMode).to.deep.equal({ modeId: 'on-request' });
      const last = (server as FakeModelServer).requests.filter((request) => request.path === '/v1/responses').at(-1);
      expect(last?.headers.authorization).to.equal('Bearer dummy');
      expect(openaiUserTexts(last?.body)).to.include('hello');
    });

    it('a tool turn: the command asks approval (untrusted), the editor allows it, it runs', async () => {
      const project = (space as Workspace).project();
      const report = await timed('codex permission allow (sdk-client)', () => drive('permission', project, wardenArgs()));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      const summary = report.summary;
      expect(summary.stopReason).to.equal('end_turn');
      expect(summary.permissionRequests).to.have.length(1);
      expect(summary.toolCallStatuses).to.include('tool_call_update:completed');
      expect(summary.text).to.match(/^Tool finished: Chunk ID: /u);
      expect(existsSync(join(project, 'new.txt'))).to.equal(true);
    });

    it('a tool turn refused: the command does not run, the turn ends normally', async () => {
      const project = (space as Workspace).project();
      const report = await timed('codex permission reject (sdk-client)', () => drive('permission', project, wardenArgs(), ['--permission', 'reject']));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      expect(report.summary.stopReason).to.equal('end_turn');
      expect(report.summary.permissionRequests).to.have.length(1);
      expect(existsSync(join(project, 'new.txt'))).to.equal(false);
    });

    it('cancel: a slow turn ends cancelled soon after session/cancel, and the next prompt works', async () => {
      const report = await timed('codex cancel (sdk-client)', () => drive('cancel', (space as Workspace).project(), wardenArgs()));
      expect(report.ok, `${JSON.stringify(report.error)}\n${report.stderr}`).to.equal(true);
      const summary = report.summary;
      expect(summary.stopReason).to.equal('cancelled');
      expect(summary.msFromCancelToStop).to.be.below(5000);
      expect(summary.afterCancel).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake OpenAI server.', error: null });
    });

    it('an API error (HTTP 400) fails the prompt naming it; the session goes on', async () => {
      const harness = await startWarden(wardenArgs());
      try {
        await timed('codex api error (our client)', async () => {
          await initialize(harness.client);
          const { sessionId } = await newSession(harness.client, { cwd: (space as Workspace).project() });
          const failing = prompt(harness.client, sessionId, [{ type: 'text', text: 'ERROR400' }]);
          const error = await failing.result.then((result) => new Error(`ended with ${JSON.stringify(result)}`), (caught: unknown) => caught);
          expect(error).to.be.instanceOf(RpcError);
          expect((error as RpcError).message).to.match(/ERROR400|400/u);
          const next = prompt(harness.client, sessionId, [{ type: 'text', text: 'hello' }]);
          const updates: SessionUpdate[] = [];
          for await (const update of next.updates) updates.push(update);
          expect((await next.result).stopReason).to.equal('end_turn');
          expect(textOf(updates)).to.equal('Hello from the fake OpenAI server.');
        });
      } finally {
        await stopWarden(harness);
      }
    });

    it('kill -9 of the real CLI mid-text with the default --on-crash continue: the same prompt ends end_turn with the whole answer after the "Answer restarted" notice; the resumed thread got the prompt again', async () => {
      const harness = await startWarden(wardenArgs());
      try {
        const requestsBefore = (server as FakeModelServer).requests.length;
        const { killedAt } = await continuedMidText(harness, (space as Workspace).project());
        const mine = (server as FakeModelServer).requests.slice(requestsBefore).filter((request) => request.path === '/v1/responses');
        expect(mine.filter((request) => request.reply === 'slow'), 'requests for "slow": the killed app-server\'s and the resumed one\'s').to.have.length(2);
        expect(openaiUserTexts(mine.at(-1)?.body).at(-1)).to.equal('slow');
        timings.push(`codex kill→continued end_turn: ${Date.now() - killedAt} ms`);
      } finally {
        await stopWarden(harness);
      }
    });

    it('HTTP 429 twice, Codex\'s own retries off (request_max_retries = 0 in its config here): each failed turn is a rate limit to warden: two "Rate limited" notices, the prompt sent again after 1 s and 2 s, end_turn; the app-server never restarted', async () => {
      const harness = await startWarden(wardenArgs());
      try {
        await initialize(harness.client);
        const { sessionId } = await newSession(harness.client, { cwd: (space as Workspace).project() });
        const before = (server as FakeModelServer).requests.length;
        const first = appServerUnder(harness.wardenPid)?.pid;
        const run = prompt(harness.client, sessionId, [{ type: 'text', text: 'RATE429 2' }]);
        const updates: SessionUpdate[] = [];
        for await (const update of run.updates) updates.push(update);
        expect((await run.result).stopReason).to.equal('end_turn');
        expect((server as FakeModelServer).requests.slice(before).filter((request) => request.path === '/v1/responses').map((request) => request.reply)).to.deep.equal(['429', '429', 'text']);
        expect(updates.filter((update) => JSON.stringify(update).includes('"Rate limited"'))).to.have.length(2);
        expect(textOf(updates)).to.contain('Hello from the fake OpenAI server.');
        expect(appServerUnder(harness.wardenPid)?.pid).to.equal(first);
      } finally {
        await stopWarden(harness);
      }
    });

    it('kill -9 of the real CLI mid-tool (a command running): the prompt ends end_turn after the "Answer restarted" notice; the resumed thread was told the command may have partly run', async () => {
      const harness = await startWarden(wardenArgs());
      try {
        const texts = await continuedMidTool(harness, (space as Workspace).project(), openaiUserTexts, server as FakeModelServer, '/v1/responses', 0, appServerUnder);
        const continuation = texts.find((text) => text.startsWith('[acp-warden]')) ?? '';
        expect(continuation, JSON.stringify(texts)).to.contain('so it may have partly run');
        expect(continuation).to.contain('sleep 3; echo done');
      } finally {
        await stopWarden(harness);
      }
    });

    it('kill -9 of the real CLI mid-turn: the prompt fails (agent_crashed, --on-crash fail), the new app-server resumes the thread, the next prompt works', async () => {
      const harness = await startWarden([...wardenArgs(), '--on-crash', 'fail']);
      try {
        const requestsBefore = (server as FakeModelServer).requests.length;
        const outcome = await timed('codex kill -9 and resume (our client)', () => crashMidTurn(harness, (space as Workspace).project()));
        expectCrashError(outcome.error);
        expect(outcome.after, harness.stderr.join('')).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake OpenAI server.' });
        const mine = (server as FakeModelServer).requests.slice(requestsBefore).filter((request) => request.path === '/v1/responses');
        const first = mine[0];
        const last = mine.at(-1);
        // The same thread after the restart, with the earlier turns in its input.
        expect(last?.headers['thread-id'] ?? last?.headers['session-id']).to.be.a('string');
        expect(last?.headers['thread-id']).to.equal(first?.headers['thread-id']);
        const texts = openaiUserTexts(last?.body).filter((text) => text === 'hello' || text === 'slow');
        expect(texts, JSON.stringify(openaiUserTexts(last?.body))).to.deep.equal(['hello', 'slow', 'hello']);
        timings.push(`codex kill→prompt error: ${outcome.msKillToError} ms; kill→next end_turn: ${outcome.msKillToNextEndTurn} ms`);
      } finally {
        await stopWarden(harness);
      }
    });
  });
});
