/**
 * Timing helpers for the benchmarks: warm-up runs, N timed repetitions, median/min/max,
 * all with `process.hrtime.bigint()`. Figures are reported, never asserted.
 */

/** Summary of the repetitions of one case, in nanoseconds per operation. */
export interface Stats {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly repetitions: number;
}

/** How many untimed warm-up runs, then how many timed repetitions. */
export interface Plan {
  readonly warmup: number;
  readonly repetitions: number;
  /** Collect garbage before every repetition (for repetitions that allocate a lot). */
  readonly gcEachRepetition?: boolean;
}

/** One repetition: does its own untimed setup, returns the ns per operation it timed. */
export type Repetition = () => number | Promise<number>;

/** The monotonic clock, in nanoseconds. */
export function now(): bigint {
  return process.hrtime.bigint();
}

/** Nanoseconds since `start` (a value of {@link now}). */
export function since(start: bigint): number {
  return Number(process.hrtime.bigint() - start);
}

/** Runs a full garbage collection when Node was started with `--expose-gc`. */
export function collectGarbage(): void {
  globalThis.gc?.();
}

/**
 * Runs `repetition` `plan.warmup` times untimed, then `plan.repetitions` times, and
 * summarises what it returns. Each repetition does its own untimed setup and returns
 * the nanoseconds per operation it measured (so setup and teardown stay out of the figure).
 */
export async function measure(plan: Plan, repetition: Repetition): Promise<Stats> {
  return (await measureInterleaved(plan, { only: repetition })).only as Stats;
}

/**
 * Like {@link measure} for several cases at once, interleaved: every round runs each case
 * once, in turn, so that a change in the machine's load touches all of them alike.
 */
export async function measureInterleaved<K extends string>(plan: Plan, cases: Record<K, Repetition>): Promise<Record<K, Stats>> {
  const names = Object.keys(cases) as K[];
  const samples = new Map<K, number[]>(names.map((name) => [name, []]));
  for (let round = 0; round < plan.warmup + plan.repetitions; round++) {
    for (const name of names) {
      if (plan.gcEachRepetition) collectGarbage();
      const value = await cases[name]();
      if (round >= plan.warmup) samples.get(name)?.push(value);
    }
  }
  const stats = {} as Record<K, Stats>;
  for (const name of names) stats[name] = summarize(samples.get(name) ?? []);
  return stats;
}

/** Median, min and max of samples (ns per operation). */
export function summarize(samples: readonly number[]): Stats {
  if (samples.length === 0) throw new Error('no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number, repetitions: sorted.length };
}

/** A duration in ns, in the unit that reads best: `850 ns`, `12.3 µs`, `4.56 ms`. */
export function formatNs(ns: number): string {
  if (ns < 1_000) return `${ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : 1)} µs`;
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(ns < 10_000_000 ? 2 : 1)} ms`;
  return `${(ns / 1_000_000_000).toFixed(2)} s`;
}

/** Median with its range: `12.3 µs (11.9–14.0)`. */
export function formatStats(stats: Stats): string {
  return `${formatNs(stats.median)} (${formatNs(stats.min)}–${formatNs(stats.max)})`;
}

/** A ratio as `123.4×`, `1.23×` or `0.0042×` (two significant digits when small). */
export function formatRatio(ratio: number): string {
  if (ratio >= 10) return `${ratio.toFixed(1)}×`;
  if (ratio >= 0.1) return `${ratio.toFixed(2)}×`;
  return `${ratio.toPrecision(2)}×`;
}

/** Renders rows as a Markdown table (which also reads fine on a terminal). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] as number)).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** The ratio of two medians, formatted (`ours / baseline`). */
export function ratio(ours: Stats, baseline: Stats): string {
  return formatRatio(ours.median / baseline.median);
}

/** Throws when a benchmark's own invariant does not hold: a fast wrong answer is no result. */
export function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`benchmark invariant broken: ${what}`);
}

/** How long a benchmark waits for one message or process before failing the run. */
export const deadlineMs = 30_000;

/** Rejects after {@link deadlineMs}, so that a lost message fails the run instead of hanging it. */
export function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`benchmark timed out after ${deadlineMs} ms: ${what}`)), deadlineMs);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
