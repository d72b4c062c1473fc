/**
 * The WebSocket transport (issue 16, first brick): JSON-RPC connections over real `ws`
 * servers and clients on 127.0.0.1, one message per text frame. What stdio does for the
 * editor, this does for a socket: malformed and oversize input answered, backpressure,
 * the peer lost (closed, failed, or silent: half-open), our close with code 1000; and the
 * official ACP SDK's WebSocket client talking to our agent server over it.
 */
import { client as sdkClient, methods } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { expect } from 'chai';
import { once } from 'node:events';
import { connect as netConnect, type AddressInfo, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { createActor, type AnyActorRef } from 'xstate';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { closeConnection, connectionLogic, respond, sendNotification, sendRequest } from '../../src/jsonrpc/connection.js';
import type { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { stdioTransport } from '../../src/jsonrpc/stdio-transport.js';
import type { PeerLost, TransportSink } from '../../src/jsonrpc/transport.js';
import { connectWebSocketTransport, webSocketMaxPayload, webSocketTransport, type WebSocketTransportOptions } from '../../src/jsonrpc/websocket-transport.js';
import { eagerPeer } from '../support/eager-websocket-peer.js';
import { waitUntil } from '../support/processes.js';

const servers: WebSocketServer[] = [];
const clients: WebSocket[] = [];
const rawSockets: Socket[] = [];
const actors: AnyActorRef[] = [];

interface Listening {
  readonly url: string;
  readonly port: number;
  /** The next socket the server accepts. */
  accepted(): Promise<WebSocket>;
}

/** A `ws` server on 127.0.0.1, port 0, its frames limited as the transport's `maxLineBytes` asks. */
async function listen(maxLineBytes?: number): Promise<Listening> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: webSocketMaxPayload(maxLineBytes) });
  servers.push(server);
  const queue: WebSocket[] = [];
  const waiting: Array<(socket: WebSocket) => void> = [];
  server.on('connection', (socket) => {
    const waiter = waiting.shift();
    if (waiter) waiter(socket);
    else queue.push(socket);
  });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/acp`,
    port,
    accepted: () => {
      const socket = queue.shift();
      return socket ? Promise.resolve(socket) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** A raw `ws` client, open. */
async function rawClient(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url);
  clients.push(socket);
  await once(socket, 'open');
  return socket;
}

/**
 * A TCP connection to 127.0.0.1:`port` that has sent the WebSocket upgrade request by hand and
 * does nothing more (no pong, no reading unless the test reads): a peer `ws` cannot make.
 */
async function upgradedByHand(port: number): Promise<Socket> {
  const raw = netConnect({ host: '127.0.0.1', port });
  rawSockets.push(raw);
  await once(raw, 'connect');
  raw.write(['GET /acp HTTP/1.1', `Host: 127.0.0.1:${port}`, 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', '', ''].join('\r\n'));
  return raw;
}

/** A JSON-RPC connection over a WebSocket, recording what it emits. */
function connectionOver(socket: WebSocket, options: WebSocketTransportOptions = {}, name = 'ws') {
  const actor = createActor(connectionLogic, { input: { transport: webSocketTransport(socket, options), name } });
  const requests: Array<{ id: string | number; method: string; params: unknown }> = [];
  const notifications: Array<{ method: string; params: unknown }> = [];
  const backpressure: boolean[] = [];
  let closed: PeerLost | undefined;
  actor.on('rpc.request', (event) => requests.push(event));
  actor.on('rpc.notification', (event) => notifications.push(event));
  actor.on('rpc.backpressure', (event) => backpressure.push(event.backedUp));
  actor.on('rpc.closed', (event) => {
    closed = event.reason;
  });
  actor.start();
  actors.push(actor);
  return { actor, requests, notifications, backpressure, closed: () => closed };
}

/** A connection that answers every request with `{ echo: params }` at once. */
function echoing(socket: WebSocket, options: WebSocketTransportOptions = {}) {
  const side = connectionOver(socket, options, 'echo');
  side.actor.on('rpc.request', ({ id, params }) => respond(side.actor, id, { echo: params }));
  return side;
}

/** Every JSON message a raw client receives, in order. */
function inbox(socket: WebSocket): unknown[] {
  const received: unknown[] = [];
  socket.on('message', (data) => received.push(JSON.parse(String(data))));
  return received;
}

async function expectFailure(promise: Promise<unknown>): Promise<RpcError> {
  try {
    await promise;
  } catch (error) {
    return error as RpcError;
  }
  throw new Error('expected the request to fail');
}

/** Sends `text` through stdio's transport (a pipe) and returns the one line answered. */
async function stdioAnswerTo(text: string, maxLineBytes: number): Promise<unknown> {
  const input = new PassThrough();
  const output = new PassThrough();
  const actor = createActor(connectionLogic, { input: { transport: stdioTransport(input, output, { maxLineBytes }) } }).start();
  actors.push(actor);
  let buffered = '';
  const line = new Promise<string>((resolve) => {
    output.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end >= 0) resolve(buffered.slice(0, end));
    });
  });
  input.write(`${text}\n`);
  return JSON.parse(await line) as unknown;
}

/** A request whose params make it `bytes` long, its id and method at the front. */
function bigRequest(id: number, method: string, bytes: number): string {
  const head = JSON.stringify({ jsonrpc: '2.0', id, method, params: { text: '' } });
  return head.replace('"text":""', `"text":"${'x'.repeat(bytes - head.length)}"`);
}

describe('webSocketTransport (issue 16: a WebSocket transport for the JSON-RPC connection)', function () {
  this.timeout(60_000);

  afterEach(async () => {
    for (const actor of actors.splice(0)) actor.stop();
    for (const socket of clients.splice(0)) socket.terminate();
    for (const socket of rawSockets.splice(0)) socket.destroy();
    for (const server of servers.splice(0)) {
      for (const socket of server.clients) socket.terminate();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a connection on each side: 1,000 pipelined requests answered in order with their own results, notifications and requests both ways in order', async () => {
    const listening = await listen();
    const clientSocket = new WebSocket(listening.url); // still connecting: what is sent meanwhile goes out on open
    clients.push(clientSocket);
    const near = connectionOver(clientSocket, {}, 'client');
    near.actor.on('rpc.request', ({ id, params }) => respond(near.actor, id, { back: params }));
    const far = echoing(await listening.accepted());

    const answered: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, n) => {
        if (n % 10 === 0) sendNotification(near.actor, 'note', { n });
        return sendRequest(near.actor, 'echo', { n }).then((result) => {
          answered.push(n);
          return result;
        });
      }),
    );
    expect(results).to.deep.equal(Array.from({ length: 1000 }, (_, n) => ({ echo: { n } })));
    expect(answered).to.deep.equal(Array.from({ length: 1000 }, (_, n) => n));
    expect(far.requests.map((request) => (request.params as { n: number }).n)).to.deep.equal(answered);
    expect(far.notifications.map((note) => (note.params as { n: number }).n)).to.deep.equal(Array.from({ length: 100 }, (_, n) => n * 10));

    // The other way: the server asks and notifies the client.
    for (let n = 0; n < 50; n++) sendNotification(far.actor, 'update', { n });
    const back = await Promise.all(Array.from({ length: 50 }, (_, n) => sendRequest(far.actor, 'ask', { n })));
    expect(back).to.deep.equal(Array.from({ length: 50 }, (_, n) => ({ back: { n } })));
    expect(near.notifications.map((note) => (note.params as { n: number }).n)).to.deep.equal(Array.from({ length: 50 }, (_, n) => n));
    expect(near.requests.map((request) => request.method)).to.deep.equal(Array.from({ length: 50 }, () => 'ask'));
  });

  it('a text frame that is not JSON is answered -32700 (id null) and the connection goes on', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const received = inbox(socket);
    echoing(await listening.accepted());
    socket.send('{"jsonrpc":"2.0","id":1,"method":');
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'echo', params: { after: 'garbage' } }));
    await waitUntil(() => received.length === 2, 'two answers', 20_000);
    expect(received[0]).to.deep.include({ jsonrpc: '2.0', id: null });
    expect((received[0] as { error: { code: number } }).error.code).to.equal(-32700);
    expect(received[1]).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { echo: { after: 'garbage' } } });
  });

  it('a binary frame is malformed, saying so, and answered -32700 (id null) even when it holds JSON; the connection goes on', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const received = inbox(socket);
    echoing(await listening.accepted());
    socket.send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: {} })), { binary: true });
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'echo', params: { text: true } }));
    await waitUntil(() => received.length === 2, 'two answers', 20_000);
    expect(received[0]).to.deep.include({ jsonrpc: '2.0', id: null });
    expect((received[0] as { error: { code: number } }).error.code).to.equal(-32700);
    expect(received[1]).to.deep.equal({ jsonrpc: '2.0', id: 2, result: { echo: { text: true } } });

    // What the sink is told names the problem (for logs; the peer never gets its own bytes back).
    const previews: string[] = [];
    const second = await rawClient(listening.url);
    const sink: TransportSink = { message: () => {}, malformed: (preview) => previews.push(preview), closed: () => {} };
    const transport = webSocketTransport(await listening.accepted());
    transport.start(sink);
    second.send(Buffer.from('{}'), { binary: true });
    await waitUntil(() => previews.length === 1, 'the binary frame reported', 20_000);
    transport.close();
    expect(previews[0]).to.equal('<a binary frame of 2 bytes: ACP over WebSocket is one JSON-RPC message per text frame>');
  });

  it('a text frame that is not UTF-8 is refused by ws with close code 1007: the connection closes, naming it', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const far = connectionOver(await listening.accepted());
    const closedWith = once(socket, 'close');
    socket.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    const [code] = (await closedWith) as [number];
    expect(code).to.equal(1007);
    await waitUntil(() => far.closed() !== undefined, 'the connection to close', 20_000);
    expect(far.closed()?.message).to.match(/^the WebSocket failed: .*UTF-8.*WS_ERR_INVALID_UTF8/u);
  });

  it('a frame over maxLineBytes is answered by its id with the error stdio gives for the same line, and the connection goes on', async () => {
    const limit = 64 * 1024;
    const listening = await listen(limit);
    const socket = await rawClient(listening.url);
    const received = inbox(socket);
    const far = echoing(await listening.accepted(), { maxLineBytes: limit });
    const line = bigRequest(7, 'session/prompt', 100 * 1024);
    socket.send(line);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'echo', params: { small: true } }));
    await waitUntil(() => received.length === 2, 'two answers', 20_000);
    const answer = received[0] as { id: number; error: { code: number; message: string; data: Record<string, unknown> } };
    expect(answer.id).to.equal(7);
    expect(answer.error.code).to.equal(-32600);
    expect(answer.error.data).to.deep.include({ reason: 'line_too_long', bytes: line.length, limitBytes: limit, method: 'session/prompt' });
    expect(answer).to.deep.equal(await stdioAnswerTo(line, limit));
    expect(received[1]).to.deep.equal({ jsonrpc: '2.0', id: 8, result: { echo: { small: true } } });
    expect(far.requests.map((request) => request.id)).to.deep.equal([8]);
  });

  it('a frame over the maxPayload it was given (limit + 1 MiB) closes the socket with 1009: pending requests settle peer lost, naming it', async () => {
    const limit = 64 * 1024;
    const listening = await listen(limit);
    const socket = await rawClient(listening.url);
    const far = connectionOver(await listening.accepted(), { maxLineBytes: limit });
    const pending = expectFailure(sendRequest(far.actor, 'ask', {}));
    const closedWith = once(socket, 'close');
    socket.send(bigRequest(1, 'session/prompt', webSocketMaxPayload(limit) + 1));
    const [code] = (await closedWith) as [number];
    expect(code).to.equal(1009);
    const error = await pending;
    expect(error.failure).to.equal('peer_lost');
    expect(error.message).to.equal('The peer is gone: the WebSocket failed: a frame over the maxPayload ws was given, refused unread with close code 1009');
  });

  it('a peer that stops reading: backpressure true, reading paused; once it reads again, false, and every message arrived in order', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const accepted = await listening.accepted();
    const far = connectionOver(accepted);
    const received = inbox(socket);
    socket.pause();
    const chunk = 'y'.repeat(64 * 1024);
    let sent = 0;
    // Bounded: 1024 frames of 64 KiB (64 MiB) is far more than loopback's socket buffers hold.
    while (far.backpressure.length === 0 && sent < 1024) sendNotification(far.actor, 'update', { n: sent++, chunk });
    expect(far.backpressure).to.deep.equal([true]);
    expect(accepted.isPaused, 'our reading is paused while the peer does not read').to.equal(true);
    socket.resume();
    await waitUntil(() => far.backpressure.length === 2, 'backpressure to clear', 30_000);
    expect(far.backpressure).to.deep.equal([true, false]);
    expect(accepted.isPaused).to.equal(false);
    await waitUntil(() => received.length === sent, 'every update to arrive', 30_000);
    expect(received.map((message) => (message as { params: { n: number } }).params.n)).to.deep.equal(Array.from({ length: sent }, (_, n) => n));
  });

  it('too many requests unanswered: the connection holds the frames after them unread; answering releases them, in order, none lost', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const received = inbox(socket);
    const accepted = await listening.accepted();
    const side = createActor(connectionLogic, { input: { transport: webSocketTransport(accepted), maxUnansweredRequests: 4 } });
    const seen: number[] = [];
    side.on('rpc.request', ({ id }) => seen.push(id as number));
    side.start();
    actors.push(side);
    for (let id = 1; id <= 10; id++) socket.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'wait', params: {} }));
    await waitUntil(() => seen.length === 4, 'four requests', 20_000);
    // A ping sent after the ten is answered by ws itself: by its pong, all ten were read off the socket.
    socket.ping();
    await once(socket, 'pong');
    expect(seen).to.deep.equal([1, 2, 3, 4]);
    for (let n = 0; n < 10; n++) {
      await waitUntil(() => seen.length > n, `request ${n + 1}`, 20_000);
      respond(side, seen[n] as number, { answered: seen[n] });
    }
    await waitUntil(() => received.length === 10, 'ten answers', 20_000);
    expect(seen).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(received.map((message) => (message as { id: number }).id)).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('half-open: a peer that upgraded and then never answers a ping is closed as lost within a few intervals, its pending requests settle with why', async () => {
    const listening = await listen();
    // The HTTP upgrade by hand, then silence: what a peer whose host or network vanished looks like.
    const raw = await upgradedByHand(listening.port);
    let response = '';
    raw.on('data', (chunk: Buffer) => {
      response += chunk.toString('latin1');
    });
    const peerGone = once(raw, 'close');
    const far = connectionOver(await listening.accepted(), { pingIntervalMs: 100 });
    const pending = expectFailure(sendRequest(far.actor, 'ask', {}));
    await waitUntil(() => far.closed() !== undefined, 'the silent peer to be closed', 20_000);
    expect(response).to.match(/^HTTP\/1\.1 101 /u);
    expect(far.closed()?.message).to.equal('the WebSocket peer answered neither of two pings 100 ms apart (no pong, nothing else either): a half-open connection, its host or network gone');
    const error = await pending;
    expect(error.failure).to.equal('peer_lost');
    expect(error.message).to.include('answered neither of two pings');
    await peerGone; // the socket was dropped on our side
  });

  it('a ws client with autoPong off is closed as lost too; a client that pongs stays connected across pings and is still answered', async () => {
    const listening = await listen();
    const silent = new WebSocket(listening.url, { autoPong: false });
    clients.push(silent);
    await once(silent, 'open');
    const mute = connectionOver(await listening.accepted(), { pingIntervalMs: 200 });

    const healthy = await rawClient(listening.url);
    const received = inbox(healthy);
    let pings = 0;
    healthy.on('ping', () => pings++);
    echoing(await listening.accepted(), { pingIntervalMs: 200 });

    await waitUntil(() => mute.closed() !== undefined, 'the client that never pongs to be closed', 20_000);
    expect(mute.closed()?.message).to.include('answered neither of two pings');
    await waitUntil(() => pings >= 5, 'five pings to the healthy client', 20_000);
    expect(healthy.readyState).to.equal(WebSocket.OPEN);
    healthy.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: { still: 'here' } }));
    await waitUntil(() => received.length === 1, 'the answer', 20_000);
    expect(received[0]).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { echo: { still: 'here' } } });
  });

  it('this process stalling longer than the ping interval right after a ping does not drop a peer that pongs', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const received = inbox(socket);
    let pings = 0;
    socket.on('ping', () => pings++);
    const accepted = await listening.accepted();
    // A long synchronous task (a big JSON.parse, a GC pause) just after our third ping went out:
    // the peer's pong can only be read once the next tick is already due.
    const ping = accepted.ping.bind(accepted);
    let sent = 0;
    accepted.ping = ((...args: Parameters<WebSocket['ping']>) => {
      ping(...args);
      if (++sent !== 3) return;
      const until = Date.now() + 350;
      while (Date.now() < until) {
        // busy
      }
    }) as WebSocket['ping'];
    const far = echoing(accepted, { pingIntervalMs: 100 });
    await waitUntil(() => pings >= 6, 'six pings, three of them after the stall', 20_000);
    expect(sent).to.be.at.least(6);
    expect(far.closed()).to.equal(undefined);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: {} }));
    await waitUntil(() => received.length === 1, 'the answer', 20_000);
    expect(received[0]).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { echo: {} } });
  });

  it('keepalive while reading is paused: a peer held by the connection (waiting for answers) is kept; one that reads nothing of our backed-up output is dropped', async () => {
    const listening = await listen();
    // Held: 4 requests unanswered, then 2 MiB more of them: the transport holds 1 MiB, then pauses the socket.
    const waiting = await rawClient(listening.url);
    const answers = inbox(waiting);
    let pings = 0;
    waiting.on('ping', () => pings++);
    const accepted = await listening.accepted();
    const held = createActor(connectionLogic, { input: { transport: webSocketTransport(accepted, { pingIntervalMs: 100 }), maxUnansweredRequests: 4 } });
    const ids: number[] = [];
    held.on('rpc.request', ({ id }) => ids.push(id as number));
    held.start();
    actors.push(held);
    const total = 4 + 32;
    for (let id = 1; id <= total; id++) waiting.send(id <= 4 ? JSON.stringify({ jsonrpc: '2.0', id, method: 'wait', params: {} }) : bigRequest(id, 'wait', 64 * 1024));
    await waitUntil(() => accepted.isPaused, 'the socket to be paused for the held input', 20_000);
    const seen = pings;
    await waitUntil(() => pings >= seen + 4, 'four more pings while held', 20_000);
    expect(held.getSnapshot().status).to.equal('active');
    for (let n = 0; n < total; n++) {
      await waitUntil(() => ids.length > n, `request ${n + 1}`, 20_000);
      respond(held, ids[n] as number, {});
    }
    await waitUntil(() => answers.length === total, 'every answer', 20_000);
    expect(ids).to.deep.equal(Array.from({ length: total }, (_, n) => n + 1));

    // Not reading at all while our output waits: dropped after two intervals without progress.
    const stuck = await rawClient(listening.url);
    const far = connectionOver(await listening.accepted(), { pingIntervalMs: 100 });
    stuck.pause();
    const chunk = 'z'.repeat(64 * 1024);
    for (let sent = 0; far.backpressure.length === 0 && sent < 1024; sent++) sendNotification(far.actor, 'update', { chunk });
    expect(far.backpressure).to.deep.equal([true]);
    await waitUntil(() => far.closed() !== undefined, 'the reader that reads nothing to be dropped', 20_000);
    expect(far.closed()?.message).to.include('answered neither of two pings 100 ms apart');
  });

  it('keepalive under backpressure: a slow reader that never pongs but reads some of our output each interval is kept until it caught up', async () => {
    const listening = await listen();
    // By hand, so it never pongs: only its reading can show it alive (our reading is paused anyway).
    const raw = await upgradedByHand(listening.port);
    const far = connectionOver(await listening.accepted(), { pingIntervalMs: 500 });
    const chunk = 'w'.repeat(64 * 1024);
    for (let sent = 0; far.backpressure.length === 0 && sent < 1024; sent++) sendNotification(far.actor, 'update', { chunk });
    expect(far.backpressure).to.deep.equal([true]);
    // 10 MiB more wait in the transport, beyond the few MiB loopback's socket buffers took.
    for (let more = 0; more < 160; more++) sendNotification(far.actor, 'update', { chunk });
    let read = 0;
    // At most 64 KiB every 10 ms (about 6 MB/s): the 14 MiB or so take several intervals. The
    // kernel tells a writer of room only once a good part of its buffer is free: every ~0.2 s here.
    const reader = setInterval(() => {
      const buffered = raw.readableLength;
      if (buffered === 0) raw.read(0); // asks the socket for more
      else read += (raw.read(Math.min(buffered, 64 * 1024)) as Buffer).length;
    }, 10);
    try {
      await waitUntil(() => far.backpressure.length === 2 || far.closed() !== undefined, 'the slow reader to catch up', 60_000);
    } finally {
      clearInterval(reader);
    }
    expect(far.closed(), 'closed while it read').to.equal(undefined);
    expect(far.backpressure).to.deep.equal([true, false]);
    expect(read, "bytes it had read by then").to.be.greaterThan(5 * 1024 * 1024);
  });

  it('refuses options that are not integers in range, naming them', () => {
    const socket = new WebSocket('ws://127.0.0.1:9', { autoPong: true });
    clients.push(socket);
    socket.on('error', () => {});
    expect(() => webSocketTransport(socket, { pingIntervalMs: Number.NaN })).to.throw(TypeError, 'webSocketTransport: pingIntervalMs must be an integer from 0 to 2147483647, got NaN.');
    expect(() => webSocketTransport(socket, { pingIntervalMs: -1 })).to.throw(TypeError, 'pingIntervalMs');
    expect(() => webSocketTransport(socket, { maxLineBytes: 0 })).to.throw(TypeError, 'webSocketTransport: maxLineBytes must be an integer from 1');
  });

  it('the peer closing settles every pending request peer lost, with its close code and reason; a dropped TCP connection is code 1006', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const far = connectionOver(await listening.accepted());
    const pending = Array.from({ length: 3 }, (_, n) => expectFailure(sendRequest(far.actor, 'ask', { n })));
    socket.close(1001, 'editor window closed');
    const errors = await Promise.all(pending);
    expect(errors.map((error) => error.failure)).to.deep.equal(['peer_lost', 'peer_lost', 'peer_lost']);
    expect(errors[0]?.message).to.equal('The peer is gone: the WebSocket was closed (code 1001: editor window closed)');
    expect(far.closed()?.exit).to.deep.equal({ closeCode: 1001, closeReason: 'editor window closed' });

    // The other way round, and abruptly: the server's socket dies under a client connection.
    const near = connectionOver(await rawClient(listening.url), {}, 'client');
    const accepted = await listening.accepted();
    const asked = expectFailure(sendRequest(near.actor, 'ask', {}));
    accepted.terminate();
    const error = await asked;
    expect(error.failure).to.equal('peer_lost');
    expect(error.message).to.include('code 1006');
  });

  it('our close() answers what the peer still waits for, then closes with code 1000', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const received = inbox(socket);
    const far = connectionOver(await listening.accepted());
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'slow', params: {} }));
    await waitUntil(() => far.requests.length === 1, 'the request to arrive', 20_000);
    const closedWith = once(socket, 'close');
    closeConnection(far.actor);
    const [code] = (await closedWith) as [number, Buffer];
    expect(code).to.equal(1000);
    expect(received).to.have.length(1);
    expect(received[0]).to.deep.include({ jsonrpc: '2.0', id: 5 });
    expect((received[0] as { error: { data: { reason: string } } }).error.data.reason).to.equal('shutdown');
  });

  it('our close() while output is backed up: everything sent before reaches the peer, then code 1000', async () => {
    const listening = await listen();
    const socket = await rawClient(listening.url);
    const received = inbox(socket);
    const far = connectionOver(await listening.accepted());
    socket.pause();
    const chunk = 'v'.repeat(64 * 1024);
    let sent = 0;
    while (far.backpressure.length === 0 && sent < 1024) sendNotification(far.actor, 'update', { n: sent++, chunk });
    for (let more = 0; more < 16; more++) sendNotification(far.actor, 'update', { n: sent++, chunk });
    const closedWith = once(socket, 'close');
    closeConnection(far.actor);
    socket.resume();
    const [code] = (await closedWith) as [number];
    expect(code).to.equal(1000);
    expect(received.map((message) => (message as { params: { n: number } }).params.n)).to.deep.equal(Array.from({ length: sent }, (_, n) => n));
  });

  it('the ACP SDK client over its createWebSocketStream to our agent server (demo agent): initialize, session/new, a prompt with its updates in order', async () => {
    const listening = await listen();
    const updates: Array<{ sessionId: string; update: { sessionUpdate: string; content?: { text?: string } } }> = [];
    const app = sdkClient({ name: 'ws-test-editor' }).onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as never);
    });
    const stream = createWebSocketStream(listening.url, { WebSocket: WebSocket as never });
    const connection = app.connect(stream);
    try {
      const server = createActor(agentServerLogic, { input: { transport: webSocketTransport(await listening.accepted()), agent: demoAgent({ wordDelayMs: 1 }) } }).start();
      actors.push(server);
      const agent = connection.agent as unknown as { request(method: string, params: unknown): Promise<Record<string, unknown>> };
      const init = await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'ws-test-editor', version: '1' } });
      expect(init.protocolVersion).to.equal(1);
      expect(init.agentInfo).to.deep.include({ name: 'acp-warden-demo' });
      const { sessionId } = (await agent.request(methods.agent.session.new, { cwd: '/work', mcpServers: [] })) as { sessionId: string };
      expect(sessionId).to.match(/^demo-/u);
      const before = updates.length;
      const result = await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello over a socket' }] });
      const text = updates
        .slice(before)
        .filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk')
        .map((entry) => entry.update.content?.text ?? '')
        .join('');
      expect(result).to.deep.equal({ stopReason: 'end_turn' });
      // Every word arrived, in order, before the prompt's answer.
      expect(text).to.equal('You said: hello over a socket. This is the acp-warden demo agent, answering word by word.');
    } finally {
      connection.close();
    }
  });

  it('connectWebSocketTransport: frames the server sent with its 101 (read in the same TCP read) reach the sink started later, in order', async () => {
    const frames = Array.from({ length: 3 }, (_, n) => JSON.stringify({ jsonrpc: '2.0', method: 'early', params: { n } }));
    const peer = await eagerPeer(frames);
    const opened = await connectWebSocketTransport(peer.url, { pingIntervalMs: 0 });
    if (!opened.ok) throw new Error(`connect failed: ${JSON.stringify(opened.failure)}`);
    try {
      // Whoever awaited the connect starts the transport some turns later (ws parsed the head meanwhile).
      await new Promise((resolve) => setImmediate(resolve));
      const received: unknown[] = [];
      const sink: TransportSink = { message: (value) => received.push(value), malformed: () => undefined, closed: () => undefined };
      opened.transport.start(sink);
      await waitUntil(() => received.length >= frames.length, 'the three early frames', 10_000).catch(() => undefined);
      expect(received).to.deep.equal(frames.map((frame) => JSON.parse(frame)));
    } finally {
      opened.transport.close();
      await new Promise((resolve) => peer.server.close(resolve));
    }
  });
});
