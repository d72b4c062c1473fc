/**
 * One client connection's forwarding (src/cluster/forwarding.ts) against a fake owner host: a
 * `ws` server on 127.0.0.1 that checks the bearer token and speaks raw JSON-RPC as a
 * `warden serve` would. What the client is given (`deliver`) is asserted frame by frame; no
 * database (where a session is owned is routing-table.ts's pure `sessionLocationOf`, below).
 */
import { expect } from 'chai';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AgentEventContext, AgentHandlerOutput, AgentRequestEvent } from '../../src/protocol/native-agent.js';
import { Forwarding } from '../../src/cluster/forwarding.js';
import { sessionLocationOf } from '../../src/cluster/routing-table.js';
import { ReadGate } from '../../src/port/read-gate.js';
import { waitUntil } from '../support/processes.js';

const token = 'cluster-token';
const client: AgentEventContext = { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true } }, clientInfo: { name: 'editor', version: '1' } };

/** A fake owner host: every frame it got per socket, the sockets, and the Authorization each presented. */
async function fakeOwner(): Promise<{ url: string; frames: Array<Record<string, any>>; sockets: WebSocket[]; authorizations: string[]; close(): Promise<void> }> {
  const frames: Array<Record<string, any>> = [];
  const sockets: WebSocket[] = [];
  const authorizations: string[] = [];
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    verifyClient: (info: { req: IncomingMessage }, done: (ok: boolean, code?: number) => void) => {
      authorizations.push(String(info.req.headers.authorization));
      done(info.req.headers.authorization === `Bearer ${token}`, 401);
    },
  });
  await new Promise((resolve) => server.once('listening', resolve));
  server.on('connection', (socket) => {
    sockets.push(socket);
    socket.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as Record<string, any>;
      frames.push(frame);
      if (frame.method === 'initialize') socket.send(JSON.stringify({ jsonrpc: '2.0', id: frame.id, result: { protocolVersion: 1, agentCapabilities: {} } }));
    });
  });
  const { port } = server.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}/acp`,
    frames,
    sockets,
    authorizations,
    close: () => {
      for (const socket of server.clients) socket.terminate();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const request = (requestId: string, method: string, params: Record<string, unknown>, type: AgentRequestEvent['type'] = 'session.resume'): AgentRequestEvent => ({ type, requestId, method, params, context: client });

describe('forwarding: one client connection relayed to the owner host of its session', () => {
  const opened: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const one of opened.splice(0)) await one.close();
  });

  function forwardingTo(): { forwarding: Forwarding; delivered: AgentHandlerOutput[]; gate: ReadGate } {
    const delivered: AgentHandlerOutput[] = [];
    const gate = new ReadGate();
    const forwarding = new Forwarding({ deliver: (output) => delivered.push(output), gate }, { token });
    opened.push(forwarding);
    return { forwarding, delivered, gate };
  }

  it('sends the client\'s own resume after initialize, with the token; relays answers, updates with their seq, the agent\'s requests and their answers, cancels', async () => {
    const owner = await fakeOwner();
    opened.push(owner);
    const { forwarding, delivered } = forwardingTo();
    const resume = request('7', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [], _meta: { 'acp-warden/after': 4 } });
    forwarding.attach(resume, 's1', { hostId: 'host-a', url: owner.url });
    expect(forwarding.relays('s1')).to.equal(true);
    await waitUntil(() => owner.frames.length >= 2, 'initialize and the resume at the owner');
    expect(owner.authorizations).to.deep.equal([`Bearer ${token}`]);
    expect(owner.frames[0]).to.include({ method: 'initialize' });
    expect(owner.frames[0]!.params).to.deep.equal({ protocolVersion: 1, clientCapabilities: client.clientCapabilities, clientInfo: client.clientInfo });
    expect(owner.frames[1]).to.deep.include({ method: 'session/resume', params: resume.params });
    const socket = owner.sockets[0] as WebSocket;
    // The replay, then the answer, in that order; a permission request; an extension notification.
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } }, _meta: { 'acp-warden/seq': 5 } } }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[1]!.id, result: { modes: null } }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 'p1', method: 'session/request_permission', params: { sessionId: 's1', options: [] } }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: '_vendor/hello', params: { x: 1 } }));
    await waitUntil(() => delivered.length >= 4, 'four outputs');
    expect(delivered[0]).to.deep.equal({ type: 'acp.update', sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } }, seq: 5 });
    expect(delivered[1]).to.deep.equal({ type: 'acp.respond', requestId: '7', result: { modes: null } });
    const asked = delivered[2] as Extract<AgentHandlerOutput, { type: 'acp.clientRequest' }>;
    expect(asked).to.deep.include({ type: 'acp.clientRequest', method: 'session/request_permission', params: { sessionId: 's1', options: [] } });
    expect(delivered[3]).to.deep.equal({ type: 'acp.notify', method: '_vendor/hello', params: { x: 1 } });
    // The client's answer goes back under the owner's id; a key that is not the forwarding's is not taken.
    expect(forwarding.answer('k1', { result: {} })).to.equal(false);
    expect(forwarding.answer(asked.key, { result: { outcome: { outcome: 'selected', optionId: 'allow' } } })).to.equal(true);
    // A prompt, then cancels of both kinds.
    expect(forwarding.request(request('8', 'session/prompt', { sessionId: 's1', prompt: [] }, 'session.prompt'), 's1')).to.equal(true);
    expect(forwarding.request(request('9', 'session/prompt', { sessionId: 'other', prompt: [] }, 'session.prompt'), 'other')).to.equal(false);
    expect(forwarding.cancel('s1', '8')).to.equal(true);
    expect(forwarding.cancel('s1', '')).to.equal(true);
    expect(forwarding.cancel('other', '')).to.equal(false);
    await waitUntil(() => owner.frames.length >= 6, 'the answer, the prompt and two cancels at the owner');
    expect(owner.frames[2]).to.deep.equal({ jsonrpc: '2.0', id: 'p1', result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
    const prompt = owner.frames[3] as { id: number; method: string };
    expect(prompt.method).to.equal('session/prompt');
    expect(owner.frames[4]).to.deep.equal({ jsonrpc: '2.0', method: '$/cancel_request', params: { requestId: prompt.id } });
    expect(owner.frames[5]).to.deep.equal({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 's1' } });
  });

  it('an ACP v2 client\'s link: initialize speaks v1 with the relay mark; the owner\'s relayed outputs reach the client, a request of the link named by the client\'s key', async () => {
    const owner = await fakeOwner();
    opened.push(owner);
    const { forwarding, delivered } = forwardingTo();
    const v2: AgentEventContext = { protocolVersion: 2, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: 'v2-editor', version: '1' } };
    forwarding.attach({ ...request('7', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [] }), context: v2 }, 's1', { hostId: 'host-a', url: owner.url });
    await waitUntil(() => owner.frames.length >= 2, 'initialize and the resume at the owner');
    expect(owner.frames[0]!.params).to.deep.equal({ protocolVersion: 1, clientCapabilities: v2.clientCapabilities, clientInfo: v2.clientInfo, _meta: { 'acp-warden/relay': true } });
    const socket = owner.sockets[0] as WebSocket;
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[1]!.id, result: {} }));
    expect(forwarding.request({ ...request('8', 'session/prompt', { sessionId: 's1', prompt: [] }, 'session.prompt'), context: v2 }, 's1')).to.equal(true);
    await waitUntil(() => owner.frames.length >= 3, 'the prompt at the owner');
    const promptId = (owner.frames[2] as { id: number }).id;
    const entry = { kind: 'prompt', prompt: [{ type: 'text', text: 'hi' }] };
    // The prompt's insertion (named by the link's id), another connection's turn end (named by the owner's key), a stranger.
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: '_acp-warden/relayed', params: { output: { type: 'session.turnJournaled', sessionId: 's1', requestId: 'r3', seq: 9, entry }, rpcId: promptId } }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: '_acp-warden/relayed', params: { output: { type: 'session.turnJournaled', sessionId: 's1', requestId: 'host-key', seq: 12, entry: { kind: 'stop', stopReason: 'end_turn' }, observed: true } } }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: '_acp-warden/relayed', params: { output: { type: 'acp.notify', method: 'x', params: {} } } }));
    await waitUntil(() => delivered.length >= 4, 'the answer and three outputs');
    expect(delivered.slice(1)).to.deep.equal([
      { type: 'session.turnJournaled', sessionId: 's1', requestId: '8', seq: 9, entry },
      { type: 'session.turnJournaled', sessionId: 's1', requestId: 'host-key', seq: 12, entry: { kind: 'stop', stopReason: 'end_turn' }, observed: true },
      { type: 'acp.notify', method: '_acp-warden/relayed', params: { output: { type: 'acp.notify', method: 'x', params: {} } } },
    ]);
  });

  it('the owner goes mid-request: the request settles peer_lost naming the owner, the session gets a notice without seq and is relayed no more', async () => {
    const owner = await fakeOwner();
    opened.push(owner);
    const { forwarding, delivered } = forwardingTo();
    forwarding.attach(request('1', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [] }), 's1', { hostId: 'host-a', url: owner.url });
    await waitUntil(() => owner.frames.length >= 2, 'the resume at the owner');
    owner.sockets[0]!.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[1]!.id, result: {} }));
    forwarding.request(request('2', 'session/prompt', { sessionId: 's1', prompt: [] }, 'session.prompt'), 's1');
    await waitUntil(() => owner.frames.length >= 3, 'the prompt at the owner');
    owner.sockets[0]!.terminate();
    await waitUntil(() => delivered.length >= 3, 'the prompt settled and the notice');
    const settled = delivered[1] as Extract<AgentHandlerOutput, { type: 'acp.error' }>;
    expect(settled).to.include({ type: 'acp.error', requestId: '2' });
    expect(settled.error.code).to.equal(-32603);
    expect(settled.error.data).to.deep.include({ reason: 'peer_lost', sessionId: 's1', owner: 'host-a' });
    expect(settled.error.message).to.match(/host-a.*went away while session\/prompt was forwarded/);
    const notice = delivered[2] as Extract<AgentHandlerOutput, { type: 'acp.update' }>;
    expect(notice).to.include({ type: 'acp.update', sessionId: 's1' });
    expect(notice.seq).to.equal(undefined);
    expect((notice.update as unknown as { sessionUpdate: string }).sessionUpdate).to.equal('notice');
    expect(forwarding.relays('s1')).to.equal(false);
  });

  it('an owner nobody answers for, or one that refuses the token: the resume is answered session_owned saying why', async () => {
    const owner = await fakeOwner();
    const deadUrl = owner.url;
    await owner.close();
    const { forwarding, delivered } = forwardingTo();
    forwarding.attach(request('1', 'session/load', { sessionId: 's1', cwd: '/w', mcpServers: [] }, 'session.load'), 's1', { hostId: 'host-a', url: deadUrl });
    await waitUntil(() => delivered.length >= 1, 'the load answered');
    const unreachable = delivered[0] as Extract<AgentHandlerOutput, { type: 'acp.error' }>;
    expect(unreachable.error.data).to.deep.include({ reason: 'session_owned', owner: 'host-a', url: deadUrl });
    expect(unreachable.error.message).to.match(/could not be reached at ws:\/\/127\.0\.0\.1:\d+\/acp.*ECONNREFUSED/);
    expect(forwarding.relays('s1')).to.equal(false);

    const other = await fakeOwner();
    opened.push(other);
    const wrong = new Forwarding({ deliver: (output) => delivered.push(output), gate: new ReadGate() }, { token: 'another-token' });
    opened.push(wrong);
    wrong.attach(request('2', 'session/resume', { sessionId: 's2', cwd: '/w', mcpServers: [] }), 's2', { hostId: 'host-b', url: other.url });
    await waitUntil(() => delivered.length >= 2, 'the resume answered');
    const refused = delivered[1] as Extract<AgentHandlerOutput, { type: 'acp.error' }>;
    expect(refused.error.data).to.deep.include({ reason: 'session_owned', owner: 'host-b' });
    expect(refused.error.message).to.include('refused the token (HTTP 401): the hosts of a cluster must share one token');
  });

  it('a later resume the owner refuses keeps the relay; an answer saying the session moved away ends it', async () => {
    const owner = await fakeOwner();
    opened.push(owner);
    const { forwarding, delivered } = forwardingTo();
    forwarding.attach(request('1', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [] }), 's1', { hostId: 'host-a', url: owner.url });
    await waitUntil(() => owner.frames.length >= 2, 'the resume at the owner');
    const socket = owner.sockets[0] as WebSocket;
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[1]!.id, result: {} }));
    forwarding.request(request('2', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [], _meta: { 'acp-warden/after': -1 } }), 's1');
    await waitUntil(() => owner.frames.length >= 3, 'the second resume at the owner');
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[2]!.id, error: { code: -32602, message: 'bad cursor' } }));
    await waitUntil(() => delivered.length >= 2, 'the refusal relayed');
    expect(forwarding.relays('s1'), 'a bad request changes nothing').to.equal(true);
    forwarding.request(request('3', 'session/prompt', { sessionId: 's1', prompt: [] }, 'session.prompt'), 's1');
    await waitUntil(() => owner.frames.length >= 4, 'the prompt at the owner');
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[3]!.id, error: { code: -32603, message: 'moved', data: { reason: 'session_moved', owner: 'host-c' } } }));
    await waitUntil(() => delivered.length >= 3, 'the prompt answered');
    expect(delivered[2]).to.deep.include({ type: 'acp.error', requestId: '3' });
    expect(forwarding.relays('s1'), 'moved away: the next resume finds where').to.equal(false);
  });

  it('a fork of a forwarded session is made on the owner and forwarded too', async () => {
    const owner = await fakeOwner();
    opened.push(owner);
    const { forwarding, delivered } = forwardingTo();
    forwarding.attach(request('1', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [] }), 's1', { hostId: 'host-a', url: owner.url });
    expect(forwarding.request(request('2', 'session/fork', { sessionId: 's1', cwd: '/w', mcpServers: [] }, 'session.fork'), 's1')).to.equal(true);
    await waitUntil(() => owner.frames.length >= 3, 'the resume and the fork at the owner');
    expect(owner.frames[2]).to.deep.include({ method: 'session/fork' });
    owner.sockets[0]!.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[2]!.id, result: { sessionId: 's1-fork' } }));
    await waitUntil(() => delivered.length >= 1, 'the fork answered');
    expect(delivered[0]).to.deep.equal({ type: 'acp.respond', requestId: '2', result: { sessionId: 's1-fork' } });
    expect(forwarding.relays('s1-fork')).to.equal(true);
  });

  it('the owner refuses the resume: the session is not relayed (the client tries again on its host), and the idle link is closed', async () => {
    const owner = await fakeOwner();
    opened.push(owner);
    const { forwarding, delivered } = forwardingTo();
    forwarding.attach(request('1', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [] }), 's1', { hostId: 'host-a', url: owner.url });
    await waitUntil(() => owner.frames.length >= 2, 'the resume at the owner');
    owner.sockets[0]!.send(JSON.stringify({ jsonrpc: '2.0', id: owner.frames[1]!.id, error: { code: -32603, message: 'owned elsewhere', data: { reason: 'session_owned' } } }));
    await waitUntil(() => delivered.length >= 1, 'the refusal relayed');
    expect(delivered[0]).to.deep.include({ type: 'acp.error', requestId: '1' });
    expect(forwarding.relays('s1')).to.equal(false);
    // The link carried nothing else: it is closed (no notice: nothing was relayed).
    await waitUntil(() => owner.sockets[0]!.readyState === owner.sockets[0]!.CLOSED, 'the link closed');
    expect(delivered).to.have.length(1);
  });

  it('while the client\'s delivery gate is closed the owner is not read; it is read again once the gate opens', async () => {
    const owner = await fakeOwner();
    opened.push(owner);
    const { forwarding, delivered, gate } = forwardingTo();
    forwarding.attach(request('1', 'session/resume', { sessionId: 's1', cwd: '/w', mcpServers: [] }), 's1', { hostId: 'host-a', url: owner.url });
    await waitUntil(() => owner.frames.length >= 2, 'the resume at the owner');
    gate.hold('test');
    const update = (seq: number) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${seq}` } }, _meta: { 'acp-warden/seq': seq } } });
    // Sent and flushed to the forwarding's socket while it is paused.
    await new Promise<void>((resolve, reject) => owner.sockets[0]!.send(update(1), (error) => (error ? reject(error) : resolve())));
    // Time for the frame to be read were reading on (a forwarding that reads while held fails here on any machine that reads within 100 ms; one that does not can never fail by timing).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(delivered, 'nothing read while held').to.deep.equal([]);
    gate.release('test');
    await waitUntil(() => delivered.length >= 1, 'the update once the gate opened');
    expect(delivered[0]).to.include({ type: 'acp.update', seq: 1 });
  });
});

describe('routing table: where a session is served, from its row', () => {
  it('names the live advertised owner, or why it cannot be forwarded to', () => {
    expect(sessionLocationOf(undefined)).to.deep.equal({ kind: 'unknown' });
    expect(sessionLocationOf({ owner_host: null, epoch: null, advertise: null, live: null })).to.deep.equal({ kind: 'free' });
    expect(sessionLocationOf({ owner_host: 'h1', epoch: '3', advertise: 'ws://a:1/acp', live: true })).to.deep.equal({ kind: 'remote', hostId: 'h1', epoch: 3, url: 'ws://a:1/acp' });
    expect(sessionLocationOf({ owner_host: 'h1', epoch: 2, advertise: 'ws://a:1/acp', live: false })).to.deep.equal({ kind: 'unroutable', hostId: 'h1', epoch: 2, why: 'not_live' });
    expect(sessionLocationOf({ owner_host: 'h1', epoch: 2, advertise: null, live: true })).to.deep.equal({ kind: 'unroutable', hostId: 'h1', epoch: 2, why: 'not_advertised' });
    expect(sessionLocationOf({ owner_host: 'h1', epoch: 2, advertise: 'ws://a:1/acp', live: null })).to.deep.equal({ kind: 'unroutable', hostId: 'h1', epoch: 2, why: 'not_live' });
  });
});
