/**
 * The last `limit` bytes of a terminal's output, as ACP asks: when output passes the limit,
 * it is dropped from the start, cutting at a character boundary. Text is encoded once, in
 * blocks: small pieces (a command writing a byte at a time) are gathered into one block
 * before they are encoded, so that the number of blocks, and their overhead, stays small.
 * Appending costs the text's size, dropping whole blocks from the front is cheap, so output
 * of any length is handled in linear time and held in less than twice `limit` bytes (the
 * oldest block, partly dropped, is held whole) plus one gathering block.
 */

/** Pieces smaller than this are gathered; a gathered block is encoded once this big. */
const blockBytes = 16 * 1024;

/** Whether `byte` continues a UTF-8 character (10xxxxxx). */
function continues(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/** A byte-bounded tail of text. */
export class OutputTail {
  readonly #limit: number;
  #blocks: Buffer[] = [];
  /** Index of the first live block (dropped ones are compacted away in batches). */
  #head = 0;
  /** Small pieces not encoded yet, after the blocks. */
  #gathering: string[] = [];
  #gatheringBytes = 0;
  /** Bytes kept: the blocks from `#head` and the pieces gathering. */
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
    this.#text = undefined;
    const size = Buffer.byteLength(text, 'utf8');
    if (size < blockBytes && size <= this.#limit) {
      this.#gathering.push(text);
      this.#gatheringBytes += size;
      this.#bytes += size;
      if (this.#gatheringBytes >= blockBytes) this.#encodeGathered();
    } else {
      this.#encodeGathered();
      let block = Buffer.from(text, 'utf8');
      if (block.length > this.#limit) {
        // Bigger than the whole tail: only its own end survives (a copy: a view would hold it all).
        this.#drop(this.#bytes);
        block = Buffer.from(block.subarray(block.length - this.#limit));
        this.#truncated = true;
      }
      this.#blocks.push(block);
      this.#bytes += block.length;
    }
    if (this.#bytes > this.#limit) {
      this.#drop(this.#bytes - this.#limit);
      this.#truncated = true;
    }
    this.#alignHead();
  }

  #encodeGathered(): void {
    if (this.#gathering.length === 0) return;
    this.#blocks.push(Buffer.from(this.#gathering.join(''), 'utf8'));
    this.#gathering = [];
    this.#gatheringBytes = 0;
  }

  /** Drops `count` bytes from the start. */
  #drop(count: number): void {
    while (count > 0) {
      if (this.#head === this.#blocks.length) {
        if (this.#gathering.length === 0) break;
        this.#encodeGathered();
      }
      const first = this.#blocks[this.#head] as Buffer;
      if (first.length <= count) {
        count -= first.length;
        this.#bytes -= first.length;
        this.#blocks[this.#head] = Buffer.alloc(0);
        this.#head++;
      } else {
        // A view, not a copy (copying would make many small appends quadratic).
        this.#blocks[this.#head] = first.subarray(count);
        this.#bytes -= count;
        count = 0;
      }
    }
    if (this.#head > 64 && this.#head * 2 > this.#blocks.length) {
      this.#blocks = this.#blocks.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Drops the continuation bytes of a character cut at the start. */
  #alignHead(): void {
    for (;;) {
      if (this.#head === this.#blocks.length) {
        // Pieces gathering start with whole characters: nothing was cut there.
        return;
      }
      const first = this.#blocks[this.#head] as Buffer;
      let skip = 0;
      while (skip < first.length && continues(first[skip])) skip++;
      if (skip === 0 && first.length > 0) return;
      if (skip === 0) {
        this.#head++;
        continue;
      }
      this.#drop(skip);
      if (skip < first.length) return;
    }
  }

  /** The text kept. */
  get text(): string {
    if (this.#text === undefined) {
      this.#encodeGathered();
      this.#text = Buffer.concat(this.#blocks.slice(this.#head), this.#bytes).toString('utf8');
    }
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
