/**
 * Starting the user's daemon in the background for `warden acp --daemon`: `warden serve` as a
 * detached process (a process group of its own, stdin closed, stdout and stderr appended to a
 * log file), the one process acp-warden starts that is meant to outlive its starter.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A daemon started in the background. */
export interface StartedDaemon {
  readonly pid: number | undefined;
  /** The daemon's exit status while it is known to have exited, else undefined. */
  exitStatus(): number | null | undefined;
  /** The last lines of its log (what it said before it exited). */
  logTail(): string;
}

/**
 * Spawns `warden serve ARGS` detached: this process's own Node, flags and CLI entry point
 * (`process.argv[1]`), its output appended to `logPath` (created 0600, its directory 0700).
 */
export function startDaemon(serveArgs: readonly string[], logPath: string): StartedDaemon {
  mkdirSync(dirname(logPath), { recursive: true, mode: 0o700 });
  const log = openSync(logPath, 'a', 0o600);
  let status: number | null | undefined;
  try {
    const size = fstatSync(log).size;
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, 'serve', ...serveArgs], {
      detached: true,
      stdio: ['ignore', log, log],
      env: process.env,
    });
    child.once('exit', (code) => (status = code));
    child.once('error', () => (status = null));
    // The bridge exits when its editor goes; the daemon is not its child to wait for.
    child.unref();
    return {
      pid: child.pid,
      exitStatus: () => status,
      logTail: () => tailOf(logPath, size),
    };
  } finally {
    closeSync(log);
  }
}

/** What the log gained since `from`, its last 20 lines. */
function tailOf(path: string, from: number): string {
  try {
    return readFileSync(path).subarray(from).toString('utf8').trim().split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}
