/**
 * What a hub's clients send: requests (gated by the connection's role in the session: one
 * controller, observers), cancels, answers to the agent's requests; a session's prompts and
 * cancels routed at once (`routeClientEvent`), the rest through the hub's mailbox.
 */
import type { AnyActorRef } from 'xstate';
import type { AgentHandlerEvent, AgentRequestEvent } from '../protocol/native-agent.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { runningSessionSetup } from '../host/host-agent.js';
import { roleOf, takeControl } from './session-roles.js';
import { asksForSubagents } from '../acp/subagent-updates.js';
import { AFTER_META_KEY, HUB_METHODS, type HubConnection, type HubSession, type HubLive, daemonContextOf, lives, requestKey, promptKey, answer, refuse, answerInitialize, toHost, forward, placementMark } from './hub-live.js';
import { route, answerHost, rerouteCalls } from './hub-client-calls.js';
import { attachAndReplay, placeSession } from './hub-attach.js';
import { sessionsOf } from './hub-listing.js';

export function onClientEvent(live: HubLive, connection: HubConnection, event: AgentHandlerEvent): void {
  switch (event.type) {
    case 'initialized':
      connection.context = event.context;
      // The first client that takes subagent sessions: the host's agents are told from now on (those running sessions when they start again).
      if (!live.subagents && asksForSubagents(event.context)) {
        live.subagents = true;
        if (live.initialize) live.host.send({ type: 'initialized', context: daemonContextOf(live) });
      }
      return;
    case 'initialize':
      if (live.initialize) answerInitialize(live, connection.id, event.requestId);
      else live.initializeWaiting.push({ connectionId: connection.id, requestId: event.requestId });
      return;
    case 'session.cancel': {
      if (connection.forwarding?.cancel(event.sessionId, event.requestId)) return;
      const session = live.sessions.get(event.sessionId);
      // Only the controller cancels (a notification: an observer's is dropped).
      if (!session || session.roles.controller !== connection.id) return;
      // A prompt's key at the host is its address (hub-live.ts `promptKey`); another request's the hub keeps.
      const requestId = event.requestId ? (live.requestKeys.get(requestKey(connection.id, event.requestId)) ?? promptKey(live.keyNonce, connection.id, event.requestId, event.sessionId)) : '';
      toHost(live, { ...event, requestId }, event.sessionId);
      return;
    }
    case 'client.response':
    case 'client.error': {
      if (connection.forwarding?.answer(event.key, event.type === 'client.response' ? { result: event.result } : { error: event.error })) return;
      const key = live.callKeys.get(requestKey(connection.id, event.key));
      const call = key === undefined ? undefined : live.calls.get(key);
      if (!call || call.sentTo?.connectionId !== connection.id) return;
      live.callKeys.delete(requestKey(connection.id, event.key));
      const reason = event.type === 'client.error' ? (event.error.data as { reason?: unknown } | undefined)?.reason : undefined;
      if (reason === 'closed' || reason === 'peer_lost' || reason === 'input_ended' || reason === 'shutdown') {
        // The connection went before it could answer: someone else may.
        call.sentTo = undefined;
        route(live, call, connection.id);
        return;
      }
      answerHost(live, call, { ...event, key: call.key });
      return;
    }
    case 'ext.notification':
      live.host.send(event);
      return;
    default:
      onClientRequest(live, connection, event);
  }
}

/**
 * A connection's line to the hub for a prompt or a cancel of a session (connection-agent.ts
 * `connectionSessionRoute`): the hub's routing of it (the controller's check, its key at the
 * host agent) done at once, in the connection's own step, and the prompt or cancel sent down
 * the host agent's line to the session's machine; the hub's mailbox and the connection agent
 * are not on its path. `false`: anything else, or a connection the hub does not know (yet):
 * it goes through the connection agent and the hub's mailbox.
 */
export function routeClientEvent(hub: AnyActorRef, connectionId: string, event: AgentHandlerEvent): boolean {
  const live = lives.get(hub);
  const connection = live?.connections.get(connectionId);
  if (!live || !connection || hub.getSnapshot().status !== 'active' || (event.type !== 'session.prompt' && event.type !== 'session.cancel')) return false;
  onClientEvent(live, connection, event);
  return true;
}

export function onClientRequest(live: HubLive, connection: HubConnection, request: AgentRequestEvent): void {
  const sessionId = typeof request.params.sessionId === 'string' ? request.params.sessionId : undefined;
  // A session this connection reaches on its owner host: everything about it goes there.
  if (sessionId !== undefined && connection.forwarding?.request(request, sessionId)) return;
  const session = sessionId === undefined ? undefined : live.sessions.get(sessionId);
  switch (request.type) {
    case 'session.new': {
      const { placed, request: unmarked } = placementMark(request);
      const self = live.input.placementSelf?.();
      // A session another host placed here is made here; one of this host's own clients (v1 or v2) may go elsewhere.
      if (live.input.routing && self && !placed) return placeSession(live, live.input.routing, connection, unmarked, self);
      forward(live, connection, unmarked, { kind: 'new', connectionId: connection.id, requestId: request.requestId, sessionId });
      return;
    }
    case 'session.fork':
      forward(live, connection, request, { kind: 'new', connectionId: connection.id, requestId: request.requestId, sessionId });
      return;
    case 'session.load':
    case 'session.resume': {
      const meta = request.params._meta as Record<string, unknown> | undefined;
      const after = request.type === 'session.load' ? 0 : meta?.[AFTER_META_KEY];
      if (after !== undefined && !(Number.isSafeInteger(after) && (after as number) >= 0)) {
        refuse(live, connection, request.requestId, RpcError.invalidParams(`_meta["${AFTER_META_KEY}"] must be the seq of the last update seen (an integer ≥ 0), got ${JSON.stringify(after)}`));
        return;
      }
      const attachment = { connectionId: connection.id, requestId: request.requestId, sessionId: sessionId as string, after: after === undefined ? -1 : (after as number), asked: request };
      // A session the host agent runs now: attached and answered here, as the host agent would answer it (no round trip through it).
      const setup = sessionId === undefined ? undefined : runningSessionSetup(live.host, sessionId);
      if (setup) return attachAndReplay(live, connection, attachment, { type: 'acp.respond', requestId: request.requestId, result: setup });
      const { [AFTER_META_KEY]: _after, ...rest } = meta ?? {};
      const params = { ...request.params, ...(meta ? { _meta: rest } : {}) };
      // Only in the journal (or being opened or closed): the host agent opens it on its agent; the history is this connection's own replay.
      const resume: AgentRequestEvent = { ...request, type: 'session.resume', method: AGENT_METHODS.session_resume, params };
      forward(live, connection, resume, { kind: 'attach', ...attachment });
      return;
    }
    case 'session.prompt':
    case 'session.setMode':
    case 'session.setConfigOption':
    case 'toolCall.cancel':
    case 'terminal.cancel': {
      const refusal = controllerRefusal(session, sessionId, connection.id, request.method);
      if (refusal) return refuse(live, connection, request.requestId, refusal);
      const kind = request.type === 'session.prompt' ? 'prompt' : 'plain';
      if (kind === 'prompt' && session) {
        session.prompts++;
        live.promptsInFlight++;
        session.lastActivity = Date.now();
      }
      forward(live, connection, request, { kind, connectionId: connection.id, requestId: request.requestId, sessionId });
      return;
    }
    case 'session.close':
    case 'session.delete': {
      // The controller, or a connection not attached to it (`warden sessions --close`); never an observer.
      if (session && roleOf(session.roles, connection.id) === 'observer') {
        return refuse(live, connection, request.requestId, notController(sessionId as string, session, request.method));
      }
      forward(live, connection, request, { kind: 'close', connectionId: connection.id, requestId: request.requestId, sessionId, asked: request });
      return;
    }
    case 'ext.request':
      if (request.method === HUB_METHODS.sessions) {
        return sessionsOf(live, (listed) =>
          listed.ok
            ? answer(live, connection, request.requestId, undefined, { sessions: listed.value })
            : refuse(live, connection, request.requestId, RpcError.internalError(`the journal could not be read: ${(listed.error as Error)?.message ?? String(listed.error)}`)));
      }
      if (request.method === HUB_METHODS.takeControl) return takeControlOf(live, connection, request);
      if (request.method === HUB_METHODS.closeSession) {
        if (sessionId === undefined) return refuse(live, connection, request.requestId, RpcError.invalidParams('sessionId (a string) is required'));
        if (session && roleOf(session.roles, connection.id) === 'observer') return refuse(live, connection, request.requestId, notController(sessionId, session, request.method));
        const close: AgentRequestEvent = { ...request, type: 'session.close', method: AGENT_METHODS.session_close, params: { sessionId } };
        forward(live, connection, close, { kind: 'close', connectionId: connection.id, requestId: request.requestId, sessionId, asked: request });
        return;
      }
      forward(live, connection, request, { kind: 'plain', connectionId: connection.id, requestId: request.requestId, sessionId });
      return;
    default:
      forward(live, connection, request, { kind: 'plain', connectionId: connection.id, requestId: request.requestId, sessionId });
  }
}

/** Why a connection may not act on a session (prompt, cancel, mode, config), if it may not. */
export function controllerRefusal(session: HubSession | undefined, sessionId: string | undefined, connectionId: string, method: string): RpcError | undefined {
  if (sessionId === undefined) return undefined; // the host agent answers what is wrong
  const role = session ? roleOf(session.roles, connectionId) : undefined;
  if (role === 'controller') return undefined;
  if (role === 'observer') return notController(sessionId, session as HubSession, method);
  return RpcError.because('not_attached', `session ${sessionId} is not attached to this connection: session/load or session/resume it first, then ${method}`, { sessionId });
}

export function notController(sessionId: string, session: HubSession, method: string): RpcError {
  return RpcError.because('not_controller', `this connection observes session ${sessionId}: only its controller may ${method} (take control with ${HUB_METHODS.takeControl})`, { sessionId, controller: session.roles.controller ?? null });
}

export function takeControlOf(live: HubLive, connection: HubConnection, request: AgentRequestEvent): void {
  const sessionId = request.params.sessionId;
  const session = typeof sessionId === 'string' ? live.sessions.get(sessionId) : undefined;
  const roles = session ? takeControl(session.roles, connection.id) : undefined;
  if (!session || !roles) {
    refuse(live, connection, request.requestId, RpcError.because('not_attached', `session ${String(sessionId)} is not attached to this connection: session/load or session/resume it first`, { sessionId: sessionId ?? null }));
    return;
  }
  const previous = session.roles.controller;
  session.roles = roles;
  answer(live, connection, request.requestId, session.sessionId, { role: 'controller' });
  // What the agent asked the previous controller is the new one's to answer now.
  if (previous !== undefined) rerouteCalls(live, session.sessionId, previous);
}
