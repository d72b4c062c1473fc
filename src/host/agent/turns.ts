/**
 * The host's part in a session's turns: what a session machine uses of the host to carry
 * them out itself (src/session/session-prompts.ts keeps the prompts and does it): the
 * journal's write queue, the line to the session's agent, the editor. The host only routes a
 * prompt to its session's machine ({@link promptCame}) and the agent's answer to the machine
 * whose turns owe it ({@link promptAnswered}); it keeps no record of a prompt.
 */
import { CLIENT_METHODS } from '../../protocol/methods.js';
import type { StopReason } from '@agentclientprotocol/sdk';
import type { AgentRequestEvent, TurnEntry } from '../../protocol/native-agent.js';
import type { ErrorObject } from '../../jsonrpc/rpc-error.js';
import type { SessionMachineContext } from '../../session/session-machine.js';
import { owesAnswer } from '../../session/turn-queue.js';
import type { PromptServices } from '../../session/session-prompts.js';
import type { HostSession, Live } from './live.js';
import { fail } from './delivery.js';
import { answerPrompt, cancelRetry, keyedPromptCame, keyedPromptJournaled, promptKeyOf } from './idempotent-prompts.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';
import { answerClientCall, sendToSession } from './inner-agents.js';
import { journalFailure } from './journal-failures.js';
import { journalFailureAnswers, record, recordPermission } from './journal-writes.js';

/** The permission answer for a turn that was cancelled (ACP's outcome). */
const cancelledPermission = { outcome: { outcome: 'cancelled' } };

/**
 * A cancel came for the session: `session/cancel` (no `requestId`) or a `$/cancel_request` of one
 * prompt. A retry that joined a keyed prompt ends alone (idempotent-prompts.ts); otherwise the
 * session's machine decides: waiting prompts end cancelled, the running one is cancelled on its agent.
 */
export function cancelCame(live: Live, session: HostSession, requestId: string | undefined): void {
  if (requestId && cancelRetry(live, session, requestId)) return;
  session.machine.send({ type: 'cancel', ...(requestId ? { requestId } : {}) });
}

/**
 * A prompt for a live session: to its session's prompts, kept there while its machine decides
 * when its turn starts. A prompt with an idempotency key goes there only when the session has
 * no prompt of that key (idempotent-prompts.ts); a malformed key is refused -32602.
 */
export function promptCame(live: Live, session: HostSession, request: AgentRequestEvent): void {
  const key = promptKeyOf(request.params);
  if (key instanceof RpcError) return fail(live, request.requestId, key, session.sessionId);
  if (!key) return session.prompts.came(request);
  keyedPromptCame(live, session, request, key, (keyed) => session.prompts.came(keyed));
}

/**
 * An agent's answer to a prompt, routed by the sessions' turns: to the session whose machine
 * owes it (the running prompt, or one it answered without the agent), which decides what the
 * editor hears (a cancelled prompt ends cancelled). Dropped when none does: its session left
 * this host (it answered the prompt when it ended).
 */
export function promptAnswered(live: Live, requestId: string, result: unknown, error: ErrorObject | undefined): void {
  const session = sessionOwing(live, requestId);
  if (!session) return;
  const stopReason = (result as { stopReason?: StopReason } | undefined)?.stopReason;
  journalFailureAnswers(live, requestId, session.sessionId, () =>
    session.machine.send(error ? { type: 'prompt.settled', outcome: 'error', requestId, error } : { type: 'prompt.settled', outcome: stopReason ?? 'unknown', requestId, result }),
  );
}

/** The session whose turns owe the agent's answer to prompt `requestId`: a lookup in the session machines, no record of the host's. */
function sessionOwing(live: Live, requestId: string): HostSession | undefined {
  for (const session of live.sessions.values()) {
    if (owesAnswer((session.machine.getSnapshot().context as SessionMachineContext).turns, requestId)) return session;
  }
  return undefined;
}

/** What the session machine of `session()` uses of this host to carry out its turns. */
export function promptServices(live: Live, session: () => HostSession): PromptServices<AgentRequestEvent> {
  return {
    journal: {
      write: (entry, then) => record(live, session().sessionId, entry as TurnEntry, then),
      refused: (why) => journalFailure(why, session().sessionId, 'the prompt was not sent to the agent'),
      journaled: (requestId, seq, entry) => {
        live.scope.emit({ type: 'session.turnJournaled', sessionId: session().sessionId, requestId, seq, entry: entry as TurnEntry });
        // After the original's insertion: the retries that joined it before are told so (session.promptJoined).
        if (entry.kind === 'prompt') keyedPromptJournaled(live, session(), requestId, seq);
      },
    },
    send: (request) => sendToSession(live, session(), request),
    cancel: (requestId) => {
      if (live.context) sendToSession(live, session(), { type: 'session.cancel', sessionId: session().sessionId, requestId, context: live.context });
    },
    answer: (requestId, outcome) => answerPrompt(live, session(), requestId, outcome),
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
