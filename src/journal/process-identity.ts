/**
 * Which process this is, in a form another process can check later: the pid alone is not
 * enough (pids are reused), so on Linux it comes with the machine's boot id and the
 * process's start time (`/proc/<pid>/stat`, clock ticks since boot). The journal's session
 * owners are checked this way: an owner that died (even SIGKILLed) holds nothing.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** A process, as recorded by the journal for the sessions it owns. */
export interface ProcessIdentity {
  readonly pid: number;
  /** The machine's name. */
  readonly host: string;
  /** `<boot id>:<start time>` on Linux; `undefined` where there is no /proc (the pid alone is checked). */
  readonly started: string | undefined;
}

/** This process. */
export function currentProcess(): ProcessIdentity {
  return { pid: process.pid, host: hostname(), started: startOf(process.pid) };
}

/**
 * Whether the process `identity` names still runs. One on another machine cannot be checked
 * from here and counts as running; one from an earlier boot, a zombie, or a pid now worn by a
 * process started at another time does not.
 */
export function isRunning(identity: ProcessIdentity): boolean {
  if (identity.host !== hostname()) return true;
  if (identity.started !== undefined) {
    const now = startOf(identity.pid);
    if (now !== undefined || procAvailable()) return now === identity.started;
  }
  try {
    process.kill(identity.pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function procAvailable(): boolean {
  return bootId() !== undefined;
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** `<boot id>:<start time>` of a live (not zombie) process, or `undefined`. */
function startOf(pid: number): string | undefined {
  const boot = bootId();
  if (boot === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return undefined;
    // Field 22 of stat (starttime) is the 20th after the comm.
    return `${boot}:${fields[19]}`;
  } catch {
    return undefined;
  }
}
