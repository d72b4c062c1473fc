import { toPromise, type AnyActorRef } from 'xstate';
import type { ChildSpec } from './child-spec.js';
import { shutdownExit, type ExitReason } from './exit-reason.js';
import {
  SHUTDOWN_EVENT,
  type DeleteChildResult,
  type RestartChildResult,
  type StartChildResult,
  type SupervisorCommand,
  type TerminateChildResult,
} from './events.js';

/**
 * Sends a command and resolves with its reply. A supervisor that is no longer running
 * answers `not_running` at once instead of leaving the promise pending forever.
 */
function call<TResult>(supervisor: AnyActorRef, build: (reply: (result: TResult) => void) => SupervisorCommand): Promise<TResult> {
  return new Promise<TResult>((resolve) => {
    if (supervisor.getSnapshot().status !== 'active') {
      resolve({ ok: false, reason: 'not_running' } as TResult);
      return;
    }
    supervisor.send(build(resolve));
  });
}

/**
 * Adds a child to a running supervisor and starts it (OTP's `start_child/2`). In a static
 * supervisor the spec is appended to the start order.
 */
export function startChild(supervisor: AnyActorRef, spec: ChildSpec | (Omit<ChildSpec, 'id'> & { id?: string })): Promise<StartChildResult> {
  return call(supervisor, (reply) => ({ type: 'supervisor.startChild', spec: spec as ChildSpec, reply }));
}

/** Starts a child of a dynamic supervisor from its template (`simple_one_for_one`). */
export function startTemplateChild(supervisor: AnyActorRef, args: unknown): Promise<StartChildResult> {
  return call(supervisor, (reply) => ({ type: 'supervisor.startChild', args, reply }));
}

/**
 * Stops a child with its shutdown policy (OTP's `terminate_child/2`). A static supervisor
 * keeps the spec (restart it with {@link restartChild}); a dynamic one removes the child.
 */
export function terminateChild(supervisor: AnyActorRef, id: string): Promise<TerminateChildResult> {
  return call(supervisor, (reply) => ({ type: 'supervisor.terminateChild', id, reply }));
}

/** Starts again a child whose spec is kept but that is not running (static supervisors). */
export function restartChild(supervisor: AnyActorRef, id: string): Promise<RestartChildResult> {
  return call(supervisor, (reply) => ({ type: 'supervisor.restartChild', id, reply }));
}

/** Removes the spec of a child that is not running (static supervisors). */
export function deleteChild(supervisor: AnyActorRef, id: string): Promise<DeleteChildResult> {
  return call(supervisor, (reply) => ({ type: 'supervisor.deleteChild', id, reply }));
}

/**
 * Shuts a supervisor down gracefully: its children stop in reverse start order (a dynamic
 * supervisor's concurrently), each within its `shutdown`; then it exits. Resolves with the
 * exit reason. Unlike XState's synchronous `actor.stop()`, this waits for each child.
 */
export async function shutdown(supervisor: AnyActorRef, reason: ExitReason = shutdownExit()): Promise<ExitReason> {
  const snapshot = supervisor.getSnapshot();
  if (snapshot.status === 'done') return snapshot.output as ExitReason;
  if (snapshot.status !== 'active') return reason;
  const done = toPromise(supervisor);
  supervisor.send({ type: SHUTDOWN_EVENT, reason });
  return (await done) as ExitReason;
}
