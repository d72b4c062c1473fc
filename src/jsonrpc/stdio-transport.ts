import { defaultMaxLineBytes, jsonLines, LineFramer } from '../port/line-framer.js';
import { WriteQueue } from '../port/write-queue.js';
import { scanEnvelope } from './envelope-scan.js';
import type { JsonRpcMessage } from './message.js';
import type { Transport, TransportSink } from './transport.js';
import { HeldInput } from './held-input.js';
import { messageText } from './json-text.js';

/**
 * The longest line `stdioTransport` reads by default: 64 MiB, the port's `defaultMaxLineBytes` (one
 * limit for the editor's lines and the agent's). Editors send screenshots and
 * files inside prompts (base64 images, embedded resources); the limit only guards memory.
 */
export const defaultStdioMaxLineBytes = defaultMaxLineBytes;

/**
 * Bytes waiting for the editor to read at which the output counts as backed up: 256 KiB
 * (stdin stops being read; the host's cursors fall behind, the journal keeps what follows).
 * Small, because what waits here while the editor pauses outlives the young generation: at
 * 1 MiB, a `session/load` of 100 MiB to an editor reading in bursts peaked at idle + 100 MB
 * of RSS (old-generation garbage), at 256 KiB at idle + 25 MB (docs/benchmarks.md).
 */
export const stdioHighWaterBytes = 256 * 1024;
/** ... and at which it is not any more: 64 KiB. */
export const stdioLowWaterBytes = 64 * 1024;

export { heldInputBytes } from './held-input.js';

/** Options of {@link stdioTransport}. */
export interface StdioTransportOptions {
  /** Longest line read, in bytes; a longer one is answered by its id and dropped. Default {@link defaultStdioMaxLineBytes}. */
  readonly maxLineBytes?: number;
}

/** {@link stdioTransport}'s transport: a {@link Transport} whose writes can be waited for. */
export interface StdioTransport extends Transport {
  /**
   * Resolves once everything sent so far was handed to stdout (or stdout failed: nothing more
   * can go). It waits as long as the editor takes to read: bound it.
   */
  flush(): Promise<void>;
}

/**
 * A transport over this process's own stdin and stdout: what `warden acp` speaks to the
 * editor. stdout is the protocol channel: this is the only writer, one message per line. The
 * lines sent in one run of the event loop are written together at its end (one write, in
 * the order sent); `close()` writes what was sent before it.
 *
 * Flow control: a slow editor is waited for, never dropped. Once more than
 * {@link stdioHighWaterBytes} wait for it to read, stdin is paused and the sink hears
 * `backpressure(true)` (its owner pauses its delivery: the host's cursors, or the agents
 * of a server without a journal); below {@link stdioLowWaterBytes} both go on. The connection can hold stdin too (`holdReading`: too many requests
 * unanswered); it is read only when neither holds it.
 *
 * EOF on stdin is input ended, not peer gone (`inputEnded`): the editor wrote its last
 * request and half-closed, and still reads the answers on stdout. A failing stdout (EPIPE:
 * nobody reads any more) is the peer gone (`closed`).
 */
export function stdioTransport(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stdout, // stdout-ok: the protocol writer's default stream
  options: StdioTransportOptions = {},
): StdioTransport {
  let sink: TransportSink | undefined;
  let closed = false;
  // Input is read only when neither the backed-up output nor the connection holds it.
  let outputBackedUp = false;
  const applyReading = () => {
    if (closed) return;
    if (outputBackedUp || held.full) input.pause();
    else input.resume();
  };
  const limit = options.maxLineBytes ?? defaultStdioMaxLineBytes;
  const writes = new WriteQueue(output as unknown as import('node:stream').Writable, Infinity, {
    highWaterBytes: stdioHighWaterBytes,
    lowWaterBytes: stdioLowWaterBytes,
    onChange: (backedUp) => {
      outputBackedUp = backedUp;
      applyReading();
      sink?.backpressure?.(backedUp);
    },
  });
  const finish = (message: string) => {
    if (closed) return;
    closed = true;
    sink?.closed({ message });
  };
  /** One callback for every write (not a closure each: a stream of updates is many lines). */
  const written = (error?: Error) => {
    if (error) finish(`stdout failed: ${error.message}`);
  };
  // The lines sent in one run of the event loop go out as one write, at its end: a stream of
  // updates is a batch of lines at a time, and a write each cost a system call each on a pipe
  // (and the stream's bookkeeping per write here). The order is the order sent.
  let unwritten: string[] = [];
  let writeScheduled = false;
  const writeLines = () => {
    writeScheduled = false;
    if (unwritten.length === 0) return;
    const data = unwritten.length === 1 ? (unwritten[0] as string) : unwritten.join('');
    unwritten = [];
    if (!closed) writes.write(data, written); // stdout-ok: the protocol writer
  };
  const framer = new LineFramer({
    maxLineBytes: limit,
    oversize: 'skip',
    onLine: jsonLines((value) => sink?.message(value), (preview) => sink?.malformed(preview)),
    onOversize: (bytes, sample) => {
      if (sink?.oversize) sink.oversize({ bytes, limit, envelope: scanEnvelope(sample.head, sample.tail) });
      else sink?.malformed(`<a line of ${bytes} bytes, over the limit>`);
    },
  });
  // Held by the connection, stdin is still read, unparsed, up to heldInputBytes: an editor that
  // goes away leaves at most a pipe's worth behind, so its end of input is still seen.
  const held = new HeldInput<Buffer>((chunk) => chunk.length, (chunk) => framer.push(chunk));
  const onData = (chunk: Buffer | string) => {
    if (held.take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk) && held.full) applyReading();
  };
  const onEnd = () => {
    held.release(true); // the editor closed its input (it may still read answers): what it wrote (bounded by heldInputBytes) is served
    framer.end();
    if (closed) return;
    if (sink?.inputEnded) sink.inputEnded({ message: 'the editor closed its input (EOF on stdin)' });
    else finish('the client closed our stdin');
  };
  const onError = (error: Error) => finish(`stdio failed: ${error.message}`);
  return {
    start(target) {
      sink = target;
      input.on('data', onData);
      input.on('end', onEnd);
      input.on('error', onError);
      output.on('error', onError);
    },
    send(message: JsonRpcMessage) {
      if (closed) return;
      // A journaled update's text is the journal's, spliced in (json-text.ts).
      unwritten.push(`${messageText(message)}\n`);
      if (!writeScheduled) {
        writeScheduled = true;
        queueMicrotask(writeLines);
      }
    },
    flush() {
      writeLines();
      // An empty write is handed over after everything queued before it.
      return new Promise<void>((resolve) => writes.write('', () => resolve()));
    },
    holdReading(hold: boolean) {
      held.setHold(hold);
      applyReading();
    },
    close() {
      writeLines(); // what was sent before the close still goes out
      closed = true;
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onError);
    },
  };
}
