/**
 * Recovery notices: a session's agent process restarting, recovered, given up; journaled, charted, told.
 */
import type { AgentHandlerOutput } from '../../protocol/native-agent.js';
import type { SessionMachineEvent } from '../../session/session-machine.js';
import { reapplyRequests } from '../../session/reapply.js';
import type { Live } from './live.js';
import { releaseOwnership } from './ownership.js';
import { dropSession, stateOf } from './session-record.js';
import { startReapply } from './session-settings.js';
import { record, safely } from './journal-writes.js';
import { describeAgentExit, notify } from './notify.js';

/** A session's agent process restarting, recovered, or given up: journaled, charted, told. */
export function lifecycle(live: Live, agent: string, output: Extract<AgentHandlerOutput, { type: 'session.restarting' | 'session.recovered' | 'session.failed' }>): void {
  switch (output.type) {
    case 'session.restarting': {
      const exit = describeAgentExit(output.exit.reason);
      const restarts = output.restarts + 1;
      record(live, output.sessionId, { kind: 'restart', restarts, exit: output.exit.reason });
      live.sessions.get(output.sessionId)?.machine.send({ type: 'agent.restarting', restarts });
      const reason = output.exit.reason as { kind?: unknown } | null;
      const exitKind = typeof reason === 'object' && reason !== null && typeof reason.kind === 'string' ? reason.kind : 'unknown';
      live.input.onEvent?.({ type: 'session.restarting', sessionId: output.sessionId, restarts, exit, exitKind });
      notify(live, output.sessionId, 'warning', `${agent} restarted`, `The agent process ended (${exit}). acp-warden is restarting it (restart ${restarts}) and resuming the conversation.`);
      return;
    }
    case 'session.recovered': {
      record(live, output.sessionId, { kind: 'recovered', restarts: output.restarts });
      const session = live.sessions.get(output.sessionId);
      // The new process starts from its defaults: it gets every choice of the user again, before any prompt.
      const requests = session && live.context ? reapplyRequests(output.sessionId, stateOf(session), { onlyDifferences: false }) : [];
      if (session && requests.length === 0) session.machine.send({ type: 'agent.recovered', restarts: output.restarts });
      live.input.onEvent?.({ type: 'session.recovered', sessionId: output.sessionId, restarts: output.restarts });
      notify(live, output.sessionId, 'info', `${agent} is back`, `The conversation was resumed after restart ${output.restarts}; the next prompt continues it.`);
      // (With nothing to re-apply, `agent.recovered` above released what waited: turns.ts, `turns.release`.)
      if (session && requests.length > 0 && live.context) startReapply(live, session, requests, live.context);
      return;
    }
    case 'session.failed': {
      // The prompts it sent the agent down the session's line, unanswered: answered as the agent answers what it still owed.
      if (output.error) live.sessions.get(output.sessionId)?.prompts.agentGone(output.error);
      record(live, output.sessionId, { kind: 'failed', reason: output.reason });
      // Every agent's failure reaches the editor the same way, journaled like the other notices.
      notify(live, output.sessionId, 'error', `${agent} stopped`, `The agent kept failing after ${output.restarts} restarts; the session is over (${output.reason}). session/load or session/resume starts it again in a new agent process.`);
      safely(live, output.sessionId, (journal) => journal.setState(output.sessionId, 'failed'));
      releaseOwnership(live, output.sessionId);
      dropSession(live, output.sessionId, { type: 'agent.failed', reason: output.reason });
      live.failed.set(output.sessionId, output.reason);
      live.input.onEvent?.({ type: 'session.failed', sessionId: output.sessionId, reason: output.reason });
      return;
    }
  }
}

export type { SessionMachineEvent };
