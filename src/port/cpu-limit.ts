/**
 * The CPU limit of a port's process tree (`--max-cpu`), as given ({@link CpuLimitInput}) and
 * checked once ({@link cpuLimitSettings}). Enforced by the kernel through a cgroup-v1 `cpu`
 * cgroup of the CLI's own (agent-cgroup.ts: `cpu.cfs_quota_us` over a period of
 * {@link cpuPeriodUs}), where this process may create one; nothing samples or kills for it: a
 * CLI held to its quota only runs slower (a silent spin is the hang watchdog's to catch).
 */
import { availableParallelism } from 'node:os';
import { cgroupSupport } from './agent-cgroup.js';

/** The CPU limit of a port's process tree. */
export interface CpuLimitInput {
  /** The share of one core the whole tree may use, in percent (100: one core; 50: half of one; 200: two). */
  readonly percent: number;
}

/** The CFS period the quota is a share of, in microseconds (the kernel's default). */
export const cpuPeriodUs = 100_000;

/** The percents a CPU limit may take here: 1 to 100 per core (more would limit nothing). */
export function cpuPercentRange(): { readonly least: number; readonly most: number; readonly cores: number } {
  const cores = availableParallelism();
  return { least: 1, most: cores * 100, cores };
}

/** Whether `percent` is a CPU limit this machine can take (see {@link cpuPercentRange}). */
export function isCpuPercent(percent: unknown): percent is number {
  const { least, most } = cpuPercentRange();
  return typeof percent === 'number' && Number.isFinite(percent) && percent >= least && percent <= most;
}

/** Checks a CPU limit; `undefined` input: none. Over the machine's cores is refused (it would limit nothing). */
export function cpuLimitSettings(input: CpuLimitInput | undefined): CpuLimitInput | undefined {
  if (input === undefined) return undefined;
  if (!isCpuPercent(input.percent)) {
    const { most, cores } = cpuPercentRange();
    throw new TypeError(`Expected the \`cpuLimit.percent\` option to be a number from 1 to ${most} (100 per core of this machine's ${cores}), got \`${String(input.percent)}\`.`);
  }
  return { percent: input.percent };
}

/** The quota of `percent` per {@link cpuPeriodUs}, in microseconds (the kernel's minimum is 1000). */
export function cpuQuotaUs(percent: number): number {
  return Math.max(1000, Math.round((percent / 100) * cpuPeriodUs));
}

/** How CPU limits are enforced on this machine, in words (`warden agents`, the warning of `--max-cpu` where they cannot be). */
export function cpuLimitMethod(): string {
  const { cpuV1, missingCpu } = cgroupSupport();
  return cpuV1
    ? 'CPU limits (--max-cpu): a v1 cpu cgroup per agent process tree (cpu.cfs_quota_us), enforced by the kernel'
    : `CPU limits (--max-cpu): not enforced here: ${missingCpu}`;
}
