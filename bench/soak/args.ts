/**
 * `npm run soak -- [options]`: the command line of the soak, parsed once at the boundary.
 * A problem is a message naming the flag, what it expects, what it got, and the fix.
 */
import { ArgumentError, positiveNumber, readFlags, restartIntensity } from '../../src/cli/arguments.js';

/** The faults the soak injects into a session's agent CLI. */
export const faultKinds = ['kill', 'hang', 'garbage', 'half', 'huge', 'close-stdin', 'leak'] as const;

/** The kinds a run gets by default: all but `leak`, which needs `--max-memory` (else it takes the machine's memory). */
export const defaultFaultKinds: readonly FaultKind[] = faultKinds.filter((kind) => kind !== 'leak');

/** One fault kind: `kill` SIGKILL, `hang` SIGSTOP, the rest the fake CLI's own (fault-signals.mjs; `leak`: it keeps `--leak-rate` MB more a second). */
export type FaultKind = (typeof faultKinds)[number];

/** What a soak run was asked for. */
export interface SoakOptions {
  readonly minutes: number;
  readonly sessions: number;
  /** Faults per minute, over all sessions together (a Poisson process). */
  readonly faultRate: number;
  readonly faults: readonly FaultKind[];
  readonly seed: number;
  /** Mean pause between one session's prompts (exponential), in ms. */
  readonly promptGapMs: number;
  /** Share of prompts cancelled (`session/cancel`) shortly after they are sent, 0 … 1. */
  readonly cancelShare: number;
  /** Time between two samples of RSS and fds, in ms. */
  readonly sampleEveryMs: number;
  /** warden's `--hang-after`, in seconds: it catches the `hang` fault. */
  readonly hangAfter: number;
  /** warden's `--restart-intensity` (`N/SECONDS`), when given; warden's default otherwise. */
  readonly restartIntensity: string | undefined;
  /** warden's `--max-memory` (the soft limit of each agent's process tree), in MB, when given. */
  readonly maxMemoryMb: number | undefined;
  /** How fast a CLI given the `leak` fault grows, in MB a second. */
  readonly leakRateMb: number;
  readonly json: boolean;
  /** Keep the run's directory (journal, log, session dirs) instead of removing it. */
  readonly keep: boolean;
}

/** `npm run soak -- --help`. */
export const soakUsage = `Usage: npm run soak -- [options]

Runs a real \`warden acp\` (Claude Code adapter, the fake Claude CLI replaying recorded
transcripts) under many sessions of random prompts and a low rate of faults, samples its RSS
and open fds, and judges whether they stay flat.

Options:
  --minutes M            how long the load runs; fractions allowed (default 10)
  --sessions N           concurrent sessions (default 20)
  --fault-rate R         faults per minute over all sessions, Poisson (default 6)
  --faults LIST          comma-separated: ${faultKinds.join(', ')} (default: all but leak)
  --max-memory MB        passed to warden: the soft memory limit of each agent's process tree
                         (the hard one 1.25x); needed by the leak fault
  --leak-rate MB         how many MB a second a CLI given the leak fault keeps (default 50)
  --seed N               seed of the schedule (default: random, printed)
  --prompt-gap SECONDS   mean pause between one session's prompts (default 2)
  --cancel-share S       share of prompts cancelled, 0 to 1 (default 0.1)
  --sample-every SECONDS time between samples (default: the run's length / 30, 0.5 to 5)
  --hang-after SECONDS   warden's watchdog, which catches the hang fault (default 2)
  --restart-intensity N/SECONDS  passed to warden (default: warden's own, 3/60)
  --json                 print the report as JSON on stdout (the samples go to stderr)
  --keep                 keep the run's directory (journal, warden's log, session dirs)
  -h, --help             this help

Exit status: 0 when every request settled, no process was left and RSS and fds stayed flat;
1 otherwise; 2 on a usage error.`;

const hint = 'Run "npm run soak -- --help" for the options.';

function wholeNumber(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new ArgumentError(`${flag} expects a whole number of at least 1, got ${JSON.stringify(text)}`);
  return value;
}

function share(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !(value >= 0 && value <= 1)) throw new ArgumentError(`${flag} expects a share between 0 and 1 (say 0.1), got ${JSON.stringify(text)}`);
  return value;
}

/** Parses the soak's arguments; `random` draws the seed when none is given. */
export function parseSoakArgs(args: readonly string[], random: () => number = Math.random): SoakOptions | { error: string } | { help: true } {
  let minutes = 10;
  let sessions = 20;
  let faultRate = 6;
  let faults: FaultKind[] = [...defaultFaultKinds];
  let maxMemoryMb: number | undefined;
  let leakRateMb = 50;
  let seed = Math.floor(random() * 2 ** 31);
  let promptGapMs = 2000;
  let cancelShare = 0.1;
  let sampleEveryMs: number | undefined;
  let hangAfter = 2;
  let intensity: string | undefined;
  let json = false;
  let keep = false;
  try {
    const help = readFlags(args, {
      '--minutes': (value) => (minutes = positiveNumber('--minutes', value())),
      '--sessions': (value) => (sessions = wholeNumber('--sessions', value())),
      '--fault-rate': (value) => {
        const text = value();
        // 0 is allowed: a soak without faults measures the load alone.
        faultRate = text.trim() === '0' ? 0 : positiveNumber('--fault-rate', text);
      },
      '--faults': (value) => {
        const list = value().split(',').map((entry) => entry.trim()).filter(Boolean);
        const unknown = list.filter((entry) => !(faultKinds as readonly string[]).includes(entry));
        if (list.length === 0 || unknown.length > 0) throw new ArgumentError(`--faults takes a comma-separated list of ${faultKinds.join(', ')}; got ${JSON.stringify(list.join(','))}${unknown.length > 0 ? ` (unknown: ${unknown.join(', ')})` : ''}`);
        faults = list as FaultKind[];
      },
      '--seed': (value) => {
        const text = value();
        const parsed = Number(text);
        if (!Number.isInteger(parsed) || parsed < 0) throw new ArgumentError(`--seed expects a whole number of at least 0, got ${JSON.stringify(text)}`);
        seed = parsed;
      },
      '--prompt-gap': (value) => (promptGapMs = positiveNumber('--prompt-gap', value()) * 1000),
      '--cancel-share': (value) => (cancelShare = share('--cancel-share', value())),
      '--sample-every': (value) => (sampleEveryMs = positiveNumber('--sample-every', value()) * 1000),
      '--hang-after': (value) => (hangAfter = positiveNumber('--hang-after', value())),
      '--restart-intensity': (value) => {
        const text = value();
        restartIntensity('--restart-intensity', text); // validated here, passed on as written
        intensity = text;
      },
      '--max-memory': (value) => (maxMemoryMb = wholeNumber('--max-memory', value())),
      '--leak-rate': (value) => (leakRateMb = wholeNumber('--leak-rate', value())),
      '--json': () => (json = true),
      '--keep': () => (keep = true),
    }, hint);
    if (help) return { help: true };
    if (faults.includes('leak') && maxMemoryMb === undefined) throw new ArgumentError('--faults leak needs --max-memory MB: without a limit a leaking CLI takes the machine\'s memory (say --max-memory 300)');
  } catch (error) {
    if (error instanceof ArgumentError) return { error: `soak: ${error.message}` };
    throw error;
  }
  // Some 30 samples whatever the length, so that a short run can be judged too.
  const sampled = sampleEveryMs ?? Math.min(5000, Math.max(500, (minutes * 60_000) / 30));
  return { minutes, sessions, faultRate, faults, seed, promptGapMs, cancelShare, sampleEveryMs: sampled, hangAfter, restartIntensity: intensity, maxMemoryMb, leakRateMb, json, keep };
}
