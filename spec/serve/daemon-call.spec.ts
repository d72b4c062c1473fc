/**
 * `callDaemon` (what `warden sessions` runs, issue 16) against raw `ws` servers playing the
 * daemon: the bearer token sent, `initialize` then the one request, and each way it can end
 * with its exit status: the result; a JSON-RPC error answer (the daemon refusing the method, or
 * `initialize`); the daemon closing mid-call (5); nothing listening (3); the token refused
 * (4); no answer within the timeout (1).
 */
import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { callDaemon, DaemonCallError } from '../../src/serve/daemon-call.js';

type Request = { jsonrpc: '2.0'; id: number | string; method: string; params?: unknown };

/** A raw `ws` server on loopback: `onRequest` gets every request a client sends, with its socket. */
async function rawDaemon(onRequest: (request: Request, socket: WebSocket) => void, options: { refuseWith?: number } = {}): Promise<{ url: string; seen: Request[]; headers: IncomingMessage['headers'][]; close(): Promise<void> }> {
  const seen: Request[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const server = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    ...(options.refuseWith ? { verifyClient: (_info: unknown, done: (ok: boolean, status?: number) => void) => done(false, options.refuseWith) } : {}),
  });
  server.on('connection', (socket, request) => {
    headers.push(request.headers);
    socket.on('message', (data) => {
      const request = JSON.parse(String(data)) as Request;
      seen.push(request);
      onRequest(request, socket);
    });
  });
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/acp`,
    seen,
    headers,
    close: () => {
      for (const client of server.clients) client.terminate();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

const answer = (socket: WebSocket, request: Request, body: { result: unknown } | { error: { code: number; message: string } }) => socket.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...body }));
const initializeResult = { protocolVersion: 1, agentCapabilities: {}, authMethods: [] };

/** The DaemonCallError a call rejects with (fails the test when it resolves or throws anything else). */
async function failureOf(call: Promise<unknown>): Promise<DaemonCallError> {
  const error = await call.then(
    (result) => new Error(`expected a DaemonCallError, got the result ${JSON.stringify(result)}`),
    (error: unknown) => error,
  );
  if (!(error instanceof DaemonCallError)) throw error;
  return error;
}

describe('callDaemon: one JSON-RPC call to warden serve (issue 16)', function () {
  this.timeout(30_000);
  const daemons: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const daemon of daemons.splice(0)) await daemon.close();
  });

  it('sends the bearer token, initialize, then the request; resolves with its result', async () => {
    const daemon = await rawDaemon((request, socket) => answer(socket, request, { result: request.method === 'initialize' ? initializeResult : { sessions: [{ sessionId: 's1' }] } }));
    daemons.push(daemon);
    expect(await callDaemon(daemon.url, 'the-token', '_acp-warden/sessions', { all: true })).to.deep.equal({ sessions: [{ sessionId: 's1' }] });
    expect(daemon.headers[0]?.authorization).to.equal('Bearer the-token');
    expect(daemon.seen.map((request) => request.method)).to.deep.equal(['initialize', '_acp-warden/sessions']);
    expect(daemon.seen[1]?.params).to.deep.equal({ all: true });
    expect(daemon.seen[0]?.id).not.to.equal(daemon.seen[1]?.id);
  });

  it('the daemon refuses the method with a JSON-RPC error: status 1, its message', async () => {
    const daemon = await rawDaemon((request, socket) => {
      if (request.method === 'initialize') answer(socket, request, { result: initializeResult });
      else answer(socket, request, { error: { code: -32601, message: `Method not found: ${request.method}` } });
    });
    daemons.push(daemon);
    const error = await failureOf(callDaemon(daemon.url, 'the-token', '_acp-warden/close_session', { sessionId: 'gone' }));
    expect(error.status).to.equal(1);
    expect(error.message).to.equal('Method not found: _acp-warden/close_session');
  });

  it('the daemon refuses initialize: status 1, naming initialize; the request is never sent', async () => {
    const daemon = await rawDaemon((request, socket) => answer(socket, request, { error: { code: -32602, message: 'Invalid params: protocolVersion' } }));
    daemons.push(daemon);
    const error = await failureOf(callDaemon(daemon.url, 'the-token', '_acp-warden/sessions', {}));
    expect(error.status).to.equal(1);
    expect(error.message).to.equal('initialize was refused: Invalid params: protocolVersion');
    expect(daemon.seen.map((request) => request.method)).to.deep.equal(['initialize']);
  });

  for (const [how, end] of [
    ['with a closing frame', (socket: WebSocket) => socket.close(1011, 'going away')],
    ['without one (the connection dropped)', (socket: WebSocket) => socket.terminate()],
  ] as const) {
    it(`the daemon closes mid-call ${how}: status 5, "closed the connection before answering"`, async () => {
      const daemon = await rawDaemon((request, socket) => {
        if (request.method === 'initialize') answer(socket, request, { result: initializeResult });
        else end(socket);
      });
      daemons.push(daemon);
      const error = await failureOf(callDaemon(daemon.url, 'the-token', '_acp-warden/sessions', {}));
      expect(error.status).to.equal(5);
      expect(error.message).to.equal(`${daemon.url} closed the connection before answering`);
      expect(daemon.seen.map((request) => request.method)).to.deep.equal(['initialize', '_acp-warden/sessions']);
    });
  }

  it('nothing listens: status 3, naming warden serve', async () => {
    const daemon = await rawDaemon(() => undefined);
    const { url } = daemon;
    await daemon.close(); // the port is free again: nothing answers there
    const error = await failureOf(callDaemon(url, 'the-token', '_acp-warden/sessions', {}));
    expect(error.status).to.equal(3);
    expect(error.message).to.equal(`nothing answers at ${url}: start the daemon with warden serve`);
  });

  it('the token is refused (401): status 4; another HTTP refusal: status 4 with its code', async () => {
    const refusing = await rawDaemon(() => undefined, { refuseWith: 401 });
    daemons.push(refusing);
    const error = await failureOf(callDaemon(refusing.url, 'wrong', '_acp-warden/sessions', {}));
    expect(error.status).to.equal(4);
    expect(error.message).to.include('the token was refused');
    const teapot = await rawDaemon(() => undefined, { refuseWith: 418 });
    daemons.push(teapot);
    const other = await failureOf(callDaemon(teapot.url, 'the-token', '_acp-warden/sessions', {}));
    expect(other.status).to.equal(4);
    expect(other.message).to.equal(`${teapot.url}: HTTP 418`);
  });

  it('no answer within the timeout: status 1, "no answer from URL within N s"', async () => {
    const daemon = await rawDaemon((request, socket) => {
      if (request.method === 'initialize') answer(socket, request, { result: initializeResult });
      // the request itself is never answered
    });
    daemons.push(daemon);
    const error = await failureOf(callDaemon(daemon.url, 'the-token', '_acp-warden/sessions', {}, 300));
    expect(error.status).to.equal(1);
    expect(error.message).to.equal(`no answer from ${daemon.url} within 0.3 s`);
  });
});
