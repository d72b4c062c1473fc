/**
 * Writes sent to a port before its process exists: only while the first spawn of the
 * process waits for execa to load (execa-loader.ts). They are handed, in order, to the
 * port's write queue once the CLI's stdin is there, or failed with why it never will be.
 * Bounded like the write queue: beyond `maxQueuedBytes` a write fails with `queue_full`.
 */
import { PortWriteError } from './port-exit.js';
import type { WriteQueue } from './write-queue.js';

interface Early {
  readonly data: string;
  readonly done: (error?: PortWriteError) => void;
}

export class EarlyWrites {
  readonly #maxQueuedBytes: number;
  #writes: Early[] = [];
  #bytes = 0;

  constructor(maxQueuedBytes: number) {
    this.#maxQueuedBytes = maxQueuedBytes;
  }

  /** Bytes waiting. */
  get queuedBytes(): number {
    return this.#bytes;
  }

  write(data: string, done: (error?: PortWriteError) => void): void {
    const size = Buffer.byteLength(data);
    if (this.#bytes + size > this.#maxQueuedBytes) {
      done(new PortWriteError('queue_full', `The agent process is not reading its input: more than ${this.#maxQueuedBytes} bytes are waiting.`));
      return;
    }
    this.#writes.push({ data, done });
    this.#bytes += size;
  }

  /** The process is there: everything waiting goes to its write queue, in order. */
  handTo(queue: WriteQueue): void {
    for (const { data, done } of this.#take()) queue.write(data, done);
  }

  /** It never will be: every waiting write fails with `error`. */
  fail(error: PortWriteError): void {
    for (const { done } of this.#take()) done(error);
  }

  #take(): Early[] {
    const writes = this.#writes;
    this.#writes = [];
    this.#bytes = 0;
    return writes;
  }
}
