/**
 * One short call to a running `warden serve` (what `warden sessions` does): open a WebSocket to
 * its `/acp` with the bearer token, `initialize`, send one request, close. The wire format is
 * the project's JSON-RPC connection's (src/jsonrpc/), never written here.
 */
import type { RpcError } from '../jsonrpc/rpc-error.js';
import { connectWebSocketTransport, type WebSocketConnectFailure } from '../jsonrpc/websocket-transport.js';
import { listenUrl, parseListenAddress } from './listen-address.js';

/** Why a call to the daemon failed, in words for the command line (`status`: the exit status, as the bridge's: 2 usage, 3 unreachable, 4 refused, 5 closed, 1 otherwise). */
export class DaemonCallError extends Error {
  override readonly name = 'DaemonCallError';
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

/** The `ws` address of a daemon given as `ws://HOST:PORT[/acp]`, `wss://…`, `ws+unix://…` or `unix:PATH` (the bridge's forms). */
export function daemonUrl(text: string): string {
  if (text.startsWith('unix:')) {
    try {
      return listenUrl(parseListenAddress(text));
    } catch (error) {
      throw new DaemonCallError((error as Error).message, 2);
    }
  }
  if (text.startsWith('ws+unix://')) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    url = new URL('about:blank');
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw new DaemonCallError(`expected the daemon's WebSocket URL (say ws://127.0.0.1:8767/acp, or unix:PATH), got ${JSON.stringify(text)}`, 2);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/acp';
  return url.toString();
}

/**
 * Calls `method` on the daemon at `url` (after `initialize`) and resolves with its result;
 * rejects with a {@link DaemonCallError}. The wire is the project's JSON-RPC connection
 * (src/jsonrpc/) over a client WebSocket transport; `timeoutMs` bounds the whole call,
 * handshake included.
 */
export async function callDaemon(url: string, token: string, method: string, params: unknown, timeoutMs = 15_000): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  const noAnswer = () => new DaemonCallError(`no answer from ${url} within ${timeoutMs / 1000} s`, 1);
  // The connection's modules (xstate) load while the socket connects; all of them through
  // import(), so that its RpcError is the class checked below (one module instance).
  const [opened, rpc, { RpcError: RpcErrorClass }, { createActor }] = await Promise.all([
    connectWebSocketTransport(url, { headers: { authorization: `Bearer ${token}` }, handshakeTimeoutMs: timeoutMs, pingIntervalMs: 0 }),
    import('../jsonrpc/connection.js'),
    import('../jsonrpc/rpc-error.js'),
    import('xstate'),
  ]);
  if (!opened.ok) throw connectError(url, opened.failure, noAnswer);
  // No method of ours is served: a request from the daemon is answered -32601, a notification dropped.
  const connection = createActor(rpc.connectionLogic, { input: { transport: opened.transport, name: 'warden-sessions', methods: { requests: {}, notifications: {} } } }).start();
  const ask = async (name: string, body: unknown): Promise<unknown> => {
    try {
      return await rpc.sendRequest(connection, name, body, { timeout: Math.max(1, deadline - Date.now()) });
    } catch (error) {
      if (!(error instanceof RpcErrorClass)) throw error;
      throw answerError(url, name, error, noAnswer);
    }
  };
  try {
    await ask('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'warden-sessions', version: '0.1.0' } });
    return await ask(method, params);
  } finally {
    connection.stop(); // closes the socket (code 1000) if the daemon has not
  }
}

/** A connection that could not be opened, as the command line says it. */
function connectError(url: string, failure: WebSocketConnectFailure, noAnswer: () => DaemonCallError): DaemonCallError {
  switch (failure.kind) {
    case 'refused': {
      const status = failure.status;
      const why = status === 401 ? 'the token was refused (check --token-file: it must be the file warden serve printed)' : status === 403 ? 'the origin was refused' : status === 404 ? 'no ACP endpoint there (the path is /acp)' : `HTTP ${status}`;
      return new DaemonCallError(`${url}: ${why}`, 4);
    }
    case 'unreachable': {
      const refused = failure.code === 'ECONNREFUSED' || failure.code === 'ENOENT';
      return new DaemonCallError(refused ? `nothing answers at ${url}: start the daemon with warden serve` : `${url}: ${failure.message}`, refused ? 3 : 1);
    }
    case 'timeout':
      return noAnswer();
  }
}

/** A request that ended without a result, as the command line says it. */
function answerError(url: string, method: string, error: RpcError, noAnswer: () => DaemonCallError): DaemonCallError {
  if (error.failure === 'timed_out') return noAnswer();
  // The daemon closed (or the connection was lost) with the request outstanding, or before it could be sent.
  if (error.failure === 'peer_lost' || error.failure === 'local') return new DaemonCallError(`${url} closed the connection before answering`, 5);
  return new DaemonCallError(method === 'initialize' ? `initialize was refused: ${error.message}` : error.message, 1);
}
