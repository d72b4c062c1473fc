/**
 * New sessions journaled, `session/fork` and `session/delete`, and the close of a session the editor was told failed.
 */
import { AGENT_METHODS, UNSTABLE_AGENT_METHODS } from '../../protocol/methods.js';
import type { AgentEventContext, AgentRequestEvent } from '../../protocol/native-agent.js';
import { advertisesFork } from '../../acp/agent-server.js';
import { type ErrorObject, RpcError } from '../../jsonrpc/rpc-error.js';
import type { HostJournal, Maybe } from '../../journal/host-journal.js';
import type { JournalSession } from '../../journal/journal.js';
import type { HostSession, Live, Pending } from './live.js';
import { emit, fail } from './delivery.js';
import { innerAgent, sendTo } from './inner-agents.js';
import { claimThen, releaseOwnership } from './ownership.js';
import { holdAttaches } from './attach-jobs.js';
import { endHere } from './session-record.js';
import { failedWrite, journalFailure } from './journal-failures.js';
import { journalCall } from './journal-writes.js';

/**
 * `session/fork` (unstable) of a live session: forwarded to its agent when the agent forks
 * (else `-32601`, and the host does not advertise it for that agent), then journaled as a
 * session of its own whose history starts with a copy of the source's conversation (so that
 * `session/load` of the fork replays it), listed like any other.
 */
export function fork(live: Live, request: AgentRequestEvent): void {
  const from = request.params.sessionId as string;
  const session = live.sessions.get(from);
  if (!session) {
    fail(live, request.requestId, RpcError.resourceNotFound(`session ${from}`, { sessionId: from }));
    return;
  }
  const inner = innerAgent(live, session.agent);
  if (!advertisesFork(inner.capabilities)) {
    const refusal = RpcError.methodNotFound(UNSTABLE_AGENT_METHODS.session_fork);
    fail(live, request.requestId, { ...refusal.toErrorObject(), message: `${refusal.message}: agent ${session.agent} cannot fork sessions` });
    return;
  }
  live.pending.set(request.requestId, { kind: 'fork', agent: session.agent, from, cwd: request.params.cwd as string, context: request.context });
  sendTo(inner, request);
}

/**
 * `session/delete`: the session leaves the journal (record and entries: no host lists or loads
 * it again) and this host (what its agent still says is dropped). A live session is deleted
 * on its agent first when the agent can (else closed there when it can); an agent's refusal
 * is the answer and the journal keeps the session. A session known only to the journal is
 * just forgotten, unless another warden that still runs has it live (refused, naming it); an
 * unknown id is answered `{}` too (deleting is idempotent).
 */
export function deleteSession(live: Live, request: AgentRequestEvent): void {
  const sessionId = request.params.sessionId as string;
  const session = live.sessions.get(sessionId);
  if (session) return deleteHere(live, request, session);
  // Another warden that still runs it live keeps it: refused, naming the owner.
  journalCall(live, sessionId, (journal) => journal.getSession(sessionId), (found) => {
    if (!found.ok) {
      failedWrite(live, sessionId, found.error);
      return fail(live, request.requestId, journalFailure(found.error, sessionId));
    }
    // It may have been opened here meanwhile (a journal that answers later).
    const opened = live.sessions.get(sessionId);
    if (opened) return deleteHere(live, request, opened);
    if (!found.value) return forget(live, request.requestId, sessionId);
    claimThen(live, request.requestId, sessionId, () => forget(live, request.requestId, sessionId));
  });
}

/** The delete of a session running here: on its agent first when the agent can delete or close, then out of the journal. */
function deleteHere(live: Live, request: AgentRequestEvent, session: HostSession): void {
  const { sessionId } = session;
  // ACP: a delete cancels the session's work as session/cancel does (then it goes).
  session.machine.send({ type: 'cancel' });
  const inner = innerAgent(live, session.agent);
  const caps = inner.capabilities.sessionCapabilities;
  if (!(caps?.delete || caps?.close)) {
    forget(live, request.requestId, sessionId);
    return;
  }
  live.pending.set(request.requestId, { kind: 'delete', sessionId, holds: holdAttaches(live, sessionId) });
  sendTo(inner, caps.delete ? request : { ...request, type: 'session.close', method: AGENT_METHODS.session_close, params: { sessionId } });
}

/**
 * A deleted session: out of the journal and of this host; answers the delete request, with
 * `-32603` when the journal could not forget it (its history is still there: nothing lost).
 */
export function forget(live: Live, requestId: string, sessionId: string): void {
  endHere(live, sessionId, 'deleted');
  live.failed.delete(sessionId);
  live.moved.delete(sessionId);
  live.listed.delete(sessionId);
  journalCall(live, sessionId, (journal) => journal.deleteSession(sessionId), (deleted) => {
    if (!deleted.ok) failedWrite(live, sessionId, deleted.error);
    releaseOwnership(live, sessionId);
    live.input.onEvent?.({ type: 'session.closed', sessionId });
    if (!deleted.ok) return fail(live, requestId, journalFailure(deleted.error, sessionId, 'its history stays in the journal'));
    emit(live, { type: 'acp.respond', requestId, result: {} });
  });
}

/**
 * Journals a session its agent just opened (`create`: new or fork), owned by this host, then
 * calls `then` with `undefined` and the session as journaled (its owner and epoch, where the
 * store has them). When that fails, the editor is told the session failed, so
 * it must not go on: it is closed on its agent again (else a CLI process per attempt), what
 * the agent still says of it is dropped, and `then` gets the refusal to answer (the journal
 * keeps no session the editor never got).
 */
export function journalNewSession(live: Live, pending: Extract<Pending, { kind: 'new' | 'fork' }>, sessionId: string, create: (journal: HostJournal) => Maybe<JournalSession>, then: (refusal: ErrorObject | undefined, created?: JournalSession) => void): void {
  journalCall(live, sessionId, create, (created) => {
    if (created.ok) return then(undefined, created.value);
    failedWrite(live, sessionId, created.error);
    abandon(live, pending.agent, sessionId, pending.context);
    // An agent that numbers its sessions from 1 in every process reuses ids across runs.
    journalCall(live, sessionId, (journal) => journal.getSession(sessionId), (found) => {
      const taken = found.ok ? found.value : undefined;
      if (taken) {
        return then(RpcError.internalError(`${pending.agent} handed out session id ${sessionId}, which the journal already holds for an earlier session (${taken.createdAt}); an agent must not reuse session ids, or use another --store`, { sessionId }).toErrorObject());
      }
      then(journalFailure(created.error, sessionId));
    });
  });
}

/**
 * Closes, on its agent, a session the editor was told failed (delete when the agent can, else
 * close); its answer goes nowhere, and what the agent still says of the session is dropped.
 */
export function abandon(live: Live, agent: string, sessionId: string, context: AgentEventContext): void {
  live.closed.add(sessionId);
  // An agent handing out the id of a session this host runs: that one is not ours to close.
  if (live.sessions.has(sessionId)) return;
  const inner = live.inner.get(agent);
  const caps = inner?.capabilities.sessionCapabilities;
  if (!inner || !(caps?.delete || caps?.close)) return;
  const requestId = `h${live.nextKey++}`;
  live.pending.set(requestId, { kind: 'abandon' });
  const method = caps.delete ? AGENT_METHODS.session_delete : AGENT_METHODS.session_close;
  sendTo(inner, { type: caps.delete ? 'session.delete' : 'session.close', requestId, method, params: { sessionId }, context });
}
