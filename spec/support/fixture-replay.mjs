// What the fake CLIs that replay recorded fixtures share: reading a fixture, printing one
// JSON line with blocking writes (so a kill -9 right after cannot lose it), failing loudly
// on stderr, and awaiting the host's next JSON line from stdin.
import { readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readStdinLines } from './stdio-lines.mjs';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** The entries of spec/fixtures/<file>, one JSON value per line. */
export function readFixture(file) {
  return readFileSync(join(fixtures, file), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/**
 * `length` characters of base64 that decode to the same bytes every time (a fake screenshot:
 * tests check what arrives against it).
 */
export function fakeImageBase64(length) {
  const bytes = Buffer.alloc(Math.ceil((length * 3) / 4) + 3);
  for (let index = 0; index < bytes.length; index++) bytes[index] = (index * 131 + 7 + (index >> 8)) & 0xff;
  return bytes.toString('base64').slice(0, length);
}

/** Writes `message` as one line on stdout, synchronously. */
export function print(message) {
  const buffer = Buffer.from(`${JSON.stringify(message)}\n`);
  let offset = 0;
  while (offset < buffer.length) offset += writeSync(1, buffer, offset);
}

/** A `fail(why)` that names the fake and its fixture on stderr and exits with 3. */
export function failer(name) {
  return (why) => {
    process.stderr.write(`${name}: ${why}\n`);
    process.exit(3);
  };
}

/** Starts reading stdin; the returned `next()` resolves to the next JSON line, or `undefined` at EOF. */
export function stdinMessages() {
  const inbox = [];
  let wake;
  let ended = false;
  readStdinLines((line) => {
    inbox.push(JSON.parse(line));
    wake?.();
  }, () => {
    ended = true;
    wake?.();
  });
  return async function next() {
    for (;;) {
      if (inbox.length > 0) return inbox.shift();
      if (ended) return undefined;
      await new Promise((resolve) => (wake = resolve));
      wake = undefined;
    }
  };
}
