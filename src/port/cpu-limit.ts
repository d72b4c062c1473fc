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

/** Checks a CPU limit; `undefined` input: none. Over the machine's cores is refused (it would limit nothing). */
export function cpuLimitSettings(input: CpuLimitInput | undefined): CpuLimitInput | undefined {
  if (input === undefined) return undefined;
  const cores = availableParallelism();
  if (!(typeof input.percent === 'number' && Number.isFinite(input.percent) && input.percent >= 1 && input.percent <= cores * 100)) {
    throw new TypeError(`Expected the \`cpuLimit.percent\` option to be a number from 1 to ${cores * 100} (100 per core of this machine's ${cores}), got \`${String(input.percent)}\`.`);
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
