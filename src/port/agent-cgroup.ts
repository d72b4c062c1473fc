/**
 * An agent's cgroups (opt-in, `memoryLimit.cgroup`; and `cpuLimit`, a v1 cpu cgroup whose
 * `cpu.cfs_quota_us` holds the tree to its share of the CPU): where this process may create them, a
 * cgroup-v1 memory cgroup whose `memory.limit_in_bytes` is the hard limit (the kernel then
 * enforces it with no overshoot, and `memory.oom_control`'s `oom_kill` counter tells its kill
 * from any other SIGKILL), and a cgroup-v2 cgroup whose `cgroup.kill` kills every process in
 * it, however it detached (setsid, double fork). Both are children of this process's own
 * cgroups; the CLI is moved in right after it is spawned (before it has started anything: a
 * fork in that instant would stay outside), its descendants follow it. Removed when the port
 * ends. Where they cannot be created, the port samples /proc as without this option.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where this process may create agent cgroups: the parent directories, or why not. */
export interface CgroupSupport {
  /** The v1 memory cgroup directory of this process, writable (it has `memory.limit_in_bytes`). */
  readonly memoryV1: string | undefined;
  /** The v2 cgroup directory of this process, writable, where a child has `cgroup.kill`. */
  readonly killV2: string | undefined;
  /** What is missing, in words (empty when both are there). */
  readonly missing: string;
  /** The v1 cpu cgroup directory of this process, writable (it has `cpu.cfs_quota_us`). */
  readonly cpuV1: string | undefined;
  /** Why there is none, in words (empty when there is). */
  readonly missingCpu: string;
}

let support: CgroupSupport | undefined;

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** This process's path in the v1 hierarchy of `controller`, from the lines of `/proc/self/cgroup` (`ID:controllers:path`). */
function v1PathOf(lines: readonly string[], controller: string): string | undefined {
  return lines.find((line) => line.split(':')[1]?.split(',').includes(controller))?.split(':')[2];
}

/** The number after `key ` in a cgroup stat file (`memory.oom_control`, `cpu.stat`); 0 when it cannot be read. */
function statField(file: string, key: string): number {
  try {
    const line = readFileSync(file, 'utf8').split('\n').find((entry) => entry.startsWith(`${key} `));
    return Number(line?.slice(key.length + 1) ?? 0) || 0;
  } catch {
    return 0;
  }
}

/** Reads this process's cgroups once (`/proc/self/cgroup`) and says which kinds it may create. */
export function cgroupSupport(): CgroupSupport {
  if (support) return support;
  let lines: string[] = [];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  } catch {
    // not Linux
  }
  const memoryPath = v1PathOf(lines, 'memory');
  const unifiedPath = lines.find((line) => line.startsWith('0::'))?.slice(3);
  const memoryDir = memoryPath === undefined ? undefined : join('/sys/fs/cgroup/memory', memoryPath);
  const memoryV1 = memoryDir && existsSync(join(memoryDir, 'memory.limit_in_bytes')) && writable(memoryDir) ? memoryDir : undefined;
  // Hybrid (v1 controllers, v2 at /sys/fs/cgroup/unified) or pure v2 at /sys/fs/cgroup.
  const v2Root = existsSync('/sys/fs/cgroup/unified/cgroup.procs') ? '/sys/fs/cgroup/unified' : existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : undefined;
  const v2Dir = v2Root && unifiedPath !== undefined ? join(v2Root, unifiedPath) : undefined;
  const killV2 = v2Dir && existsSync(join(v2Dir, 'cgroup.procs')) && writable(v2Dir) ? v2Dir : undefined;
  const missing = [memoryV1 ? '' : 'no writable v1 memory cgroup', killV2 ? '' : 'no writable v2 cgroup'].filter(Boolean).join(', ');
  // The cpu controller: v1 (cgroup v2 has one only where it is enabled for the subtree, which a
  // delegated v2 root may not allow; v1 is what these machines have).
  const cpuPath = v1PathOf(lines, 'cpu');
  const cpuRoot = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct'].find((root) => existsSync(join(root, 'cpu.cfs_quota_us')));
  const cpuDir = cpuPath === undefined || cpuRoot === undefined ? undefined : join(cpuRoot, cpuPath);
  const cpuV1 = cpuDir && existsSync(join(cpuDir, 'cpu.cfs_quota_us')) && writable(cpuDir) ? cpuDir : undefined;
  const missingCpu = cpuV1 ? '' : cpuDir ? `the v1 cpu cgroup ${cpuDir} is not writable by this process (run warden as a user who may create cgroups there, or delegate it)` : 'no v1 cpu cgroup hierarchy (cpu.cfs_quota_us) on this machine';
  support = { memoryV1, killV2, missing, cpuV1, missingCpu };
  return support;
}

let created = 0;

/** What an agent's cgroups limit: memory (the hard limit, in bytes), CPU (the quota per period, in µs). */
export interface AgentCgroupLimits {
  readonly memoryHardBytes?: number;
  readonly cpu?: { readonly quotaUs: number; readonly periodUs: number };
}

/** One port's cgroups: a v1 memory cgroup with the hard limit, a v1 cpu cgroup with the quota, and a v2 cgroup for `cgroup.kill` (any may be missing). */
export class AgentCgroup {
  readonly #memory: string | undefined;
  readonly #kill: string | undefined;
  readonly #cpu: string | undefined;

  private constructor(memory: string | undefined, kill: string | undefined, cpu: string | undefined) {
    this.#memory = memory;
    this.#kill = kill;
    this.#cpu = cpu;
  }

  /** Creates the cgroups this process may create for `limits` (and the v2 one for `cgroup.kill`); `undefined` when none could be. */
  static create(limits: AgentCgroupLimits): AgentCgroup | undefined {
    const { memoryV1, killV2, cpuV1 } = cgroupSupport();
    const name = `acp-warden-${process.pid}-${++created}`;
    const make = (parent: string | undefined, setup: (dir: string) => void): string | undefined => {
      if (!parent) return undefined;
      const dir = join(parent, name);
      try {
        mkdirSync(dir);
        setup(dir);
        return dir;
      } catch {
        removeDir(dir);
        return undefined;
      }
    };
    const { memoryHardBytes, cpu: cpuLimit } = limits;
    const memory = memoryHardBytes === undefined ? undefined : make(memoryV1, (dir) => writeFileSync(join(dir, 'memory.limit_in_bytes'), String(Math.floor(memoryHardBytes))));
    const cpu = cpuLimit === undefined ? undefined : make(cpuV1, (dir) => {
      writeFileSync(join(dir, 'cpu.cfs_period_us'), String(cpuLimit.periodUs));
      writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(cpuLimit.quotaUs));
    });
    const kill = make(killV2, (dir) => {
      if (!existsSync(join(dir, 'cgroup.kill'))) throw new Error('no cgroup.kill (Linux < 5.14)');
    });
    return memory || kill || cpu ? new AgentCgroup(memory, kill, cpu) : undefined;
  }

  /** Whether the kernel holds the tree to a CPU quota here (a v1 cpu cgroup was made). */
  get limitsCpu(): boolean {
    return this.#cpu !== undefined;
  }

  /** How many CFS periods the kernel throttled the tree in (`cpu.stat`'s `nr_throttled`): above 0, the quota held it back. */
  throttledPeriods(): number {
    return this.#cpu ? statField(join(this.#cpu, 'cpu.stat'), 'nr_throttled') : 0;
  }

  /** Whether the kernel enforces the memory limit here (a v1 memory cgroup was made). */
  get limitsMemory(): boolean {
    return this.#memory !== undefined;
  }

  /** Moves `pid` (the CLI, just spawned) into the cgroups; its later children follow it. */
  add(pid: number): void {
    for (const dir of [this.#memory, this.#cpu, this.#kill]) {
      if (!dir) continue;
      try {
        writeFileSync(join(dir, 'cgroup.procs'), String(pid));
      } catch {
        // gone already: nothing to hold
      }
    }
  }

  /** Kills every process in the v2 cgroup (`cgroup.kill`); `false` without one. */
  kill(): boolean {
    if (!this.#kill) return false;
    try {
      writeFileSync(join(this.#kill, 'cgroup.kill'), '1');
      return true;
    } catch {
      return false;
    }
  }

  /** How many processes the kernel's OOM killer killed in the memory cgroup (its limit reached). */
  oomKills(): number {
    return this.#memory ? statField(join(this.#memory, 'memory.oom_control'), 'oom_kill') : 0;
  }

  /** The most memory the cgroup was charged (`memory.max_usage_in_bytes`), 0 without one. */
  peakBytes(): number {
    if (!this.#memory) return 0;
    try {
      return Number(readFileSync(join(this.#memory, 'memory.max_usage_in_bytes'), 'utf8').trim()) || 0;
    } catch {
      return 0;
    }
  }

  /** The cgroups' directories (for tests and the inspector). */
  get dirs(): readonly string[] {
    return [this.#memory, this.#cpu, this.#kill].filter((dir): dir is string => dir !== undefined);
  }

  /** Removes the cgroups once empty; while a process is still leaving (EBUSY), tries again a few times. */
  remove(attempts = 20): void {
    const left = this.dirs.filter((dir) => !removeDir(dir));
    if (left.length === 0 || attempts <= 0) return;
    setTimeout(() => this.remove(attempts - 1), 100).unref();
  }
}

/** `rmdir` of a cgroup: `true` when it is gone. */
function removeDir(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
