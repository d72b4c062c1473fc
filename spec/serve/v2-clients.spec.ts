/**
 * ACP v2 through `warden serve` (issue 30, slice S7): the SDK 2.4.0 v2 client
 * (`@agentclientprotocol/sdk/experimental/v2`) over WebSocket and over Streamable HTTP against a
 * real daemon running the demo agent. Each: negotiation, a turn (acknowledged with its
 * `messageId` at insertion, `user_message` then `running` before the turn's chunks, `idle` at
 * the end), cancel, a permission (`requires_action`), `session/resume` with
 * `replayFrom: {type:"start"}` from a new connection (the replay, `replay_complete`, the state,
 * then the answer) and a turn cut by a kill -9 of the agent (`idle`, stop reason `error`,
 * `data.reason`). Then a v2 controller with a v1 observer on one session and the reverse: each
 * sees the other's turns once, in order, in its own version.
 */
import { client as v2Client, type ActiveSession } from '@agentclientprotocol/sdk/experimental/v2';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { waitUntil } from '../support/processes.js';
import { bridgeClient, demoAgentsOf, initializeParams, socketClient, startServe, type Frame, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly messageId?: string; readonly state?: string; readonly stopReason?: string; readonly error?: { code: number; data?: { reason?: string } }; readonly [key: string]: unknown };
  readonly _meta?: Record<string, unknown>;
}

type Transport = 'WebSocket' | 'HTTP';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];

/** The SDK v2 client of `daemon` over `transport`: every update and permission request recorded in arrival order, each permission allowed. */
function v2Editor(daemon: ServeDaemon, transport: Transport) {
  const updates: Notified[] = [];
  const permissions: unknown[] = [];
  const app = v2Client({ name: 'v2-serve-spec' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params as unknown as Notified);
    })
    .onRequest('session/request_permission', async ({ params }) => {
      permissions.push(params);
      return { outcome: { outcome: 'selected' as const, optionId: 'allow' } };
    });
  const headers = { Authorization: `Bearer ${daemon.token}` };
  const stream = transport === 'WebSocket' ? createWebSocketStream(daemon.url, { WebSocket: WebSocket as never, headers }) : createHttpStream(daemon.url.replace(/^ws/u, 'http'), { headers });
  const connection = app.connect(stream as never);
  return { agent: connection.agent, updates, permissions, close: () => connection.close() };
}

const ofSession = (updates: readonly Notified[], sessionId: string, from = 0) => updates.slice(from).filter((entry) => entry.sessionId === sessionId);
const statesOf = (updates: readonly Notified[]) => updates.filter((entry) => entry.update.sessionUpdate === 'state_update').map((entry) => (entry.update.stopReason ? `${entry.update.state}:${entry.update.stopReason}` : entry.update.state));
const kindsOf = (updates: readonly Notified[]) => updates.map((entry) => (entry.update.sessionUpdate === 'state_update' ? `${entry.update.state}` : entry.update.sessionUpdate));
/** A prompt the demo agent echoes for about 6 s (300 words at 20 ms): a turn still running when the test cancels it or kills its agent, however loaded the machine. */
const longPrompt = Array.from({ length: 300 }, (_, n) => `w${n}`).join(' ');
const initializeV2 = { protocolVersion: 2, info: { name: 'v2-serve-spec', version: '1' }, capabilities: {} };

let state: string;
let cwd: string;

before(() => {
  state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-serve-')));
  cwd = join(state, 'project');
  mkdirSync(cwd);
});

after(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await killGroups(launched, { descendants: true });
  rmSync(state, { recursive: true, force: true });
});

for (const transport of ['WebSocket', 'HTTP'] as const) {
  describe(`warden serve: an ACP v2 client over ${transport} (issue 30 S7)`, function () {
    this.timeout(60_000);
    let daemon: ServeDaemon;
    let editor: ReturnType<typeof v2Editor>;
    let turnSession: ActiveSession;
    let liveIds: string[];

    before(async () => {
      daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, `${transport}.sqlite`)], launched, { env: { DEMO_WORD_DELAY_MS: '20' } });
      editor = v2Editor(daemon, transport);
    });
    after(() => editor.close());

    const session = (): Promise<ActiveSession> => editor.agent.buildSession(cwd).start();

    it('negotiates v2: protocolVersion 2, v2 info and capabilities', async () => {
      const answer = (await editor.agent.request('initialize', initializeV2)) as unknown as Record<string, unknown>;
      expect(answer.protocolVersion).to.equal(2);
      expect(answer).to.include.keys('info', 'capabilities');
      expect(answer).to.not.have.any.keys('agentCapabilities', 'agentInfo');
    });

    it('a turn: acknowledged with its messageId; user_message and running before the chunks; idle end_turn at the end', async () => {
      turnSession = await session();
      const from = editor.updates.length;
      const ack = await turnSession.prompt('hello there');
      expect(ack.messageId).to.match(/^user-\d+$/u);
      await turnSession.readTextUntilIdle();
      const updates = ofSession(editor.updates, turnSession.sessionId, from);
      const kinds = kindsOf(updates);
      expect(updates.find((entry) => entry.update.sessionUpdate === 'user_message')?.update.messageId).to.equal(ack.messageId);
      expect(statesOf(updates)).to.deep.equal(['running', 'idle:end_turn']);
      expect(kinds.indexOf('user_message')).to.be.lessThan(kinds.indexOf('running'));
      expect(kinds.indexOf('running')).to.be.lessThan(kinds.indexOf('agent_message_chunk'));
      expect(kinds.at(-1)).to.equal('idle');
      const chunks = updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk');
      liveIds = [...new Set(chunks.map((entry) => entry.update.messageId as string))];
      expect(liveIds).to.deep.equal([ack.messageId.replace('user-', 'agent-')]);
    });

    it('session/cancel: the acknowledged turn ends idle cancelled', async () => {
      const active = await session();
      const from = editor.updates.length;
      await active.prompt(longPrompt);
      await editor.agent.notify('session/cancel', { sessionId: active.sessionId });
      await active.readTextUntilIdle();
      expect(statesOf(ofSession(editor.updates, active.sessionId, from))).to.deep.equal(['running', 'idle:cancelled']);
    });

    it('a permission: requires_action while the client is asked, then running, then idle', async () => {
      const active = await session();
      const from = editor.updates.length;
      const asked = editor.permissions.length;
      await active.prompt('please run the tool');
      await active.readTextUntilIdle();
      expect(editor.permissions.length).to.equal(asked + 1);
      expect((editor.permissions.at(-1) as { subject: { type: string } }).subject.type).to.equal('tool_call');
      expect(statesOf(ofSession(editor.updates, active.sessionId, from))).to.deep.equal(['running', 'requires_action', 'running', 'idle:end_turn']);
    });

    it('session/resume with replayFrom start from a new connection: the turn with its live ids, replay_complete, the state, then the answer', async () => {
      const sessionId = turnSession.sessionId;
      editor.close();
      editor = v2Editor(daemon, transport);
      await editor.agent.request('initialize', initializeV2);
      await editor.agent.request('session/resume', { sessionId, cwd, replayFrom: { type: 'start' } });
      await waitUntil(() => statesOf(ofSession(editor.updates, sessionId)).length > 0, 'the state snapshot');
      const replay = ofSession(editor.updates, sessionId);
      const kinds = kindsOf(replay);
      expect([...new Set(replay.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => entry.update.messageId))]).to.deep.equal(liveIds);
      expect(kinds.filter((kind) => kind === 'replay_complete')).to.have.length(1);
      expect(kinds.slice(-2)).to.deep.equal(['replay_complete', 'idle']);
      // On the wire (the SDK may hand notifications on after the answer): the replay, replay_complete, the state, then the answer.
      const raw = await socketClient(daemon, sockets);
      await raw.request(1, 'initialize', initializeV2);
      await raw.request(2, 'session/resume', { sessionId, cwd, replayFrom: { type: 'start' } });
      const wire = raw.frames.map((frame) => (frame.id === 2 ? 'answer' : ((frame.params?.update as { sessionUpdate?: string; state?: string } | undefined)?.state ?? frame.params?.update?.sessionUpdate)));
      expect(wire.slice(-3)).to.deep.equal(['replay_complete', 'idle', 'answer']);
      expect(wire.filter((kind) => kind === 'agent_message_chunk').length).to.equal(replay.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').length);
      raw.socket.close();
    });

    it('the agent is killed mid-turn: the acknowledged turn ends idle with stopReason error and data.reason agent_crashed', async () => {
      const active = await session();
      const from = editor.updates.length;
      await active.prompt(longPrompt);
      await waitUntil(() => ofSession(editor.updates, active.sessionId, from).some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the first chunk');
      const [agentPid] = demoAgentsOf(daemon.process.pid);
      expect(agentPid, 'the demo agent process').to.not.equal(undefined);
      process.kill(agentPid as number, 'SIGKILL');
      await active.readTextUntilIdle();
      const idle = ofSession(editor.updates, active.sessionId, from).filter((entry) => entry.update.sessionUpdate === 'state_update').at(-1);
      expect(idle?.update).to.include({ state: 'idle', stopReason: 'error' });
      expect(idle?.update.error?.data?.reason).to.equal('agent_crashed');
    });
  });
}

describe('warden serve: a v2 and a v1 client on one session (issue 30 S7)', function () {
  this.timeout(60_000);
  let daemon: ServeDaemon;

  before(async () => {
    daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'mixed.sqlite')], launched, { env: { DEMO_WORD_DELAY_MS: '20' } });
  });

  /** A v1 raw client of the daemon, initialized. */
  const v1Client = async () => {
    const client = await socketClient(daemon, sockets);
    await client.request(1, 'initialize', initializeParams('v1-mixed'));
    return client;
  };
  /** The v1 updates of `sessionId` a raw client got: kind, with the turn end's stop reason. */
  const v1KindsOf = (frames: readonly Frame[], sessionId: string) =>
    frames
      .filter((frame) => frame.method === 'session/update' && frame.params?.sessionId === sessionId)
      .map((frame) => {
        const ended = frame.params?.update?._meta?.['acp-warden/turnEnded'] as { stopReason?: string } | undefined;
        return ended ? `ended:${ended.stopReason}` : (frame.params?.update?.sessionUpdate as string);
      });
  const collapse = (kinds: readonly string[]) => kinds.filter((kind, index) => kind !== kinds[index - 1]);

  it('a v2 controller\'s turn: the v1 observer sees its prompt, its chunks and its end once, in order; the observer\'s prompt is refused not_controller', async () => {
    const editor = v2Editor(daemon, 'WebSocket');
    await editor.agent.request('initialize', initializeV2);
    const active = await editor.agent.buildSession(cwd).start();
    const observer = await v1Client();
    expect((await observer.request(2, 'session/resume', { sessionId: active.sessionId, cwd, mcpServers: [] })).error).to.equal(undefined);
    const refused = await observer.request(3, 'session/prompt', { sessionId: active.sessionId, prompt: [{ type: 'text', text: 'mine?' }] });
    expect(refused.error?.data?.reason).to.equal('not_controller');
    const ack = await active.prompt('hello both');
    const text = await active.readTextUntilIdle();
    await waitUntil(() => v1KindsOf(observer.frames, active.sessionId).some((kind) => kind.startsWith('ended:')), 'the observer to see the end');
    const seen = v1KindsOf(observer.frames, active.sessionId);
    expect(collapse(seen)).to.deep.equal(['user_message_chunk', 'agent_message_chunk', 'ended:end_turn']);
    const observedText = observer.frames
      .filter((frame) => frame.params?.sessionId === active.sessionId && frame.params?.update?.sessionUpdate === 'agent_message_chunk')
      .map((frame) => frame.params?.update?.content?.text ?? '')
      .join('');
    expect(observedText).to.equal(text);
    expect(ack.messageId).to.match(/^user-\d+$/u);
    editor.close();
  });

  it('a v1 controller\'s turn: the v2 observer sees user_message, running, the chunks and idle once, in order; take_control makes it the controller', async () => {
    const controller = await v1Client();
    const sessionId = (await controller.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    const editor = v2Editor(daemon, 'WebSocket');
    await editor.agent.request('initialize', initializeV2);
    await editor.agent.request('session/resume', { sessionId, cwd });
    // The resume's state snapshot (the SDK may hand it on after the answer) is not the turn's.
    await waitUntil(() => statesOf(ofSession(editor.updates, sessionId)).length > 0, 'the state snapshot');
    const from = editor.updates.length;
    const answer = await controller.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello observer' }] });
    expect(answer.result?.stopReason).to.equal('end_turn');
    await waitUntil(() => statesOf(ofSession(editor.updates, sessionId, from)).includes('idle:end_turn'), 'the observer to see idle');
    const updates = ofSession(editor.updates, sessionId, from);
    expect(collapse(kindsOf(updates))).to.deep.equal(['user_message', 'running', 'agent_message_chunk', 'idle']);
    const user = updates.find((entry) => entry.update.sessionUpdate === 'user_message');
    expect(user?.update.messageId).to.match(/^user-\d+$/u);
    // Every chunk once, in order: the observer's text is the controller's, its seqs rise.
    const textOf = (chunks: ReadonlyArray<{ update?: { sessionUpdate?: string; content?: { text?: string } } }>) =>
      chunks
        .filter((entry) => entry.update?.sessionUpdate === 'agent_message_chunk')
        .map((entry) => entry.update?.content?.text ?? '')
        .join('');
    expect(textOf(updates as never)).to.equal(textOf(controller.frames.filter((frame) => frame.params?.sessionId === sessionId).map((frame) => frame.params as never)));
    const seqs = updates.map((entry) => entry._meta?.['acp-warden/seq']).filter((seq): seq is number => typeof seq === 'number');
    expect(seqs).to.deep.equal([...seqs].sort((x, y) => x - y));
    expect([...new Set(updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => entry.update.messageId))]).to.deep.equal([user?.update.messageId?.replace('user-', 'agent-')]);
    // Control passes as before: the v2 observer takes it and prompts (acknowledged), the v1 client now observes it.
    await editor.agent.request('_acp-warden/take_control' as never, { sessionId } as never);
    const ack = (await editor.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'now me' }] } as never)) as { messageId: string };
    expect(ack.messageId).to.match(/^user-\d+$/u);
    await waitUntil(() => v1KindsOf(controller.frames, sessionId).filter((kind) => kind.startsWith('ended:')).length === 1, 'the v1 client to see the v2 turn end');
    editor.close();
  });

  it('a v1 controller\'s turn cut by a kill -9 of the agent: the v2 observer sees it end idle with stopReason error and data.reason agent_crashed', async () => {
    const controller = await v1Client();
    const sessionId = (await controller.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    const editor = v2Editor(daemon, 'WebSocket');
    await editor.agent.request('initialize', initializeV2);
    await editor.agent.request('session/resume', { sessionId, cwd });
    await waitUntil(() => statesOf(ofSession(editor.updates, sessionId)).length > 0, 'the state snapshot');
    const from = editor.updates.length;
    controller.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: longPrompt }] } });
    await waitUntil(() => ofSession(editor.updates, sessionId, from).some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the observer to see the first chunk');
    const [agentPid] = demoAgentsOf(daemon.process.pid);
    process.kill(agentPid as number, 'SIGKILL');
    await waitUntil(() => statesOf(ofSession(editor.updates, sessionId, from)).some((one) => one?.startsWith('idle')), 'the observer to see the end');
    const idle = ofSession(editor.updates, sessionId, from).filter((entry) => entry.update.sessionUpdate === 'state_update').at(-1);
    expect(idle?.update).to.include({ state: 'idle', stopReason: 'error' });
    expect(idle?.update.error?.data?.reason).to.equal('agent_crashed');
    editor.close();
  });
});

describe('warden acp --connect: the bridge passes what the editor negotiates (issue 30 S7)', function () {
  this.timeout(60_000);

  it('a v2 editor on the bridge: protocolVersion 2, a prompt acknowledged with its messageId, the turn ending idle', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'bridge.sqlite')], launched);
    const editor = bridgeClient(state, daemon, launched);
    expect((await editor.request(1, 'initialize', initializeV2)).result?.protocolVersion).to.equal(2);
    const sessionId = (await editor.request(2, 'session/new', { cwd })).result?.sessionId as string;
    const ack = await editor.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello bridge' }] });
    expect(ack.result?.messageId).to.match(/^user-\d+$/u);
    await waitUntil(() => editor.frames.some((frame) => (frame.params?.update as { state?: string } | undefined)?.state === 'idle'), 'the turn to end idle');
    const kinds = editor.frames.map((frame) => (frame.id === 3 ? 'ack' : ((frame.params?.update as { state?: string } | undefined)?.state ?? frame.params?.update?.sessionUpdate)));
    expect(kinds.indexOf('ack')).to.be.lessThan(kinds.indexOf('agent_message_chunk'));
    expect(kinds.at(-1)).to.equal('idle');
    editor.process.stdin?.end();
    expect(await editor.exited).to.equal(0);
  });
});

describe('warden serve: an idempotent v2 prompt across a kill -9 of the daemon (issue 30 S7)', function () {
  this.timeout(120_000);

  it('the same idempotencyKey before and after the restart: one journaled prompt, one turn, the same messageId', async () => {
    const store = join(state, 'idempotent.sqlite');
    const start = () => startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', store], launched);
    const first = await start();
    const before = await socketClient(first, sockets);
    await before.request(1, 'initialize', initializeV2);
    const sessionId = (await before.request(2, 'session/new', { cwd })).result?.sessionId as string;
    const params = { sessionId, prompt: [{ type: 'text', text: 'hello' }], idempotencyKey: 'v2-retry' };
    const original = await before.request(3, 'session/prompt', params);
    const messageId = original.result?.messageId as string;
    expect(messageId, JSON.stringify(original)).to.match(/^user-\d+$/u);
    const idle = (frames: readonly Frame[]) => frames.some((frame) => (frame.params?.update as { state?: string } | undefined)?.state === 'idle');
    await waitUntil(() => idle(before.frames), 'the turn to end');

    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;
    const second = await start();
    const after = await socketClient(second, sockets);
    await after.request(1, 'initialize', initializeV2);
    expect((await after.request(2, 'session/resume', { sessionId, cwd })).error).to.equal(undefined);
    const retry = await after.request(3, 'session/prompt', params);
    expect(retry.result, JSON.stringify(retry)).to.deep.equal({ messageId });
    // Nothing inserted again: no user_message on the second daemon.
    expect(after.frames.some((frame) => frame.params?.update?.sessionUpdate === 'user_message')).to.equal(false);
    const { sqliteJournal } = await import('../../src/journal/sqlite-journal.js');
    const journal = sqliteJournal(store);
    try {
      const entries = journal.entries(sessionId);
      expect(entries.filter((record) => record.entry.kind === 'prompt')).to.have.length(1);
      expect(entries.filter((record) => record.entry.kind === 'stop' || record.entry.kind === 'error')).to.have.length(1);
    } finally {
      journal.close();
    }
  });
});

describe('warden serve: a v2 retry that joins its keyed prompt while the turn runs (issue 30)', function () {
  this.timeout(60_000);

  it('is acknowledged with the original messageId while the turn still waits on its permission, before the turn ends; one prompt, one idle', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo'], launched);
    const client = await socketClient(daemon, sockets);
    await client.request(1, 'initialize', initializeV2);
    const sessionId = (await client.request(2, 'session/new', { cwd })).result?.sessionId as string;
    // The demo tool asks permission (mode ask): the turn waits until the test answers.
    const params = { sessionId, prompt: [{ type: 'text', text: 'tool' }], idempotencyKey: 'joined-retry' };
    const original = await client.request(3, 'session/prompt', params);
    const messageId = original.result?.messageId as string;
    expect(messageId, JSON.stringify(original)).to.match(/^user-\d+$/u);
    await waitUntil(() => client.frames.some((frame) => frame.method === 'session/request_permission'), 'the permission request', 30_000);
    const retry = await client.request(4, 'session/prompt', params, 10_000);
    expect(retry.result, JSON.stringify(retry)).to.deep.equal({ messageId });
    const idles = () => client.frames.filter((frame) => frame.params?.sessionId === sessionId && (frame.params?.update as { state?: string } | undefined)?.state === 'idle');
    expect(idles(), 'the turn still runs when the retry is acknowledged').to.deep.equal([]);
    const asked = client.frames.find((frame) => frame.method === 'session/request_permission');
    client.send({ id: asked?.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
    await waitUntil(() => idles().length > 0, 'the turn to end');
    // A round trip after the turn's end: whatever the daemon sent this connection before its answer has arrived.
    expect((await client.request(5, 'session/list', {})).error).to.equal(undefined);
    expect(idles()).to.have.length(1);
    expect(client.frames.filter((frame) => frame.params?.sessionId === sessionId && frame.params?.update?.sessionUpdate === 'user_message')).to.have.length(1);
  });
});

describe('warden serve: tool_call/cancel and terminal/cancel are the controller\'s (issue 30)', function () {
  this.timeout(60_000);

  it('from an observer: -32600 not_controller; from the controller, for work the demo agent cannot cancel: -32602', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo'], launched);
    const controller = await socketClient(daemon, sockets);
    await controller.request(1, 'initialize', initializeV2);
    const sessionId = (await controller.request(2, 'session/new', { cwd })).result?.sessionId as string;
    const observer = await socketClient(daemon, sockets);
    await observer.request(1, 'initialize', initializeV2);
    expect((await observer.request(2, 'session/resume', { sessionId, cwd })).error).to.equal(undefined);
    for (const [id, method, params] of [[3, 'tool_call/cancel', { sessionId, toolCallId: 'tc-1' }], [4, 'terminal/cancel', { sessionId, terminalId: 'term-1' }]] as const) {
      const refused = await observer.request(id, method, params);
      expect(refused.error, JSON.stringify(refused)).to.deep.include({ code: -32600 });
      expect(refused.error?.data).to.deep.include({ reason: 'not_controller' });
      const unknown = await controller.request(id, method, params);
      expect(unknown.error, JSON.stringify(unknown)).to.deep.include({ code: -32602 });
    }
  });
});
