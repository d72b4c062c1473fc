/**
 * A native ACP agent passed through under supervision: our agent server serves a
 * passthrough whose downstream is spec/support/sdk-agent.mjs (built with the official SDK),
 * and our ACP client plays the editor.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, initialize, listSessions, newSession, prompt, type ClientHandler } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { createAcpPassthrough, type AcpPassthroughOptions } from '../../src/adapters/acp-passthrough.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { createHost } from '../../src/index.js';
import { processesWhere, waitUntil } from '../support/processes.js';
import { driveAgent, eventContext, resultOf, type Driver } from './native-driver.js';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { CONTINUED_NOTICE_TITLE } from '../../src/adapters/continuation-text.js';

/** The crash policy of the specs that test the crash's failure itself (the default continues an agent that resumes). */
const failing = { crash: { onCrash: 'fail' } } as const;
const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));
const running: Array<{ stop(): void; dir: string }> = [];

async function start(handler: ClientHandler = {}, args: readonly string[] = [], options: Partial<AcpPassthroughOptions> = {}) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-passthru-')));
  const [editorSide, agentSide] = createMemoryTransportPair();
  const agent = createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args: [sdkAgent, '--state-dir', dir, ...args], restart: { backoff: { minDelay: 50, maxDelay: 200 } }, ...options });
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent } }).start();
  const client = createActor(agentClientLogic, { input: { transport: editorSide, handler } }).start();
  running.push({ stop: () => (client.stop(), server.stop()), dir });
  const init = await initialize(client);
  const { sessionId } = await newSession(client, { cwd: dir });
  return { client, server, dir, init, sessionId };
}

function listAgents(): number[] {
  return processesWhere((cmdline) => cmdline.includes('sdk-agent.mjs') && cmdline.includes('warden-passthru-'));
}

/** The pid of the sdk-agent running with state directory `dir`. */
function agentIn(dir: string): number | undefined {
  return listAgents().find((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(dir);
    } catch {
      return false;
    }
  });
}

/** The text of agent and user chunks, as the editor would show them. */
const textOf = (update: SessionUpdate) => ('content' in update && (update.content as { type: string }).type === 'text' ? (update.content as { text: string }).text : '');

/** The passthrough driven directly, as the host drives it: initialized, with one session open. */
async function drive(args: readonly string[] = [], options: Partial<AcpPassthroughOptions> = {}): Promise<{ driver: Driver; sessionId: string; dir: string }> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-passthru-')));
  const driver = driveAgent(createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args: [sdkAgent, '--state-dir', dir, ...args], restart: { backoff: { minDelay: 50, maxDelay: 200 } }, ...options }));
  running.push({ stop: () => driver.stop(), dir });
  resultOf(await driver.answer(driver.request('initialize', 'initialize', { protocolVersion: 1, clientCapabilities: {} })));
  if (args.includes('--require-auth')) resultOf(await driver.answer(driver.request('authenticate', 'authenticate', { methodId: 'sdk-agent-login' })));
  const { sessionId } = resultOf(await driver.answer(driver.request('session.new', 'session/new', { cwd: dir, mcpServers: [] }))) as { sessionId: string };
  return { driver, sessionId, dir };
}

async function turn(driver: Driver, sessionId: string, text: string) {
  return driver.answer(driver.request('session.prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text }] }));
}

async function run(client: AnyActorRef, sessionId: string, text: string) {
  const handle = prompt(client, sessionId, [{ type: 'text', text }]);
  const updates: SessionUpdate[] = [];
  for await (const update of handle.updates) updates.push(update);
  return { updates, result: await handle.result.catch((error: unknown) => error) };
}

describe('native ACP agents, passed through under supervision', function () {
  afterEach(async () => {
    for (const { stop, dir } of running.splice(0)) {
      stop();
      rmSync(dir, { recursive: true, force: true });
    }
    // No sdk-agent of ours is left (they run `node .../sdk-agent.mjs`).
    await waitUntil(() => listAgents().length === 0, 'no sdk-agent process left').catch(() => undefined);
    const leftovers = listAgents();
    expect(leftovers, 'sdk-agent processes left').to.deep.equal([]);
  });

  this.timeout(30_000);

  it('advertises what the agent behind it advertises, and serves its sessions', async () => {
    const { client, init, sessionId } = await start();
    expect(init.agentCapabilities).to.deep.include({ loadSession: true });
    expect(init.agentCapabilities?.sessionCapabilities).to.have.all.keys('list', 'resume', 'close', 'delete');
    const { updates, result } = await run(client, sessionId, 'hello');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(updates.filter((update) => update.sessionUpdate === 'agent_message_chunk')).to.have.length(3);
    const page = await listSessions(client);
    expect(page.sessions.map((entry) => entry.sessionId).length).to.be.greaterThan(0);
  });

  it("relays the agent's requests to the editor: permission and files", async () => {
    const asked: string[] = [];
    const { client, sessionId, dir } = await start({
      permission: (request) => {
        asked.push(request.toolCall.toolCallId);
        return { outcome: 'selected', optionId: request.options.find((option) => option.kind === 'allow_once')?.optionId as string };
      },
    });
    const permission = await run(client, sessionId, 'permission');
    expect(permission.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(asked).to.have.length(1);
    const files = await run(client, sessionId, 'fs');
    expect(files.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(existsSync(join(dir, 'notes.txt'))).to.equal(true);
  });

  it('the agent dying mid-prompt (--on-crash fail): the prompt fails naming it, the agent restarts, the session is re-attached and the next prompt works', async () => {
    const { client, sessionId } = await start({}, [], failing);
    const died = await run(client, sessionId, 'die');
    expect(died.result).to.be.instanceOf(RpcError);
    // Flat, as every data.reason error: the reason, then the port's exit reason, stderr tail and the restarts before.
    const data = (died.result as RpcError).data as { reason: string; exit: unknown; stderrTail: string; restarts: number };
    expect(Object.keys(data)).to.deep.equal(['reason', 'exit', 'stderrTail', 'restarts']);
    expect(data.restarts).to.equal(0);
    expect(data.reason).to.equal('agent_crashed');
    expect(data.exit).to.deep.equal({ kind: 'exited', code: 7 });
    expect(data.stderrTail).to.contain('exiting with code 7 mid-prompt');
    expect((died.result as RpcError).message).to.contain('(exited)');
    const next = await run(client, sessionId, 'hello');
    expect(next.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(next.updates.filter((update) => update.sessionUpdate === 'agent_message_chunk')).to.have.length(3);
  });

  describe('an agent whose session/load replay outlasts its answer (as Gemini CLI 0.61.0)', () => {
    // sdk-agent --no-resume --replay-after-answer: re-attached with session/load, which
    // answers while the history is still being written, one update after the other.
    const geminiLike = ['--no-resume', '--replay-after-answer'];
    const turns = 40;

    it('kill -9 mid-prompt, then re-attach: the editor sees none of the replayed history, and the next answer whole', async () => {
      const { client, sessionId, dir } = await start({}, geminiLike, failing);
      for (let n = 1; n <= turns; n++) expect((await run(client, sessionId, `earlier turn ${n}`)).result).to.deep.equal({ stopReason: 'end_turn' });
      const seen: SessionUpdate[] = [];
      client.on('acp.update', (event: { sessionId: string; update: SessionUpdate }) => {
        if (event.sessionId === sessionId) seen.push(event.update);
      });
      const slow = prompt(client, sessionId, [{ type: 'text', text: 'slow' }]);
      await waitUntil(() => seen.length > 0, 'the slow answer streaming');
      const pid = agentIn(dir);
      expect(pid, 'the sdk-agent process').to.not.equal(undefined);
      process.kill(pid as number, 'SIGKILL');
      const failed = await slow.result.catch((error: unknown) => error);
      expect(((failed as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
      seen.length = 0;
      const next = await run(client, sessionId, 'hello');
      expect(next.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(next.updates.map(textOf)).to.deep.equal(['Hello', ', ', 'world!']);
      // Everything the editor got for the session since the crash: the new answer, nothing replayed.
      const after = await run(client, sessionId, 'after the restart');
      expect(after.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(seen.map((update) => `${update.sessionUpdate}:${textOf(update)}`)).to.deep.equal([
        'agent_message_chunk:Hello',
        'agent_message_chunk:, ',
        'agent_message_chunk:world!',
        'agent_message_chunk:after the restart',
      ]);
    });

    it('a session/load passed through is answered only after the whole replay: each turn once, in order, before the answer', async () => {
      const { driver, sessionId, dir } = await drive(geminiLike);
      for (let n = 1; n <= turns; n++) expect(resultOf(await turn(driver, sessionId, `earlier turn ${n}`))).to.deep.equal({ stopReason: 'end_turn' });
      const from = driver.outputs.length;
      const load = driver.request('session.load', 'session/load', { sessionId, cwd: dir, mcpServers: [] });
      resultOf(await driver.answer(load));
      // A prompt after the load: whatever of the replay came after the answer has come by its end.
      expect(resultOf(await turn(driver, sessionId, 'hello'))).to.deep.equal({ stopReason: 'end_turn' });
      const outputs = driver.outputs.slice(from);
      const answered = outputs.findIndex((output) => output.type === 'acp.respond' && output.requestId === load);
      const updates = (part: typeof outputs) => part.filter((output) => output.type === 'acp.update' && output.sessionId === sessionId).map((output) => textOf((output as { update: SessionUpdate }).update));
      const history = Array.from({ length: turns }, (_, index) => [`earlier turn ${index + 1}`, `earlier turn ${index + 1}`]).flat();
      expect(updates(outputs.slice(0, answered))).to.deep.equal(history);
      expect(updates(outputs.slice(answered))).to.deep.equal(['Hello', ', ', 'world!']);
    });
    it('a big history (5,000 updates, written one after the other after the answer): the load is answered after its last update', async () => {
      const size = 5000;
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-passthru-')));
      // The agent's own store, as a long conversation leaves it (sdk-agent reads it at start).
      const history = Array.from({ length: size }, (_, index) => ({ sessionUpdate: index % 2 ? 'agent_message_chunk' : 'user_message_chunk', content: { type: 'text', text: `line ${index + 1}` } }));
      writeFileSync(join(dir, 'sdk-agent-sessions.json'), JSON.stringify([{ sessionId: 'long-1', cwd: dir, title: 'long', updatedAt: new Date().toISOString(), modeId: 'default', config: { model: 'fake-large', effort: 'medium' }, history }]));
      const driver = driveAgent(createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args: [sdkAgent, '--state-dir', dir, ...geminiLike] }));
      running.push({ stop: () => driver.stop(), dir });
      resultOf(await driver.answer(driver.request('initialize', 'initialize', { protocolVersion: 1, clientCapabilities: {} })));
      const load = driver.request('session.load', 'session/load', { sessionId: 'long-1', cwd: dir, mcpServers: [] });
      resultOf(await driver.answer(load, 60_000));
      const answered = driver.outputs.findIndex((output) => output.type === 'acp.respond' && output.requestId === load);
      const replayed = driver.outputs.slice(0, answered).filter((output) => output.type === 'acp.update' && output.sessionId === 'long-1');
      expect(replayed.length).to.equal(size);
      expect(textOf((replayed.at(-1) as { update: SessionUpdate }).update)).to.equal(`line ${size}`);
      expect(resultOf(await turn(driver, 'long-1', 'hello'))).to.deep.equal({ stopReason: 'end_turn' });
      const late = driver.outputs.slice(answered).filter((output) => output.type === 'acp.update' && /^line /u.test(textOf((output as { update: SessionUpdate }).update)));
      expect(late).to.deep.equal([]);
    });
  });

  describe("the host's line to a session (routeSession)", () => {
    const promptEvent = (sessionId: string, text: string, requestId: string) => ({ type: 'session.prompt' as const, requestId, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text }] }, context: eventContext });

    it("a prompt goes straight to the agent while it is ready, answered as the machine answers (its updates first); a crash under it fails it naming the crash; while the agent recovers the line declines and the machine serves the prompt once the session is re-attached", async () => {
      const options = { name: 'sdk-agent', executable: process.execPath, restart: { backoff: { minDelay: 50, maxDelay: 200 } } };
      const { driver, sessionId, dir } = await drive([], failing);
      const route = (createAcpPassthrough({ ...options, args: [sdkAgent, '--state-dir', dir] }).routeSession as NonNullable<NativeAgent['routeSession']>)(driver.actor, sessionId);
      // Only its own session's prompts: a setting, a cancel, another session's prompt go to the agent as before.
      expect(route.send({ type: 'session.cancel', sessionId, requestId: '', context: eventContext })).to.equal(false);
      expect(route.send({ ...promptEvent('another', 'hello', 'r-other') })).to.equal(false);

      expect(route.send(promptEvent(sessionId, 'hello', 'r-1'))).to.equal(true);
      expect(resultOf(await driver.answer('r-1'))).to.deep.equal({ stopReason: 'end_turn' });
      const answered = driver.outputs.findIndex((output) => output.type === 'acp.respond' && output.requestId === 'r-1');
      expect(driver.outputs.slice(0, answered).filter((output) => output.type === 'acp.update' && output.update.sessionUpdate === 'agent_message_chunk')).to.have.length(3);

      // Told while the machine enters recovering (its outputs come after its new state): the line declines, the host sends it to the agent.
      let declined: boolean | undefined;
      driver.actor.on('session.restarting', () => {
        declined ??= !route.send(promptEvent(sessionId, 'hello', 'r-3'));
        if (declined) driver.actor.send(promptEvent(sessionId, 'hello', 'r-3'));
      });
      expect(route.send(promptEvent(sessionId, 'die', 'r-2'))).to.equal(true);
      const died = await driver.answer('r-2');
      expect(died.type).to.equal('acp.error');
      expect((died as { error: { data: { reason: string } } }).error.data.reason).to.equal('agent_crashed');
      expect(resultOf(await driver.answer('r-3'))).to.deep.equal({ stopReason: 'end_turn' });
      expect(declined).to.equal(true);
      expect(driver.lifecycle(sessionId).map((output) => output.type)).to.deep.equal(['session.restarting', 'session.recovered']);
      // Ready again: straight to the restarted agent.
      expect(route.send(promptEvent(sessionId, 'hello', 'r-4'))).to.equal(true);
      expect(resultOf(await driver.answer('r-4'))).to.deep.equal({ stopReason: 'end_turn' });
      expect((driver.actor.getSnapshot() as { context: { inFlight: number } }).context.inFlight).to.equal(0);
    });
  });

  describe("through a host, whose session machine sends each prompt down the passthrough's line", () => {
    it('permission, files, a cancel, and a crash mid-prompt then the next prompt on the re-attached session: as through the machine', async function () {
      this.timeout(60_000);
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-passthru-')));
      const asked: string[] = [];
      const host = createHost({
        store: ':memory:',
        agentOptions: { onCrash: 'fail' },
        permission: (request) => {
          asked.push(request.toolCall.toolCallId);
          return { outcome: 'selected', optionId: request.options.find((option) => option.kind === 'allow_once')?.optionId as string };
        },
      });
      running.push({ stop: () => void host.stop(), dir });
      const session = await host.newSession({ cwd: dir, agent: `acp:${process.execPath} ${sdkAgent} --state-dir ${dir}` });
      expect(await session.prompt('permission').result).to.deep.include({ stopReason: 'end_turn' });
      expect(asked).to.have.length(1);
      expect(await session.prompt('fs').result).to.deep.include({ stopReason: 'end_turn' });
      expect(existsSync(join(dir, 'notes.txt'))).to.equal(true);
      // `slow` ticks until it is cancelled: the first tick seen, the editor cancels.
      const slow = session.prompt('slow');
      for await (const _update of slow) break;
      slow.cancel();
      expect(await slow.result).to.deep.include({ stopReason: 'cancelled' });
      const died = await session.prompt('die').result.catch((error: unknown) => error);
      expect(died).to.be.instanceOf(RpcError);
      expect(((died as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
      const next = session.prompt('hello');
      let chunks = 0;
      for await (const update of next) if (update.sessionUpdate === 'agent_message_chunk') chunks += 1;
      expect(await next.result).to.deep.include({ stopReason: 'end_turn' });
      expect(chunks).to.equal(3);
      await host.stop();
    });
  });

  describe("through a host, which takes a watched session's updates from the agent's client itself", () => {
    it("two sessions on one agent process: each journals its own updates; a kill -9 mid-prompt, then a re-attach by session/load whose replay outlasts its answer: nothing replayed is journaled, the next answer is", async function () {
      this.timeout(60_000);
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-passthru-')));
      const host = createHost({ store: ':memory:', agentOptions: { onCrash: 'fail' }, permission: () => ({ outcome: 'cancelled' }) });
      running.push({ stop: () => void host.stop(), dir });
      const agent = `acp:${process.execPath} ${sdkAgent} --state-dir ${dir} --no-resume --replay-after-answer`;
      const a = await host.newSession({ cwd: dir, agent });
      const b = await host.newSession({ cwd: dir, agent });
      const texts = (sessionId: string) =>
        (host.journal.entries(sessionId) as ReadonlyArray<{ entry: { kind: string; update?: SessionUpdate } }>).flatMap(({ entry }) => (entry.kind === 'update' && entry.update ? [textOf(entry.update)] : [])).filter((text) => text !== '');
      for (let n = 1; n <= 3; n++) {
        expect(await a.prompt(`earlier a ${n}`).result).to.deep.include({ stopReason: 'end_turn' });
        expect(await b.prompt(`earlier b ${n}`).result).to.deep.include({ stopReason: 'end_turn' });
      }
      const before = texts(a.sessionId);
      expect(before.filter((text) => text.startsWith('earlier a')), "a's own turns").to.have.length.above(0);
      expect(before.filter((text) => text.startsWith('earlier b')), "none of b's").to.deep.equal([]);
      expect(texts(b.sessionId).filter((text) => text.startsWith('earlier a')), "none of a's in b").to.deep.equal([]);
      const slow = a.prompt('slow');
      for await (const _update of slow) break;
      const pid = agentIn(dir);
      expect(pid, 'the sdk-agent process').to.not.equal(undefined);
      process.kill(pid as number, 'SIGKILL');
      const failed = await slow.result.catch((error: unknown) => error);
      expect(((failed as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
      const next = a.prompt('hello');
      const chunks: string[] = [];
      for await (const update of next) if (update.sessionUpdate === 'agent_message_chunk') chunks.push(textOf(update));
      expect(await next.result).to.deep.include({ stopReason: 'end_turn' });
      expect(chunks).to.deep.equal(['Hello', ', ', 'world!']);
      expect(await b.prompt('after the restart').result).to.deep.include({ stopReason: 'end_turn' });
      // What a's journal gained since the crash: the slow turn's last ticks and the new answer, nothing of the history again.
      const gained = texts(a.sessionId).slice(before.length);
      expect(gained.filter((text) => text.startsWith('earlier')), 'the replayed history').to.deep.equal([]);
      expect(gained.slice(-3)).to.deep.equal(['Hello', ', ', 'world!']);
      expect(texts(b.sessionId).filter((text) => text.startsWith('earlier b')), "b's history once").to.have.length(before.filter((text) => text.startsWith('earlier a')).length);
      expect(texts(b.sessionId).at(-1)).to.equal('after the restart');
      await host.stop();
    });
  });

  describe('launched as an editor configures it', () => {
    it('acp:node ARGS: the command found on PATH, as an editor writes it, not an absolute path', async function () {
      this.timeout(60_000);
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-passthru-')));
      const host = createHost({ store: ':memory:' });
      running.push({ stop: () => void host.stop(), dir });
      const session = await host.newSession({ cwd: dir, agent: `acp:node ${sdkAgent} --state-dir ${dir}` });
      expect(await session.prompt('hello').result).to.deep.include({ stopReason: 'end_turn' });
      await host.stop();
    });
  });

  describe('what the host hears (session lifecycle outputs)', () => {
    it('the agent process dies (--on-crash fail): session.restarting (its exit and stderr), then session.recovered (1) once the session is re-attached', async () => {
      const { driver, sessionId } = await drive([], failing);
      expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
      await driver.waitFor((output) => output.type === 'session.recovered', 'session.recovered');
      const [restarting, recovered, ...more] = driver.lifecycle();
      expect(restarting).to.deep.include({ type: 'session.restarting', sessionId, restarts: 0 });
      expect((restarting as { exit: { reason: unknown } }).exit.reason).to.deep.equal({ kind: 'exited', code: 7 });
      expect((restarting as { exit: { stderrTail: string } }).exit.stderrTail).to.contain('exiting with code 7 mid-prompt');
      expect(recovered).to.deep.equal({ type: 'session.recovered', sessionId, restarts: 1 });
      expect(more).to.deep.equal([]);
      expect(resultOf(await turn(driver, sessionId, 'hello'))).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('the supervisor gives up (intensity 0): session.restarting, then session.failed for the open session; requests are refused', async () => {
      const { driver, sessionId } = await drive([], { restart: { intensity: 0, backoff: { minDelay: 50, maxDelay: 200 } } });
      expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
      await driver.waitFor((output) => output.type === 'session.failed', 'session.failed');
      const lifecycle = driver.lifecycle();
      expect(lifecycle.map((output) => output.type)).to.deep.equal(['session.restarting', 'session.failed']);
      expect(lifecycle[1]).to.deep.include({ sessionId, restarts: 0 });
      expect((lifecycle[1] as { reason: string }).reason).to.contain('restart intensity');
      const refused = await turn(driver, sessionId, 'hello');
      expect((refused as { error: { data: { reason: string } } }).error.data.reason).to.equal('agent_failed');
    });

    it('after the supervisor gave up, a new session starts the agent again under a fresh supervisor', async () => {
      const { driver, sessionId, dir } = await drive([], { restart: { intensity: 0, backoff: { minDelay: 50, maxDelay: 200 } } });
      expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
      await driver.waitFor((output) => output.type === 'session.failed', 'session.failed');
      const again = resultOf(await driver.answer(driver.request('session.new', 'session/new', { cwd: dir, mcpServers: [] }))) as { sessionId: string };
      expect(resultOf(await turn(driver, again.sessionId, 'hello'))).to.deep.include({ stopReason: 'end_turn' });
    });

    it('a session the restarted agent will not re-attach (it wants authenticating again): session.failed, naming why', async () => {
      const { driver, sessionId } = await drive(['--require-auth']);
      expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
      await driver.waitFor((output) => output.type === 'session.failed', 'session.failed');
      expect(driver.lifecycle().map((output) => output.type)).to.deep.equal(['session.restarting', 'session.failed']);
      const failed = driver.lifecycle()[1] as { sessionId: string; restarts: number; reason: string };
      expect(failed).to.deep.include({ sessionId, restarts: 1 });
      expect(failed.reason).to.contain('could not re-attach');
    });
  });

  describe('a turn cut by kill -9, continued once its session is re-attached (--on-crash continue)', () => {
    const continued = { crash: { onCrash: 'continue' } } as const;
    /** The prompts the sdk-agents got (their `--log`: `prompt <session> "<first word>"`), in order. */
    const promptsIn = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((line) => line.includes(' prompt ')).map((line) => line.slice(line.lastIndexOf(' ') + 1)) : []);
    const afterNotice = (updates: SessionUpdate[]) => {
      const at = updates.findIndex((update) => JSON.stringify(update).includes(CONTINUED_NOTICE_TITLE));
      expect(at, 'the "Answer restarted" notice').to.be.at.least(0);
      return updates.slice(at + 1).map(textOf).join('');
    };

    for (const [how, args] of [['session/resume', []], ['session/load', ['--no-resume']]] as const) {
      it(`no tool call started (${how}): the prompt is sent again and ends end_turn with its answer after the notice`, async () => {
        const log = join(tmpdir(), `warden-passthru-log-${process.pid}-${Date.now()}`);
        try {
          const { client, sessionId, dir } = await start({}, [...args, '--log', log], continued);
          const handle = prompt(client, sessionId, [{ type: 'text', text: 'stall 1500' }]);
          await waitUntil(() => promptsIn(log).length === 1, 'the prompt at the agent');
          process.kill(agentIn(dir) as number, 'SIGKILL');
          const updates: SessionUpdate[] = [];
          for await (const update of handle.updates) updates.push(update);
          expect(await handle.result).to.deep.equal({ stopReason: 'end_turn' });
          expect(afterNotice(updates)).to.equal('late');
          expect(promptsIn(log)).to.deep.equal(['"stall"', '"stall"']);
        } finally {
          rmSync(log, { force: true });
        }
      });
    }

    it('a tool call running: the continuation says it may have partly run; the prompt ends end_turn', async () => {
      const { client, sessionId, dir } = await start({}, [], continued);
      const handle = prompt(client, sessionId, [{ type: 'text', text: 'tool 60000' }]);
      const updates: SessionUpdate[] = [];
      for await (const update of handle.updates) {
        updates.push(update);
        if (update.sessionUpdate === 'tool_call') process.kill(agentIn(dir) as number, 'SIGKILL');
      }
      expect(await handle.result).to.deep.equal({ stopReason: 'end_turn' });
      // The sdk-agent answers what it does not know by saying it: the continuation, as it got it.
      const said = afterNotice(updates);
      expect(said).to.contain('The sdk-agent process crashed');
      expect(said).to.contain('- a long build: it was approved or running when the process died, so it may have partly run; its outcome is unknown.');
      expect(said.endsWith('\ntool 60000')).to.equal(true);
    });

    it('a permission request unanswered when it died: the continuation says the call did not run', async () => {
      let dir = '';
      let first: number | undefined;
      const { client, sessionId, dir: made } = await start({
        // The agent that asked dies first; the answer comes once another one runs (the relay is gone by then).
        permission: async () => {
          first = agentIn(dir);
          process.kill(first as number, 'SIGKILL');
          await waitUntil(() => agentIn(dir) !== undefined && agentIn(dir) !== first, 'the restarted agent');
          return { outcome: 'selected', optionId: 'allow' };
        },
      }, [], continued);
      dir = made;
      const { updates, result } = await run(client, sessionId, 'permission');
      expect(result).to.deep.equal({ stopReason: 'end_turn' });
      expect(afterNotice(updates)).to.contain('- Write notes.txt: its permission request was never answered, so it did not run.');
    });
  });
});
