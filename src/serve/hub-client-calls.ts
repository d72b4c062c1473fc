/**
 * The agent's requests to a hub's clients (permission, files, terminals): sent to the session's
 * controller, passed on when it leaves, answered by the unattended policy when nobody controls it.
 */
import type { AgentHandlerEvent } from '../protocol/native-agent.js';
import { CLIENT_METHODS } from '../protocol/methods.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { HubEvent } from './hub-events.js';
import { defaultUnattendedPolicy, denied } from './unattended-policy.js';
import { type HubCall, type HubLive, requestKey } from './hub-live.js';

/** Sends the call to the session's controller (not `except`), or follows the unattended policy. */
export function route(live: HubLive, call: HubCall, except?: string): void {
  const session = call.sessionId === undefined ? undefined : live.sessions.get(call.sessionId);
  const controller = session?.roles.controller;
  const connection = controller !== undefined && controller !== except ? live.connections.get(controller) : undefined;
  if (connection) {
    if (call.waiting) live.scope.system.scheduler.cancel(live.scope.self, `unattended:${call.key}`);
    call.waiting = false;
    const connectionKey = `k${live.nextKey++}`;
    call.sentTo = { connectionId: connection.id, connectionKey };
    live.callKeys.set(requestKey(connection.id, connectionKey), call.key);
    connection.subscriber.deliver(call.sessionId, { type: 'acp.clientRequest', key: connectionKey, method: call.method, params: call.params });
    return;
  }
  if (call.method !== CLIENT_METHODS.session_request_permission) {
    answerHost(live, call, { type: 'client.error', key: call.key, error: RpcError.because('no_controller', `no client controls session ${call.sessionId ?? '(none)'} now, so nobody can serve ${call.method}`, { sessionId: call.sessionId ?? null }).toErrorObject() });
    return;
  }
  const policy = live.input.unattended ?? defaultUnattendedPolicy;
  if (policy.policy === 'deny') return answerHost(live, call, { type: 'client.response', key: call.key, result: denied(call.params) });
  if (call.waiting) return;
  call.waiting = true;
  live.scope.system.scheduler.schedule(live.scope.self, live.scope.self, { type: 'hub.unattended', key: call.key } satisfies HubEvent as never, policy.timeoutMs, `unattended:${call.key}`);
}

export function answerHost(live: HubLive, call: HubCall, event: Extract<AgentHandlerEvent, { type: 'client.response' | 'client.error' }>): void {
  if (call.waiting) live.scope.system.scheduler.cancel(live.scope.self, `unattended:${call.key}`);
  live.calls.delete(call.key);
  live.host.send(event);
}

// Idle sessions

/** What the agent asked `connectionId` in the session and it did not answer goes to whoever controls the session now (or waits). */
export function rerouteCalls(live: HubLive, sessionId: string, connectionId: string): void {
  for (const call of live.calls.values()) {
    if (call.sessionId !== sessionId || call.sentTo?.connectionId !== connectionId) continue;
    live.callKeys.delete(requestKey(connectionId, call.sentTo.connectionKey));
    call.sentTo = undefined;
    route(live, call);
  }
}

// From the clients
