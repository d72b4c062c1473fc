/**
 * A WebSocket upgrade the server refused with an HTTP answer (401 token, 403 origin, 404 path):
 * its status and the start of its body, read once. Shared by the client transport and by the
 * stdio bridge of `warden acp --connect`, which loads nothing else of this folder (it must
 * start fast).
 */
import type { IncomingMessage } from 'node:http';
import type { WebSocket } from 'ws';

/** An upgrade refused by HTTP: the status and at most the first 2 000 characters of the body, trimmed. */
export interface UpgradeRefusal {
  readonly kind: 'refused';
  readonly status: number;
  readonly body: string;
}

/**
 * Reads the refusal `response` of `socket`'s upgrade (ws's `unexpected-response`), then hands
 * it to `refused` and terminates the socket (ws leaves it to whoever listens for this event).
 */
export function readUpgradeRefusal(socket: WebSocket, response: IncomingMessage, refused: (refusal: UpgradeRefusal) => void): void {
  let body = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => (body = (body + chunk).slice(0, 2000)));
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    refused({ kind: 'refused', status: response.statusCode ?? 0, body: body.trim() });
    socket.terminate();
  };
  response.once('end', finish);
  response.once('error', finish);
}
