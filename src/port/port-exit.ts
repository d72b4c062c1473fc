/**
 * Why a port's process ended, as data, and the error a port fails with (after execa's:
 * the reason, the command, then the tail of stderr).
 */
import { redactSecrets } from './redact.js';
import type { ExitReason } from '../supervision/exit-reason.js';

/** The typed reason a port's process ended. */
export type PortExitReason =
  /** The process exited by itself with this code (0 is a normal exit). */
  | { readonly kind: 'exited'; readonly code: number }
  /** The process was killed by a signal it did not expect from us (kill -9 from outside, a crash). */
  | { readonly kind: 'signaled'; readonly signal: string }
  /** The process could not start: `code` is ENOENT, EACCES, ...; `hint` says what to do. */
  | { readonly kind: 'spawn_failed'; readonly code: string; readonly message: string; readonly hint: string }
  /** It printed a line longer than the limit, and the port killed it as broken. */
  | { readonly kind: 'oversize_line'; readonly limit: number }
  /** It closed its stdin while still running (a write met EPIPE), and the port killed it as broken: it could no longer be sent anything. */
  | { readonly kind: 'input_closed' }
  /** The watchdog saw no output for `idleMs` and killed it. */
  | { readonly kind: 'hung'; readonly idleMs: number }
  /**
   * Its process tree used `rssBytes` (the sample that crossed), over its memory limit of
   * `limitBytes`: `hard`, its whole tree killed at once; `soft`, the CLI recycled (stopped
   * gracefully) at a turn boundary. `method`: how the limit was found crossed (`proc`: a
   * sample from /proc; `cgroup`: the kernel's OOM killer in the agent's memory cgroup, `rssBytes`
   * then the cgroup's peak charge).
   */
  | { readonly kind: 'memory_exceeded'; readonly limit: 'soft' | 'hard'; readonly limitBytes: number; readonly rssBytes: number; readonly method: 'proc' | 'cgroup'; readonly turnsServed?: number }
  /** An ACP adapter that answered a prompt with its inner CLI's death (claude-agent-acp #338, adapters/inner-cli-dead.ts): killed so it restarts. `detail`: the answer's text. */
  | { readonly kind: 'inner_cli_dead'; readonly detail: string }
  /** Its owner asked it to stop, and it did (by itself or after a signal). */
  | { readonly kind: 'stopped'; readonly code: number | null; readonly signal: string | null };

/** Facts about a port's process when it ended. */
export interface PortExit {
  readonly reason: PortExitReason;
  /** The executable and arguments. */
  readonly command: readonly string[];
  readonly pid: number | undefined;
  /** Milliseconds from spawn to the end of its output. */
  readonly durationMs: number;
  /** The last lines of stderr. */
  readonly stderrTail: string;
  readonly linesIn: number;
  readonly nonJsonLines: number;
}

/** A normal end: code 0, or a stop that was asked for. */
export function isNormalPortExit(reason: PortExitReason): boolean {
  return (reason.kind === 'exited' && reason.code === 0) || reason.kind === 'stopped';
}

/** Quotes a command line for messages (never the environment: it may hold keys). */
export function escapeCommand(command: readonly string[]): string {
  return command.map((part) => (/^[\w./:=@%+-]+$/u.test(part) ? part : `'${part.replaceAll("'", `'\\''`)}'`)).join(' ');
}

/** The reason in words, as the start of an error message. */
export function describePortExit(reason: PortExitReason): string {
  switch (reason.kind) {
    case 'exited':
      return `Agent process failed with exit code ${reason.code}`;
    case 'signaled':
      return `Agent process was killed with ${reason.signal}`;
    case 'spawn_failed':
      return `Agent process could not start (${reason.code}): ${reason.hint}`;
    case 'oversize_line':
      return `Agent process printed a line longer than ${reason.limit} bytes and was killed as broken`;
    case 'input_closed':
      return 'Agent process closed its input while still running and was killed as broken (it could no longer be sent anything)';
    case 'hung':
      return `Agent process hung (no output for ${reason.idleMs} ms) and was killed`;
    case 'memory_exceeded':
      return reason.limit === 'hard'
        ? `Agent process tree used ${megabytes(reason.rssBytes)} of memory (${reason.method === 'cgroup' ? 'its memory cgroup, killed by the kernel' : 'sampled from /proc'}), over its hard limit of ${megabytes(reason.limitBytes)}, and was killed`
        : `Agent process tree used ${megabytes(reason.rssBytes)} of memory (sampled from /proc), over its soft limit of ${megabytes(reason.limitBytes)}, and was recycled between turns`;
    case 'inner_cli_dead':
      return `Agent process answered that its inner CLI is dead (${reason.detail}) and was killed to restart it`;
    case 'stopped':
      return 'Agent process was stopped';
  }
}

function megabytes(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MiB`;
}

const portErrorBrand = Symbol.for('acp-warden.PortError');

/**
 * A port's process ended abnormally. The message is the reason, the escaped command (keys
 * in it redacted by shape), and the last lines of stderr (redacted by the port); the fields
 * repeat the facts for programs.
 */
export class PortError extends Error {
  override readonly name = 'PortError';
  readonly reason: PortExitReason;
  readonly command: readonly string[];
  readonly escapedCommand: string;
  readonly pid: number | undefined;
  readonly exitCode: number | undefined;
  readonly signal: string | undefined;
  readonly durationMs: number;
  readonly stderrTail: string;
  /** The first line of the message: reason and command. */
  readonly shortMessage: string;

  constructor(exit: PortExit, options?: { cause?: unknown }) {
    // Messages reach logs and editors: a key given on the command line (`--api-key sk-…`) is not repeated.
    const escapedCommand = redactSecrets(escapeCommand(exit.command));
    const shortMessage = `${describePortExit(exit.reason)}: ${escapedCommand}`;
    super(exit.stderrTail ? `${shortMessage}\n${exit.stderrTail}` : shortMessage, options);
    this.reason = exit.reason;
    this.command = exit.command;
    this.escapedCommand = escapedCommand;
    this.pid = exit.pid;
    this.exitCode = exit.reason.kind === 'exited' ? exit.reason.code : undefined;
    this.signal = exit.reason.kind === 'signaled' ? exit.reason.signal : undefined;
    this.durationMs = exit.durationMs;
    this.stderrTail = exit.stderrTail;
    this.shortMessage = shortMessage;
    Object.defineProperty(this, portErrorBrand, { value: true });
  }

  /** Brand check that works across copies of the package (unlike `instanceof`). */
  static is(value: unknown): value is PortError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[portErrorBrand] === true;
  }
}

/** Why a write to a port failed. */
export type PortWriteErrorCode =
  /** The process is gone, or was never started. */
  | 'not_running'
  /** Its stdin is closed (EPIPE, ECONNRESET): the process no longer reads. */
  | 'stdin_closed'
  /** More than the write queue's limit is waiting for the process to read. */
  | 'queue_full'
  /** The data is not one line of JSON (a newline inside a line, a value JSON cannot encode). */
  | 'invalid_message';

/** A write that could not be delivered to the process. */
export class PortWriteError extends Error {
  override readonly name = 'PortWriteError';
  readonly code: PortWriteErrorCode;

  constructor(code: PortWriteErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * Whether a port ended as a soft memory recycle after its owner closed at least one turn in it:
 * planned maintenance of a working CLI, whose restart the session supervisor does not count
 * towards its intensity (the child spec's `uncounted`). A CLI over its limit before it served a
 * turn is not: its restarts count, so a CLI that starts over the limit ends at the intensity.
 */
export function isServedRecycle(reason: ExitReason): boolean {
  if (reason.kind !== 'error' || !PortError.is(reason.error)) return false;
  const exit = reason.error.reason;
  return exit.kind === 'memory_exceeded' && exit.limit === 'soft' && (exit.turnsServed ?? 0) > 0;
}
