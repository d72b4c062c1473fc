/**
 * Stopping children: one at a time in reverse start order (or all at once for a dynamic
 * supervisor), each with its shutdown policy: `brutal_kill` at once, otherwise
 * `supervisor.shutdown` and, for a number of ms, a kill when it runs out (OTP's
 * `terminate_children` and `shutdown/2`). The supervisor is busy while a batch runs; what
 * it does once the batch is done (its continuation) is the policy of `supervisor.ts`.
 */
import type { AnyActorRef } from 'xstate';
import { killedExit, shutdownExit, type ExitReason } from './exit-reason.js';
import { SHUTDOWN_EVENT, type SupervisorInternalEvent } from './events.js';
import { acceptsGracefulShutdown } from './graceful-shutdown.js';
import { emit, failDeferred, type ChildEntry, type Continuation, type Live } from './supervisor-state.js';

/** Ids of the children with a live actor, in reverse start order. */
export function runningInReverse(live: Live): string[] {
  const ids: string[] = [];
  for (const [id, entry] of live.table) if (entry.ref) ids.push(id);
  return ids.reverse();
}

/** Those of `ids` (in start order) that are running, in the order they are stopped: reversed. */
export function runningInStopOrder(live: Live, ids: readonly string[]): string[] {
  return ids.filter((id) => live.table.get(id)?.ref).reverse();
}

/**
 * Moves the current batch on: asks the next children to stop (one at a time unless the
 * batch is concurrent). Returns the batch's continuation once every child in it is stopped,
 * the supervisor no longer busy; `undefined` while it is still waiting.
 */
export function advanceTermination(live: Live): Continuation | undefined {
  const busy = live.busy;
  if (!busy) return undefined;
  while (busy.queue.length > 0 && (busy.concurrent || busy.current.size === 0)) {
    const id = busy.queue.shift() as string;
    const entry = live.table.get(id);
    if (!entry?.ref) continue;
    if (requestTermination(live, entry)) busy.current.add(id);
  }
  if (busy.queue.length > 0 || busy.current.size > 0) return undefined;
  live.busy = undefined;
  return busy.then;
}

/**
 * Stops one child with its shutdown policy. Returns `true` when the child was asked to
 * shut down and the supervisor must wait for its exit (or its timeout).
 */
function requestTermination(live: Live, entry: ChildEntry): boolean {
  const ref = entry.ref as AnyActorRef;
  const { shutdown } = entry.spec;
  if (shutdown === 'brutal_kill' || !acceptsGracefulShutdown(ref, entry.spec)) {
    killEntry(live, entry);
    finishTermination(live, entry, shutdown === 'brutal_kill' ? killedExit : shutdownExit());
    return false;
  }
  entry.status = 'terminating';
  if (typeof shutdown === 'number') {
    const self = live.scope.self;
    const timeout: SupervisorInternalEvent = { type: 'supervisor.child.shutdownTimeout', id: entry.spec.id, incarnation: entry.incarnation };
    live.scope.system.scheduler.schedule(
      self,
      self,
      timeout,
      shutdown,
      `shutdown:${entry.spec.id}:${entry.incarnation}`,
    );
  }
  ref.send({ type: SHUTDOWN_EVENT });
  return true;
}

/** Records that a child being stopped is gone (on its own, asked, or killed). */
export function finishTermination(live: Live, entry: ChildEntry, reason: ExitReason): void {
  const uptime = live.now() - entry.startedAt;
  live.scope.system.scheduler.cancel(live.scope.self, `shutdown:${entry.spec.id}:${entry.incarnation}`);
  if (entry.ref) releaseEntry(live, entry);
  const then = live.busy?.then;
  live.busy?.current.delete(entry.spec.id);
  entry.lastExit = reason;
  // A sibling stopped for a group restart is waiting for it, not done.
  const waits = (then?.kind === 'restart' || then?.kind === 'delay') && entry.spec.restart !== 'temporary';
  entry.status = waits ? 'restarting' : 'terminated';
  emit(live, { type: 'child.exited', childId: entry.spec.id, reason, action: 'terminated', uptime });
}

/** Stops a child's actor at once (XState `stopChild`); its cleanup runs synchronously. */
export function killEntry(live: Live, entry: ChildEntry): void {
  const ref = entry.ref;
  if (!ref) return;
  releaseEntry(live, entry);
  live.scope.stopChild(ref);
}

/** Forgets a child's actor: no more watching it, no longer counted as active. */
export function releaseEntry(live: Live, entry: ChildEntry): void {
  if (entry.ref) live.active -= 1;
  entry.subscription?.unsubscribe();
  entry.relay?.unsubscribe();
  entry.subscription = undefined;
  entry.relay = undefined;
  entry.ref = undefined;
}

/** Cancels a child's pending restart timer, if it has one. */
export function cancelRestartTimer(live: Live, entry: ChildEntry): void {
  if (entry.restartTimer) live.scope.system.scheduler.cancel(live.scope.self, entry.restartTimer);
  entry.restartTimer = undefined;
}

/** Synchronous stop of everything (XState `stop()` or an internal failure): reverse order, no waiting. */
export function stopAllNow(live: Live): void {
  for (const id of runningInReverse(live)) {
    const entry = live.table.get(id) as ChildEntry;
    killEntry(live, entry);
    entry.status = 'terminated';
  }
  for (const entry of live.table.values()) cancelRestartTimer(live, entry);
  live.busy = undefined;
  failDeferred(live);
}
