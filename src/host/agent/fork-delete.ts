/**
 * New sessions journaled, `session/fork` and `session/delete`, and the close of a session the editor was told failed.
 */
import { AGENT_METHODS, UNSTABLE_AGENT_METHODS } from '../../acp/methods.js';
import type { AgentEventContext, AgentRequestEvent } from '../../acp/native-agent.js';
import { advertisesFork } from '../../acp/agent-server.js';
import { type ErrorObject, RpcError } from '../../jsonrpc/rpc-error.js';
import type { JournalSession } from '../journal.js';
import type { Live, Pending } from './live.js';
import { emit, fail } from './delivery.js';
import { innerAgent, sendTo } from './inner-agents.js';
import { claimed, releaseOwnership } from './ownership.js';
import { holdAttaches } from './attach-jobs.js';
import { endHere } from './session-record.js';
import { journalFailure } from './journal-failures.js';
import { safely, writeOrError } from './journal-writes.js';

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
  // Another warden that still runs it live keeps it: refused, naming the owner.
  if (!session && live.input.journal.getSession(sessionId) && !claimed(live, request.requestId, sessionId)) return;
  // ACP: a delete cancels the session's work as session/cancel does (then it goes).
  session?.machine.send({ type: 'cancel' });
  const inner = session ? innerAgent(live, session.agent) : undefined;
  const caps = inner?.capabilities.sessionCapabilities;
  if (!inner || !(caps?.delete || caps?.close)) {
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
  live.listed.delete(sessionId);
  const refused = writeOrError(live, sessionId, () => live.input.journal.deleteSession(sessionId));
  releaseOwnership(live, sessionId);
  live.input.onEvent?.({ type: 'session.closed', sessionId });
  if (refused) {
    fail(live, requestId, journalFailure(refused, sessionId, 'its history stays in the journal'));
    return;
  }
  emit(live, { type: 'acp.respond', requestId, result: {} });
}

/**
 * Journals a session its agent just opened (`create`: new or fork) and takes it for this host.
 * When that fails, the editor is told the session failed, so it must not go on: it is closed
 * on its agent again (else a CLI process per attempt), what the agent still says of it is
 * dropped, and a row already written is deleted (the journal keeps no session the editor never
 * got). Returns the refusal to answer, or `undefined` when the session is journaled and ours.
 */
export function journalNewSession(live: Live, pending: Extract<Pending, { kind: 'new' | 'fork' }>, sessionId: string, create: () => void): ErrorObject | undefined {
  const journal = live.input.journal;
  let created = false;
  const failure = writeOrError(live, sessionId, () => {
    create();
    created = true;
    journal.claim?.(sessionId);
  });
  if (failure === undefined) return undefined;
  abandon(live, pending.agent, sessionId, pending.context);
  if (created) safely(live, sessionId, () => journal.deleteSession(sessionId));
  // An agent that numbers its sessions from 1 in every process reuses ids across runs.
  const taken = created ? undefined : peekSession(live, sessionId);
  if (taken) {
    return RpcError.internalError(`${pending.agent} handed out session id ${sessionId}, which the journal already holds for an earlier session (${taken.createdAt}); an agent must not reuse session ids, or use another --store`, { sessionId }).toErrorObject();
  }
  return journalFailure(failure, sessionId);
}

/** The journal's record of a session, or `undefined` when there is none or the journal cannot say. */
function peekSession(live: Live, sessionId: string): JournalSession | undefined {
  try {
    return live.input.journal.getSession(sessionId);
  } catch {
    return undefined;
  }
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
