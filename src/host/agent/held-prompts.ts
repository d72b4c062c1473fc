/**
 * Prompts to a session's agent, and those held while a new agent process gets the user's choices first.
 */
import { type AgentRequestEvent } from '../../acp/native-agent.js';
import { RpcError } from '../../jsonrpc/rpc-error.js';
import { type SessionMachineContext } from '../../session/session-machine.js';
import { hasChoices } from '../../session/session-state.js';
import { type HostSession, type Live } from './live.js';
import { emit } from './delivery.js';
import { innerAgent, sendTo } from './inner-agents.js';
import { record } from './journal-writes.js';

/** Sends a prompt to the session's agent (it was journaled when it came). */
export function sendPrompt(live: Live, session: HostSession, request: AgentRequestEvent): void {
  session.machine.send({ type: 'prompt' });
  live.pending.set(request.requestId, { kind: 'prompt', sessionId: session.sessionId });
  sendTo(innerAgent(live, session.agent), request);
}

/**
 * Whether a prompt must wait: the user's choices are being given to a new agent process, or
 * the agent is restarting and there are choices to give the new process once it is up.
 */
export function holdsPrompts(session: HostSession): boolean {
  const snapshot = session.machine.getSnapshot();
  if (snapshot.value === 'reapplying') return true;
  return snapshot.value === 'recovering' && hasChoices((snapshot.context as SessionMachineContext).state.chosen);
}

/** The held prompts go to the agent, in order (the re-apply is over, or there was nothing to re-apply). */
export function releaseHeldPrompts(live: Live, session: HostSession): void {
  for (const request of session.held.splice(0)) {
    if (live.sessions.get(session.sessionId) !== session) return;
    sendPrompt(live, session, request);
  }
}

/** The held prompts end without reaching the agent: `cancelled`, or failed with `why`. */
export function answerHeld(live: Live, session: HostSession, why: string): void {
  for (const request of session.held.splice(0)) {
    if (why === 'cancelled') {
      record(live, session.sessionId, { kind: 'stop', stopReason: 'cancelled' });
      emit(live, { type: 'acp.respond', requestId: request.requestId, result: { stopReason: 'cancelled' } });
      continue;
    }
    const error = RpcError.internalError(`session ${session.sessionId} failed (${why}) before its agent got the prompt; session/load or session/resume starts it again in a new agent process`, { sessionId: session.sessionId, reason: 'session_failed' }).toErrorObject();
    record(live, session.sessionId, { kind: 'error', error });
    emit(live, { type: 'acp.error', requestId: request.requestId, error });
  }
}
