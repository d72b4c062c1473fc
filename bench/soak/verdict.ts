/**
 * The flatness verdict: did warden's RSS and open fds stay flat under the soak? Pure, so it
 * can be tested on synthetic series.
 *
 * The rule: drop the warm-up (the first 20% of the samples: V8 grows its heap, the journal
 * and the caches fill), split the rest into thirds, and compare the median of the last third
 * with the median of the first. Medians, because a GC's sawtooth or a restart in flight at a
 * sample moment is noise, not a trend; thirds, because a leak shows as a level that keeps
 * rising, which the two ends of the window tell apart from noise better than a line fit
 * pulled around by single spikes (the slope is reported beside it, for the eye).
 * - RSS may grow by at most max(10% of the first third's median, 8 MiB): a Node process's
 *   resident size moves by a few MB as V8 grows and shrinks its old space, and a leak of
 *   consequence (a request's worth of memory per request) passes 8 MiB within minutes.
 * - fds may grow by at most 3: one agent CLI's pipes (stdin, stdout, stderr) open while it is
 *   being restarted at the sample moment. A leak of one fd per restart or per session exceeds
 *   it within a few minutes of faults.
 */

/** One sample of warden. */
export interface Sample {
  /** Milliseconds since the load started. */
  readonly t: number;
  readonly rssKb: number;
  readonly fds: number;
  /** Live agent CLIs, children of warden. */
  readonly clis: number;
}

/** The bounds of the rule. */
export interface FlatnessRule {
  /** Share of the samples dropped at the start. */
  readonly warmupShare: number;
  /** RSS growth allowed, as a share of the first third's median. */
  readonly rssGrowthShare: number;
  /** RSS growth always allowed, in kB (noise of a small process). */
  readonly rssFloorKb: number;
  /** fds growth allowed. */
  readonly fdNoise: number;
  /** Fewer samples than this after the warm-up: too short to judge. */
  readonly minSamples: number;
}

/** The rule of docs/soak.md. */
export const defaultRule: FlatnessRule = { warmupShare: 0.2, rssGrowthShare: 0.1, rssFloorKb: 8 * 1024, fdNoise: 3, minSamples: 6 };

/** The verdict on one series. */
export interface SeriesVerdict {
  readonly flat: boolean;
  /** Median of the first third after the warm-up. */
  readonly first: number;
  /** Median of the last third. */
  readonly last: number;
  readonly growth: number;
  /** The growth allowed. */
  readonly bound: number;
  /** Least-squares slope after the warm-up, per 10 minutes. */
  readonly slopePer10Min: number;
}

/** The verdict on a run. */
export type FlatnessVerdict =
  | { readonly judged: true; readonly flat: boolean; readonly rss: SeriesVerdict; readonly fds: SeriesVerdict; readonly samples: number }
  | { readonly judged: false; readonly flat: true; readonly why: string; readonly samples: number };

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Least-squares slope of `values` over `times` (per ms); 0 for fewer than two points. */
export function slope(times: readonly number[], values: readonly number[]): number {
  const n = times.length;
  if (n < 2) return 0;
  const meanT = times.reduce((sum, t) => sum + t, 0) / n;
  const meanV = values.reduce((sum, v) => sum + v, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (let index = 0; index < n; index++) {
    const dt = (times[index] as number) - meanT;
    numerator += dt * ((values[index] as number) - meanV);
    denominator += dt * dt;
  }
  return denominator === 0 ? 0 : numerator / denominator;
}

function judgeSeries(times: readonly number[], values: readonly number[], bound: (first: number) => number): SeriesVerdict {
  const third = Math.max(1, Math.floor(values.length / 3));
  const first = median(values.slice(0, third));
  const last = median(values.slice(values.length - third));
  const allowed = bound(first);
  return { flat: last - first <= allowed, first, last, growth: last - first, bound: allowed, slopePer10Min: slope(times, values) * 600_000 };
}

/** Judges a run's samples by `rule`. */
export function flatness(samples: readonly Sample[], rule: FlatnessRule = defaultRule): FlatnessVerdict {
  const kept = samples.slice(Math.floor(samples.length * rule.warmupShare));
  if (kept.length < rule.minSamples) {
    return { judged: false, flat: true, why: `${kept.length} samples after the warm-up, fewer than ${rule.minSamples}: run longer or sample more often (--sample-every)`, samples: samples.length };
  }
  const times = kept.map((sample) => sample.t);
  const rss = judgeSeries(times, kept.map((sample) => sample.rssKb), (first) => Math.max(first * rule.rssGrowthShare, rule.rssFloorKb));
  const fds = judgeSeries(times, kept.map((sample) => sample.fds), () => rule.fdNoise);
  return { judged: true, flat: rss.flat && fds.flat, rss, fds, samples: samples.length };
}
