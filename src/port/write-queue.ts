import type { Writable } from 'node:stream';
import { PortWriteError } from './port-exit.js';

/** How many bytes may wait for a CLI's stdin by default before writes are refused: 16 MiB. */
export const defaultMaxQueuedBytes = 16 * 1024 * 1024;

/**
 * Writes to a process's stdin that honour backpressure: while the pipe is full (`write`
 * returned false), further data waits here, up to `maxQueuedBytes`, and goes out on
 * `drain`. Beyond the limit a write fails with `queue_full` instead of growing memory
 * without bound. Once stdin has failed (EPIPE) or closed, every write fails at once.
 */
export class WriteQueue {
  readonly #stdin: Writable;
  readonly #maxQueuedBytes: number;
  #queue: Array<{ data: string; done: (error?: PortWriteError) => void }> = [];
  #queuedBytes = 0;
  #waitingForDrain = false;
  #failure: PortWriteError | undefined;
  #written = 0;

  constructor(stdin: Writable, maxQueuedBytes = defaultMaxQueuedBytes) {
    this.#stdin = stdin;
    this.#maxQueuedBytes = maxQueuedBytes;
    stdin.on('drain', () => this.#flush());
  }

  /** Bytes handed to the pipe so far. */
  get bytesWritten(): number {
    return this.#written;
  }

  /** Bytes waiting for the process to read. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Writes `data`; `done` is called once it is handed to the pipe, or with the reason it never will be. */
  write(data: string, done: (error?: PortWriteError) => void = () => {}): void {
    if (this.#failure) {
      done(this.#failure);
      return;
    }
    if (!this.#waitingForDrain) {
      this.#send(data, done);
      return;
    }
    const size = Buffer.byteLength(data);
    if (this.#queuedBytes + size > this.#maxQueuedBytes) {
      done(new PortWriteError('queue_full', `The agent process is not reading its input: more than ${this.#maxQueuedBytes} bytes are waiting.`));
      return;
    }
    this.#queue.push({ data, done });
    this.#queuedBytes += size;
  }

  /** Stdin failed or closed: fail what waits and every later write with `error`. */
  fail(error: PortWriteError): void {
    if (this.#failure) return;
    this.#failure = error;
    const waiting = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    for (const item of waiting) item.done(error);
  }

  #send(data: string, done: (error?: PortWriteError) => void): void {
    this.#written += Buffer.byteLength(data);
    const more = this.#stdin.write(data, (error) => {
      if (error) done(new PortWriteError('stdin_closed', `The agent process closed its input: ${error.message}`, { cause: error }));
      else done();
    });
    if (!more) this.#waitingForDrain = true;
  }

  #flush(): void {
    this.#waitingForDrain = false;
    while (!this.#waitingForDrain && this.#queue.length > 0 && !this.#failure) {
      const item = this.#queue.shift() as { data: string; done: (error?: PortWriteError) => void };
      this.#queuedBytes -= Buffer.byteLength(item.data);
      this.#send(item.data, item.done);
    }
  }
}
