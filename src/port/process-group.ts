/**
 * Signals to a whole process group. Agent CLIs run tools, shells and MCP servers as their
 * own children; signalling only the CLI leaves those behind. Each port's CLI leads its own
 * group (spawned `detached`), and the port signals `-pid`, the group.
 */

/** Sends `signal` to every process of group `pgid`. `false` when none is left. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    // EPERM: the group now holds a process we may not signal (pid reused): it is not ours.
    if (code === 'EPERM') return false;
    throw error;
  }
}

/** Whether any process of group `pgid` is alive (signal 0 checks without sending). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Groups of the ports of this process that are still alive, killed with SIGKILL if the
 * host exits without stopping them (an exception, `process.exit()`): the exit handler
 * must be synchronous, so there is no time for a graceful sequence.
 */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Records a live port group so that the host's exit kills it. */
export function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
    });
  }
}

/** Forgets a group that is gone. */
export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
}
