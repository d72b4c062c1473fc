/**
 * The value shapes of the `warden` flags (flag-table.ts): each reads a flag's text into the
 * unit the code uses (seconds become ms, MiB become bytes) and says what it accepts. The error
 * of a bad value names the flag, the value and what is accepted (arguments.ts).
 */
import { ArgumentError, positiveNumber, restartIntensity } from './arguments.js';
import type { Shape } from './flag-table.js';
import { cpuPercentRange, isCpuPercent } from '../port/cpu-limit.js';

/** Bytes in a MiB. */
const mebibyte = 1024 * 1024;

/** A positive number, as given (`--rate 0.5`). */
export const positive: Shape<number> = { accepts: 'a number > 0', read: positiveNumber };

/** Positive seconds, kept in ms (`--drain-timeout 5` → 5000). */
export const seconds: Shape<number> = { accepts: 'seconds > 0, kept in ms', read: (flag, text) => positiveNumber(flag, text) * 1000 };

/** Positive seconds in ms, or 0 for never (`--idle-timeout 0`). */
export const secondsOrNever: Shape<number> = { accepts: 'seconds > 0, or 0 (never), kept in ms', read: (flag, text) => (text === '0' ? 0 : positiveNumber(flag, text) * 1000) };

/** Seconds ≥ 0 in ms, 0 turning the watchdog off (`--hang-after 0`). */
export const watchdogSeconds: Shape<number> = {
  accepts: 'seconds ≥ 0 (0: off), kept in ms',
  read(flag, text) {
    const value = Number(text);
    if (text.trim() === '' || !(value >= 0) || !Number.isFinite(value)) throw new ArgumentError(`${flag} expects a number of seconds (0 turns the watchdog off), got ${JSON.stringify(text)}`);
    return value * 1000;
  },
};

/** A keepalive interval: seconds in ms (at least 1), or 0 for none. */
export const keepaliveSeconds: Shape<number> = {
  accepts: 'seconds > 0, or 0 (never), kept in ms, at least 1 ms',
  read(flag, text) {
    const ms = secondsOrNever.read(flag, text);
    return ms === 0 ? 0 : Math.max(1, Math.round(ms));
  },
};

/** A PostgreSQL lease: at least 0.1 s in whole ms, kept in ms. */
export const leaseSeconds: Shape<number> = {
  accepts: 'seconds ≥ 0.1 in whole ms, kept in ms',
  read(flag, text) {
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value) || !(value * 1000 >= 100) || !Number.isInteger(value * 1000)) throw new ArgumentError(`${flag} expects a number of seconds of at least 0.1 (whole milliseconds), got ${JSON.stringify(text)}`);
    return value * 1000;
  },
};

/** A share of the CPU in percent of one core: 1 to 100 per core of this machine (cpu-limit.ts). */
export const cpuPercent: Shape<number> = {
  accepts: 'a percent of one core, 1 to 100 per core',
  read: (flag, text) => {
    const value = positiveNumber(flag, text);
    if (!isCpuPercent(value)) {
      const { most, cores } = cpuPercentRange();
      throw new ArgumentError(`${flag} expects a percent of one core from 1 to ${most} (100 per core of this machine's ${cores}), got ${JSON.stringify(text)}`);
    }
    return value;
  },
};

/** A size in MiB, kept in whole bytes (at least 1). */
export const mebibytes: Shape<number> = { accepts: 'MiB > 0, kept in bytes', read: (flag, text) => Math.max(1, Math.floor(positiveNumber(flag, text) * mebibyte)) };

/** `N/SECONDS`: at most N restarts in SECONDS, as `{ intensity, period }` (ms). */
export const restartLimit: Shape<{ intensity: number; period: number }> = { accepts: 'N/SECONDS, kept as { intensity, period (ms) }', read: restartIntensity };

/** A whole number ≥ 0; `what` says what it counts. */
export function whole(what: string): Shape<number> {
  return {
    accepts: 'a whole number ≥ 0',
    read(flag, text) {
      const value = Number(text);
      if (text.trim() === '' || !Number.isSafeInteger(value) || value < 0) throw new ArgumentError(`${flag} expects a whole number ≥ 0 (${what}), got ${JSON.stringify(text)}`);
      return value;
    },
  };
}

/** One of `choices`. */
export function choice<T extends string>(choices: readonly T[]): Shape<T> {
  return {
    accepts: `one of ${choices.join(', ')}`,
    read(flag, text) {
      if (!(choices as readonly string[]).includes(text)) throw new ArgumentError(`${flag} expects one of ${choices.join(', ')}, got ${JSON.stringify(text)}`);
      return text as T;
    },
  };
}

/** Text that `pattern` matches; `expects` completes "FLAG expects …" in the error. */
export function matching(pattern: RegExp, accepts: string, expects: string): Shape<string> {
  return {
    accepts,
    read(flag, text) {
      if (!pattern.test(text)) throw new ArgumentError(`${flag} expects ${expects}, got ${JSON.stringify(text)}`);
      return text;
    },
  };
}
