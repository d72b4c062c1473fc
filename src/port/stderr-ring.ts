/** How much of a CLI's stderr is kept by default: the last 64 KiB. */
export const defaultStderrBytes = 64 * 1024;

/**
 * The last bytes a CLI wrote on stderr, bounded: enough to explain a crash, never a leak.
 * Chunks are kept whole and dropped from the front once the total passes the limit.
 */
export class StderrRing {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #total = 0;

  /** @param limit - bytes kept; default 64 KiB */
  constructor(limit = defaultStderrBytes) {
    this.#limit = limit;
  }

  /** Bytes written since the start, kept or not. */
  get totalBytes(): number {
    return this.#total;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    if (chunk.length >= this.#limit) {
      this.#chunks = [Buffer.from(chunk.subarray(chunk.length - this.#limit))];
      this.#bytes = this.#limit;
      return;
    }
    this.#chunks.push(Buffer.from(chunk));
    this.#bytes += chunk.length;
    while (this.#bytes > this.#limit && this.#chunks.length > 1) {
      this.#bytes -= (this.#chunks.shift() as Buffer).length;
    }
  }

  /** The kept text, or only its last `maxLines` lines; terminal colour codes removed (it goes into messages). */
  tail(maxLines = Infinity): string {
    // eslint-disable-next-line no-control-regex
    const text = Buffer.concat(this.#chunks, this.#bytes).toString('utf8').replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/gu, '').replace(/\s+$/u, '');
    if (maxLines === Infinity) return text;
    const lines = text.split('\n');
    return lines.slice(Math.max(0, lines.length - maxLines)).join('\n');
  }
}
