/**
 * The log file writer (`--log-file`): lines written on the descriptor it holds open
 * (`logFileWriter`) against the baseline of opening the file for each line
 * (`appendFileSync`, what it did before). Both write the same JSON log line the same number
 * of times into a fresh temporary directory, interleaved round by round; prints the median
 * time of each and their ratio. Asserts only that both files got every line.
 *
 * Run: `node --import tsx bench/log-file.ts`.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logFileWriter } from '../src/inspect/log-sink.js';

const lines = 20_000;
const rounds = 5;
const line = `${JSON.stringify({ time: '2026-12-01T12:00:00.000Z', level: 'debug', message: 'session s1: state prompting', type: 'session.state', sessionId: 's1', state: 'prompting' })}\n`;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

const dir = mkdtempSync(join(tmpdir(), 'warden-bench-log-'));
try {
  const held: number[] = [];
  const reopened: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const baseline = join(dir, `append-${round}.log`);
    let start = performance.now();
    for (let i = 0; i < lines; i++) appendFileSync(baseline, line, { mode: 0o600 });
    reopened.push(performance.now() - start);
    const path = join(dir, `held-${round}.log`);
    const write = logFileWriter(path);
    start = performance.now();
    for (let i = 0; i < lines; i++) write(line);
    held.push(performance.now() - start);
    write.close();
    for (const file of [baseline, path]) {
      if (readFileSync(file, 'utf8').length !== line.length * lines) throw new Error(`${file} did not get every line`);
    }
  }
  const [a, b] = [median(reopened), median(held)];
  console.log(`${lines} log lines, median of ${rounds}: appendFileSync per line ${a.toFixed(1)} ms, held descriptor ${b.toFixed(1)} ms, ratio ${(b / a).toFixed(2)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
