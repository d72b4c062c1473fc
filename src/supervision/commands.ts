import type { AnyActorRef } from 'xstate';
import type { ChildSpec } from './child-spec.js';
import { errorExit, exitFromOutput, killedExit, shutdownExit, type ExitReason } from './exit-reason.js';
import { pendingCalls } from './supervisor-logic.js';
import {
  SHUTDOWN_EVENT,
  notRunning,
  type DeleteChildResult,
  type RestartChildResult,
  type StartChildResult,
  type SupervisorCommand,
  type TerminateChildResult,
} from './events.js';

/**
 * Sends a command and resolves with its reply. A supervisor that is no longer running, or
 * that ends before it gets to the command, answers `not_running` instead of leaving the
 * promise pending forever.
 */
function call<TResult>(supervisor: AnyActorRef, build: (reply: (result: TResult) => void) => SupervisorCommand): Promise<TResult> {
  return new Promise<TResult>((resolve) => {
    if (supervisor.getSnapshot().status !== 'active') {
      resolve(notRunning as TResult);
      return;
    }
    const reply = pendingCalls.register(supervisor, resolve as (value: TResult | typeof notRunning) => void);
    supervisor.send(build(reply as (result: TResult) => void));
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
  const ended = (snapshot: ReturnType<AnyActorRef['getSnapshot']>): ExitReason => {
    if (snapshot.status === 'done') return exitFromOutput(snapshot.output);
    if (snapshot.status === 'error') return errorExit(snapshot.error);
    return killedExit; // stopped by XState's stop(): nobody waited for the children
  };
  if (supervisor.getSnapshot().status !== 'active') return ended(supervisor.getSnapshot());
  const done = new Promise<void>((resolve) => {
    supervisor.subscribe({ complete: () => resolve(), error: () => resolve() });
  });
  supervisor.send({ type: SHUTDOWN_EVENT, reason });
  await done;
  return ended(supervisor.getSnapshot());
}

/**
 * Shuts supervisors down gracefully one after another, in reverse of the order given (the last
 * started first, as a supervisor stops its own children); one that fails or is already gone
 * does not stop the others. Resolves when all are down.
 */
export async function shutdownInReverse(supervisors: readonly AnyActorRef[]): Promise<void> {
  for (const supervisor of [...supervisors].reverse()) {
    if (supervisor.getSnapshot().status === 'active') await shutdown(supervisor).catch(() => undefined);
  }
}
