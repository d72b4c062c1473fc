/**
 * One short call to a running `warden serve` (what `warden sessions` does): open a WebSocket to
 * its `/acp` with the bearer token, `initialize`, send one request, close. Plain `ws` and
 * JSON text frames, no actors: a command that asks once and exits.
 */
import WebSocket from 'ws';
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

/** Calls `method` on the daemon at `url` (after `initialize`) and resolves with its result; rejects with a {@link DaemonCallError}. */
export function callDaemon(url: string, token: string, method: string, params: unknown, timeoutMs = 15_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, handshakeTimeout: timeoutMs });
    const timer = setTimeout(() => fail(new DaemonCallError(`no answer from ${url} within ${timeoutMs / 1000} s`, 1)), timeoutMs);
    let settled = false;
    const fail = (error: DaemonCallError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.terminate();
      reject(error);
    };
    socket.on('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 0;
      const why = status === 401 ? 'the token was refused (check --token-file: it must be the file warden serve printed)' : status === 403 ? 'the origin was refused' : status === 404 ? 'no ACP endpoint there (the path is /acp)' : `HTTP ${status}`;
      fail(new DaemonCallError(`${url}: ${why}`, 4));
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const refused = error.code === 'ECONNREFUSED' || error.code === 'ENOENT';
      fail(new DaemonCallError(refused ? `nothing answers at ${url}: start the daemon with warden serve` : `${url}: ${error.message}`, refused ? 3 : 1));
    });
    socket.on('close', () => fail(new DaemonCallError(`${url} closed the connection before answering`, 5)));
    socket.on('open', () => {
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'warden-sessions', version: '0.1.0' } } }));
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      let message: { id?: unknown; result?: unknown; error?: { code: number; message: string } };
      try {
        message = JSON.parse(String(data)) as typeof message;
      } catch {
        return;
      }
      if (message.id === 1) {
        if (message.error) return fail(new DaemonCallError(`initialize was refused: ${message.error.message}`, 1));
        socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method, params }));
        return;
      }
      if (message.id !== 2 || settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      if (message.error) reject(new DaemonCallError(message.error.message, 1));
      else resolve(message.result);
    });
  });
}
