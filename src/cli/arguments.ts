/**
 * Command-line arguments of the `warden` commands: `--flag value`, `--flag=value`, bare
 * switches, and the value formats several commands share. A problem is an `ArgumentError`
 * whose message names the flag, what it expects, and what it got.
 */

/** A problem with the command line; the message says what to do instead. */
export class ArgumentError extends Error {
  override readonly name = 'ArgumentError';
}

/** Reads one flag: `value()` takes its value (inline after `=`, or the next argument). */
export type FlagHandler = (value: () => string) => void;

/**
 * Walks `args`, calling the handler of each flag. Returns `'help'` for `-h` / `--help`;
 * throws an {@link ArgumentError} for an unknown flag or a missing value (`hint` is appended).
 */
export function readFlags(args: readonly string[], handlers: Readonly<Record<string, FlagHandler>>, hint: string): 'help' | undefined {
  // Help wins wherever it stands (`--export --help` asks for help, not for a format).
  if (args.includes('-h') || args.includes('--help')) return 'help';
  for (let index = 0; index < args.length; index++) {
    const raw = args[index] as string;
    if (raw === '-h' || raw === '--help') return 'help';
    const equals = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const flag = equals > 0 ? raw.slice(0, equals) : raw;
    const inline = equals > 0 ? raw.slice(equals + 1) : undefined;
    const handler = Object.hasOwn(handlers, flag) ? handlers[flag] : undefined;
    if (!handler) throw new ArgumentError(`unknown option ${raw}. ${hint}`);
    handler(() => {
      if (inline !== undefined) return inline;
      const next = args[index + 1];
      if (next === undefined || next.startsWith('--')) throw new ArgumentError(`${flag} needs a value. ${hint}`);
      index++;
      return next;
    });
  }
  return undefined;
}

/** A positive, finite number (`--rate 0.5`). */
export function positiveNumber(flag: string, text: string): number {
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value)) throw new ArgumentError(`${flag} expects a positive number, got ${JSON.stringify(text)}`);
  return value;
}

/** `SECONDS`, or `0` for never (`--idle-timeout 0`), in ms. A bad value names the flag. */
export function secondsOrNever(flag: string, text: string): number {
  return text === '0' ? 0 : positiveNumber(flag, text) * 1000;
}

/** `--keepalive SECONDS` (of `warden serve` and of the bridge): ms between pings, at least 1; `0`: none. */
export function keepaliveMs(text: string): number {
  const ms = secondsOrNever('--keepalive', text);
  return ms === 0 ? 0 : Math.max(1, Math.round(ms));
}

/** A whole number ≥ 0 (`--load-limit 50`); `what` says what it counts. */
export function wholeNumber(flag: string, text: string, what: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(value) || value < 0) throw new ArgumentError(`${flag} expects a whole number ≥ 0 (${what}), got ${JSON.stringify(text)}`);
  return value;
}

/** `N/SECONDS` (`--restart-intensity 3/60`): at most N restarts in SECONDS, as `{ intensity, period }` in ms. */
export function restartIntensity(flag: string, text: string): { intensity: number; period: number } {
  const match = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(text);
  if (!match || Number(match[2]) <= 0) throw new ArgumentError(`${flag} expects N/SECONDS (say 3/60: at most 3 restarts in 60 s), got ${JSON.stringify(text)}`);
  return { intensity: Number(match[1]), period: Number(match[2]) * 1000 };
}

/** One of `choices` (`--log-level warn`). */
export function oneOf<T extends string>(flag: string, text: string, choices: readonly T[]): T {
  if (!(choices as readonly string[]).includes(text)) throw new ArgumentError(`${flag} expects one of ${choices.join(', ')}, got ${JSON.stringify(text)}`);
  return text as T;
}
