/**
 * Finding every process a terminal started, even those that left its process group. Killing
 * the group ends the command, its pipelines and its background jobs; a daemon that called
 * `setsid` (or `setpgid`) has left the group, and its parent may be gone, so neither group
 * nor ancestry lead to it. What it keeps is its environment: each terminal's command gets
 * `WARDEN_TERMINAL=<random token>`, inherited by everything it starts, and on `kill` and
 * `release` warden scans `/proc/<pid>/environ` (readable for our own processes without root)
 * and kills every process carrying the token.
 *
 * Beyond reach, and documented as such: a process that starts its descendants with an
 * emptied or rewritten environment (`env -i`, `env -u WARDEN_TERMINAL`), a process of
 * another user (`sudo`), and platforms without `/proc`. (A cgroup would hold them all, but
 * making one needs root or a delegated cgroup, which an editor-launched warden rarely has.)
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/** The variable that marks a terminal's processes. */
export const terminalMarkerVariable = 'WARDEN_TERMINAL';

/** A fresh, unguessable marker value for one terminal. */
export function newTerminalMarker(): string {
  return randomBytes(12).toString('hex');
}

/** Rounds of scan-and-kill at most, for a tree that forks faster than it is killed. */
const maxRounds = 20;

/** Pids of the live processes whose initial environment carries `marker`. */
function markedProcesses(marker: string): number[] {
  const needle = Buffer.from(`${terminalMarkerVariable}=${marker}\0`);
  const found: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/u.test(entry) || Number(entry) === process.pid) continue;
    try {
      // Anchored at a variable's start: the environment is NUL-separated.
      const environ = readFileSync(`/proc/${entry}/environ`);
      if (environ.subarray(0, needle.length).equals(needle) || environ.includes(Buffer.concat([Buffer.from([0]), needle]))) found.push(Number(entry));
    } catch {
      // Gone while reading, or another user's process: not ours.
    }
  }
  return found;
}

/**
 * SIGKILLs every process carrying `marker`, scanning again until a scan finds none it has
 * not killed already (one may fork between a scan and its kill; a killed one may still be
 * listed while it dies). Returns how many were killed. Synchronous, so that it can run in
 * an exit path; a scan reads one small file per process (about 1.4 ms for 100 processes).
 */
export function killMarked(marker: string): number {
  const killed = new Set<number>();
  for (let round = 0; round < maxRounds; round++) {
    const fresh = markedProcesses(marker).filter((pid) => !killed.has(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // Already gone.
      }
    }
  }
  return killed.size;
}
