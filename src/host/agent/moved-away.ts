/**
 * A session this host may no longer run: another host took it (the journal refused this host's
 * write as fenced, or a claim named another owner), or this host lost its lease for two leases
 * and cannot tell (lease-fencing.ts). Its agent here is stopped (closed on its agent, as an
 * abandoned session), the turn in flight and the waiting prompts are answered with the reason,
 * and later prompts here are refused the same way. Nothing is journaled: this host may not write.
 */
import { RpcError, type ErrorObject } from '../../jsonrpc/rpc-error.js';
import type { FencedAppendError } from '../../journal/async-journal.js';
import type { SessionOwnership } from '../../session/session-machine.js';
import type { Live } from './live.js';
import { abandon } from './fork-delete.js';
import { dropSession } from './session-record.js';
import { notify } from './notify.js';

/**
 * Where a session went, as the store says: the host that owns it now (its id and machine name;
 * `undefined`: nobody owns it, or the store did not say) and the session's epoch now.
 */
export interface MovedTo {
  readonly owner: string | undefined;
  readonly ownerName: string | undefined;
  readonly epoch: number | undefined;
  /** What this host held, in words (`this host's epoch 1 is stale`). */
  readonly stale: string;
}

/** The session moved to another host, as a fenced write says. */
export function movedByFence(fenced: FencedAppendError): MovedTo {
  const { hostId, hostName, epoch } = fenced.owner;
  return { owner: hostId, ownerName: hostName, epoch, stale: `this host's epoch ${fenced.heldEpoch ?? '(none)'} is stale` };
}

/** Stops the session here: another host owns it now (see the module's comment). */
export function movedAway(live: Live, sessionId: string, to: MovedTo): void {
  const epoch = to.epoch === undefined ? '' : ` (epoch ${to.epoch})`;
  const where = to.owner === undefined ? `no host owns it now${epoch}` : `host ${to.owner}${to.ownerName === undefined ? '' : ` on ${to.ownerName}`} owns it now${epoch}`;
  // Every refusal names the owner as the store has it: its host id, machine name and the epoch (null where the store has none).
  const data = { sessionId, owner: to.owner ?? null, ownerName: to.ownerName ?? null, epoch: to.epoch ?? null };
  const error = RpcError.because('session_moved', `Internal error: session ${sessionId} moved: ${where}, ${to.stale}; session/resume it through that host`, data).toErrorObject();
  const running = live.sessions.has(sessionId);
  // Stopped here already for its lease (lease-fencing.ts), the check then said where it went: later prompts say that.
  const stoppedForLease = !running && (live.moved.get(sessionId)?.data as { reason?: string } | undefined)?.reason === 'lease_lost';
  if (!running && !stoppedForLease) return;
  if (running) {
    // Its chart says where it went before it ends (a final state takes no more facts).
    const ownership: SessionOwnership = { ...(to.owner === undefined ? {} : { hostId: to.owner }), ...(to.ownerName === undefined ? {} : { hostName: to.ownerName }), ...(to.epoch === undefined ? {} : { epoch: to.epoch }), here: false };
    live.sessions.get(sessionId)?.machine.send({ type: 'owner.changed', owner: ownership });
    stopHere(live, sessionId, `this host lost it: ${where}`, error, 'session moved to another host', `The journal says ${where}. The agent here was stopped; the session goes on there.`);
  } else live.moved.set(sessionId, error);
  live.input.onEvent?.({ type: 'session.moved', sessionId, owner: to.owner, epoch: to.epoch });
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
