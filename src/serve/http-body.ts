/**
 * The body of one POST to `warden serve`'s Streamable HTTP endpoint, read whole but never past
 * the daemon's message limit (`--max-line-mib`): a body over it is dropped as it streams in,
 * so a client cannot make the daemon buffer more than one message's worth.
 */
import type { IncomingMessage } from 'node:http';

/** Bytes of an oversize body the daemon still reads (and drops) so that its 413 answer reaches the client: 1 MiB, as a WebSocket frame's slack. */
export const oversizeBodySlackBytes = 1024 * 1024;

/** What reading a body gave. */
export type BodyRead =
  | { readonly ok: true; readonly text: string }
  /** Over `limit`: `bytes` is what was seen (at least `limit + 1`); the socket is destroyed once the answer is out if the client sends on past the slack. */
  | { readonly ok: false; readonly reason: 'oversize'; readonly bytes: number }
  /** The client went away before the body ended. */
  | { readonly ok: false; readonly reason: 'aborted' };

/**
 * Reads `request`'s body as UTF-8, at most `limit` bytes. A `Content-Length` over the limit
 * is refused before any byte is read. An oversize body is drained (not kept) up to
 * {@link oversizeBodySlackBytes} more, so that the client is still reading when the 413 comes;
 * past that the socket is destroyed.
 */
export function readBoundedBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = Number(request.headers['content-length']);
    let bytes = 0;
    let chunks: Buffer[] = [];
    let settled = false;
    const settle = (result: BodyRead) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const overLimit = () => {
      chunks = [];
      settle({ ok: false, reason: 'oversize', bytes: Math.max(bytes, Number.isFinite(declared) ? declared : 0) });
    };
    if (Number.isFinite(declared) && declared > limit) overLimit();
    request.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit + oversizeBodySlackBytes) return void request.socket.destroy();
      if (settled) return;
      if (bytes > limit) return overLimit();
      chunks.push(chunk);
    });
    request.once('end', () => settle({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    request.once('aborted', () => settle({ ok: false, reason: 'aborted' }));
    request.once('error', () => settle({ ok: false, reason: 'aborted' }));
    request.once('close', () => settle({ ok: false, reason: 'aborted' }));
  });
}
