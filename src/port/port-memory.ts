/**
 * Memory limits on a live port (the limits in memory-limit.ts): every `pollMs` the CLI's
 * process tree is read from /proc and its memory summed (tree-memory.ts). Over the hard
 * limit, the whole tree is killed at once; over the soft one, the CLI is recycled as soon as
 * no turn is open (the owner's `port.busy` says so): stopped gracefully, as a supervisor's
 * stop does, so that its supervisor restarts it and the session resumes, no turn cut. Either
 * way the port ends with reason `memory_exceeded`.
 */
import type { PortSnapshot } from './port-contract.js';
import type { PortExitReason } from './port-exit.js';
import { schedule, type Live } from './port-state.js';
import { treeResidentBytes } from './tree-memory.js';
import { signalPortTree } from './port-ending.js';

/** Schedules the next memory sample, when the port has limits and runs. */
export function armMemoryPoll(live: Live): void {
  const limit = live.options.memoryLimit;
  if (!limit || !live.tree || live.finished) return;
  schedule(live, { type: 'port.internal.memoryPoll' }, limit.pollMs, 'memoryPoll');
}

/** A memory sample is due: read the tree, tell the owner, act on a limit crossed. */
export function onMemoryPoll(snapshot: PortSnapshot, live: Live, recycle: (snapshot: PortSnapshot) => PortSnapshot): PortSnapshot {
  const limit = live.options.memoryLimit;
  if (!limit || !live.tree || live.finished || live.decided || live.stopRequested) return snapshot;
  // The kernel killed a process of the tree at its memory cgroup's limit (a tool, say): the hard limit was reached.
  const killed = cgroupMemoryKill(live);
  if (killed) {
    live.decided = killed;
    signalPortTree(live, 'SIGKILL');
    return snapshot;
  }
  const members = live.tree.refresh();
  const rssBytes = treeResidentBytes(members);
  live.scope.emit({ type: 'port.memory', rssBytes, processes: members.length });
  if (rssBytes >= limit.hardBytes) {
    live.decided = { kind: 'memory_exceeded', limit: 'hard', limitBytes: limit.hardBytes, rssBytes, method: 'proc' };
    signalPortTree(live, 'SIGKILL');
    return snapshot;
  }
  armMemoryPoll(live);
  if (rssBytes >= limit.softBytes && !live.overSoft) {
    live.overSoft = { rssBytes, limitBytes: limit.softBytes };
    return recycleIfBetweenTurns(snapshot, live, recycle);
  }
  return snapshot;
}

/** The reason of a kill by the kernel's OOM killer in the port's memory cgroup, if one happened. */
export function cgroupMemoryKill(live: Live): PortExitReason | undefined {
  const limit = live.options.memoryLimit;
  if (!limit || !live.cgroup || live.cgroup.oomKills() === 0) return undefined;
  return { kind: 'memory_exceeded', limit: 'hard', limitBytes: limit.hardBytes, rssBytes: live.cgroup.peakBytes(), method: 'cgroup' };
}

/** Over the soft limit and no turn open: recycle now (the graceful stop, with the reason decided); otherwise wait for the turn to close. */
export function recycleIfBetweenTurns(snapshot: PortSnapshot, live: Live, recycle: (snapshot: PortSnapshot) => PortSnapshot): PortSnapshot {
  if (!live.overSoft || snapshot.context.turnOpen || live.decided || live.stopRequested || live.finished) return snapshot;
  live.decided = { kind: 'memory_exceeded', limit: 'soft', limitBytes: live.overSoft.limitBytes, rssBytes: live.overSoft.rssBytes, method: 'proc', turnsServed: live.turnsClosed };
  return recycle(snapshot);
}
