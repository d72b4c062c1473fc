/**
 * What the real agents send the host agent: answers (settled against what the host asked), updates, lifecycle facts.
 */
import type { AgentCapabilities, SessionUpdate } from '@agentclientprotocol/sdk';
import { CLIENT_METHODS } from '../../protocol/methods.js';
import type { AgentHandlerOutput } from '../../protocol/native-agent.js';
import type { ErrorObject } from '../../jsonrpc/rpc-error.js';
import { reapplyRequests } from '../../session/reapply.js';
import { lateTurnUpdate } from '../../session/turn-queue.js';
import type { SessionMachineContext } from '../../session/session-machine.js';
import type { HostJournal } from '../../journal/host-journal.js';
import { type ClientCall, type Live, type Pending } from './live.js';
import { keySeparator } from './live.js';
import { emit, fail } from './delivery.js';
import { journalUpdate } from './journal-writes.js';
import { withHostCapabilities } from './inner-agents.js';
import { attached, unadopt } from './attach.js';
import { endAttach, interruption, releaseAttaches } from './attach-jobs.js';
import { releaseOwnership } from './ownership.js';
import { listed } from './listing.js';
import { abandon, forget, journalNewSession } from './fork-delete.js';
import { closed, dropSession, openSession, reportSetup, stateOf, currentSetup } from './session-record.js';
import { changeState, inheritChoices, reapplyAnswered, reportUpdate, settingAnswered, startReapply } from './session-settings.js';
import { lifecycle } from './notices.js';
import { notify } from './notify.js';
import { journalFailureAnswers, safely } from './journal-writes.js';
import { promptAnswered } from './turns.js';
import { journalingSession, recordChild } from './subagents.js';
import { childUpdate, noteAnnouncement, taggedChild } from '../../session/subagent-tree.js';

export function onInnerOutput(live: Live, agent: string, output: AgentHandlerOutput): void {
  switch (output.type) {
    case 'acp.respond':
      settle(live, output.requestId, output.result, undefined);
      return;
    case 'acp.error':
      settle(live, output.requestId, undefined, output.error);
      return;
    case 'acp.update':
      onUpdate(live, agent, output.sessionId, output.update);
      return;
    case 'acp.updates':
      for (const { sessionId, update } of output.updates) onUpdate(live, agent, sessionId, update);
      return;
    case 'acp.clientRequest': {
      const key = `${agent}${keySeparator}${output.key}`;
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      const call: ClientCall = { agent, key: output.key, sessionId: typeof sessionId === 'string' ? sessionId : undefined, method: output.method, params: output.params };
      live.clientCalls.set(key, call);
      if (call.method === CLIENT_METHODS.session_request_permission && call.sessionId) live.sessions.get(call.sessionId)?.machine.send({ type: 'permission.asked' });
      emit(live, { ...output, key });
      return;
    }
    case 'acp.notify':
      emit(live, output);
      return;
    case 'agent.lineDropped':
      live.input.onEvent?.({ ...output, agent });
      return;
    case 'session.resumeState': {
      safely(live, output.sessionId, (journal) => journal.setResume(output.sessionId, output.state));
      const session = live.sessions.get(output.sessionId);
      if (session) changeState(live, session, { type: 'resume.changed', resume: output.state });
      return;
    }
    case 'session.restarting':
    case 'session.recovered':
    case 'session.failed':
      // A session the editor closed is over: what its agent still reports of it is not news.
      if (!live.sessions.has(output.sessionId) && live.closed.has(output.sessionId)) return;
      lifecycle(live, agent, output);
      return;
  }
}

/**
 * An agent's update: journaled, and shown once on record; not when it is not news (a replay, a
 * cancelled turn's) or the session does not run here (closed, moved to another host, stopped,
 * failed, never opened): nothing the journal does not hold reaches a client.
 */
function onUpdate(live: Live, agent: string, sentSessionId: string, sentUpdate: SessionUpdate): void {
  // A subagent child's update is its parent's entry, tagged with the child (subagents.ts); a
  // passthrough may hand it so already (it knows the children its agent announced).
  const sessionId = journalingSession(live, sentSessionId);
  const update = sessionId === sentSessionId ? sentUpdate : childUpdate(sentSessionId, sentUpdate);
  const own = sessionId === sentSessionId && taggedChild(sentUpdate) === undefined;
  const session = live.sessions.get(sessionId);
  // An agent's replay is not news, but the children it announces are: a child that runs on after a restart is routed again.
  const announced = session ? noteAnnouncement(live.subagents, sentSessionId, sentUpdate) : undefined;
  if (session && announced) recordChild(live, sessionId, sentSessionId, announced, session.agent, sentUpdate);
  if (session?.replaying) return;
  if (!session) {
    // Its `session/new` or `session/fork` not answered yet (a passthrough may deliver updates first): held until it is.
    if (settingUp(live, agent)) live.held.set(agent, [...(live.held.get(agent) ?? []), { type: 'acp.update', sessionId: sentSessionId, update: sentUpdate }]);
    // Else its agent may still be winding down a turn (the editor closed the session, another
    // host took it): the journal does not have these, nor may this host write them. (Found by
    // the chaos walk, and by a host woken from SIGSTOP: issue 28.)
    return;
  }
  // What the agent still says of a cancelled turn its machine answered is not news (nor journaled).
  if (lateTurnUpdate((session.machine.getSnapshot().context as SessionMachineContext).turns, update.sessionUpdate)) return;
  if (update.sessionUpdate === 'notice' && own) {
    // An agent's own notice (Claude or Codex started a new conversation) is a notice too, not conversation.
    const { severity, title, description } = update as unknown as { severity: 'info' | 'warning' | 'error'; title: string; description?: string | null };
    notify(live, sessionId, severity, title, description ?? undefined);
    return;
  }
  if (own) reportUpdate(live, session, update);
  journalUpdate(live, sessionId, update);
}

/** An answer from a real agent: journal what it means, then pass it on. */
export function settle(live: Live, requestId: string, result: unknown, error: ErrorObject | undefined): void {
  const pending = live.pending.get(requestId);
  // Every request the host sends an agent is pending here but a prompt: its session's turns owe its answer.
  if (!pending) return promptAnswered(live, requestId, result, error);
  const editorRequestId = pending?.kind === 'list' ? pending.job.requestId : requestId;
  const sessionId = pending && 'sessionId' in pending ? pending.sessionId : undefined;
  journalFailureAnswers(live, editorRequestId, sessionId, () => settlePending(live, requestId, pending, result, error));
  // A new session being journaled releases what was held once it is (see settlePending).
  if ((pending?.kind === 'new' || pending?.kind === 'fork') && !live.pending.has(requestId)) releaseHeld(live, pending.agent);
}

/** Whether `agent` has a `session/new` or `session/fork` unanswered. */
function settingUp(live: Live, agent: string): boolean {
  for (const pending of live.pending.values()) if ((pending.kind === 'new' || pending.kind === 'fork') && pending.agent === agent) return true;
  return false;
}

/** The updates held while `agent` set a session up, taken again now that it was answered (a failed one's are dropped: it is closed). */
function releaseHeld(live: Live, agent: string): void {
  const held = live.held.get(agent);
  if (!held) return;
  live.held.delete(agent);
  for (const output of held) onInnerOutput(live, agent, output);
}

function settlePending(live: Live, requestId: string, pending: Pending | undefined, result: unknown, error: ErrorObject | undefined): void {
  live.pending.delete(requestId);
  if (!pending) return;
  switch (pending.kind) {
    case 'initialize': {
      const advertised = (result as { agentCapabilities?: AgentCapabilities } | undefined)?.agentCapabilities;
      const inner = live.inner.get(pending.agent);
      if (inner && !error && advertised) inner.capabilities = advertised;
      if (!pending.editor) {
        const waiting = inner?.waiting ?? [];
        if (inner) inner.waiting = undefined;
        if (inner && live.context) inner.ref.send({ type: 'initialized', context: live.context });
        for (const event of waiting) inner?.ref.send(event);
        return;
      }
      if (error) return fail(live, requestId, error);
      const found = (result ?? {}) as { agentCapabilities?: AgentCapabilities };
      emit(live, { type: 'acp.respond', requestId, result: { ...(result as object), agentCapabilities: withHostCapabilities(found.agentCapabilities ?? {}) } });
      return;
    }
    case 'new':
    case 'fork': {
      if (error) return fail(live, requestId, error);
      const sessionId = (result as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof sessionId !== 'string') return emit(live, { type: 'acp.respond', requestId, result });
      const { agent, cwd } = pending;
      // Still setting up until journaled: what the agent says of the session meanwhile is held (see `settingUp`).
      live.pending.set(requestId, pending);
      const create = (journal: HostJournal) => (pending.kind === 'fork' ? journal.forkSession({ sessionId, agent, cwd, from: pending.from }) : journal.createSession({ sessionId, agent, cwd }));
      journalNewSession(live, pending, sessionId, create, (refusal, created) => {
        live.pending.delete(requestId);
        if (refusal) fail(live, requestId, refusal);
        else {
          const session = openSession(live, sessionId, agent, 0, undefined, created?.owner);
          reportSetup(session, result);
          // A fork goes on as its source was set: the source's choices are the fork's (journaled for it, as its copy has none).
          const source = pending.kind === 'fork' ? live.sessions.get(pending.from) : undefined;
          if (source) inheritChoices(live, session, stateOf(source).chosen);
          session.machine.send({ type: 'ready' });
          live.input.onEvent?.({ type: 'session.opened', sessionId, agent, how: pending.kind });
          emit(live, { type: 'acp.respond', requestId, result });
        }
        releaseHeld(live, agent);
      });
      return;
    }
    case 'delete':
      if (error) fail(live, requestId, error);
      else forget(live, requestId, pending.sessionId);
      if (pending.holds) releaseAttaches(live, pending.sessionId);
      return;
    case 'abandon':
      return;
    case 'setting': {
      if (error) return fail(live, requestId, error);
      const session = live.sessions.get(pending.sessionId);
      // Answered: the user's choice is the session's now, journaled to be put back on every new agent process.
      if (session) settingAnswered(live, session, pending.modeId, pending.config, result);
      emit(live, { type: 'acp.respond', requestId, result });
      return;
    }
    case 'reapply':
      reapplyAnswered(live, pending, result, error);
      return;
    case 'attach': {
      const session = live.sessions.get(pending.sessionId);
      if (session) session.replaying = false;
      const { interrupted } = pending.job;
      if (error || interrupted) {
        dropSession(live, pending.sessionId, { type: 'agent.failed', reason: error?.message ?? `session ${interrupted}` });
        // Closed or deleted while its agent opened it: closed there again (the editor was not told it opened).
        if (!error && interrupted) abandon(live, pending.agent, pending.sessionId, pending.context);
        releaseOwnership(live, pending.sessionId);
        if (error) unadopt(live, pending.sessionId, pending.adopted);
        fail(live, requestId, error ?? interruption(pending.sessionId, pending.how, interrupted as 'closed' | 'deleted'));
        return endAttach(live, pending.job);
      }
      reportSetup(session, result);
      // The agent answered with its defaults: the user's journaled choices go back first, then the answer shows them.
      const requests = session ? reapplyRequests(pending.sessionId, stateOf(session), { onlyDifferences: true }) : [];
      if (session && requests.length > 0) {
        session.afterReapply.push(() => attached(live, requestId, pending, { ...(result as object | undefined), ...currentSetup(session) }));
        startReapply(live, session, requests, pending.context);
        return;
      }
      attached(live, requestId, pending, result ?? {});
      return;
    }
    case 'list':
      listed(live, pending.job, pending.index, result, error);
      return;
    case 'close':
      closed(live, pending.sessionId);
      if (error) fail(live, requestId, error);
      else emit(live, { type: 'acp.respond', requestId, result: result ?? {} });
      if (pending.holds) releaseAttaches(live, pending.sessionId);
      return;
    case 'other':
      if (error) return fail(live, requestId, error);
      emit(live, { type: 'acp.respond', requestId, result });
  }
}
