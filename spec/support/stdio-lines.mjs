// What the fake agents written as plain scripts share (stream-agent.mjs, fake-cli.mjs,
// fixture-replay.mjs, bench/support/flood-agent.mjs): NDJSON on stdio, stdin read line by
// line and stdout written synchronously.
import { writeSync } from 'node:fs';

/**
 * Reads stdin as UTF-8 and calls `onLine` with each line that is not blank (without its
 * newline), in order; then `onEnd` when stdin ends. A line cut by the end of a chunk waits for
 * the rest.
 */
export function readStdinLines(onLine, onEnd) {
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim() !== '') onLine(line);
    }
  });
  process.stdin.on('end', onEnd);
}

/**
 * Writes `data` (a string or a Buffer) to stdout synchronously, retrying on EAGAIN: all of it
 * is in the pipe when this returns, before any exit.
 */
export function writeStdoutSync(data) {
  const buffer = typeof data === 'string' ? Buffer.from(data) : data;
  let offset = 0;
  while (offset < buffer.length) {
    try {
      offset += writeSync(1, buffer, offset);
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}
