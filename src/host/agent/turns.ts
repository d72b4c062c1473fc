/**
 * The host's side of a session's turns: the session machine decides them (queue, cancel,
 * cancel grace, close, failure: src/session/turn-queue.ts); this carries out what it emits.
 * A prompt is journaled when its turn starts and sent to the agent, unless a new agent process
 * is getting the user's choices first (it is held until then); its answer is journaled and
 * goes to the editor; a cancel goes to the agent, or ends a held prompt unseen by the agent.
 */
import type { ContentBlock, StopReason } from '@agentclientprotocol/sdk';
import { CLIENT_METHODS } from '../../protocol/methods.js';
import type { AgentRequestEvent, TurnEntry } from '../../protocol/native-agent.js';
import { holdsPrompts, type SessionMachineEmitted } from '../../session/session-machine.js';
import type { HostSession, Live } from './live.js';
import { emit } from './delivery.js';
import { answerClientCall, sendToSession } from './inner-agents.js';
import { journalFailure } from './journal-failures.js';
import { record, recordPermission } from './journal-writes.js';

/** The permission answer for a turn that was cancelled (ACP's outcome). */
const cancelledPermission = { outcome: { outcome: 'cancelled' } };

/** A prompt for a live session: its machine decides when its turn starts. */
export function promptCame(session: HostSession, request: AgentRequestEvent): void {
  session.prompts.set(request.requestId, { request, journaled: false });
  session.machine.send({ type: 'prompt', requestId: request.requestId });
}

/** Carries out a command of the session's machine. */
export function onTurnCommand(live: Live, session: HostSession, command: SessionMachineEmitted): void {
  if (command.type === 'turns.release') {
    // The new agent process has the user's choices: what waited for that (a load's answer, then the held prompts) goes on.
    for (const next of session.afterReapply.splice(0)) next();
    releaseHeldPrompts(live, session);
    return;
  }
  const prompt = session.prompts.get(command.requestId);
  switch (command.type) {
    case 'turn.start': {
      if (!prompt) return;
      // Journaled before the agent sees it: a prompt the host lost track of is still on record.
      const entry = { kind: 'prompt', prompt: prompt.request.params.prompt as ContentBlock[] } as const;
      prompt.journaling = 'writing';
      record(live, session.sessionId, entry, (seq, refused) => {
        const cancelled = prompt.journaling === 'cancelled';
        prompt.journaling = undefined;
        if (seq === undefined) {
          const error = journalFailure(refused, session.sessionId, 'the prompt was not sent to the agent');
          session.machine.send({ type: 'prompt.settled', outcome: 'error', requestId: command.requestId, error });
          return;
        }
        prompt.journaled = true;
        turnJournaled(live, session, command.requestId, seq, entry);
        // Cancelled while its entry was written (a journal that answers later): it never reaches the agent.
        if (cancelled) {
          session.machine.send({ type: 'prompt.settled', outcome: 'cancelled', requestId: command.requestId, result: { stopReason: 'cancelled' } });
          return;
        }
        // The session left this host while its entry was written: its machine answered it.
        if (live.sessions.get(session.sessionId) !== session || !session.prompts.has(command.requestId)) return;
        // A new agent process gets the user's mode and config first: the prompt waits for that.
        // Asked now, not when the turn started: a re-apply that ended while the entry was written
        // released what was held then, and one that began meanwhile is to be waited for.
        if (holdsPrompts(session.machine)) session.held.push(prompt.request);
        else sendPrompt(live, session, prompt.request);
      });
      return;
    }
    case 'turn.cancelAgent': {
      if (prompt?.journaling) {
        // Its entry is being written: once it is, it ends cancelled without reaching the agent.
        prompt.journaling = 'cancelled';
        return;
      }
      if (dropHeld(session, command.requestId)) {
        // Never reached the agent: it ends here, cancelled.
        session.machine.send({ type: 'prompt.settled', outcome: 'cancelled', requestId: command.requestId, result: { stopReason: 'cancelled' } });
        return;
      }
      if (!live.context) return;
      sendToSession(live, session, { type: 'session.cancel', sessionId: session.sessionId, requestId: command.requestId, context: live.context });
      return;
    }
    case 'turn.permissionCancelled':
      cancelPermissions(live, session);
      return;
    case 'turn.answer': {
      forgetPrompt(session, command.requestId);
      const stopReason = (command.result as { stopReason?: StopReason } | undefined)?.stopReason;
      if (prompt?.journaled && stopReason) recordTurnEnd(live, session, command.requestId, { kind: 'stop', stopReason });
      emit(live, { type: 'acp.respond', requestId: command.requestId, result: command.result });
      return;
    }
    case 'turn.fail':
      forgetPrompt(session, command.requestId);
      if (prompt?.journaled) recordTurnEnd(live, session, command.requestId, { kind: 'error', error: command.error });
      emit(live, { type: 'acp.error', requestId: command.requestId, error: command.error });
      return;
  }
}

/** Journals a turn's end and says so (see `session.turnJournaled`). */
function recordTurnEnd(live: Live, session: HostSession, requestId: string, entry: Extract<TurnEntry, { kind: 'stop' | 'error' }>): void {
  record(live, session.sessionId, entry, (seq) => {
    if (seq !== undefined) turnJournaled(live, session, requestId, seq, entry);
  });
}

/** A turn's entry is on record: whoever shows it to connections other than the prompt's hears it (an editor's server ignores it). */
function turnJournaled(live: Live, session: HostSession, requestId: string, seq: number, entry: TurnEntry): void {
  live.scope.emit({ type: 'session.turnJournaled', sessionId: session.sessionId, requestId, seq, entry });
}

/** An answered prompt: no longer the host's to send or hold. */
function forgetPrompt(session: HostSession, requestId: string): void {
  session.prompts.delete(requestId);
  dropHeld(session, requestId);
}

/** Takes a prompt out of those held for the re-apply; whether it was held. */
function dropHeld(session: HostSession, requestId: string): boolean {
  const held = session.held.findIndex((request) => request.requestId === requestId);
  if (held < 0) return false;
  session.held.splice(held, 1);
  return true;
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

/** Sends a prompt to the session's agent (journaled when its turn started). */
export function sendPrompt(live: Live, session: HostSession, request: AgentRequestEvent): void {
  live.pending.set(request.requestId, { kind: 'prompt', sessionId: session.sessionId });
  sendToSession(live, session, request);
}

/** The held prompts go to the agent (the re-apply is over, or there was nothing to re-apply). */
function releaseHeldPrompts(live: Live, session: HostSession): void {
  for (const request of session.held.splice(0)) {
    if (live.sessions.get(session.sessionId) !== session) return;
    sendPrompt(live, session, request);
  }
}
