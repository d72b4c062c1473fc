/**
 * Structured logs: the host's events as lines, JSON (one object per line: time, level,
 * message and the event's own fields) or pretty (`12:03:04.567 WARN  message`), at or
 * above a level, to any writer (stderr, a file). Never stdout in `warden acp`: that is the
 * protocol channel.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { HostEvent } from '../host/host-event.js';
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

/** A log file that cannot be opened for appending; the message names the path and the fix. */
export class LogFileError extends Error {
  override readonly name = 'LogFileError';
  readonly path: string;
  constructor(path: string, cause: NodeJS.ErrnoException) {
    const fix = cause.code === 'ENOENT'
      ? `its directory ${dirname(path)} does not exist; create it (mkdir -p ${dirname(path)}) or give a path in an existing directory`
      : cause.code === 'EISDIR'
        ? 'it is a directory; give a file path'
        : cause.code === 'EACCES' || cause.code === 'EPERM'
          ? 'permission denied; give a path this user can write'
          : `${cause.code ?? 'error'}: ${cause.message}`;
    super(`cannot open the log file ${path}: ${fix}`, { cause });
    this.path = path;
  }
}

/** Options of {@link logFileWriter}. */
export interface LogFileWriterOptions {
  /** Where lines go once the file cannot be written (default: stderr). */
  readonly fallback?: (line: string) => void;
  /** Told once, of the first write error, with a message naming the file (default: stderr). */
  readonly report?: (message: string) => void;
}

/** A `write` for {@link LogSinkOptions} that holds its log file open until {@link LogFileWrite.close}. */
export interface LogFileWrite {
  (line: string): void;
  /** Closes the file; later lines go to the fallback. */
  close(): void;
}

/**
 * A `write` for {@link LogSinkOptions} that appends each line to the file at `path`, created
 * 0600 (owner only: logs name sessions, paths and errors) when it does not exist yet. The
 * file is opened once, here, and kept open (a line is one `write` on that descriptor, no
 * open per line), so a path that cannot be written fails at once with a
 * {@link LogFileError} instead of losing every line later. A write that fails later (a full
 * disk, a file system gone) is reported once, and that line and the next go to the fallback
 * (stderr): the writer never throws, so a host event listener never does.
 */
export function logFileWriter(path: string, options: LogFileWriterOptions = {}): LogFileWrite {
  const absolute = resolve(path);
  const fallback = options.fallback ?? ((line: string) => process.stderr.write(line));
  const report = options.report ?? ((message: string) => process.stderr.write(`${message}\n`));
  // The open file, until a write fails or the writer is closed: then the fallback.
  let fd: number | undefined;
  try {
    fd = openSync(absolute, 'a', 0o600);
  } catch (error) {
    throw new LogFileError(absolute, error as NodeJS.ErrnoException);
  }
  const closeFile = () => {
    if (fd === undefined) return;
    const open = fd;
    fd = undefined;
    try {
      closeSync(open);
    } catch {
      // Closing a file that could not be written may fail too: it is given up either way.
    }
  };
  const toFallback = (line: string) => {
    try {
      fallback(line);
    } catch {
      // Nowhere left to write: the line is lost, the host is not.
    }
  };
  const write = (line: string) => {
    if (fd === undefined) return toFallback(line);
    try {
      const bytes = Buffer.from(line, 'utf8');
      for (let written = 0; written < bytes.length;) written += writeSync(fd, bytes, written);
    } catch (error) {
      closeFile();
      const cause = error as NodeJS.ErrnoException;
      try {
        report(`cannot write the log file ${absolute}: ${cause.code ?? 'error'}: ${cause.message}; the log goes to stderr from now on`);
      } catch {
        // As for the fallback.
      }
      toFallback(line);
    }
  };
  return Object.assign(write, { close: closeFile });
}
