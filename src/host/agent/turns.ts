/**
 * The host's part in a session's turns: what a session machine uses of the host to carry
 * them out itself (src/session/session-prompts.ts keeps the prompts and does it): the
 * journal's write queue, the line to the session's agent, the editor. The host only routes a
 * prompt to its session's machine ({@link promptCame}); it keeps no record of it.
 */
import { CLIENT_METHODS } from '../../protocol/methods.js';
import type { AgentRequestEvent, TurnEntry } from '../../protocol/native-agent.js';
import type { PromptServices } from '../../session/session-prompts.js';
import type { HostSession, Live } from './live.js';
import { emit } from './delivery.js';
import { answerClientCall, sendToSession } from './inner-agents.js';
import { journalFailure } from './journal-failures.js';
import { record, recordPermission } from './journal-writes.js';

/** The permission answer for a turn that was cancelled (ACP's outcome). */
const cancelledPermission = { outcome: { outcome: 'cancelled' } };

/** A prompt for a live session: to its session's prompts, kept there while its machine decides when its turn starts. */
export function promptCame(live: Live, session: HostSession, request: AgentRequestEvent): void {
  live.requestSessions.set(request.requestId, session.sessionId);
  session.prompts.came(request);
}

/** What the session machine of `session()` uses of this host to carry out its turns. */
export function promptServices(live: Live, session: () => HostSession): PromptServices<AgentRequestEvent> {
  return {
    journal: (entry, then) => record(live, session().sessionId, entry as TurnEntry, then),
    refused: (why) => journalFailure(why, session().sessionId, 'the prompt was not sent to the agent'),
    journaled: (requestId, seq, entry) => live.scope.emit({ type: 'session.turnJournaled', sessionId: session().sessionId, requestId, seq, entry: entry as TurnEntry }),
    send: (request) => sendPrompt(live, session(), request),
    cancel: (requestId) => {
      if (live.context) sendToSession(live, session(), { type: 'session.cancel', sessionId: session().sessionId, requestId, context: live.context });
    },
    answer: (requestId, outcome) => emit(live, 'error' in outcome ? { type: 'acp.error', requestId, error: outcome.error } : { type: 'acp.respond', requestId, result: outcome.result }),
    cancelPermissions: () => cancelPermissions(live, session()),
    // The new agent process has the user's choices: what waited for that (a load's answer) goes on, then the held prompts.
    released: () => {
      for (const next of session().afterReapply.splice(0)) next();
    },
    here: () => live.sessions.get(session().sessionId) === session(),
  };
}

/** The session's permission requests still with the editor: the agent gets `cancelled` for each, the editor's later answer is dropped. */
function cancelPermissions(live: Live, session: HostSession): void {
  for (const [key, call] of live.clientCalls) {
    if (call.sessionId !== session.sessionId || call.method !== CLIENT_METHODS.session_request_permission) continue;
    live.clientCalls.delete(key);
    recordPermission(live, session.sessionId, call, cancelledPermission.outcome);
    answerClientCall(live, call, session, { type: 'client.response', key: call.key, result: cancelledPermission });
  }
}

/** Sends a prompt to the session's agent (journaled when its turn started): its answer is the session's (`pending`). */
function sendPrompt(live: Live, session: HostSession, request: AgentRequestEvent): void {
  live.pending.set(request.requestId, { kind: 'prompt', sessionId: session.sessionId });
  sendToSession(live, session, request);
}
