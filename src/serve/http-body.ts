/**
 * The body of one POST to `warden serve`'s Streamable HTTP endpoint, read whole but never past
 * the daemon's message limit (`--max-line-mib`): a body over it is dropped as it streams in,
 * so a client cannot make the daemon buffer more than one message's worth.
 */
import type { IncomingMessage } from 'node:http';

/**
 * Bytes past the limit the daemon still reads (and drops) before answering 413: 1 MiB, as a
 * WebSocket frame's slack. Why drain at all: an answer sent with `Connection: close` while the
 * client still uploads makes the kernel reset the connection on the unread bytes, and a client
 * (fetch) may see that reset before the 413.
 */
export const oversizeBodySlackBytes = 1024 * 1024;

/** What reading a body gave. */
export type BodyRead =
  | { readonly ok: true; readonly text: string }
  /**
   * Over `limit`: `bytes` is what was seen or declared (at least `limit + 1`). `drained`: the
   * whole body was read (and dropped), so the answer reaches the client; `false` when it was more
   * than {@link oversizeBodySlackBytes} over, and the client may see the connection reset instead.
   */
  | { readonly ok: false; readonly reason: 'oversize'; readonly bytes: number; readonly drained: boolean }
  /** The client went away before the body ended. */
  | { readonly ok: false; readonly reason: 'aborted' };

/**
 * Reads `request`'s body as UTF-8, at most `limit` bytes. A body over the limit is not kept:
 * up to {@link oversizeBodySlackBytes} over, it is drained to its end before the read settles
 * (so the 413 comes after the client finished sending); further over (declared by its
 * `Content-Length`, or seen as it streams in), the read settles at once and the request is
 * paused: nothing more is read.
 */
export function readBoundedBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = Number(request.headers['content-length']);
    const drainable = limit + oversizeBodySlackBytes;
    let bytes = 0;
    let chunks: Buffer[] = [];
    let oversize = false;
    let settled = false;
    const settle = (result: BodyRead) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const seen = () => Math.max(bytes, Number.isFinite(declared) ? declared : 0);
    const tooMuchToDrain = () => {
      request.pause();
      settle({ ok: false, reason: 'oversize', bytes: seen(), drained: false });
    };
    if (Number.isFinite(declared) && declared > drainable) return tooMuchToDrain();
    if (Number.isFinite(declared) && declared > limit) oversize = true;
    request.on('data', (chunk: Buffer) => {
      if (settled) return;
      bytes += chunk.length;
      if (bytes > drainable) return tooMuchToDrain();
      if (bytes > limit && !oversize) {
        oversize = true;
        chunks = [];
      }
      if (!oversize) chunks.push(chunk);
    });
    request.once('end', () => settle(oversize ? { ok: false, reason: 'oversize', bytes: seen(), drained: true } : { ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    request.once('aborted', () => settle({ ok: false, reason: 'aborted' }));
    request.once('error', () => settle({ ok: false, reason: 'aborted' }));
    request.once('close', () => settle({ ok: false, reason: 'aborted' }));
  });
}
