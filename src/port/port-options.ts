/**
 * What a port runs and how: its input ({@link PortInput}) as the caller writes it, checked
 * and completed with defaults once, at init, into the options the rest of the port reads.
 */
import { buildEnvironment, type EnvironmentInput } from './env-policy.js';
import { defaultMaxLineBytes, type OversizePolicy } from './line-framer.js';
import { defaultStderrBytes } from './stderr-ring.js';
import { defaultMaxQueuedBytes } from './write-queue.js';
import { watchdogSettings, type WatchdogInput, type WatchdogSettings } from './watchdog.js';
import { memoryLimitSettings, type MemoryLimitInput, type MemoryLimitSettings } from './memory-limit.js';
import { cpuLimitSettings, type CpuLimitInput } from './cpu-limit.js';

/** What a port runs and how. Only `command` is required. */
export interface PortInput {
  /** The executable: a path, or a name looked up on the child's PATH. No shell is involved. */
  readonly command: string;
  /** Arguments, passed as an array (never through a shell). */
  readonly args?: readonly string[];
  /** Working directory; default the host's. */
  readonly cwd?: string;
  /** Environment policy and variables; default `isolated`. */
  readonly env?: EnvironmentInput;
  /** Longest stdout line accepted, in bytes. Default {@link defaultMaxLineBytes} (64 MiB). */
  readonly maxLineBytes?: number;
  /**
   * `kill` (default): a longer line means the CLI is broken; `skip`: drop that line as it
   * streams (only its edges are kept, for `port.oversize`) and go on reading.
   */
  readonly oversize?: OversizePolicy;
  /**
   * `kill` (default, except for `raw` ports): a write that finds the CLI's stdin closed while
   * it still runs (EPIPE) means it can no longer be talked to, so it is killed as broken
   * (`input_closed`) and its supervisor decides; `keep`: the write fails, the process lives on.
   */
  readonly inputClosed?: 'kill' | 'keep';
  /**
   * `json` (default): each line is parsed once and emitted as `port.message`; `text`: each
   * line is emitted as `port.line`; `raw`: no framing, each chunk is emitted as `port.data`
   * (terminals, whose output is shown as it came).
   */
  readonly parse?: 'json' | 'text' | 'raw';
  /** Bytes of stderr kept for crash reports. Default 64 KiB. */
  readonly stderrBytes?: number;
  /** Bytes allowed to wait for the CLI to read stdin. Default 16 MiB. */
  readonly maxQueuedBytes?: number;
  /**
   * Hang detection: no stdout for `idleMs` while the agent owes output (the owner says it
   * is busy, by default: a permission wait is not busy) kills the CLI with reason `hung`.
   * While a tool runs (`port.busy` with `toolRunning: true`) the limit is `toolIdleMs`
   * (default 30 minutes). `port.heartbeat` events count as output. Until the process has
   * printed its first line, the silence allowed is `startupMs` (default 20000) when that is
   * longer: starting a runtime is slow, not hung. See watchdog.ts.
   */
  readonly watchdog?: WatchdogInput;
  /**
   * Memory limits of the CLI's whole process tree (memory-limit.ts), polled from /proc:
   * above `softBytes` the CLI is recycled at the next turn boundary, above `hardBytes` the
   * tree is killed; both end the port with reason `memory_exceeded`. Default: none.
   */
  readonly memoryLimit?: MemoryLimitInput;
  /**
   * The CPU limit of the CLI's whole process tree (cpu-limit.ts): a v1 cpu cgroup of its own
   * with the quota, where this process may create one (else not enforced: `cpuLimitMethod()`
   * says why). Default: none.
   */
  readonly cpuLimit?: CpuLimitInput;
  /**
   * The graceful stop: close stdin, wait `stdinGraceMs` (default 1000) for the CLI to exit,
   * SIGTERM its process group, wait `killAfterMs` (default 5000), SIGKILL the group.
   */
  readonly shutdown?: { readonly stdinGraceMs?: number; readonly killAfterMs?: number };
  /** After the CLI exits, how long to wait for its output to close (a grandchild may hold it). Default 2000. */
  readonly closeTimeoutMs?: number;
}

/** A port's input, checked, with every default filled in. */
export interface PortOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly maxLineBytes: number | undefined;
  readonly oversize: OversizePolicy;
  readonly inputClosed: 'kill' | 'keep';
  readonly parse: 'json' | 'text' | 'raw';
  readonly stderrBytes: number;
  readonly maxQueuedBytes: number;
  readonly watchdog: WatchdogSettings | undefined;
  readonly memoryLimit: MemoryLimitSettings | undefined;
  readonly cpuLimit: CpuLimitInput | undefined;
  readonly stdinGraceMs: number;
  readonly killAfterMs: number;
  readonly closeTimeoutMs: number;
}

const defaults = Object.freeze({
  stdinGraceMs: 1000,
  killAfterMs: 5000,
  closeTimeoutMs: 2000,
});

/**
 * How long a supervisor should give a port's graceful stop (its `shutdown` child-spec
 * value): the stdin grace, then the SIGTERM wait, plus a second for the SIGKILL to land.
 */
export function portStopBudgetMs(shutdown: PortInput['shutdown'] = {}): number {
  return (shutdown.stdinGraceMs ?? defaults.stdinGraceMs) + (shutdown.killAfterMs ?? defaults.killAfterMs) + 1000;
}

/** Checks a port's input and fills in its defaults. */
export function normalizePortInput(input: PortInput): PortOptions {
  if (typeof input !== 'object' || input === null || typeof input.command !== 'string' || input.command.length === 0) {
    throw new TypeError(`Expected the port input to have a non-empty \`command\` string, got ${describe(input?.command)}.`);
  }
  const args = input.args ?? [];
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string')) {
    throw new TypeError('Expected the `args` option of the port to be an array of strings.');
  }
  const watchdog = watchdogSettings(input.watchdog);
  return {
    command: input.command,
    args,
    cwd: input.cwd ?? process.cwd(),
    env: buildEnvironment(input.env),
    maxLineBytes: input.maxLineBytes,
    oversize: input.oversize ?? 'kill',
    inputClosed: input.inputClosed ?? (input.parse === 'raw' ? 'keep' : 'kill'),
    parse: input.parse ?? 'json',
    stderrBytes: input.stderrBytes ?? defaultStderrBytes,
    maxQueuedBytes: input.maxQueuedBytes ?? defaultMaxQueuedBytes,
    watchdog,
    memoryLimit: memoryLimitSettings(input.memoryLimit),
    cpuLimit: cpuLimitSettings(input.cpuLimit),
    stdinGraceMs: input.shutdown?.stdinGraceMs ?? defaults.stdinGraceMs,
    killAfterMs: input.shutdown?.killAfterMs ?? defaults.killAfterMs,
    closeTimeoutMs: input.closeTimeoutMs ?? defaults.closeTimeoutMs,
  };
}

function describe(value: unknown): string {
  return value === undefined ? '`undefined`' : `\`${String(value)}\` (${typeof value})`;
}

/** The command line a port runs: the executable, then its arguments. */
export function commandLine(options: PortOptions): string[] {
  return [options.command, ...options.args];
}
