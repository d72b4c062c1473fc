/**
 * An ACP v2 client on a host of a cluster (issue 30): relayed to the owner of its session as a
 * v1 client is (docs/cluster.md, "Routing"). Its link to the owner speaks v1 with the relay mark
 * (src/acp/relay-link.ts): the owner sends the core's own output, the client's host renders it in
 * v2. The SDK 2.4.0 v2 client on host B drives a session host A owns: another client's turn seen
 * observed, the replay, a turn acknowledged with its `messageId`, a permission, cancel, the v2-only
 * cancels answered by A, a turn cut by a kill -9 of A's agent ending `idle` with its typed failure;
 * its new session is placed on a less loaded host; a queued prompt withdrawn by `$/cancel_request`;
 * an idempotent v2 prompt across the relay and a failover. Real `warden serve` hosts on one PostgreSQL, the demo agent.
 */
import { client as v2Client } from '@agentclientprotocol/sdk/experimental/v2';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { expect } from 'chai';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { clusterFixture } from '../support/cluster.js';
import { waitUntil } from '../support/processes.js';
import { postgresTurnEntries } from '../support/journal-rows.js';
import { queryRows } from '../support/postgres.js';
import { freePort } from '../support/free-port.js';
import { demoAgentsOf, initializeParams, socketClient, startServe, type Frame, type ServeDaemon } from '../support/serve-daemon.js';

const initializeV2 = { protocolVersion: 2, info: { name: 'v2-routing-spec', version: '1' }, capabilities: {} };

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly messageId?: string; readonly state?: string; readonly stopReason?: string; readonly error?: { code: number; data?: { reason?: string } } };
}

/** The SDK v2 client of `daemon`: every update and permission request recorded in arrival order, each permission allowed. */
function v2Editor(daemon: ServeDaemon) {
  const updates: Notified[] = [];
  const permissions: unknown[] = [];
  const app = v2Client({ name: 'v2-routing-spec' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params as unknown as Notified);
    })
    .onRequest('session/request_permission', async ({ params }) => {
      permissions.push(params);
      return { outcome: { outcome: 'selected' as const, optionId: 'allow' } };
    });
  const stream = createWebSocketStream(daemon.url, { WebSocket: WebSocket as never, headers: { Authorization: `Bearer ${daemon.token}` } });
  const connection = app.connect(stream as never);
  const request = (method: string, params: unknown) => connection.agent.request(method as never, params as never) as Promise<Record<string, unknown>>;
  return { request, notify: (method: string, params: unknown) => connection.agent.notify(method as never, params as never), updates, permissions, close: () => connection.close() };
}

const statesOf = (updates: readonly Notified[]) => updates.filter((entry) => entry.update.sessionUpdate === 'state_update').map((entry) => (entry.update.stopReason ? `${entry.update.state}:${entry.update.stopReason}` : `${entry.update.state}`));
const kindsOf = (updates: readonly Notified[]) => updates.map((entry) => (entry.update.sessionUpdate === 'state_update' ? `${entry.update.state}` : entry.update.sessionUpdate));
const collapse = (kinds: readonly string[]) => kinds.filter((kind, index) => kind !== kinds[index - 1]);
/** A prompt the demo agent echoes for about 6 s (300 words at 20 ms): still running when the test cancels it or kills its agent. */
const longPrompt = Array.from({ length: 300 }, (_, n) => `w${n}`).join(' ');
const text = (words: string) => [{ type: 'text', text: words }];

describe('routing: an ACP v2 client on a host that does not own its session (issue 30)', function () {
  this.timeout(180_000);
  const fixture = clusterFixture('v2routing');

  /** A host on the shared token file, advertised (a member: forwarded to, taking sessions over) unless `advertised` is false; `extra`: more arguments. */
  async function host(name: string, extra: readonly string[] = [], advertised = true): Promise<ServeDaemon & { readonly address: string }> {
    const port = await freePort();
    const address = `ws://127.0.0.1:${port}/acp`;
    const args = ['--listen', `127.0.0.1:${port}`, '--token-file', join(fixture.state, 'token'), '--lease', '2', '--agent', 'demo', '--store', fixture.url, ...(advertised ? ['--advertise', address] : []), '--env', 'DEMO_WORD_DELAY_MS=20', ...extra];
    return { ...(await startServe(join(fixture.state, name), args, fixture.launched)), address };
  }
  const ownerPid = async (sessionId: string) =>
    (await queryRows<{ pid: number }>(fixture.url, 'SELECT h.pid FROM sessions s JOIN hosts h ON h.host_id = s.owner_host WHERE s.session_id = $1', [sessionId]))[0]?.pid;
  /** A turn's updates from `from` on, once its `idle` came. */
  const turn = async (editor: ReturnType<typeof v2Editor>, sessionId: string, from: number) => {
    const ofSession = () => editor.updates.slice(from).filter((entry) => entry.sessionId === sessionId);
    await waitUntil(() => statesOf(ofSession()).some((state) => state.startsWith('idle')), 'the turn to end idle', 30_000);
    return ofSession();
  };

  it('relayed to the owner: an observed turn, the replay, a turn acked with its messageId, a permission, cancel, the v2 cancels, a kill -9 of the agent ending idle agent_crashed; all run on A', async () => {
    const [a, b] = [await host('a'), await host('b')];
    const maker = await socketClient(a, fixture.sockets);
    await maker.request(1, 'initialize', initializeParams('maker'));
    const sessionId = (await maker.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] })).result?.sessionId as string;
    expect((await maker.request(3, 'session/prompt', { sessionId, prompt: text('hello history') })).result?.stopReason).to.equal('end_turn');

    const editor = v2Editor(b);
    expect((await editor.request('initialize', initializeV2)).protocolVersion).to.equal(2);
    // The replay through B: A's history, replay_complete, the state, then the answer.
    await editor.request('session/resume', { sessionId, cwd: fixture.state, replayFrom: { type: 'start' } });
    await waitUntil(() => statesOf(editor.updates).length > 0, 'the state snapshot');
    const replay = kindsOf(editor.updates.filter((entry) => entry.sessionId === sessionId));
    expect(replay).to.include.members(['user_message_chunk', 'agent_message_chunk']);
    expect(replay.slice(-2)).to.deep.equal(['replay_complete', 'idle']);

    // The v1 controller on A prompts: the v2 observer on B sees the turn in v2, once, in order.
    let from = editor.updates.length;
    expect((await maker.request(4, 'session/prompt', { sessionId, prompt: text('hello observer') })).result?.stopReason).to.equal('end_turn');
    expect(collapse(kindsOf(await turn(editor, sessionId, from)))).to.deep.equal(['user_message', 'running', 'agent_message_chunk', 'idle']);

    expect(await editor.request('_acp-warden/take_control', { sessionId })).to.deep.equal({ role: 'controller' });
    from = editor.updates.length;
    const ack = (await editor.request('session/prompt', { sessionId, prompt: text('hello relay') })) as { messageId: string };
    expect(ack.messageId).to.match(/^user-\d+$/u);
    const own = await turn(editor, sessionId, from);
    expect(statesOf(own)).to.deep.equal(['running', 'idle:end_turn']);
    expect(own.find((entry) => entry.update.sessionUpdate === 'user_message')?.update.messageId).to.equal(ack.messageId);
    expect([...new Set(own.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => entry.update.messageId))]).to.deep.equal([ack.messageId.replace('user-', 'agent-')]);

    from = editor.updates.length;
    await editor.request('session/prompt', { sessionId, prompt: text('please run the tool') });
    expect(statesOf(await turn(editor, sessionId, from))).to.deep.equal(['running', 'requires_action', 'running', 'idle:end_turn']);
    expect(editor.permissions).to.have.length(1);

    from = editor.updates.length;
    await editor.request('session/prompt', { sessionId, prompt: text(longPrompt) });
    await editor.notify('session/cancel', { sessionId });
    expect(statesOf(await turn(editor, sessionId, from))).to.deep.equal(['running', 'idle:cancelled']);

    // Answered by A's hub (the demo agent cancels no work: -32602), not refused at B (where the session is not attached).
    for (const [method, params] of [['tool_call/cancel', { sessionId, toolCallId: 'tc-1' }], ['terminal/cancel', { sessionId, terminalId: 'term-1' }]] as const) {
      const refused = (await editor.request(method, params).then(() => undefined, (error: unknown) => error)) as { code?: number } | undefined;
      expect(refused?.code, method).to.equal(-32602);
    }

    from = editor.updates.length;
    await editor.request('session/prompt', { sessionId, prompt: text(longPrompt) });
    await waitUntil(() => editor.updates.slice(from).some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the first chunk');
    const [agentPid] = demoAgentsOf(a.process.pid);
    expect(agentPid, 'the demo agent on A').to.not.equal(undefined);
    process.kill(agentPid as number, 'SIGKILL');
    const cut = statesOf(await turn(editor, sessionId, from));
    expect(cut.at(-1)).to.equal('idle:error');
    expect(editor.updates.filter((entry) => entry.update.sessionUpdate === 'state_update').at(-1)?.update.error?.data?.reason).to.equal('agent_crashed');

    expect(await ownerPid(sessionId)).to.equal(a.process.pid);
    editor.close();
  });

  it('a v2 client\'s new session is placed on a less loaded host, as a v1 client\'s is, and its turn relayed', async () => {
    // A places new sessions on any less loaded host (--load-limit 0).
    const [a, b] = [await host('a', ['--load-limit', '0']), await host('b')];
    const maker = await socketClient(a, fixture.sockets);
    await maker.request(1, 'initialize', initializeParams('maker'));
    const first = (await maker.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] })).result?.sessionId as string;
    expect(await ownerPid(first)).to.equal(a.process.pid);
    // A runs one session, B none: the v2 client's new session on A goes to B.
    const onA = await socketClient(a, fixture.sockets);
    expect((await onA.request(1, 'initialize', initializeV2)).result?.protocolVersion).to.equal(2);
    const made = await onA.request(2, 'session/new', { cwd: fixture.state });
    const sessionId = made.result?.sessionId as string;
    expect(sessionId, JSON.stringify(made)).to.be.a('string');
    expect(await ownerPid(sessionId)).to.equal(b.process.pid);
    const ack = await onA.request(3, 'session/prompt', { sessionId, prompt: text('hello placed') });
    expect(ack.result?.messageId, JSON.stringify(ack)).to.match(/^user-\d+$/u);
    await waitUntil(() => onA.frames.some((frame) => (frame.params?.update as { state?: string } | undefined)?.state === 'idle'), 'the turn to end idle', 30_000);
    const kinds = onA.frames.filter((frame) => frame.params?.sessionId === sessionId).map((frame) => (frame.params?.update as { state?: string } | undefined)?.state ?? frame.params?.update?.sessionUpdate);
    expect(collapse(kinds as string[]).slice(-4)).to.deep.equal(['user_message', 'running', 'agent_message_chunk', 'idle']);
  });

  it('an idempotent v2 prompt: relayed to A, retried there; a queued prompt withdrawn by $/cancel_request (-32800); A killed -9 mid-turn (the relayed turn ends idle peer_lost), retried on B after B took over and through C: one prompt entry, one turn, the same messageId', async () => {
    // C does not advertise: no takeover loop of its own, so B is the one that takes the session over.
    const [a, b, c] = [await host('a'), await host('b'), await host('c', [], false)];
    const maker = await socketClient(a, fixture.sockets);
    await maker.request(1, 'initialize', initializeV2);
    const sessionId = (await maker.request(2, 'session/new', { cwd: fixture.state })).result?.sessionId as string;
    maker.socket.close();
    await maker.closed;

    /** A v2 client on `on` that resumed the session (tried again while the killed owner's lease runs: refused session_owned). */
    const resumed = async (on: ServeDaemon) => {
      const client = await socketClient(on, fixture.sockets);
      await client.request(1, 'initialize', initializeV2);
      let answer: Frame | undefined;
      let id = 10;
      await waitUntil(async () => {
        answer = await client.request(id++, 'session/resume', { sessionId, cwd: fixture.state });
        return answer.error?.data?.reason !== 'session_owned';
      }, 'the resume to be served', 30_000, 250);
      expect(answer?.error, JSON.stringify(answer?.error)).to.equal(undefined);
      await client.request(id, '_acp-warden/take_control', { sessionId });
      return client;
    };
    const keyed = { sessionId, prompt: text('hello'), idempotencyKey: 'v2-failover' };
    const cutKeyed = { sessionId, prompt: text('tool'), idempotencyKey: 'v2-cut' };
    /** The turn ends (`idle` with a stop reason: not a resume's state snapshot) among `frames`. */
    const idles = (frames: readonly Frame[]) => frames.filter((frame) => frame.params?.sessionId === sessionId && (frame.params?.update as { state?: string; stopReason?: string } | undefined)?.stopReason !== undefined);
    const userMessages = (frames: readonly Frame[]) => frames.filter((frame) => frame.params?.sessionId === sessionId && frame.params?.update?.sessionUpdate === 'user_message');

    const viaB = await resumed(b);
    const original = await viaB.request(100, 'session/prompt', keyed);
    const messageId = original.result?.messageId as string;
    expect(messageId, JSON.stringify(original)).to.match(/^user-\d+$/u);
    await waitUntil(() => idles(viaB.frames).length === 1, 'the turn to end');
    expect(await viaB.request(101, 'session/prompt', keyed)).to.have.deep.property('result', { messageId });
    expect(userMessages(viaB.frames)).to.have.length(1);

    // A turn held on its permission on A, relayed through B; A killed -9: it ends idle with peer_lost.
    expect((await viaB.request(102, 'session/prompt', cutKeyed)).result?.messageId).to.match(/^user-\d+$/u);
    await waitUntil(() => viaB.frames.some((frame) => frame.method === 'session/request_permission'), 'the permission request from A', 30_000);
    // A prompt queued behind that turn, withdrawn by $/cancel_request through the relay: -32800, never inserted.
    viaB.send({ id: 103, method: 'session/prompt', params: { sessionId, prompt: text('queued') } });
    viaB.send({ method: '$/cancel_request', params: { requestId: 103 } });
    const answerOf = (id: number) => viaB.frames.find((frame) => frame.id === id && frame.method === undefined);
    await waitUntil(() => answerOf(103) !== undefined, 'the withdrawn prompt\'s answer');
    expect(answerOf(103)?.error?.code, JSON.stringify(answerOf(103))).to.equal(-32800);
    a.process.kill('SIGKILL');
    await a.exited;
    await waitUntil(() => idles(viaB.frames).length === 2, 'the cut turn to end idle');
    expect(idles(viaB.frames).at(-1)?.params?.update).to.deep.include({ state: 'idle', stopReason: 'error' });
    expect((idles(viaB.frames).at(-1)?.params?.update as { error?: { data?: { reason?: string } } }).error?.data?.reason).to.equal('peer_lost');
    expect(userMessages(viaB.frames), 'the withdrawn prompt was never inserted').to.have.length(2);

    // B takes the session over (its client's resume, once A's lease ran out); a retry there and one through C.
    const onB = await resumed(b);
    expect(await ownerPid(sessionId)).to.equal(b.process.pid);
    expect(await onB.request(100, 'session/prompt', keyed)).to.have.deep.property('result', { messageId });
    const cutRetry = await onB.request(101, 'session/prompt', cutKeyed);
    expect(cutRetry.error?.data, JSON.stringify(cutRetry)).to.deep.include({ reason: 'host_lost' });
    const viaC = await resumed(c);
    expect(await viaC.request(100, 'session/prompt', keyed)).to.have.deep.property('result', { messageId });
    expect(await ownerPid(sessionId)).to.equal(b.process.pid);
    expect(userMessages(onB.frames)).to.deep.equal([]);
    expect(userMessages(viaC.frames)).to.deep.equal([]);

    const rows = await postgresTurnEntries(fixture.url, sessionId);
    expect(rows).to.deep.equal([
      { kind: 'prompt', key: 'v2-failover' },
      { kind: 'stop', key: null },
      { kind: 'prompt', key: 'v2-cut' },
      { kind: 'error', key: null },
    ]);
  });
});
