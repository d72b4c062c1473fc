/**
 * ACP v2 toward editors (issue 30, slices S2 and S3): the SDK 2.4.0 v2 client
 * (`@agentclientprotocol/sdk/experimental/v2`) as the editor of a real `warden acp --agent demo`
 * over stdio. Negotiation by the SDK router's rules (v2 for 2 and later, v1 for 1, -32022
 * below), the v2 prompt lifecycle (acknowledged with its `messageId` at insertion, the
 * `user_message` upsert, `state_update` running / requires_action / idle), chunks with the
 * journal-derived message ids (src/acp/v2-message-ids.ts) the same live and in a replay
 * (`session/resume` with `replayFrom: {type:"start"}`), and a turn cut by a crash of the agent
 * ending `idle` with the typed failure. One warden per describe; nothing left running.
 */
import { client as v1Client } from '@agentclientprotocol/sdk';
import { client, ndJsonStream, type ActiveSession } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { assign, enqueueActions, setup, type AnyActorLogic } from 'xstate';
import type { AgentHandlerEvent, AgentHandlerOutput } from '../../src/protocol/native-agent.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { createInterface } from 'node:readline';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { lives } from '../../src/acp/server-live.js';
import { capabilitiesForAgent } from '../../src/acp/subagent-updates.js';
import { childrenOf, waitUntil } from '../support/processes.js';
import { binDirectory } from '../support/path-editor.js';
import { start } from '../support/raw-editor.js';
import { connectOverStdio, exitCodeOf, killGroups } from '../support/warden-process.js';

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly messageId?: string; readonly state?: string; readonly stopReason?: string; readonly error?: { code: number; message: string; data?: { reason?: string } }; readonly [key: string]: unknown };
  readonly _meta?: Record<string, unknown>;
}

const launched: ChildProcess[] = [];
let dir: string;

/** `warden acp --agent demo` in its own process group, its journal in `dir`. */
function wardenAcp(): ChildProcess {
  // As an editor's agent configuration runs it: `warden acp ...` found by name on PATH, in the project.
  const child = spawn('warden', ['acp', '--store', join(dir, 'journal.sqlite'), '--agent', 'demo', '--env', 'DEMO_WORD_DELAY_MS=20'], {
    cwd: dir,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { PATH: `${binDirectory(dir)}:${process.env.PATH ?? ''}`, HOME: dir },
  });
  launched.push(child);
  child.stderr?.resume();
  return child;
}

/** The SDK v2 client on `child`'s stdio: every update and permission request recorded, each permission allowed. */
function v2Editor(child: ChildProcess) {
  const updates: Notified[] = [];
  const permissions: unknown[] = [];
  const app = client({ name: 'v2-editor-spec' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params as unknown as Notified);
    })
    .onRequest('session/request_permission', async ({ params }) => {
      permissions.push(params);
      return { outcome: { outcome: 'selected' as const, optionId: 'allow' } };
    });
  const connection = app.connect(ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>));
  return { agent: connection.agent, updates, permissions };
}

/** The updates of `sessionId` from index `from` on. */
const ofSession = (updates: readonly Notified[], sessionId: string, from = 0) => updates.slice(from).filter((entry) => entry.sessionId === sessionId);
/** The `state_update`s among `updates`, as `state` or `state:stopReason`. */
const statesOf = (updates: readonly Notified[]) => updates.filter((entry) => entry.update.sessionUpdate === 'state_update').map((entry) => (entry.update.stopReason ? `${entry.update.state}:${entry.update.stopReason}` : entry.update.state));

before(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-editor-')));
});

after(async () => {
  await killGroups(launched, { descendants: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('ACP v2 editor: negotiation', function () {
  this.timeout(30_000);

  it('raw initialize: requested 0 is refused -32022 with the versions offered, then requested 3 opens v2 (info, object-presence capabilities, authMethods)', async () => {
    const child = wardenAcp();
    const lines = createInterface({ input: child.stdout as Readable })[Symbol.asyncIterator]();
    const ask = async (line: unknown) => {
      child.stdin?.write(`${JSON.stringify(line)}\n`);
      return JSON.parse((await lines.next()).value as string) as { id: number; result?: Record<string, unknown>; error?: { code: number; data?: unknown } };
    };
    const refused = await ask({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 0, info: { name: 'raw', version: '1' } } });
    expect(refused.error?.code).to.equal(-32022);
    expect(refused.error?.data).to.deep.equal({ requested: 0, supported: [1, 2] });
    const opened = await ask({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: 3, info: { name: 'raw', version: '1' }, capabilities: {} } });
    expect(opened.result?.protocolVersion).to.equal(2);
    expect(opened.result?.info).to.include({ name: 'acp-warden-demo' });
    const capabilities = opened.result?.capabilities as { session: Record<string, unknown> };
    expect(capabilities.session).to.include.keys('prompt', 'mcp', 'delete');
    expect(opened.result?.authMethods).to.deep.equal([]);
    expect(opened.result).to.not.have.any.keys('agentCapabilities', 'agentInfo');
    child.stdin?.end();
  });

  it('the SDK v1 client still negotiates 1, with v1 names', async () => {
    const child = wardenAcp();
    const agent = connectOverStdio(v1Client({ name: 'v1-editor' }), child);
    const answer = (await agent.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'v1-editor', version: '1' } })) as Record<string, unknown>;
    expect(answer.protocolVersion).to.equal(1);
    expect(answer).to.include.keys('agentCapabilities', 'agentInfo');
    child.stdin?.end();
  });

  it('a v2 editor\'s unknown capability keys and _meta reach the connection\'s context (in-process server)', async () => {
    const editor = start({ ...demoAgent(), protocolVersions: [1, 2] });
    const answer = (await editor.request('initialize', { protocolVersion: 2, info: { name: 'ctx', version: '1' }, capabilities: { subagents: {}, auth: { terminal: {} }, _meta: { 'x/flag': 1 } }, _meta: { trace: 'abc' } })) as Record<string, unknown>;
    expect(answer.protocolVersion).to.equal(2);
    const context = lives.get(editor.server)?.context as unknown as { protocolVersion: number; clientCapabilities: Record<string, unknown>; clientInfo: unknown; _meta: unknown };
    expect(context.protocolVersion).to.equal(2);
    expect(context.clientCapabilities.subagents).to.deep.equal({});
    expect(context.clientCapabilities._meta).to.deep.equal({ 'x/flag': 1 });
    expect(context.clientCapabilities).to.deep.include({ fs: { readTextFile: false, writeTextFile: false }, terminal: false, auth: { terminal: true } });
    expect(context._meta).to.deep.equal({ trace: 'abc' });
    expect(context.clientInfo).to.deep.equal({ name: 'ctx', version: '1' });
  });

  it('a v1 editor\'s capability keys beyond the stable schema reach the connection\'s context and the agent\'s initialize; subagents only as an object (in-process server)', async () => {
    const editor = start({ ...demoAgent(), protocolVersions: [1, 2] });
    const answer = (await editor.request('initialize', { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true }, 'x.vendor/preview': { level: 2 }, positionEncodings: ['utf-16'], _meta: { 'x/flag': 1 } }, clientInfo: { name: 'ctx', version: '1' } })) as Record<string, unknown>;
    expect(answer.protocolVersion).to.equal(1);
    const context = lives.get(editor.server)?.context as unknown as { clientCapabilities: Record<string, unknown> };
    expect(context.clientCapabilities).to.deep.include({ fs: { readTextFile: true, writeTextFile: false }, terminal: false, 'x.vendor/preview': { level: 2 }, positionEncodings: ['utf-16'], _meta: { 'x/flag': 1 } });
    expect(capabilitiesForAgent(context as never)).to.deep.include({ 'x.vendor/preview': { level: 2 }, positionEncodings: ['utf-16'] });
    const refused = start({ ...demoAgent(), protocolVersions: [1, 2] });
    await refused.request('initialize', { protocolVersion: 1, clientCapabilities: { subagents: true }, clientInfo: { name: 'ctx', version: '1' } });
    expect(lives.get(refused.server)?.context?.clientCapabilities).to.not.have.property('subagents');
  });

  it('no fs or terminal request reaches a v2 editor: the agent gets the refusal of an editor without the capability (in-process server)', async () => {
    const refusals: unknown[] = [];
    const logic = setup({ types: {} as { events: AgentHandlerEvent; emitted: AgentHandlerOutput } }).createMachine({
      on: {
        'session.new': {
          actions: enqueueActions(({ event, enqueue }) => {
            enqueue.emit({ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { sessionId: 's1' } });
            enqueue.emit({ type: 'acp.clientRequest', key: 'fs', method: 'fs/read_text_file', params: { sessionId: 's1', path: '/etc/hostname' } });
            enqueue.emit({ type: 'acp.clientRequest', key: 'term', method: 'terminal/create', params: { sessionId: 's1', command: 'true' } });
          }),
        },
        'client.error': { actions: assign(({ event }) => (refusals.push(event), {})) },
      },
    });
    const editor = start({ logic: logic as AnyActorLogic, agentInfo: { name: 'asks-files', version: '0' }, protocolVersions: [1, 2] });
    await editor.request('initialize', { protocolVersion: 2, info: { name: 'ctx', version: '1' }, capabilities: { fs: { readTextFile: true }, terminal: true } });
    await editor.request('session/new', { cwd: '/tmp' });
    await waitUntil(() => refusals.length === 2, 'both refusals');
    expect(editor.clientRequests).to.deep.equal([]);
    expect(refusals.map((event) => (event as { key: string; error: { code: number; message: string } })).map(({ key, error }) => [key, error.code, error.message])).to.deep.equal([
      ['fs', -32601, 'The client did not advertise support for fs/read_text_file'],
      ['term', -32601, 'The client did not advertise support for terminal/create'],
    ]);
  });
});

describe('ACP v2 editor: the prompt lifecycle against warden acp --agent demo', function () {
  this.timeout(30_000);
  let child: ChildProcess;
  let editor: ReturnType<typeof v2Editor>;

  before(async () => {
    child = wardenAcp();
    editor = v2Editor(child);
    const answer = await editor.agent.request('initialize', { protocolVersion: 2, info: { name: 'v2-editor-spec', version: '1' }, capabilities: {} });
    expect(answer.protocolVersion).to.equal(2);
  });

  /** A new session of the shared warden. */
  const session = (): Promise<ActiveSession> => editor.agent.buildSession(dir).start();

  let turnSession: ActiveSession;
  let liveIds: string[];

  it('a turn: acknowledged with its messageId, user_message, running, chunks with the turn\'s id, idle end_turn (readTextUntilIdle)', async () => {
    turnSession = await session();
    const from = editor.updates.length;
    const ack = await turnSession.prompt('hello there');
    expect(ack.messageId).to.match(/^user-\d+$/u);
    const text = await turnSession.readTextUntilIdle();
    expect(text).to.not.equal('');
    const updates = ofSession(editor.updates, turnSession.sessionId, from);
    const user = updates.find((entry) => entry.update.sessionUpdate === 'user_message');
    expect(user?.update.messageId).to.equal(ack.messageId);
    expect(user?._meta?.['acp-warden/seq']).to.be.a('number');
    expect(statesOf(updates)).to.deep.equal(['running', 'idle:end_turn']);
    const chunks = updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk');
    expect(chunks).to.not.be.empty;
    liveIds = [...new Set(chunks.map((entry) => entry.update.messageId as string))];
    expect(liveIds).to.deep.equal([ack.messageId.replace('user-', 'agent-')]);
    expect(chunks.every((entry) => typeof entry._meta?.['acp-warden/seq'] === 'number')).to.equal(true);
    // running comes after the prompt's insertion, idle after the last chunk.
    const kinds = updates.map((entry) => (entry.update.sessionUpdate === 'state_update' ? entry.update.state : entry.update.sessionUpdate));
    expect(kinds.indexOf('running')).to.be.greaterThan(kinds.indexOf('user_message'));
    expect(kinds.at(-1)).to.equal('idle');
  });

  it('idempotencyKey: a retry after the turn is acknowledged with the original messageId and inserts nothing; the same key for another prompt is refused -32602', async () => {
    const active = await session();
    const prompt = [{ type: 'text', text: 'hello once' }];
    const from = editor.updates.length;
    const first = (await editor.agent.request('session/prompt', { sessionId: active.sessionId, prompt, idempotencyKey: 'key-1' } as never)) as { messageId: string };
    expect(first.messageId).to.match(/^user-\d+$/u);
    await waitUntil(() => statesOf(ofSession(editor.updates, active.sessionId, from)).includes('idle:end_turn'), 'the first turn to end');
    const after = editor.updates.length;
    const retry = (await editor.agent.request('session/prompt', { sessionId: active.sessionId, prompt, idempotencyKey: 'key-1' } as never)) as { messageId: string };
    expect(retry.messageId).to.equal(first.messageId);
    const reused = await editor.agent.request('session/prompt', { sessionId: active.sessionId, prompt: [{ type: 'text', text: 'another' }], idempotencyKey: 'key-1' } as never).then(() => undefined, (error: { code: number; data?: { reason?: string } }) => error);
    expect(reused?.code).to.equal(-32602);
    expect(reused?.data?.reason).to.equal('idempotency_key_reused');
    // Nothing was inserted again: no user message, no new turn.
    expect(ofSession(editor.updates, active.sessionId, after).map((entry) => entry.update.sessionUpdate as string)).to.not.include('user_message');
  });

  it('session/cancel: the acknowledged turn ends idle cancelled', async () => {
    const active = await session();
    const from = editor.updates.length;
    await active.prompt('tell me a long story about cancelling things politely and quickly');
    await editor.agent.notify('session/cancel', { sessionId: active.sessionId });
    await active.readTextUntilIdle();
    expect(statesOf(ofSession(editor.updates, active.sessionId, from))).to.deep.equal(['running', 'idle:cancelled']);
  });

  it('a permission: requires_action while the editor is asked (v2 title and tool-call subject), then running, then idle', async () => {
    const active = await session();
    const from = editor.updates.length;
    const asked = editor.permissions.length;
    await active.prompt('please run the tool');
    await active.readTextUntilIdle();
    expect(editor.permissions.length).to.equal(asked + 1);
    const permission = editor.permissions.at(-1) as { title: string; subject: { type: string; toolCall: { toolCallId: string } } };
    expect(permission.title).to.be.a('string').and.not.equal('');
    expect(permission.subject.type).to.equal('tool_call');
    expect(statesOf(ofSession(editor.updates, active.sessionId, from))).to.deep.equal(['running', 'requires_action', 'running', 'idle:end_turn']);
  });

  it('two prompts sent at once: both acknowledged, in order, each turn its own ids', async () => {
    const active = await session();
    const from = editor.updates.length;
    const acked: string[] = [];
    const first = active.prompt('first').then((ack) => acked.push(ack.messageId));
    const second = active.prompt('second').then((ack) => acked.push(ack.messageId));
    await first;
    await active.readTextUntilIdle();
    await second;
    await active.readTextUntilIdle();
    const seqs = acked.map((id) => Number(id.replace('user-', '')));
    expect(seqs[0]).to.be.lessThan(seqs[1] as number);
    const updates = ofSession(editor.updates, active.sessionId, from);
    expect(updates.filter((entry) => entry.update.sessionUpdate === 'user_message').map((entry) => entry.update.messageId)).to.deep.equal(acked);
    expect(statesOf(updates)).to.deep.equal(['running', 'idle:end_turn', 'running', 'idle:end_turn']);
  });

  it('$/cancel_request of a prompt still queued behind a running turn: -32800, never inserted; the running turn ends end_turn', async () => {
    const active = await session();
    const from = editor.updates.length;
    const first = await active.prompt('a first prompt that runs for a little while with several words');
    const abort = new AbortController();
    const queued = active.prompt('a second one, withdrawn', { cancellationSignal: abort.signal }).then(() => undefined, (error: { code: number }) => error);
    abort.abort();
    expect((await queued)?.code).to.equal(-32800);
    await active.readTextUntilIdle();
    const updates = ofSession(editor.updates, active.sessionId, from);
    expect(updates.filter((entry) => entry.update.sessionUpdate === 'user_message').map((entry) => entry.update.messageId)).to.deep.equal([first.messageId]);
    expect(statesOf(updates)).to.deep.equal(['running', 'idle:end_turn']);
  });

  it('session/resume with replayFrom start replays the turn with the live messageIds, then replay_complete, then the state; without replayFrom no marker; an unknown cursor is -32602', async () => {
    const sessionId = turnSession.sessionId;
    turnSession.dispose();
    await editor.agent.request('session/close', { sessionId });
    const refused = await editor.agent.request('session/resume', { sessionId, cwd: dir, replayFrom: { type: '_later' } }).then(() => undefined, (error: { code: number }) => error);
    expect(refused?.code).to.equal(-32602);
    const from = editor.updates.length;
    await editor.agent.request('session/resume', { sessionId, cwd: dir, replayFrom: { type: 'start' } });
    // The current state goes out after the replay, before the answer; the SDK may hand its notification on after the answer.
    await waitUntil(() => statesOf(ofSession(editor.updates, sessionId, from)).length > 0, 'the state snapshot');
    const replay = ofSession(editor.updates, sessionId, from);
    const chunks = replay.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk');
    expect([...new Set(chunks.map((entry) => entry.update.messageId))]).to.deep.equal(liveIds);
    const user = replay.filter((entry) => entry.update.sessionUpdate === 'user_message_chunk').map((entry) => entry.update.messageId);
    expect(new Set(user)).to.deep.equal(new Set([liveIds[0]?.replace('agent-', 'user-')]));
    // The replayed turn's end (its journaled idle with the stop reason), then the current state.
    expect(statesOf(replay)).to.deep.equal(['idle:end_turn', 'idle']);
    expect(replay.at(-1)?.update.sessionUpdate).to.equal('state_update');
    // replay_complete once, after every replayed update (the turn's end among them), before the state snapshot (RFD "session-replay-complete").
    const kinds = replay.map((entry) => entry.update.sessionUpdate as string);
    expect(kinds.filter((kind) => kind === 'replay_complete')).to.have.length(1);
    expect(kinds.indexOf('replay_complete')).to.equal(kinds.length - 2);
    expect(kinds.indexOf('state_update')).to.be.lessThan(kinds.indexOf('replay_complete'));
    // A resume without replayFrom replays nothing and says nothing of it.
    const again = editor.updates.length;
    await editor.agent.request('session/resume', { sessionId, cwd: dir });
    await waitUntil(() => statesOf(ofSession(editor.updates, sessionId, again)).length > 0, 'the state snapshot of the plain resume');
    expect(ofSession(editor.updates, sessionId, again).map((entry) => entry.update.sessionUpdate as string)).to.not.include('replay_complete');
  });

  it('session basics in v2 terms: list, set_config_option (by configId), auth/logout onto logout, auth/login refused without auth methods', async () => {
    const active = await session();
    expect(active.configOptions?.[0]).to.include({ configId: 'model' });
    const set = await active.setConfigOption({ configId: 'model', value: 'demo-thorough' } as never);
    expect(set.configOptions?.find((option) => option.configId === 'model')).to.include({ currentValue: 'demo-thorough' });
    const listed = (await editor.agent.request('session/list', {})) as { sessions: Array<{ sessionId: string }> };
    expect(listed.sessions.map((entry) => entry.sessionId)).to.include(active.sessionId);
    expect(await editor.agent.request('auth/logout', {})).to.deep.equal({});
    const login = await editor.agent.request('auth/login', { methodId: 'none' }).then(() => undefined, (error: { code: number }) => error);
    expect(login?.code).to.equal(-32601);
  });

  it('the agent crashes mid-turn: the acknowledged turn ends idle with stopReason error and data.reason agent_crashed', async () => {
    const active = await session();
    const from = editor.updates.length;
    await active.prompt('tell me a long story about crashing agents and how warden restarts them');
    await waitUntil(() => ofSession(editor.updates, active.sessionId, from).some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the first chunk');
    const agentProcess = childrenOf(child.pid as number).find((entry) => entry.cmdline.includes('demo-agent'));
    expect(agentProcess, 'the demo agent process').to.not.equal(undefined);
    process.kill(agentProcess?.pid as number, 'SIGKILL');
    await active.readTextUntilIdle();
    const idle = ofSession(editor.updates, active.sessionId, from).filter((entry) => entry.update.sessionUpdate === 'state_update').at(-1);
    expect(idle?.update).to.include({ state: 'idle', stopReason: 'error' });
    expect(idle?.update.error?.data?.reason).to.equal('agent_crashed');
  });
});

describe('ACP v2 editor: input closed mid-turn', function () {
  this.timeout(30_000);

  it('the editor closes its input after the prompt is acknowledged: the turn still ends idle before warden exits', async () => {
    const child = wardenAcp();
    const exited = exitCodeOf(child);
    const editor = v2Editor(child);
    await editor.agent.request('initialize', { protocolVersion: 2, info: { name: 'v2-editor-spec', version: '1' }, capabilities: {} });
    const active = await editor.agent.buildSession(dir).start();
    const ack = await active.prompt('say a few words before you go');
    child.stdin?.end();
    expect(await exited).to.equal(0);
    const updates = ofSession(editor.updates, active.sessionId);
    expect(updates.find((entry) => entry.update.sessionUpdate === 'user_message')?.update.messageId).to.equal(ack.messageId);
    expect(statesOf(updates).at(-1)).to.equal('idle:end_turn');
  });
});
