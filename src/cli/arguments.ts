/**
 * Command-line arguments of the `warden` commands: `--flag value`, `--flag=value`, bare
 * switches (the walk flag-table.ts parses with), and the number formats that flag-shapes.ts and
 * bench/ build on. A problem is an `ArgumentError` whose message names the flag, what it
 * expects, and what it got.
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

/** `N/SECONDS` (`--restart-intensity 3/60`): at most N restarts in SECONDS, as `{ intensity, period }` in ms. */
export function restartIntensity(flag: string, text: string): { intensity: number; period: number } {
  const match = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(text);
  if (!match || Number(match[2]) <= 0) throw new ArgumentError(`${flag} expects N/SECONDS (say 3/60: at most 3 restarts in 60 s), got ${JSON.stringify(text)}`);
  return { intensity: Number(match[1]), period: Number(match[2]) * 1000 };
}
