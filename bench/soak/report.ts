/**
 * The soak's report: the figures of a run, its verdict, and the reasons it failed (if it
 * did), as readable lines or as JSON (`--json`).
 */
import { cpus, platform, release, totalmem } from 'node:os';
import type { FaultKind } from './args.js';
import type { FlatnessVerdict, Sample } from './verdict.js';

/** Everything a run found. */
export interface SoakReport {
  readonly seed: number;
  readonly machine: string;
  /** The run's directory (journal, warden's log, session dirs); removed unless kept. */
  readonly directory: { readonly path: string; readonly kept: boolean };
  readonly sessions: number;
  readonly faultRatePerMinute: number;
  /** How long the load ran (without start-up and the drain), in ms. */
  readonly loadMs: number;
  readonly requests: {
    readonly sent: number;
    readonly settled: number;
    readonly ok: number;
    readonly failed: number;
    readonly unsettled: number;
    readonly byMethod: Readonly<Record<string, { sent: number; ok: number; failed: number }>>;
    /** Method and age of each request still unsettled at the end. */
    readonly unsettledDetail: ReadonlyArray<{ method: string; ageMs: number }>;
  };
  readonly prompts: {
    readonly sent: number;
    readonly endTurn: number;
    readonly cancelled: number;
    readonly otherStop: number;
    readonly failed: Readonly<Record<string, number>>;
    readonly cancelsSent: number;
    /** Permission requests warden relayed from the CLI to the soak's editor, and the answers. */
    readonly permissions: { readonly asked: number; readonly allowed: number; readonly rejected: number };
    /** Time to the answer of prompts that got one. */
    readonly latencyMs: Quantiles;
    /** Time to the error of prompts that failed (a crash, a hang caught by the watchdog). */
    readonly errorLatencyMs: Quantiles;
  };
  readonly faults: { readonly injected: Readonly<Record<FaultKind, number>>; readonly skipped: number };
  /** `memory`: restarts for memory (recycled at the soft limit, killed at the hard one) and the largest crossing sample, MiB. */
  readonly restarts: { readonly total: number; readonly perMinute: number; readonly recovered: number; readonly cliStarts: number; readonly memory: { readonly soft: number; readonly hard: number; readonly maxMiB: number } };
  readonly sessionsFailed: number;
  readonly sessionsResumed: number;
  readonly rss: SeriesSummary;
  readonly fds: SeriesSummary;
  readonly clis: SeriesSummary;
  readonly samples: readonly Sample[];
  readonly verdict: FlatnessVerdict;
  readonly warden: {
    readonly pid: number;
    readonly exit: number | string;
    /** warden exited before the soak closed its stdin: when (ms into the load) and how. */
    readonly exitedEarly: { readonly afterMs: number; readonly exit: number | string } | null;
    readonly errorLines: number; readonly errorSamples: readonly string[] };
  /** Pids of warden's agent CLIs (or warden) still alive after warden exited. */
  readonly leaked: readonly number[];
  readonly ok: boolean;
  readonly problems: readonly string[];
}

export interface Quantiles {
  readonly count: number;
  readonly p50: number | null;
  readonly p99: number | null;
  readonly max: number | null;
}

export interface SeriesSummary {
  readonly first: number | null;
  readonly last: number | null;
  readonly min: number | null;
  readonly max: number | null;
}

/** Nearest-rank quantiles of `values`. */
export function quantiles(values: readonly number[]): Quantiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? null : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number));
  return { count: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? null };
}

export function summarise(values: readonly number[]): SeriesSummary {
  if (values.length === 0) return { first: null, last: null, min: null, max: null };
  return { first: values[0] as number, last: values.at(-1) as number, min: Math.min(...values), max: Math.max(...values) };
}

/** The machine line: CPU, memory, OS, Node. */
export function machineLine(): string {
  const processors = cpus();
  return `${processors.length} × ${processors[0]?.model.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${platform()} ${release()}, Node ${process.version}`;
}

/** Why a run fails, from its figures: empty when it passes. */
export function problemsOf(report: Omit<SoakReport, 'ok' | 'problems' | 'directory'>): string[] {
  const problems: string[] = [];
  if (report.requests.unsettled > 0) problems.push(`${report.requests.unsettled} request(s) never settled: ${report.requests.unsettledDetail.map((entry) => `${entry.method} (${Math.round(entry.ageMs / 1000)} s)`).join(', ')}`);
  if (report.leaked.length > 0) problems.push(`process(es) left alive after warden exited: ${report.leaked.join(', ')}`);
  if (report.warden.exitedEarly) problems.push(`warden exited ${Math.round(report.warden.exitedEarly.afterMs / 1000)} s into the load (${report.warden.exitedEarly.exit}) before the soak closed its stdin; requests it had not answered failed with the connection`);
  else if (report.warden.exit !== 0) problems.push(`warden exited with ${report.warden.exit}, not 0, when the editor closed its stdin`);
  if (!report.verdict.flat && report.verdict.judged) {
    if (!report.verdict.rss.flat) problems.push(`RSS grew by ${mb(report.verdict.rss.growth)} (bound ${mb(report.verdict.rss.bound)})`);
    if (!report.verdict.fds.flat) problems.push(`open fds grew by ${report.verdict.fds.growth} (bound ${report.verdict.fds.bound})`);
  }
  return problems;
}

const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
const ms = (value: number | null) => (value === null ? 'n/a' : `${Math.round(value)} ms`);

/** One time-series line per sample. */
export function sampleLine(sample: Sample, extra: { settled: number; unsettled: number; restarts: number }): string {
  return `  ${(sample.t / 1000).toFixed(1).padStart(7)} s  rss ${mb(sample.rssKb).padStart(9)}  fds ${String(sample.fds).padStart(4)}  clis ${String(sample.clis).padStart(3)}  settled ${String(extra.settled).padStart(6)}  in flight ${String(extra.unsettled).padStart(3)}  restarts ${String(extra.restarts).padStart(4)}`;
}

/** The report as readable lines. */
export function formatReport(report: SoakReport): string {
  const v = report.verdict;
  const failures = Object.entries(report.prompts.failed).map(([reason, count]) => `${reason} ${count}`).join(', ') || 'none';
  const verdict = v.judged
    ? [
        `  RSS                 ${mb(v.rss.first)} → ${mb(v.rss.last)} (medians of the first and last thirds after warm-up; growth ${mb(v.rss.growth)}, bound ${mb(v.rss.bound)}, slope ${mb(v.rss.slopePer10Min)}/10 min): ${v.rss.flat ? 'flat' : 'GROWING'}`,
        `  open fds            ${v.fds.first} → ${v.fds.last} (growth ${v.fds.growth}, bound ${v.fds.bound}, slope ${v.fds.slopePer10Min.toFixed(1)}/10 min): ${v.fds.flat ? 'flat' : 'GROWING'}`,
      ]
    : [`  flatness            not judged: ${v.why}`];
  return [
    `soak: warden acp (claude adapter, fake CLI), ${report.sessions} sessions, ${(report.loadMs / 60_000).toFixed(1)} min, faults ${report.faultRatePerMinute}/min, seed ${report.seed}`,
    `  machine             ${report.machine}`,
    `  requests            sent ${report.requests.sent}, settled ${report.requests.settled} (ok ${report.requests.ok}, error ${report.requests.failed}), unsettled ${report.requests.unsettled}`,
    `  prompts             sent ${report.prompts.sent}: end_turn ${report.prompts.endTurn}, cancelled ${report.prompts.cancelled} (of ${report.prompts.cancelsSent} cancels sent), other stop ${report.prompts.otherStop}; errors: ${failures}`,
    `  permissions         asked ${report.prompts.permissions.asked} (allowed ${report.prompts.permissions.allowed}, rejected ${report.prompts.permissions.rejected})`,
    `  prompt latency      p50 ${ms(report.prompts.latencyMs.p50)}, p99 ${ms(report.prompts.latencyMs.p99)}, max ${ms(report.prompts.latencyMs.max)} (answered); to an error p50 ${ms(report.prompts.errorLatencyMs.p50)}, p99 ${ms(report.prompts.errorLatencyMs.p99)}`,
    `  faults injected     ${Object.entries(report.faults.injected).map(([kind, count]) => `${kind} ${count}`).join(', ')} (skipped, no CLI to take it: ${report.faults.skipped})`,
    `  restarts            ${report.restarts.total} (${report.restarts.perMinute.toFixed(1)}/min), recovered ${report.restarts.recovered}; CLI starts ${report.restarts.cliStarts}`,
    ...(report.restarts.memory.soft + report.restarts.memory.hard > 0 ? [`  for memory          ${report.restarts.memory.soft} recycled at the soft limit, ${report.restarts.memory.hard} killed at the hard one; largest tree at a crossing ${report.restarts.memory.maxMiB} MiB`] : []),
    `  sessions            failed ${report.sessionsFailed}, resumed from the journal ${report.sessionsResumed}`,
    `  warden RSS          start ${report.rss.first === null ? 'n/a' : mb(report.rss.first)}, end ${report.rss.last === null ? 'n/a' : mb(report.rss.last)}, min ${report.rss.min === null ? 'n/a' : mb(report.rss.min)}, max ${report.rss.max === null ? 'n/a' : mb(report.rss.max)} (${report.samples.length} samples)`,
    `  warden fds          start ${report.fds.first ?? 'n/a'}, end ${report.fds.last ?? 'n/a'}, min ${report.fds.min ?? 'n/a'}, max ${report.fds.max ?? 'n/a'}; live CLIs ${report.clis.min ?? 'n/a'}…${report.clis.max ?? 'n/a'}`,
    ...verdict,
    `  warden              exit ${report.warden.exit}${report.warden.exitedEarly ? ` EARLY, ${Math.round(report.warden.exitedEarly.afterMs / 1000)} s into the load` : ''}; error lines in its log ${report.warden.errorLines}${report.warden.errorSamples.length > 0 ? ` (first: ${report.warden.errorSamples[0]})` : ''}`,
    `  processes left      ${report.leaked.length === 0 ? 'none' : report.leaked.join(', ')}`,
    report.ok ? 'PASS' : `FAIL\n${report.problems.map((problem) => `  - ${problem}`).join('\n')}`,
  ].join('\n');
}
