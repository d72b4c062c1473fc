/**
 * Scale benchmark: memory and start time of many idle sessions and many agent processes,
 * each case in a fresh child process (`node --expose-gc --import tsx
 * bench/support/scale-case.ts CASE N`) so that cases do not share a heap. Prints figures;
 * asserts nothing about speed or size (each case checks that all it started is running,
 * ready, and gone after its stop).
 *
 * - runtime floor: the same child with every module loaded and nothing started;
 * - native sessions: `createHost` with a file journal and an in-process native agent as its
 *   default agent (what a program embedding warden writes), 1,000 and 10,000 sessions opened
 *   at once through `host.newSession` and left idle. The agent keeps nothing per session
 *   (warden's share alone); the demo agent at 1,000 for comparison (and at 10,000 with
 *   `WARDEN_BENCH_DEMO_10K=1`: its start grows with the square of the sessions);
 * - CLI ports: 100 ports of `spec/support/fake-cli.mjs --banner` under one supervisor,
 *   started at once: warden's own RSS, and the children's RSS and PSS summed; against 100
 *   bare `spawn()`s of the same command (same environment) in the same kind of process.
 *
 * RSS after three full collections; per session (or port) = (RSS with them - RSS before
 * them, same process, warmed up) / N. The goal is stated against the whole process's RSS.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ScaleResult } from './support/scale-case.js';
import { check, formatNs, formatRatio, now, since, table } from './support/measure.js';

const script = fileURLToPath(new URL('./support/scale-case.ts', import.meta.url));
const goalBytes = 300 * 1024 * 1024;
const caseDeadlineMs = 240_000;

/** Runs one case in a fresh `node --expose-gc --import tsx` and returns what it printed. */
async function runCase(kind: string, count: number): Promise<ScaleResult> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script, kind, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => (out += chunk));
  // The demo agent's 10,000 sessions take up to a minute or two on a shared 2-core machine.
  const timer = setTimeout(() => child.kill('SIGKILL'), caseDeadlineMs);
  const code = await new Promise<number | null>((resolve) => child.once('close', (status) => resolve(status)));
  clearTimeout(timer);
  check(code === 0, `scale case ${kind} ${count} exited with 0 within ${caseDeadlineMs / 1000} s (got ${code})`);
  const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as ScaleResult;
  check(result.kind === kind && result.count === count, `scale case ${kind} ${count} reported`);
  return result;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;

/** Runs the scale benchmark and prints its tables. */
export async function scale(): Promise<void> {
  const begun = now();
  console.log('\n## Scale');
  const floor = await runCase('runtime', 0);
  const sessions: ScaleResult[] = [];
  const plan: Array<readonly [string, number]> = [['minimal', 1_000], ['minimal', 10_000], ['demo', 1_000]];
  // The demo agent copies its record of all sessions on every new one: 10,000 take a minute
  // or two (see docs/benchmarks.md), over this file's budget; on request only.
  if (process.env.WARDEN_BENCH_DEMO_10K === '1') plan.push(['demo', 10_000]);
  for (const [kind, count] of plan) sessions.push(await runCase(kind, count));
  const ports = await runCase('ports', 100);
  const bare = await runCase('bare', 100);

  const rows = sessions.map((result) => {
    const perSession = (result.rssAfter - result.rssBefore) / result.count;
    return [
      `${result.kind === 'demo' ? 'demo agent' : 'minimal agent'}, ${result.count.toLocaleString('en-US')} sessions`,
      mb(result.rssAfter),
      formatRatio(result.rssAfter / goalBytes),
      mb(result.rssAfter - floor.rssAfter),
      kb(perSession),
      kb((result.heapAfter - result.heapBefore) / result.count),
      mb(result.peakRss ?? 0),
      formatNs(result.startNs),
      formatNs(result.startNs / result.count),
    ];
  });
  console.log('\n### Idle native sessions (createHost, file journal; one fresh process per case)\n');
  console.log(table(['case', 'RSS after gc', '/ 300 MB goal', 'above the floor', 'RSS per session', 'heap per session', 'peak RSS', 'start all', 'per session'], [
    ['runtime floor: modules loaded, nothing started', mb(floor.rssAfter), formatRatio(floor.rssAfter / goalBytes), '', '', '', '', '', ''],
    ...rows,
  ]));
  const [small, large, demo, demoLarge] = sessions as [ScaleResult, ScaleResult, ScaleResult, ScaleResult | undefined];
  const perSession = (result: ScaleResult) => result.startNs / result.count;
  const heapPer = (result: ScaleResult) => (result.heapAfter - result.heapBefore) / result.count;
  console.log(`\nMinimal agent, from 1,000 to 10,000 sessions: ${kb((large.rssAfter - small.rssAfter) / (large.count - small.count))} of RSS and ${kb((large.heapAfter - small.heapAfter) / (large.count - small.count))} of heap`);
  console.log(`per added session (RSS after / before); start per session 10,000 / 1,000: ${formatRatio(perSession(large) / perSession(small))}.`);
  console.log(`1,000 sessions, demo agent / minimal agent: start ${formatRatio(demo.startNs / small.startNs)}, heap per session ${formatRatio(heapPer(demo) / heapPer(small))}.`);
  if (demoLarge) console.log(`Demo agent, start per session 10,000 / 1,000: ${formatRatio(perSession(demoLarge) / perSession(demo))}; 10,000 sessions, demo / minimal: start ${formatRatio(demoLarge.startNs / large.startNs)}.`);
  console.log('Sessions opened at once (Promise.all of host.newSession) after one warm-up session; "start all" from');
  console.log('the first call to the last answer. Per session = (RSS or heap used after - before) / N, same');
  console.log('process, after three full collections. Peak RSS: VmHWM, during the start.');

  const processRow = (name: string, result: ScaleResult): string[] => [
    name,
    mb(result.rssAfter),
    kb((result.rssAfter - result.rssBefore) / result.count),
    kb((result.heapAfter - result.heapBefore) / result.count),
    mb(result.childrenRss ?? 0),
    mb(result.childrenPss ?? 0),
    mb(result.rssAfter + (result.childrenPss ?? 0)),
    formatNs(result.startNs),
    formatNs(result.startNs / result.count),
  ];
  console.log('\n### CLI ports (one supervisor, one_for_one), against bare spawn()\n');
  console.log(table(['case', 'own RSS after gc', 'own RSS per process', 'own heap per process', 'children RSS (sum)', 'children PSS (sum)', 'own RSS + children PSS', 'start all (to every first line)', 'per process'], [
    processRow(`${ports.count} ports of fake-cli.mjs --banner`, ports),
    processRow(`${bare.count} bare spawn() of the same`, bare),
  ]));
  console.log(`\nPorts / bare: start all ${formatRatio(ports.startNs / bare.startNs)}, own RSS ${formatRatio(ports.rssAfter / bare.rssAfter)}, own RSS + children PSS ${formatRatio((ports.rssAfter + (ports.childrenPss ?? 0)) / (bare.rssAfter + (bare.childrenPss ?? 0)))}.`);
  console.log('\n"Own": this process (warden, or the bare spawner). Its RSS moves by several MB from run to run at this');
  console.log('size (the bare case can even shrink); the heap used is the steadier measure.');
  console.log('Each child is a Node process: its RSS counts the pages it shares with the others (the node binary,');
  console.log('shared libraries) every time; PSS splits each shared page among its users, so the PSS sum is what');
  console.log('the hundred really take. Every process checked gone after the supervisor\'s shutdown (or stdin EOF).');
  console.log(`(scale benchmark: ${formatNs(since(begun))})`);
}
