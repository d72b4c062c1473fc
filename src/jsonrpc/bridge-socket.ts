/**
 * The client end of a connection to a warden daemon: a WebSocket opened with the daemon's
 * bearer token, and why such a connection failed or ended. Used by the stdio bridge of
 * `warden acp --connect` (serve/bridge.ts) and by the links between the hosts of a cluster
 * (cluster/peer-link.ts). Loads neither xstate, nor the host, nor the ACP SDK: an editor waits
 * for the bridge to start.
 */
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { WebSocket } from 'ws';
import { defaultHandshakeTimeoutMs } from './websocket-handshake.js';
import { readUpgradeRefusal } from './websocket-refusal.js';

// ws is CommonJS: required, not imported. An `import` goes through ws's ESM wrapper, and Node's
// ESM loader then translates each of the 8 files it names (an export scan of each): about 35 ms
// more of an editor's wait, a fifth of the bridge's start (docs/benchmarks.md, "Bridge startup").
const ws = createRequire(import.meta.url)('ws') as typeof import('ws');

/** Why the bridge could not connect, or why its connection ended. */
export type BridgeFailure =
  /** Nothing listens there (refused, no such socket file, no such host). */
  | { readonly kind: 'unreachable'; readonly code: string; readonly message: string }
  /** The daemon answered the upgrade with an HTTP error: 401 token, 403 origin, 404 path. */
  | { readonly kind: 'refused'; readonly status: number; readonly body: string }
  /** The connection ended while the editor was still using it. */
  | { readonly kind: 'closed'; readonly code: number; readonly reason: string }
  /** The daemon answered no ping for two keepalive intervals in a row (a half-open connection: its host or network gone); the bridge dropped the socket. */
  | { readonly kind: 'unanswered'; readonly pingIntervalMs: number };

/**
 * Opens the socket to the daemon with the bearer token; a failure to connect is a value, not a
 * throw. The socket comes paused (no frame is lost before anyone listens): {@link pumpBridge}
 * resumes it.
 */
export function openBridgeSocket(url: string, token: string, handshakeTimeoutMs = defaultHandshakeTimeoutMs): Promise<{ readonly ok: true; readonly socket: WebSocket } | { readonly ok: false; readonly failure: BridgeFailure }> {
  return new Promise((resolve) => {
    let socket: WebSocket;
    try {
      // maxPayload 0: no limit of our own; the daemon bounds what it sends.
      socket = new ws.WebSocket(url, { headers: { Authorization: `Bearer ${token}` }, perMessageDeflate: false, maxPayload: 0, handshakeTimeout: handshakeTimeoutMs });
    } catch (error) {
      resolve({ ok: false, failure: { kind: 'unreachable', code: 'EINVAL', message: (error as Error).message } });
      return;
    }
    let settled = false;
    const settle = (value: { ok: true; socket: WebSocket } | { ok: false; failure: BridgeFailure }) => {
      if (settled) return;
      settled = true;
      resolve(value);
    };
    socket.once('open', () => {
      // Frames the daemon sent with its 101 (read with it: ws's upgrade head) are parsed on the
      // next tick, before whoever awaits this promise can listen: held until pumpBridge does.
      socket.pause();
      settle({ ok: true, socket });
    });
    socket.once('unexpected-response', (_request, response: IncomingMessage) => readUpgradeRefusal(socket, response, (failure) => settle({ ok: false, failure })));
    socket.on('error', (error: NodeJS.ErrnoException) => settle({ ok: false, failure: { kind: 'unreachable', code: error.code ?? 'ERROR', message: error.message } }));
  });
}
