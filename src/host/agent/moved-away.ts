/**
 * A session another host took: the journal refused this host's write as fenced (its epoch is
 * stale: this host's lease ran out, another host claimed the session). This host must not run
 * it any more: its agent here is stopped (closed on its agent, as an abandoned session), the
 * turn in flight and the waiting prompts are answered `session_moved` naming the owner, and
 * later prompts here are refused the same way. Nothing is journaled: this host may not write.
 */
import { RpcError } from '../../jsonrpc/rpc-error.js';
import type { FencedAppendError } from '../async-journal.js';
import type { Live } from './live.js';
import { abandon } from './fork-delete.js';
import { dropSession } from './session-record.js';
import { notify } from './notify.js';

/** Stops the session here: another host owns it now (see the module's comment). */
export function movedAway(live: Live, sessionId: string, fenced: FencedAppendError): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  const { owner } = fenced;
  const where = owner.hostId === undefined ? `no host owns it now (epoch ${owner.epoch})` : `host ${owner.hostId} owns it now (epoch ${owner.epoch})`;
  const reason = `this host lost it: ${where}`;
  const error = RpcError.because('session_moved', `Internal error: session ${sessionId} moved: ${where}, this host's epoch ${fenced.heldEpoch ?? '(none)'} is stale; session/resume it through that host`, { sessionId, owner: owner.hostId, epoch: owner.epoch }).toErrorObject();
  notify(live, sessionId, 'error', 'session moved to another host', `The journal refused this host's write: ${where}. The agent here was stopped; the session goes on there.`, false);
  dropSession(live, sessionId, { type: 'agent.failed', reason, error });
  if (live.context) abandon(live, session.agent, sessionId, live.context);
  live.moved.set(sessionId, error);
  live.input.onEvent?.({ type: 'session.moved', sessionId, owner: owner.hostId, epoch: owner.epoch });
}
