import type { AnyActorLogic, AnyActorRef } from 'xstate';
import { isSupervisorLogic, type NormalizedChildSpec } from './child-spec.js';
import { SHUTDOWN_EVENT } from './events.js';

const gracefulMarker: unique symbol = Symbol.for('acp-warden.graceful-shutdown');

/**
 * Marks a logic as handling {@link SHUTDOWN_EVENT}: its supervisor will ask it to shut down
 * and wait (up to the child's `shutdown` ms) for it to finish, instead of stopping it at
 * once. Machines need no mark: a machine whose current state handles the event is asked.
 * Returns the same logic.
 *
 * This is OTP's `trap_exit`: a process that traps exits gets `{'EXIT', Parent, shutdown}`
 * as a message and can clean up; one that does not dies immediately.
 */
export function gracefulShutdown<TLogic extends AnyActorLogic>(logic: TLogic): TLogic {
  Object.defineProperty(logic, gracefulMarker, { value: true, enumerable: false });
  return logic;
}

/** Whether the supervisor should ask this child to shut down rather than stop it at once. */
export function acceptsGracefulShutdown(ref: AnyActorRef, spec: NormalizedChildSpec): boolean {
  const logic = spec.start.logic as unknown as Record<symbol, unknown>;
  if (isSupervisorLogic(logic) || logic[gracefulMarker] === true) return true;
  const snapshot = ref.getSnapshot() as { can?: (event: { type: string }) => boolean } | undefined;
  if (typeof snapshot?.can === 'function') {
    try {
      return snapshot.can({ type: SHUTDOWN_EVENT });
    } catch {
      return false;
    }
  }
  return false;
}
