import type { Writable } from 'node:stream';
import { PortWriteError } from './port-exit.js';

/** How many bytes may wait for a CLI's stdin by default before writes are refused: 16 MiB. */
export const defaultMaxQueuedBytes = 16 * 1024 * 1024;

/**
 * A back-pressure signal for the writers: `onChange(true)` once `highWaterBytes` wait in the
 * queue, `onChange(false)` once they fell to `lowWaterBytes` (or the stream failed).
 */
export interface WritePressure {
  readonly highWaterBytes: number;
  readonly lowWaterBytes: number;
  readonly onChange: (backedUp: boolean) => void;
}

/**
 * Writes to a process's stdin that honour backpressure: while the pipe is full (`write`
 * returned false), further data waits here, up to `maxQueuedBytes`, and goes out on
 * `drain`. Beyond the limit a write fails with `queue_full` instead of growing memory
 * without bound (`Infinity`: never, for a writer whose producers wait on `pressure`).
 * Once stdin has failed (EPIPE) or closed, every write fails at once.
 */
export class WriteQueue {
  readonly #stdin: Writable;
  readonly #maxQueuedBytes: number;
  #queue: Array<{ data: string; done: (error?: PortWriteError) => void }> = [];
  #queuedBytes = 0;
  #waitingForDrain = false;
  #failure: PortWriteError | undefined;
  #written = 0;
  readonly #pressure: WritePressure | undefined;
  #backedUp = false;

  constructor(stdin: Writable, maxQueuedBytes = defaultMaxQueuedBytes, pressure?: WritePressure) {
    this.#stdin = stdin;
    this.#maxQueuedBytes = maxQueuedBytes;
    this.#pressure = pressure;
    stdin.on('drain', () => this.#flush());
  }

  /** Whether the queue is over its high-water mark (see {@link WritePressure}). */
  get backedUp(): boolean {
    return this.#backedUp;
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
    if (this.#pressure && !this.#backedUp && this.#queuedBytes >= this.#pressure.highWaterBytes) this.#setBackedUp(true);
  }

  /** Stdin failed or closed: fail what waits and every later write with `error`. */
  fail(error: PortWriteError): void {
    if (this.#failure) return;
    this.#failure = error;
    const waiting = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    for (const item of waiting) item.done(error);
    if (this.#backedUp) this.#setBackedUp(false);
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
    if (this.#backedUp && this.#queuedBytes <= (this.#pressure as WritePressure).lowWaterBytes) this.#setBackedUp(false);
  }

  #setBackedUp(backedUp: boolean): void {
    this.#backedUp = backedUp;
    this.#pressure?.onChange(backedUp);
  }
}
