/**
 * One case of bench/relay-isolated.ts in a process of its own: the case's prompts interleaved
 * with the JSON.parse + JSON.stringify baseline, round by round, in this process, so that each
 * ratio is against a baseline run beside it and no other case's garbage or compiled code is in
 * its figures. Prints one JSON line: the median CPU and wall per update of each.
 * Warden is the tsc build in DIST (bench/support/build-warden.ts): the code a user runs.
 * Usage: node --expose-gc --import tsx bench/support/relay-child.ts floor|floorGroupRows|passthrough|hostMemory|hostFile DIR DIST
 */
import { join } from 'node:path';
import { collectGarbage, measureInterleaved, type Plan } from './measure.js';
import { cpuRecorder } from './own-cpu.js';
import { baseline, builtWarden, floorRelay, updates, wardenHost, wardenPassthrough, type Relay } from './relay-cases.js';

/** The cases a child runs. */
export type IsolatedCase = 'floor' | 'floorGroupRows' | 'passthrough' | 'hostMemory' | 'hostFile';

/** What a child prints. */
export interface ChildResult {
  readonly case: IsolatedCase;
  readonly baselineCpu: number;
  readonly caseCpu: number;
  readonly baselineWall: number;
  readonly caseWall: number;
}

const [name, dir, dist] = process.argv.slice(2) as [IsolatedCase, string, string];
const parts = await builtWarden(dist);
const relays: Record<IsolatedCase, () => Promise<Relay>> = {
  floor: () => floorRelay('rows', join(dir, 'floor.sqlite'), parts),
  floorGroupRows: () => floorRelay('groupRows', join(dir, 'floor-group-rows.sqlite'), parts),
  passthrough: () => wardenPassthrough(parts),
  hostMemory: () => wardenHost(':memory:', parts),
  hostFile: () => wardenHost(join(dir, 'journal.sqlite'), parts),
};
if (!(name in relays)) throw new Error(`relay-child: no case ${String(name)} (${Object.keys(relays).join(', ')})`);
const relay = await relays[name]();
try {
  const plan: Plan = { warmup: 3, repetitions: 15 };
  const cpu = cpuRecorder<'baseline' | 'case'>(updates);
  collectGarbage();
  const r = await measureInterleaved(plan, { baseline: cpu.around('baseline', () => baseline()), case: cpu.around('case', () => relay.prompt()) });
  const result: ChildResult = { case: name, baselineCpu: cpu.median('baseline', plan.warmup).process ?? Number.NaN, caseCpu: cpu.median('case', plan.warmup).process ?? Number.NaN, baselineWall: r.baseline.median, caseWall: r.case.median };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await relay.close();
}
