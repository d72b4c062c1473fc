/**
 * Reading a text file for `fs/read_text_file` within a byte budget: the whole file, or the
 * lines `line` to `line + limit - 1`, streamed in chunks from an open handle so that a range
 * of a file of any size costs only the bytes kept (what comes before is scanned, never held)
 * and the read stops at the range's last line. Past the budget the read is refused, naming
 * it: an agent cannot make the host hold a 10 GB file in memory.
 */
import type { FileHandle } from 'node:fs/promises';
import { RpcError } from '../jsonrpc/rpc-error.js';

/** The host's bounds on `fs/read_text_file` (see {@link defaultFileReadLimits}). */
export interface FileReadLimits {
  /**
   * The most bytes one read may answer: a whole file larger than this, or a `line`/`limit`
   * range that comes to more, is refused with -32602 naming the limit. Default 64 MiB.
   */
  readonly maxReadBytes?: number;
}

/** The host's default bound: 64 MiB per `fs/read_text_file` answer. */
export const defaultFileReadLimits: Required<FileReadLimits> = Object.freeze({ maxReadBytes: 64 * 1024 * 1024 });

/** The limits with defaults filled in; a bad value is a TypeError naming the option. */
export function validFileReadLimits(limits: FileReadLimits = {}): Required<FileReadLimits> {
  const { maxReadBytes = defaultFileReadLimits.maxReadBytes } = limits;
  if (!Number.isSafeInteger(maxReadBytes) || maxReadBytes < 1) {
    throw new TypeError(`Expected the \`maxReadBytes\` option to be a positive integer, got \`${String(maxReadBytes)}\` (${typeof maxReadBytes}).`);
  }
  return { maxReadBytes };
}

/** Which lines to read: from `start` (0-based) for `count` lines, or to the end. */
export interface LineRange {
  readonly start: number;
  readonly count: number | undefined;
}

const chunkBytes = 64 * 1024;
const newline = 0x0a;

/** The -32602 refusal of a read over the budget. */
export function tooLarge(path: string, maxReadBytes: number, what: string): RpcError {
  return RpcError.because('file_too_large', `Invalid params: ${what} of ${path} is over the host's fs/read_text_file limit of ${describeBytes(maxReadBytes)}; read it in parts with line and limit`, { path, maxReadBytes });
}

function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB (${bytes} bytes)` : `${bytes} bytes`;
}

/**
 * The text of `range` in the file behind `handle` (read from its current position, which
 * must be the start), joined by its newlines, without the newline that ends the last line
 * kept; throws {@link tooLarge} once more than `maxReadBytes` would be kept.
 */
export async function readLineRange(handle: FileHandle, range: LineRange, maxReadBytes: number, path: string): Promise<string> {
  const end = range.count === undefined ? Number.POSITIVE_INFINITY : range.start + range.count;
  if (end <= range.start) return '';
  const kept: Buffer[] = [];
  let keptBytes = 0;
  const keep = (bytes: Buffer) => {
    if (bytes.length === 0) return;
    keptBytes += bytes.length;
    if (keptBytes > maxReadBytes) throw tooLarge(path, maxReadBytes, range.count === undefined && range.start === 0 ? 'the content' : 'the lines asked for');
    kept.push(Buffer.from(bytes));
  };
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let line = 0;
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, chunkBytes, null);
    if (bytesRead === 0) break;
    const view = chunk.subarray(0, bytesRead);
    let from = 0;
    while (from < bytesRead) {
      const found = view.indexOf(newline, from);
      const stop = found === -1 ? bytesRead : found;
      if (line >= range.start) keep(view.subarray(from, stop));
      if (found === -1) break;
      line++;
      if (line >= end) return Buffer.concat(kept).toString('utf8');
      // The newline between two kept lines is kept; the one before the first is not.
      if (line > range.start) keep(view.subarray(found, found + 1));
      from = found + 1;
    }
  }
  return Buffer.concat(kept).toString('utf8');
}
