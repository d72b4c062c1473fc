import { SupervisorSpecError } from './spec-error.js';

/**
 * Exponential backoff between restarts of one child, as Akka's `restartWithBackoff`
 * (OTP restarts at once). The n-th consecutive restart waits
 * `min(maxDelay, minDelay * 2^n) * (1 + random * jitter)`, capped at `maxDelay`.
 */
export interface BackoffOptions {
  /** Delay before the first restart, in ms. */
  readonly minDelay: number;
  /** Upper bound of every delay, in ms (jitter included, unlike Akka). */
  readonly maxDelay: number;
  /** Random extra fraction of the delay, 0 to 1. Default 0.2. */
  readonly jitter?: number;
  /**
   * A child that ran this long (ms) before exiting starts again from `minDelay`.
   * Default `(minDelay + maxDelay) / 2`, as in Akka's code.
   */
  readonly resetAfter?: number;
}

/** Backoff options with defaults filled in. */
export interface NormalizedBackoff {
  readonly minDelay: number;
  readonly maxDelay: number;
  readonly jitter: number;
  readonly resetAfter: number;
}

const defaultJitter = 0.2;

/** Checks backoff options and fills in defaults; throws {@link SupervisorSpecError}. */
export function normalizeBackoff(options: BackoffOptions, childId: string): NormalizedBackoff {
  if (typeof options !== 'object' || options === null) {
    throw new SupervisorSpecError({ field: 'backoff', value: options, expected: 'an object with minDelay and maxDelay', childId });
  }
  const { minDelay, maxDelay } = options;
  const jitter = options.jitter ?? defaultJitter;
  if (!isNonNegative(minDelay)) {
    throw new SupervisorSpecError({ field: 'backoff.minDelay', value: minDelay, expected: 'a non-negative number of milliseconds', childId });
  }
  if (!isNonNegative(maxDelay) || maxDelay < minDelay) {
    throw new SupervisorSpecError({ field: 'backoff.maxDelay', value: maxDelay, expected: `a number of milliseconds >= minDelay (${minDelay})`, childId });
  }
  if (!isNonNegative(jitter) || jitter > 1) {
    throw new SupervisorSpecError({ field: 'backoff.jitter', value: jitter, expected: 'a number from 0 to 1', childId });
  }
  const resetAfter = options.resetAfter ?? (minDelay + maxDelay) / 2;
  if (!isNonNegative(resetAfter)) {
    throw new SupervisorSpecError({ field: 'backoff.resetAfter', value: resetAfter, expected: 'a non-negative number of milliseconds', childId });
  }
  return { minDelay, maxDelay, jitter, resetAfter };
}

function isNonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * The delay before restart number `attempt` (0 for the first consecutive restart).
 * `random` is a number in [0, 1), injected so that tests are deterministic.
 */
export function backoffDelay(backoff: NormalizedBackoff, attempt: number, random: number): number {
  const exponential = backoff.minDelay * 2 ** Math.min(attempt, 52);
  const base = Math.min(backoff.maxDelay, exponential);
  return Math.min(backoff.maxDelay, Math.round(base * (1 + random * backoff.jitter)));
}

/**
 * A backoff delay kept inside the intensity window: at most `period / (intensity + 1)`.
 * Without this, delays that outgrow the window let a crash loop restart forever (e.g. 5 s
 * delays with 3 restarts in 4 s: never more than one restart in any window), and the
 * supervisor would never give up. With it, intensity + 1 quick crashes always fall within
 * one period.
 */
export function delayWithinIntensity(delay: number, intensity: number, period: number): number {
  if (!Number.isFinite(period)) return delay;
  return Math.min(delay, Math.floor(period / (intensity + 1)));
}

/**
 * The attempt number to use for the coming restart: back to 0 when the incarnation that
 * just exited had run for at least `resetAfter` (it was stable), otherwise `pending`
 * (one more than the previous attempt).
 */
export function backoffAttempt(backoff: NormalizedBackoff, pending: number, uptime: number): number {
  return uptime >= backoff.resetAfter ? 0 : pending;
}
