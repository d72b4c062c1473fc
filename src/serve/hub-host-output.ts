/**
 * What a hub's host agent says: updates (to each attached connection's cursor), answers (back
 * to the connection that asked, with the session attached), each turn's journal entries (to
 * the connections that did not send the prompt as observed turns; to the one that did, its
 * prompt's insertion, which a v2 client's server acknowledges), the agent's requests to a client.
 */
import { PARENT_SESSION_META_KEY, type AgentHandlerOutput, type TurnEntry } from '../protocol/native-agent.js';
import { taggedChild } from '../session/subagent-tree.js';
import { attached } from './session-roles.js';
import { type HubSession, type HubCall, type HubLive, daemonContextOf, requestKey, answerInitialize, sessionRecord, openedSession, ownPromptIn, ownPromptOfKey } from './hub-live.js';
import { route } from './hub-client-calls.js';
import { attachConnection, attachAndReplay, routeAttach, routeClose } from './hub-attach.js';
import { armIdle, hibernateOverCap } from './hub-idle.js';

export function onHostUpdate(live: HubLive, output: Extract<AgentHandlerOutput, { type: 'acp.update' }>): void {
  const session = live.sessions.get(output.sessionId);
  if (!session) return; // nobody attached it yet: an attach replays it from the journal
  session.lastActivity = Date.now();
  const parentClients = attached(session.roles);
  for (const id of parentClients) live.connections.get(id)?.subscriber.deliver(output.sessionId, output, output.seq);
  // A subagent child's update also reaches those attached to the child alone (its cursor follows the parent's journal).
  const child = taggedChild(output.update);
  const childSession = child === undefined ? undefined : live.sessions.get(child);
  if (!child || !childSession) return;
  for (const id of attached(childSession.roles)) if (!parentClients.includes(id)) live.connections.get(id)?.subscriber.deliver(child, output, output.seq);
}

export function onHostOutput(live: HubLive, output: AgentHandlerOutput): void {
  switch (output.type) {
    case 'acp.update':
      onHostUpdate(live, output);
      return;
    case 'acp.updates':
      // The host agent shows updates one by one; a batch is taken apart all the same.
      for (const { sessionId, update } of output.updates) onHostUpdate(live, { type: 'acp.update', sessionId, update });
      return;
    case 'acp.respond':
    case 'acp.error':
      onHostAnswer(live, output);
      return;
    case 'acp.clientRequest': {
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      const call: HubCall = { key: output.key, sessionId: typeof sessionId === 'string' ? sessionId : undefined, method: output.method, params: output.params, sentTo: undefined, waiting: false };
      live.calls.set(output.key, call);
      route(live, call);
      return;
    }
    case 'acp.notify': {
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      const session = typeof sessionId === 'string' ? live.sessions.get(sessionId) : undefined;
      const to = session ? attached(session.roles) : [...live.connections.keys()];
      for (const id of to) live.connections.get(id)?.deliver(output);
      return;
    }
    case 'session.turnJournaled':
      onTurnJournaled(live, output.sessionId, output.requestId, output.seq, output.entry);
      return;
    case 'session.promptJoined': {
      // A retry that joined a keyed prompt: its own connection hears it (a v2 one acknowledges the retry now), in its place after what was journaled before.
      const prompt = ownPromptIn(live, output.requestId, output.sessionId);
      if (prompt) live.connections.get(prompt.connectionId)?.subscriber.deliver(output.sessionId, { ...output, requestId: prompt.requestId });
      return;
    }
    default:
      return; // facts for the host itself (restarts, resume state, dropped lines)
  }
}

export function onHostAnswer(live: HubLive, output: Extract<AgentHandlerOutput, { type: 'acp.respond' | 'acp.error' }>): void {
  answerFromHost(live, output);
  // A session opened (new, load, resume, takeover) may put the hub past its cap of live sessions.
  if (output.type === 'acp.respond') hibernateOverCap(live);
}

function answerFromHost(live: HubLive, output: Extract<AgentHandlerOutput, { type: 'acp.respond' | 'acp.error' }>): void {
  const request = live.requests.get(output.requestId) ?? ownPromptOfKey(live, output.requestId);
  if (!request) return;
  live.requests.delete(output.requestId);
  if (request.kind === 'initialize') {
    live.initialize = output.type === 'acp.respond' ? { result: output.result } : { error: output.error };
    if (output.type === 'acp.respond') live.host.send({ type: 'initialized', context: daemonContextOf(live) });
    for (const waiting of live.initializeWaiting.splice(0)) answerInitialize(live, waiting.connectionId, waiting.requestId);
    return;
  }
  if (request.kind === 'takeover') {
    // Ours now, with nobody attached: idle until a client attaches (another host may have won it: nothing to do then).
    if (output.type === 'acp.respond') armIdle(live, sessionRecord(live, request.sessionId));
    return;
  }
  if (request.kind === 'idleClose') {
    // Its agent process stops too when no other session is open on it (the host decides).
    if (request.agent !== undefined) live.host.send({ type: 'host.releaseAgent', agent: request.agent });
    return;
  }
  live.requestKeys.delete(requestKey(request.connectionId, request.requestId));
  const session = request.sessionId === undefined ? undefined : live.sessions.get(request.sessionId);
  if (request.kind === 'prompt') promptEnded(live, session);
  const connection = live.connections.get(request.connectionId);
  const out = { ...output, requestId: request.requestId };
  if (request.kind === 'close' && output.type === 'acp.respond' && request.sessionId !== undefined) {
    // Closed (or deleted) on its agent: nobody is attached any more; the journal keeps it (a close) for the next attach.
    live.sessions.delete(request.sessionId);
  }
  const opened = output.type === 'acp.respond' ? openedSession(request, output.result) : undefined;
  if (!connection) {
    // Gone before the answer: a session it opened runs with nobody attached (idle from now); a prompt's end is in the journal, shown to whoever attaches.
    if (opened !== undefined) armIdle(live, sessionRecord(live, opened));
    return;
  }
  if (request.kind === 'new' && output.type === 'acp.respond') {
    const sessionId = opened;
    if (typeof sessionId !== 'string') return void connection.deliver(out);
    attachConnection(live, connection, sessionId);
    connection.deliver(out);
    // What the agent said before its answer reached here (commands, modes) is in the journal.
    connection.subscriber.replay(sessionId, { after: 0, withPrompts: false, done: () => undefined, failed: () => undefined });
    return;
  }
  if (request.kind === 'attach' && output.type === 'acp.respond') {
    // A subagent child (the host names its parent): its cursors read its parent's journal.
    const parent = ((output.result as { _meta?: Record<string, unknown> } | undefined)?._meta ?? {})[PARENT_SESSION_META_KEY];
    if (typeof parent === 'string' && request.sessionId !== undefined) live.children.set(request.sessionId, parent);
  }
  if (request.kind === 'attach' && output.type === 'acp.respond') return attachAndReplay(live, connection, request, { type: 'acp.respond', requestId: request.requestId, result: output.result });
  const ownedElsewhere = output.type === 'acp.error' && (output.error.data as { reason?: unknown } | undefined)?.reason === 'session_owned';
  if (request.kind === 'attach' && ownedElsewhere && live.input.routing) {
    return routeAttach(live, live.input.routing, request, { ...(output as Extract<AgentHandlerOutput, { type: 'acp.error' }>), requestId: request.requestId });
  }
  if (request.kind === 'close' && ownedElsewhere && live.input.routing && request.sessionId !== undefined) {
    return routeClose(live, live.input.routing, request, request.sessionId, { ...(output as Extract<AgentHandlerOutput, { type: 'acp.error' }>), requestId: request.requestId });
  }
  connection.subscriber.deliver(request.sessionId, out);
}

export function onTurnJournaled(live: HubLive, sessionId: string, hostKey: string, seq: number, entry: TurnEntry): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  // Named by the prompt's key (not a record: a turn's end may be told after its answer).
  const prompt = ownPromptIn(live, hostKey, sessionId);
  for (const id of attached(session.roles)) {
    const subscriber = live.connections.get(id)?.subscriber;
    if (!subscriber) continue;
    if (id === prompt?.connectionId) {
      subscriber.journaled(sessionId, seq, entry);
      // Its own prompt inserted: a v2 connection acknowledges it now (a v1 one ignores it), after what was journaled before it.
      if (entry.kind === 'prompt') subscriber.deliver(sessionId, { type: 'session.turnJournaled', sessionId, requestId: prompt.requestId, seq, entry });
      continue;
    }
    // Another connection's turn (or one whose connection is gone): its prompt and its end are news here, each connection renders them in its version.
    subscriber.deliver(sessionId, { type: 'session.turnJournaled', sessionId, requestId: hostKey, seq, entry, observed: true }, seq);
  }
}

export function promptEnded(live: HubLive, session: HubSession | undefined): void {
  live.promptsInFlight--;
  if (session) {
    session.prompts--;
    session.lastActivity = Date.now();
    if (attached(session.roles).length === 0) armIdle(live, session);
  }
  if (live.promptsInFlight === 0) for (const resolve of live.drained.splice(0)) resolve();
}

// The agent's requests to a client
