/**
 * The relay bench's in-process warden cases (bench/relay.ts), each in fresh processes of its
 * own (five a case) running tsc's build of src/ (the code `warden acp` runs), each against the
 * JSON.parse + JSON.stringify baseline run in that process (bench/support/relay-child.ts).
 * bench/relay.ts runs every case in one process on src/ through tsx, interleaved: there one
 * case's garbage and recompilations are charged to the next, and its file-journal figure moved
 * by a third between two runs a minute apart (9.9 and 13.3 µs on 2026-12-05). Here each case's
 * figure is its own, and the spread across its processes is printed beside the median: on this
 * 2-core machine (the agent process on the other core) one process to the next varies by about
 * a quarter, which is the precision any single figure here has. Prints figures; asserts nothing.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWarden } from './support/build-warden.js';
import { formatNs, formatRatio, now, since, summarize, table } from './support/measure.js';
import type { ChildResult, IsolatedCase } from './support/relay-child.js';

const child = fileURLToPath(new URL('./support/relay-child.ts', import.meta.url));
const processesPerCase = 5;
const cases: ReadonlyArray<readonly [IsolatedCase, string]> = [
  ['floor', 'floor: lines, JSON.parse, warden\'s file journal, line text; no layers'],
  ['floorGroupRows', 'floor, the journal a row a group (a prototype layout, not warden\'s)'],
  ['passthrough', 'warden: agent server + ACP passthrough (no host)'],
  ['hostMemory', 'warden acp: host, :memory: journal'],
  ['hostFile', 'warden acp: host, file journal (WAL; the default)'],
];

const median = (values: readonly number[]): number => summarize(values).median;

/** Runs the isolated relay cases and prints their table. */
export async function relayIsolated(): Promise<void> {
  const begun = now();
  console.log('\n## Relay, each case in processes of its own');
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-relay-isolated-'));
  const rows: string[][] = [];
  try {
    // The code a user runs: tsc's build (src/ through tsx costs more and varies more: the module's comment).
    const dist = join(buildWarden(join(dir, 'build')), '..', '..');
    for (const [name, label] of cases) {
      const results: ChildResult[] = [];
      for (let run = 0; run < processesPerCase; run++) {
        const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', child, name, join(dir, `${name}-${run}`), dist], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300_000 });
        results.push(JSON.parse(out.trim().split('\n').at(-1) as string) as ChildResult);
      }
      const ratios = results.map((result) => result.caseCpu / result.baselineCpu);
      const cpus = results.map((result) => result.caseCpu);
      rows.push([
        label,
        `${formatNs(median(cpus))} (${formatNs(Math.min(...cpus))}–${formatNs(Math.max(...cpus))})`,
        formatNs(median(results.map((result) => result.baselineCpu))),
        `${formatRatio(median(ratios))} (${formatRatio(Math.min(...ratios))}–${formatRatio(Math.max(...ratios))})`,
        formatRatio(median(results.map((result) => result.caseWall / result.baselineWall))),
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n(each case: ${processesPerCase} fresh processes running tsc's build of src/, 15 prompts of 2,000 updates after 3 warm-up rounds, interleaved with the baseline in the same process; CPU: the process's, every thread, request to answer; medians over the processes, their range in brackets)\n`);
  console.log(table(['case', 'CPU per update', 'baseline CPU', 'CPU / baseline', 'wall / baseline'], rows));
  console.log(`(relay, isolated: ${formatNs(since(begun))})`);
}
