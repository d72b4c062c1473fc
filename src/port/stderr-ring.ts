/** How much of a CLI's stderr is kept by default: the last 64 KiB. */
export const defaultStderrBytes = 64 * 1024;

/**
 * The last bytes a CLI wrote on stderr, bounded: enough to explain a crash, never a leak.
 * Chunks are kept whole and dropped from the front once the total passes the limit. What
 * `tail` gives is redacted (the port passes the secrets its child holds, see redact.ts),
 * and starts at a line: a line cut at the front could hold the end of a key that no longer
 * reads as one.
 */
export class StderrRing {
  readonly #limit: number;
  readonly #redact: (text: string) => string;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #total = 0;
  /** The kept bytes start inside a line (what came before it was dropped). */
  #cutMidLine = false;

  /**
   * @param limit - bytes kept; default 64 KiB
   * @param redact - applied to the text `tail` gives (default: none)
   */
  constructor(limit = defaultStderrBytes, redact: (text: string) => string = (text) => text) {
    this.#limit = limit;
    this.#redact = redact;
  }

  /** Bytes written since the start, kept or not. */
  get totalBytes(): number {
    return this.#total;
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    if (chunk.length >= this.#limit) {
      const start = chunk.length - this.#limit;
      this.#cutMidLine = start > 0 ? chunk[start - 1] !== 0x0a : this.#endsMidLine();
      this.#chunks = [Buffer.from(chunk.subarray(start))];
      this.#bytes = this.#limit;
      return;
    }
    this.#chunks.push(Buffer.from(chunk));
    this.#bytes += chunk.length;
    while (this.#bytes > this.#limit && this.#chunks.length > 1) {
      const dropped = this.#chunks.shift() as Buffer;
      this.#bytes -= dropped.length;
      this.#cutMidLine = dropped[dropped.length - 1] !== 0x0a;
    }
  }

  /** The kept text, or only its last `maxLines` lines; terminal colour codes removed and secrets redacted (it goes into messages). */
  tail(maxLines = Infinity): string {
    let text = Buffer.concat(this.#chunks, this.#bytes).toString('utf8');
    const firstBreak = text.indexOf('\n');
    if (this.#cutMidLine && firstBreak >= 0) text = text.slice(firstBreak + 1);
    // eslint-disable-next-line no-control-regex
    text = this.#redact(text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/gu, '')).replace(/\s+$/u, '');
    if (maxLines === Infinity) return text;
    const lines = text.split('\n');
    return lines.slice(Math.max(0, lines.length - maxLines)).join('\n');
  }

  /** Whether what is kept now ends inside a line. */
  #endsMidLine(): boolean {
    const last = this.#chunks.at(-1);
    return last !== undefined && last[last.length - 1] !== 0x0a;
  }
}
