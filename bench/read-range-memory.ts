/**
 * Memory of `fs/read_text_file` with `line`/`limit` on a large file: the streamed range
 * (readTextFile) against the baseline of reading the whole file and splitting it (what it did
 * before), measured in the same run as growth of the peak RSS. Prints the ratio.
 * Run: node --expose-gc --import tsx bench/read-range-memory.ts [MiB, default 256]
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTextFile } from '../src/acp/workspace-fs.js';

const mib = Number(process.argv[2] ?? 256);
const root = mkdtempSync(join(tmpdir(), 'warden-bench-read-'));
const path = join(root, 'big.log');
const line = `${'x'.repeat(99)}\n`;
const linesPerBlock = Math.floor((1024 * 1024) / line.length);
const block = line.repeat(linesPerBlock);
writeFileSync(path, '');
for (let i = 0; i < mib; i++) appendFileSync(path, block);
const totalLines = mib * linesPerBlock;

/** Peak RSS growth (MiB) while `work` runs, sampled every millisecond. */
async function peakGrowth(work: () => Promise<unknown>): Promise<number> {
  globalThis.gc?.();
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 1);
  await work();
  peak = Math.max(peak, process.memoryUsage().rss);
  clearInterval(timer);
  return (peak - before) / (1024 * 1024);
}

try {
  const ask = { path, line: totalLines - 2, limit: 3 };
  const streamed = await peakGrowth(() => readTextFile(ask, [root], { maxReadBytes: 1024 * 1024 * 1024 }));
  const baseline = await peakGrowth(async () => (await readFile(path, 'utf8')).split('\n').slice(ask.line - 1, ask.line - 1 + ask.limit).join('\n'));
  console.log(`file ${mib} MiB, lines ${totalLines - 2}..${totalLines}`);
  console.log(`peak RSS growth: streamed range ${streamed.toFixed(1)} MiB, whole-file baseline ${baseline.toFixed(1)} MiB, ratio ${(streamed / Math.max(baseline, 0.1)).toFixed(3)}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
