/**
 * A session this host may no longer run: another host took it (the journal refused this host's
 * write as fenced, or a claim named another owner), or this host lost its lease for two leases
 * and cannot tell (lease-fencing.ts). Its agent here is stopped (closed on its agent, as an
 * abandoned session), the turn in flight and the waiting prompts are answered with the reason,
 * and later prompts here are refused the same way. Nothing is journaled: this host may not write.
 */
import { RpcError, type ErrorObject } from '../../jsonrpc/rpc-error.js';
import type { FencedAppendError } from '../async-journal.js';
import type { SessionOwnership } from '../../session/session-machine.js';
import type { Live } from './live.js';
import { abandon } from './fork-delete.js';
import { dropSession } from './session-record.js';
import { notify } from './notify.js';

/** Where a session went: the host that owns it now (its id, or words for it) and the epoch, when known. */
export interface MovedTo {
  readonly owner: string | undefined;
  readonly epoch: number | undefined;
  /** What this host held, in words (`this host's epoch 1 is stale`). */
  readonly stale: string;
  /** The new owner as the session's chart keeps it (the live view shows it). */
  readonly ownership: SessionOwnership;
}

/** The session moved to another host, as a fenced write says. */
export function movedByFence(fenced: FencedAppendError): MovedTo {
  const { hostId, epoch } = fenced.owner;
  return { owner: hostId, epoch, stale: `this host's epoch ${fenced.heldEpoch ?? '(none)'} is stale`, ownership: { ...(hostId === undefined ? {} : { hostId }), epoch, here: false } };
}

/** Stops the session here: another host owns it now (see the module's comment). */
export function movedAway(live: Live, sessionId: string, to: MovedTo): void {
  const where = to.owner === undefined ? `no host owns it now${to.epoch === undefined ? '' : ` (epoch ${to.epoch})`}` : `host ${to.owner} owns it now${to.epoch === undefined ? '' : ` (epoch ${to.epoch})`}`;
  const error = RpcError.because('session_moved', `Internal error: session ${sessionId} moved: ${where}, ${to.stale}; session/resume it through that host`, { sessionId, owner: to.owner, epoch: to.epoch }).toErrorObject();
  const running = live.sessions.has(sessionId);
  // Stopped here already for its lease (lease-fencing.ts), the check then said where it went: later prompts say that.
  const stoppedForLease = !running && (live.moved.get(sessionId)?.data as { reason?: string } | undefined)?.reason === 'lease_lost';
  if (!running && !stoppedForLease) return;
  if (running) {
    // Its chart says where it went before it ends (a final state takes no more facts).
    live.sessions.get(sessionId)?.machine.send({ type: 'owner.changed', owner: to.ownership });
    stopHere(live, sessionId, `this host lost it: ${where}`, error, 'session moved to another host', `The journal says ${where}. The agent here was stopped; the session goes on there.`);
  } else live.moved.set(sessionId, error);
  live.input.onEvent?.({ type: 'session.moved', sessionId, owner: to.owner, epoch: to.epoch ?? 0 });
}

/**
 * Stops the session here because this host went two leases without renewing its own (frozen, or
 * cut off from the database) and could not check whether another host took the session: no
 * agent runs twice. `session/resume` starts it again (here, once the lease is back, or elsewhere).
 */
export function leaseLost(live: Live, sessionId: string): void {
  const reason = 'this host went two leases without renewing its lease (frozen, or cut off from the database) and could not check that the session is still its own';
  const error = RpcError.because('lease_lost', `Internal error: session ${sessionId} was stopped here: ${reason}; session/resume starts it again`, { sessionId }).toErrorObject();
  stopHere(live, sessionId, reason, error, 'agent stopped: lease lost', `${reason}. The agent was stopped so that no other host runs it at the same time; session/resume starts it again.`);
}

/** Drops the session and closes it on its agent, answering its turns (and later prompts here) with `error`. */
function stopHere(live: Live, sessionId: string, reason: string, error: ErrorObject, title: string, description: string): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  notify(live, sessionId, 'error', title, description, false);
  dropSession(live, sessionId, { type: 'agent.failed', reason, error });
  if (live.context) abandon(live, session.agent, sessionId, live.context);
  live.moved.set(sessionId, error);
}
