/**
 * Newline-delimited framing of a byte stream, as agents write NDJSON on stdout.
 *
 * Tolerant of what real CLIs print: CRLF endings, a UTF-8 byte order mark at the start,
 * empty lines (skipped), chunk boundaries anywhere, even inside a multi-byte character
 * (lines are split on bytes and decoded whole). A line longer than `maxLineBytes` is
 * reported once and, with the `kill` policy, ends framing at once; with `skip`, its bytes
 * are dropped up to the next newline (never buffered: only its first {@link oversizeHeadBytes}
 * and last {@link oversizeTailBytes} are kept, to tell what it was) and reported there, and
 * framing goes on. Memory stays bounded by the limit plus one chunk.
 */
export type OversizePolicy = 'kill' | 'skip';

/** Options of a {@link LineFramer}. */
export interface LineFramerOptions {
  /** Longest accepted line, in bytes, without its newline. Default {@link defaultMaxLineBytes}. */
  readonly maxLineBytes?: number;
  /** What to do with a longer line. Default `kill`: report it and stop framing. */
  readonly oversize?: OversizePolicy;
  /** Called with each complete line, in order. */
  readonly onLine: (line: string) => void;
  /**
   * Called when a line exceeds the limit: under `kill` as soon as it does, under `skip` at its
   * end, with every byte it had (`bytesSeen`) and its start and end (`sample`).
   */
  readonly onOversize?: (bytesSeen: number, sample: OversizeSample) => void;
}

/** The start and end of a line over the limit, decoded (a character cut at an edge is replaced). */
export interface OversizeSample {
  readonly head: string;
  readonly tail: string;
}

/** How much of the start of a line over the limit is kept: enough for a message's envelope. */
export const oversizeHeadBytes = 4096;
/** How much of the end of a line over the limit is kept (an `"id"` written after the params). */
export const oversizeTailBytes = 256;

/** A line being dropped: its size so far, its start, its last bytes. */
interface Skipped {
  bytes: number;
  readonly head: Buffer;
  tail: Buffer;
}

/**
 * Default line limit: 64 MiB, as the editor side's. Agents print big lines in normal use (a
 * tool result carrying a base64 screenshot, an update with a large diff); the limit guards memory.
 */
export const defaultMaxLineBytes = 64 * 1024 * 1024;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** Splits bytes into lines; see the module comment. */
export class LineFramer {
  readonly #maxLineBytes: number;
  readonly #oversize: OversizePolicy;
  readonly #onLine: (line: string) => void;
  readonly #onOversize: (bytesSeen: number, sample: OversizeSample) => void;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #atStart = true;
  #skipping: Skipped | undefined;
  #stopped = false;

  constructor(options: LineFramerOptions) {
    const max = options.maxLineBytes ?? defaultMaxLineBytes;
    if (!Number.isInteger(max) || max <= 0) {
      throw new TypeError(`Expected the \`maxLineBytes\` option to be a positive integer, got \`${String(max)}\` (${typeof max}).`);
    }
    this.#maxLineBytes = max;
    this.#oversize = options.oversize ?? 'kill';
    this.#onLine = options.onLine;
    this.#onOversize = options.onOversize ?? (() => {});
  }

  /** Whether framing stopped for good (an oversize line under the `kill` policy). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Feeds a chunk of bytes. */
  push(chunk: Buffer): void {
    if (this.#stopped) return;
    let start = 0;
    if (this.#atStart && chunk.length > 0) {
      start = this.#skipBom(chunk);
      if (start < 0) return; // part of a BOM so far; wait for more
    }
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline < 0) {
        this.#hold(chunk, start, chunk.length);
        return;
      }
      if (this.#skipping) {
        this.#skip(chunk, start, newline);
        this.#endSkip();
      } else if (this.#pendingBytes + (newline - start) > this.#maxLineBytes) {
        this.#startSkip(chunk, start, newline);
        if (this.#stopped) return;
        this.#endSkip();
      } else {
        this.#emit(chunk, start, newline);
      }
      this.#pending = [];
      this.#pendingBytes = 0;
      start = newline + 1;
    }
  }

  /** The stream ended: a last line without newline is still a line. */
  end(): void {
    if (this.#stopped) return;
    if (this.#skipping) {
      this.#endSkip();
      return;
    }
    if (this.#pendingBytes === 0) return;
    const last = Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#deliver(last, 0, last.length);
  }

  #skipBom(chunk: Buffer): number {
    const bom = [0xef, 0xbb, 0xbf];
    const held = this.#pendingBytes;
    const seen = Buffer.concat([...this.#pending, chunk.subarray(0, Math.min(chunk.length, 3 - held))]);
    for (let index = 0; index < seen.length; index++) {
      if (seen[index] !== bom[index]) {
        this.#atStart = false;
        return 0;
      }
    }
    if (seen.length < 3) {
      // A BOM may be split across chunks: keep its bytes until it is complete.
      this.#hold(chunk, 0, chunk.length);
      return -1;
    }
    this.#atStart = false;
    this.#pending = [];
    this.#pendingBytes = 0;
    return 3 - held;
  }

  #hold(chunk: Buffer, start: number, end: number): void {
    if (this.#skipping) {
      this.#skip(chunk, start, end);
      return;
    }
    const length = end - start;
    if (this.#pendingBytes + length > this.#maxLineBytes) {
      this.#startSkip(chunk, start, end);
      return;
    }
    // Copy: the stream may reuse its buffer.
    this.#pending.push(Buffer.from(chunk.subarray(start, end)));
    this.#pendingBytes += length;
  }

  /** The line in `pending` plus `chunk[start, end)` is over the limit: report it (kill) or start dropping it (skip). */
  #startSkip(chunk: Buffer, start: number, end: number): void {
    const pieces = [...this.#pending, chunk.subarray(start, end)];
    const bytes = this.#pendingBytes + (end - start);
    this.#pending = [];
    this.#pendingBytes = 0;
    // Only the edges are copied (the stream may reuse its buffer); the rest is let go.
    const skipped: Skipped = { bytes, head: edge(pieces, oversizeHeadBytes, 'start'), tail: edge(pieces, oversizeTailBytes, 'end') };
    if (this.#oversize === 'kill') {
      this.#stopped = true;
      this.#report(skipped);
      return;
    }
    this.#skipping = skipped;
  }

  #skip(chunk: Buffer, start: number, end: number): void {
    const skipped = this.#skipping as Skipped;
    const length = end - start;
    skipped.bytes += length;
    skipped.tail = length >= oversizeTailBytes
      ? Buffer.from(chunk.subarray(end - oversizeTailBytes, end))
      : Buffer.concat([skipped.tail, chunk.subarray(start, end)]).subarray(-oversizeTailBytes);
  }

  #endSkip(): void {
    const skipped = this.#skipping as Skipped;
    this.#skipping = undefined;
    this.#report(skipped);
  }

  #report(skipped: Skipped): void {
    let tail = skipped.tail;
    if (tail.length > 0 && tail[tail.length - 1] === CARRIAGE_RETURN) tail = tail.subarray(0, -1);
    this.#onOversize(skipped.bytes, { head: skipped.head.toString('utf8'), tail: tail.toString('utf8') });
  }

  #emit(chunk: Buffer, start: number, end: number): void {
    if (this.#pendingBytes === 0) {
      this.#deliver(chunk, start, end);
      return;
    }
    this.#pending.push(chunk.subarray(start, end));
    const line = Buffer.concat(this.#pending, this.#pendingBytes + (end - start));
    this.#deliver(line, 0, line.length);
  }

  #deliver(buffer: Buffer, start: number, end: number): void {
    if (end > start && buffer[end - 1] === CARRIAGE_RETURN) end -= 1;
    if (end === start) return; // empty lines carry nothing
    this.#onLine(buffer.toString('utf8', start, end));
  }
}

/** The first (or last) `size` bytes of `pieces`, copied. */
function edge(pieces: readonly Buffer[], size: number, from: 'start' | 'end'): Buffer {
  const taken: Buffer[] = [];
  let length = 0;
  const ordered = from === 'start' ? pieces : [...pieces].reverse();
  for (const piece of ordered) {
    if (length >= size) break;
    const part = from === 'start' ? piece.subarray(0, size - length) : piece.subarray(Math.max(0, piece.length - (size - length)));
    taken.push(part);
    length += part.length;
  }
  return Buffer.concat(from === 'start' ? taken : taken.reverse());
}

/** How much of a line that is not JSON is kept to say what it was. */
export const malformedPreviewChars = 200;

/**
 * A line handler for NDJSON: each line is parsed once; a line that is not JSON goes to
 * `onMalformed` with its first {@link malformedPreviewChars} characters.
 */
export function jsonLines(onValue: (value: unknown) => void, onMalformed: (preview: string) => void): (line: string) => void {
  return (line) => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      onMalformed(line.slice(0, malformedPreviewChars));
      return;
    }
    onValue(value);
  };
}
