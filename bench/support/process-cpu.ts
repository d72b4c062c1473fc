/**
 * CPU time of other processes (Linux `/proc`), for the benches that compare what separate
 * processes spend on the same work: `process.cpuUsage()` only knows its own process. User +
 * system time of every thread of the process, in clock ticks (10 ms at the usual 100 Hz), so
 * a bench sums it over work that takes seconds.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks a second (`getconf CLK_TCK`; 100 where it cannot be asked). */
const ticksPerSecond = (() => {
  const asked = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
  return Number.isFinite(asked) && asked > 0 ? asked : 100;
})();

/** The `/proc/PID/stat` fields after the command (which may hold spaces and parentheses); undefined: no such process. */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** User + system CPU time of process `pid` so far, in ns (0: it is gone). */
export function cpuNs(pid: number): number {
  const fields = statFields(pid);
  // Fields 14 and 15 of stat (utime, stime) are 12 and 13 after the command.
  if (!fields) return 0;
  return ((Number(fields[11]) + Number(fields[12])) * 1e9) / ticksPerSecond;
}

/** The processes whose parent is `pid` (an agent subprocess of a warden). */
export function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    if (Number(statFields(Number(name))?.[1]) === pid) found.push(Number(name));
  }
  return found;
}

/** A thread's CPU time so far in ns (`/proc/PID/task/TID/schedstat`: ns, not ticks); `undefined` where `/proc` does not say. */
function threadNs(pid: number, tid: number): number | undefined {
  try {
    const ran = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return Number.isFinite(ran) ? ran : undefined;
  } catch {
    return undefined;
  }
}

/** The CPU time so far of the main thread of process `pid`, in ns; `undefined` where `/proc` does not say. */
export function mainThreadNs(pid: number): number | undefined {
  return threadNs(pid, pid);
}

/** The CPU time so far of every thread of process `pid` (V8's compiler and collector threads too), in ns; `undefined` where `/proc` does not say. */
export function allThreadsNs(pid: number): number | undefined {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  // A thread that ended meanwhile took its time with it: rare, and only under-counts.
  return tids.reduce((total, tid) => total + (threadNs(pid, Number(tid)) ?? 0), 0);
}

/** Whether this machine has `/proc` to read CPU time from. */
export function canReadCpu(): boolean {
  return statFields(process.pid) !== undefined;
}
