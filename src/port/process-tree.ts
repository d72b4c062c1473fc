/**
 * A process tree read from /proc: the CLI and every descendant, whatever session or process
 * group each one moved to. Claude Code runs each Bash command with `setsid` (its own session
 * and group), so the CLI's process group is not its tree; the parent links are. The walk
 * follows `/proc/<pid>/task/<tid>/children` from the root (about 2 ms for 50 processes,
 * docs/ports.md), and each process is known by its pid and start time, so that a pid reused
 * by an unrelated process is never taken for one of ours.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One process of a tree: its pid and its start time (clock ticks since boot, field 22 of `stat`). */
export interface TreeMember {
  readonly pid: number;
  readonly startTime: number;
}

/** Whether /proc can be read here (Linux): the tree walk and the memory poll need it. */
export const procAvailable: boolean = (() => {
  try {
    readFileSync('/proc/self/stat', 'utf8');
    return true;
  } catch {
    return false;
  }
})();

/** The fields of `/proc/<pid>/stat` after the command name (which may hold spaces and parentheses); `undefined` when gone. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The start time of `pid`, `undefined` when it is gone or a zombie (nothing left to signal or to count). */
export function startTimeOf(pid: number): number | undefined {
  const fields = statFields(pid);
  // After the name: state (field 3), ..., starttime (field 22) is index 19.
  if (!fields || fields[0] === 'Z') return undefined;
  const startTime = Number(fields[19]);
  return Number.isFinite(startTime) ? startTime : undefined;
}

/** The process group of `pid` (field 5 of `stat`), `undefined` when it is gone. */
export function groupOf(pid: number): number | undefined {
  const group = Number(statFields(pid)?.[2]);
  return Number.isInteger(group) ? group : undefined;
}

/** The direct children of `pid`, from each of its threads' `children` file. */
function childrenOf(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const tid of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (child) children.push(Number(child));
    } catch {
      // the thread ended while reading
    }
  }
  return children;
}

/** The live processes of the tree rooted at `root` (itself included, when alive), each once. */
export function walkTree(root: number): TreeMember[] {
  const members: TreeMember[] = [];
  const seen = new Set<number>();
  const stack = [root];
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const startTime = startTimeOf(pid);
    if (startTime === undefined) continue;
    members.push({ pid, startTime });
    stack.push(...childrenOf(pid));
  }
  return members;
}

/** Whether `member` still runs as the same process (not gone, not a zombie, its pid not reused). */
export function stillRuns(member: TreeMember): boolean {
  return startTimeOf(member.pid) === member.startTime;
}
