/**
 * Structured logs: the host's events as lines, JSON (one object per line: time, level,
 * message and the event's own fields) or pretty (`12:03:04.567 WARN  message`), at or
 * above a level, to any writer (stderr, a file). Never stdout in `warden acp`: that is the
 * protocol channel.
 */
import { appendFileSync } from 'node:fs';
import type { HostEvent } from '../host/host.js';
import { atLeast, jsonReplacer, logEntryOf, type LogLevel } from '../host/host-log.js';
import { knownSecretValues, redactSecrets } from '../port/redact.js';

/** Options of {@link createLogSink}. */
export interface LogSinkOptions {
  readonly format: 'json' | 'pretty';
  /** The least severe level written. */
  readonly level: LogLevel;
  /** Writes one line (with its newline). A writer that throws loses the line, never the host. */
  readonly write: (line: string) => void;
  /** The clock, for tests. */
  readonly now?: () => Date;
}

/** A listener for `host.on` that writes each event at or above `level` as a log line. */
export function createLogSink(options: LogSinkOptions): (event: HostEvent) => void {
  const now = options.now ?? (() => new Date());
  return (event) => {
    const entry = logEntryOf(event);
    if (!atLeast(entry.level, options.level)) return;
    const time = now();
    const line = options.format === 'json'
      ? JSON.stringify({ time: time.toISOString(), level: entry.level, message: entry.message, ...event }, jsonReplacer)
      : `${time.toISOString().slice(11, 23)} ${entry.level.toUpperCase().padEnd(5)} ${entry.message}`;
    try {
      // An event may carry an error's message or a command line: no key goes into a log.
      options.write(`${redactSecrets(line, knownSecretValues())}\n`);
    } catch {
      // A log that cannot be written must not take the host down.
    }
  };
}

/**
 * A `write` for {@link LogSinkOptions} that appends each line to the file at `path`, created
 * 0600 (owner only: logs name sessions, paths and errors) when it does not exist yet.
 */
export function logFileWriter(path: string): (line: string) => void {
  return (line) => appendFileSync(path, line, { mode: 0o600 });
}
