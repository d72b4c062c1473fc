/**
 * The memory limits of a port's process tree, as given ({@link MemoryLimitInput}) and
 * checked once ({@link memoryLimitSettings}). The tree's memory is polled from /proc
 * (tree-memory.ts) every `pollMs`; above `softBytes` the CLI is recycled at the next turn
 * boundary (stopped gracefully and restarted, no turn cut); above `hardBytes` its whole tree
 * is killed at once. Both end the port with reason `memory_exceeded` (port-exit.ts).
 */

import { procAvailable } from './process-tree.js';
import { cgroupSupport } from './agent-cgroup.js';

/** Memory limits of a port's process tree, in bytes. At least one of the two limits. */
export interface MemoryLimitInput {
  /** Above this, the CLI is recycled when no turn is open (`port.busy`'s `turnOpen`). */
  readonly softBytes?: number;
  /** Above this, the tree is killed at once. Default: {@link defaultHardOverSoft} × `softBytes`. */
  readonly hardBytes?: number;
  /** Milliseconds between two samples of the tree's memory. Default {@link defaultMemoryPollMs}. */
  readonly pollMs?: number;
  /**
   * Also put the CLI in cgroups of its own where this process may create them (agent-cgroup.ts):
   * a v1 memory cgroup limited to `hardBytes` (the kernel enforces it) and a v2 cgroup whose
   * `cgroup.kill` ends the tree. Default `false`: /proc sampling only.
   */
  readonly cgroup?: boolean;
}

/** Memory limits, checked and complete. */
export interface MemoryLimitSettings {
  /** `Infinity`: only the hard limit. */
  readonly softBytes: number;
  readonly hardBytes: number;
  readonly pollMs: number;
  readonly cgroup: boolean;
}

/** Default poll interval: one sample a second costs about 1-2 ms of warden's CPU for a tree of 50 processes (docs/ports.md). */
export const defaultMemoryPollMs = 1000;

/** The hard limit's default over the soft one: a quarter above, room for the turn to end before the kill. */
export const defaultHardOverSoft = 1.25;

/**
 * How memory limits are enforced on this machine, in words (`warden agents`): by sampling
 * /proc, and with `--memory-cgroup` by the cgroups this process may create.
 */
export function memoryLimitMethod(): string {
  if (!procAvailable) return 'Memory limits (--max-memory): not available here (no /proc to sample the agent process tree from)';
  const { memoryV1, killV2, missing } = cgroupSupport();
  const cgroups = memoryV1 || killV2
    ? `with --memory-cgroup also ${[memoryV1 ? 'a v1 memory cgroup (the hard limit enforced by the kernel)' : '', killV2 ? 'a v2 cgroup (cgroup.kill)' : ''].filter(Boolean).join(' and ')}${missing ? ` (${missing})` : ''}`
    : `no cgroup can be created here (${missing})`;
  return `Memory limits (--max-memory): the whole agent process tree, sampled from /proc (RssAnon + RssShmem); ${cgroups}`;
}

const positive = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/** Checks memory limits and fills in their defaults; `undefined` input: no limits. */
export function memoryLimitSettings(input: MemoryLimitInput | undefined): MemoryLimitSettings | undefined {
  if (input === undefined) return undefined;
  const { softBytes, hardBytes, pollMs = defaultMemoryPollMs } = input;
  for (const [name, value] of [['softBytes', softBytes], ['hardBytes', hardBytes], ['pollMs', pollMs]] as const) {
    if (value !== undefined && !positive(value)) throw new TypeError(`Expected the \`memoryLimit.${name}\` option to be a number > 0, got \`${String(value)}\` (${typeof value}).`);
  }
  if (softBytes === undefined && hardBytes === undefined) throw new TypeError('Expected the `memoryLimit` option to set `softBytes`, `hardBytes` or both.');
  if (!procAvailable) throw new TypeError('The `memoryLimit` option needs /proc (Linux) to sample the process tree; leave it out on this system.');
  const hard = hardBytes ?? Math.round((softBytes as number) * defaultHardOverSoft);
  if (softBytes !== undefined && hard < softBytes) {
    throw new TypeError(`Expected \`memoryLimit.hardBytes\` (${hard}) to be at least \`memoryLimit.softBytes\` (${softBytes}): the soft limit recycles before the hard one kills.`);
  }
  return { softBytes: softBytes ?? Number.POSITIVE_INFINITY, hardBytes: hard, pollMs, cgroup: input.cgroup === true };
}
