/**
 * A session's record in the host: its chart opened, closed, dropped; what its chart says of its setup.
 */
import type { SessionConfigOption, SessionModeState } from '@agentclientprotocol/sdk';
import { forgetChildren } from '../../session/subagent-tree.js';
import { createActor } from 'xstate';
import { sessionMachine, type SessionMachineContext, type SessionMachineEvent } from '../../session/session-machine.js';
import { type ChosenSettings, type SessionState, setupOf } from '../../session/session-state.js';
import type { JournalSession } from '../../journal/journal.js';
import type { HostSession, Live } from './live.js';
import { interruptAttaches } from './attach-jobs.js';
import { releaseOwnership } from './ownership.js';
import { promptServices } from './turns.js';
import { SessionPrompts } from '../../session/session-prompts.js';
import { unwatchUpdates } from './inner-agents.js';
import { record, safely } from './journal-writes.js';
import { defaultCancelGraceMs } from '../../supervision/cancel-grace.js';

/** A live session's modes and config options, as its agent last reported them: what load and resume of it answer. */
export function currentSetup(session: HostSession): { modes?: SessionModeState; configOptions?: SessionConfigOption[] } {
  return setupOf(stateOf(session));
}

/** The session's state, as its chart holds it. */
export function stateOf(session: HostSession): SessionState {
  return (session.machine.getSnapshot().context as SessionMachineContext).state;
}

/** What a session setup answer (new, load, resume, fork) says about modes and config options, for the session's chart. */
export function reportSetup(session: HostSession | undefined, result: unknown): void {
  const { modes, configOptions } = (result ?? {}) as { modes?: SessionModeState | null; configOptions?: SessionConfigOption[] | null };
  session?.machine.send({ type: 'setup.reported', ...(modes !== undefined ? { modes } : {}), ...(configOptions !== undefined ? { configOptions } : {}) });
}

/**
 * Opens the session's chart in this host. `owner`: who owns it as the journal said once this
 * host created or claimed it (absent on a store without owners, SQLite): the chart keeps it for
 * the live view.
 */
export function openSession(live: Live, sessionId: string, agent: string, restarts: number, journaled?: { readonly chosen: ChosenSettings; readonly resume: unknown }, owner?: JournalSession['owner']): HostSession {
  // The host's grace for every session (the one the agent server had): the agent has it to answer a cancelled prompt.
  const cancelGraceMs = live.input.base.cancelGraceMs ?? defaultCancelGraceMs;
  const input = {
    sessionId,
    agent,
    restarts,
    cancelGraceMs,
    ...(journaled ? { chosen: journaled.chosen, resume: journaled.resume } : {}),
    ...(owner ? { owner: { hostId: owner.hostId, epoch: owner.epoch, ...(owner.hostName === undefined ? {} : { hostName: owner.hostName }), here: true } } : {}),
  };
  // The machine keeps its prompts and carries out its turns (session-prompts.ts) with what the host lends it.
  let session: HostSession | undefined;
  const prompts = new SessionPrompts(promptServices(live, () => session as HostSession));
  const machine = createActor(sessionMachine, { parent: live.scope.self, id: `session:${sessionId}`, input });
  prompts.bind(machine);
  const onEvent = live.input.onEvent;
  if (onEvent) {
    let last: unknown;
    machine.subscribe((snapshot) => {
      if (snapshot.value === last) return;
      last = snapshot.value;
      onEvent({ type: 'session.state', sessionId, state: String(snapshot.value) });
    });
  }
  session = { sessionId, agent, machine, prompts, keyed: new Map(), replaying: false, afterReapply: [], route: undefined, updates: undefined };
  machine.start();
  live.sessions.set(sessionId, session);
  live.closed.delete(sessionId);
  return session;
}

export function closed(live: Live, sessionId: string): void {
  record(live, sessionId, { kind: 'closed' });
  safely(live, sessionId, (journal) => journal.setState(sessionId, 'closed'));
  releaseOwnership(live, sessionId);
  endHere(live, sessionId, 'closed');
  live.input.onEvent?.({ type: 'session.closed', sessionId });
}

/**
 * The session was closed or deleted: its chart closes, this host no longer holds it, what its
 * agent still says of it is dropped, and the loads and resumes of it under way answer that.
 */
export function endHere(live: Live, sessionId: string, how: 'closed' | 'deleted'): void {
  dropSession(live, sessionId, { type: 'close' });
  live.closed.add(sessionId);
  interruptAttaches(live, sessionId, how);
}

/** The session leaves this host: its chart gets `last`, its last event. */
export function dropSession(live: Live, sessionId: string, last: SessionMachineEvent): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  // Its machine answers the prompts not answered yet: cancelled on a close, failed on a failure.
  session.machine.send(last);
  live.sessions.delete(sessionId);
  forgetChildren(live.subagents, sessionId);
  unwatchUpdates(session);
  for (const next of session.afterReapply.splice(0)) next();
}
