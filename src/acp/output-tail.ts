/**
 * The last `limit` bytes of a terminal's output, as ACP asks: when output passes the limit,
 * it is dropped from the start, cutting at a character boundary. Each chunk is encoded once
 * and kept as it came; appending costs the chunk's size (plus, now and then, dropping whole
 * chunks from the front), so output of any length is handled in linear time and held in less
 * than twice `limit` bytes (the oldest chunk, partly dropped, is held whole).
 */

/** Whether `byte` continues a UTF-8 character (10xxxxxx). */
function continues(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** A byte-bounded tail of text. */
export class OutputTail {
  readonly #limit: number;
  #chunks: Buffer[] = [];
  /** Index of the first live chunk (dropped chunks are compacted away in batches). */
  #head = 0;
  #bytes = 0;
  #truncated = false;
  #text: string | undefined = '';

  /** Keeps at most `limit` bytes (a non-negative integer). */
  constructor(limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`Expected the output limit to be a non-negative integer, got \`${String(limit)}\`.`);
    this.#limit = limit;
  }

  /** Adds output (whole characters: the port decodes its stream). */
  append(text: string): void {
    if (text.length === 0) return;
    let chunk = Buffer.from(text, 'utf8');
    if (chunk.length > this.#limit) {
      // Bigger than the whole tail: only its own end survives.
      this.#drop(this.#bytes);
      // A copy: a view would hold all of the big chunk.
      chunk = Buffer.from(chunk.subarray(chunk.length - this.#limit));
      this.#truncated = true;
    }
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    this.#text = undefined;
    if (this.#bytes > this.#limit) {
      this.#drop(this.#bytes - this.#limit);
      this.#truncated = true;
    }
    this.#alignHead();
  }

  /** Drops `count` bytes from the start. */
  #drop(count: number): void {
    while (count > 0 && this.#head < this.#chunks.length) {
      const first = this.#chunks[this.#head] as Buffer;
      if (first.length <= count) {
        count -= first.length;
        this.#bytes -= first.length;
        this.#chunks[this.#head] = Buffer.alloc(0);
        this.#head++;
      } else {
        // A view, not a copy (copying would make many small appends quadratic); it holds
        // at most that one chunk, which is never bigger than the limit.
        this.#chunks[this.#head] = first.subarray(count);
        this.#bytes -= count;
        count = 0;
      }
    }
    if (this.#head > 64 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Drops the continuation bytes of a character cut at the start. */
  #alignHead(): void {
    while (this.#head < this.#chunks.length) {
      const first = this.#chunks[this.#head] as Buffer;
      let skip = 0;
      while (skip < first.length && continues(first[skip])) skip++;
      if (skip === 0) return;
      this.#drop(skip);
      if (skip < first.length) return;
    }
  }

  /** The text kept. */
  get text(): string {
    this.#text ??= Buffer.concat(this.#chunks.slice(this.#head), this.#bytes).toString('utf8');
    return this.#text;
  }

  /** Whether anything was dropped. */
  get truncated(): boolean {
    return this.#truncated;
  }

  /** Bytes kept. */
  get bytes(): number {
    return this.#bytes;
  }
}
