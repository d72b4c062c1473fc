/**
 * An agent server's traffic with its handler: requests handed to it (and the defaults of those
 * it does not handle), a bare agent's session turns (bare-turns.ts), and what the handler says
 * back (answers checked against the schema, updates, requests to the client), delivered to the
 * editor with the protocol's bookkeeping (sessions, a delegated initialize).
 */
import type { AgentCapabilities, SessionUpdate } from '@agentclientprotocol/sdk';
import { type AnyActorRef } from 'xstate';
import { respond, respondError, sendNotification, sendRequest } from '../jsonrpc/connection.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError, toRpcError, type ErrorObject } from '../jsonrpc/rpc-error.js';
import { BareTurns } from './bare-turns.js';
import { AGENT_METHODS, agentRequests, CLIENT_METHODS, UNSTABLE_AGENT_METHODS, unstableAgentRequests } from '../protocol/methods.js';
import { schemaOf } from './schemas.js';
import { clientAllows } from './capability-gate.js';
import { handlerEventTypes, type AgentEventContext, type AgentHandlerEvent, type AgentHandlerOutput, type NativeAgent, type TurnEntry } from '../protocol/native-agent.js';
import { updatesWithTurns } from '../session/cursor.js';
import { type PendingRequest, type Live, SEQ_META_KEY, defaultCancelGraceMs, guarded, livesByHandler, noteReplayed, sync, requestOf, requestsHandedOn, settled } from './server-live.js';
import { withReplayMarker } from './replay-complete.js';
import { startDraining, checkDrained } from './server-draining.js';
import { subagentRouting } from './subagent-updates.js';
import { gateUpdate, withoutUnsupportedOptions } from './update-gate.js';
import { onV2TurnJournaled, relayV2Update, v2TurnObserved, v2Answer, v2PermissionAnswered, v2PermissionAsked, v2ReplayComplete, v2StateSnapshot } from './v2-edge.js';
import { initializeResponseToV2 } from './v2-initialize.js';
import { v2RetryJoined } from './v2-retries.js';
import { sendRelayed } from './relay-link.js';
import { permissionRequestToV2 } from './v2-permission.js';
import { coreResultToV2 } from './v2-requests.js';
import { v2ErrorObject } from './v2-errors.js';
import type { InitializeResponse, RequestPermissionRequest } from '@agentclientprotocol/sdk';
import { memberTextOf, withMemberText } from '../jsonrpc/json-text.js';

/** The permission answer of an editor that can no longer write: cancelled (ACP's outcome for a turn that ends). */
export const cancelledPermission = { outcome: { outcome: 'cancelled' } };

/** Hands a request to the handler (or answers it by default when the handler has no transition for it). */
export function dispatch(live: Live, key: string, method: string, params: Record<string, unknown>): void {
  const type = method.startsWith('_') ? 'ext.request' : handlerEventTypes[method as keyof typeof handlerEventTypes];
  const event = { type, requestId: key, method, params, context: live.context as AgentEventContext };
  if (method === AGENT_METHODS.session_prompt && routed(live, params.sessionId as string, event as AgentHandlerEvent)) return;
  if (!handles(live.handler, event)) {
    unhandled(live, key, method);
    return;
  }
  live.handler.send(event);
}

/** Whether a handler machine has a transition for `event` (other logic is assumed to). */
export function handles(handler: AnyActorRef, event: { type: string }): boolean {
  const snapshot = handler.getSnapshot() as { can?: (event: { type: string }) => boolean };
  if (typeof snapshot.can !== 'function') return true;
  try {
    return snapshot.can(event);
  } catch {
    return true;
  }
}

/** Defaults for requests the handler does not handle, as the seed documents them. */
export function unhandled(live: Live, key: string, method: string): void {
  if (method === AGENT_METHODS.session_new) {
    answer(live, key, { sessionId: `session-${live.nextSession++}` });
    return;
  }
  failRequest(live, key, RpcError.internalError(`the agent does not implement ${method}`));
}

/** Answers `initialize` from what the agent advertises, and opens the connection. */
export function completeInitialize(live: Live, rpcId: JsonRpcId): void {
  const context = live.context as AgentEventContext;
  const inputEnded = live.phase.value === 'initializing' ? live.phase.inputEnded : undefined;
  live.phase = { value: 'ready' };
  sync(live);
  // Terminal auth methods only for clients that can run them.
  const authMethods = live.authMethods.filter((method) => (method as { type?: string }).type !== 'terminal' || context.clientCapabilities.auth?.terminal === true);
  const answer = {
    protocolVersion: context.protocolVersion,
    agentCapabilities: live.capabilities,
    authMethods,
    agentInfo: live.agentInfo,
  };
  respond(live.connection, rpcId, live.v2 ? initializeResponseToV2(answer as InitializeResponse, live.agentInfo) : answer);
  live.handler.send({ type: 'initialized', context });
  live.serveHeld();
  if (inputEnded) startDraining(live, inputEnded);
}

/** A bare agent's session turns, carried out with this server: the handler gets the turn and the cancel, the editor the answer. */
export function bareTurns(live: Live, sessionId: string): BareTurns {
  return new BareTurns(sessionId, {
    parent: live.scope.self,
    agent: live.name,
    cancelGraceMs: live.input.agent.cancelGraceMs ?? defaultCancelGraceMs,
    send: (request) => {
      const pending = requestOf(live, request.requestId);
      if (pending) dispatch(live, request.requestId, pending.method, request.params);
    },
    cancel: (requestId) => {
      const event = { type: 'session.cancel', sessionId, requestId, context: live.context as AgentEventContext };
      if (!handles(live.handler, event)) return false;
      live.handler.send(event);
      return true;
    },
    // A decided answer goes out as it is (deliver), not back through answer()/failRequest(): its
    // prompt may be abandoned already (the grace ran out), and those take it for the late answer and drop it.
    answer: (requestId, outcome) => ('error' in outcome ? deliverError(live, requestId, RpcError.fromErrorObject(outcome.error)) : deliver(live, requestId, outcome.result)),
  });
}

/**
 * The bare agent's session whose turns hold this prompt: running, waiting, or answered without
 * the handler (the grace ran out: its late answer only leaves the turns).
 */
export function bareOf(live: Live, key: string): BareTurns | undefined {
  const request = requestOf(live, key);
  if (request && request.method !== AGENT_METHODS.session_prompt) return undefined;
  // A pending prompt names its session; one answered already may be any session's.
  const candidates = request?.sessionId ? [live.sessions.get(request.sessionId)] : live.sessions.values();
  for (const session of candidates) if (session?.bare?.holds(key)) return session.bare;
  return undefined;
}

/** What the handler says, taken as its listener takes it: a fault in the handling stays here (`guarded`). */
export function handOutput(live: Live, event: AgentHandlerOutput): void {
  guarded(live, () => onHandlerOutput(live, event));
}

/**
 * A line straight to the server's handling of its handler's outputs (the handler's listener's
 * work, as a call), for a handler whose outputs another actor makes: a hub's connection agent,
 * whose answers, updates and agent requests the hub delivers from its cursor for the
 * connection. So neither the hub's mailbox nor the handler's is on an update's way to the
 * editor. Callable from any actor's step, as that listener is; `undefined`: `handler` is no
 * server's handler.
 */
export function outputLineOf(handler: AnyActorRef): ((output: AgentHandlerOutput) => void) | undefined {
  const live = livesByHandler.get(handler);
  return live && ((output) => handOutput(live, output));
}

export function onHandlerOutput(live: Live, event: AgentHandlerOutput): void {
  if (live.phase.value === 'closed' || live.phase.value === 'closing') return;
  switch (event.type) {
    case 'acp.respond':
    case 'acp.error': {
      const v2 = live.v2 && v2Answer(live, live.v2, event.requestId, event.type === 'acp.respond' ? { result: event.result } : { error: event.error });
      if (v2?.kind === 'turnEnded') return;
      if (v2?.kind === 'refused') deliverError(live, event.requestId, v2.error);
      else if (event.type === 'acp.respond') answer(live, event.requestId, event.result);
      else failRequest(live, event.requestId, RpcError.fromErrorObject(event.error));
      return;
    }
    case 'session.turnJournaled':
      // A relay link's client renders it itself (relay-link.ts), as v1 has no message for it.
      if (live.relay) return sendRelayed(live, event);
      if (event.observed) return observeTurn(live, event.sessionId, event.seq, event.entry);
      if (live.v2) onV2TurnJournaled(live, live.v2, event.sessionId, event.requestId, event.seq, event.entry);
      return;
    case 'session.promptJoined':
      if (live.relay) sendRelayed(live, event);
      else if (live.v2) v2RetryJoined(live, event.requestId, event.seq);
      return;
    case 'acp.update':
      relayUpdate(live, event.sessionId, event.update, event.seq, memberTextOf(event, 'update'));
      return;
    case 'acp.updates':
      for (const { sessionId, update } of event.updates) relayUpdate(live, sessionId, update, undefined);
      return;
    case 'acp.clientRequest':
      requestClient(live, event.key, event.method, event.params);
      return;
    case 'acp.notify':
      sendNotification(live.connection, event.method, event.params);
      return;
    case 'acp.replayComplete':
      if (live.relay) sendRelayed(live, event);
      else if (live.v2) v2ReplayComplete(live, live.v2, event.sessionId, event.seq);
      else noteReplayed(live, event.requestId, event.seq);
      return;
  }
}

/**
 * Another connection's turn (a hub's observer, or a client after its prompt's connection went):
 * its prompt and its end, as this editor's version shows them (v1: the prompt's
 * `user_message_chunk`s and the turn-end `session_info_update`; v2: v2-edge.ts).
 */
function observeTurn(live: Live, sessionId: string, seq: number, entry: TurnEntry): void {
  if (live.v2) return v2TurnObserved(live, live.v2, sessionId, seq, entry);
  for (const update of updatesWithTurns(entry)) relayUpdate(live, sessionId, update, seq);
}

/** A session update to the editor (`seq`: its journal entry, sent as `_meta["acp-warden/seq"]`). */
export function relayUpdate(live: Live, journalSessionId: string, journaled: SessionUpdate, seq: number | undefined, text?: string): void {
  if (live.sessions.get(journalSessionId)?.bare?.lateUpdate(journaled.sessionUpdate)) return; // the turn was cancelled
  // A relay link's client routes and gates the update itself (relay-link.ts): as the journal holds it.
  if (live.relay) return sendUpdate(live, journalSessionId, journaled, seq, text);
  // A subagent child's update goes out under the child's id, to an editor that takes subagents only.
  const routed = subagentRouting(live, journalSessionId, journaled);
  if (!routed) return;
  const { sessionId, update: agentUpdate } = routed;
  const update = gateUpdate(live, agentUpdate);
  if (!update) return;
  if (live.v2) return relayV2Update(live, live.v2, sessionId, update, seq);
  // The journaled text only while the update is the one journaled (a gate may have rewritten it).
  sendUpdate(live, sessionId, update, seq, update === journaled ? text : undefined);
}

/**
 * A v1 `session/update` (`seq`: its journal entry, as `_meta["acp-warden/seq"]`; `text`: the
 * journaled update's JSON, spliced into the line while the update is the one journaled).
 */
function sendUpdate(live: Live, sessionId: string, update: SessionUpdate, seq: number | undefined, text?: string): void {
  const params = seq === undefined ? { sessionId, update } : { sessionId, update, _meta: { [SEQ_META_KEY]: seq } };
  sendNotification(live.connection, CLIENT_METHODS.session_update, text === undefined ? params : withMemberText(params, 'update', text));
}

/** The handler's result (or the server's default) for a request: a bare agent's prompt goes by its turns. */
export function answer(live: Live, key: string, result: unknown): void {
  const bare = bareOf(live, key);
  if (!bare) return deliver(live, key, result);
  // An invalid result is the handler's error (a cancelled prompt still ends `cancelled`).
  const checked = checkedResult(AGENT_METHODS.session_prompt, result);
  bare.settled(key, result, 'error' in checked ? checked.error.toErrorObject() : undefined);
}

/** The handler's error (or the server's) for a request: a bare agent's prompt goes by its turns. */
export function failRequest(live: Live, key: string, error: RpcError): void {
  const bare = bareOf(live, key);
  if (bare) bare.settled(key, undefined, error.toErrorObject());
  else deliverError(live, key, error);
}

/** A result checked against its method's ACP schema: what the schema parsed (`undefined`: it has none), or why it does not conform. */
export function checkedResult(method: string, result: unknown): { readonly parsed: unknown } | { readonly error: RpcError } {
  const stable = agentRequests[method as keyof typeof agentRequests];
  const types = stable ?? unstableAgentRequests[method as keyof typeof unstableAgentRequests];
  if (!types) return { parsed: undefined };
  const checked = schemaOf(types.result, stable ? 'stable' : 'unstable').safeParse(result ?? {});
  if (checked.success) return { parsed: checked.data };
  return { error: RpcError.internalError(`the agent produced an invalid ${method} result`, { issues: (checked.error as { issues?: unknown })?.issues }) };
}

/** Sends a result, after the protocol's bookkeeping and a schema check. */
export function deliver(live: Live, key: string, result: unknown): void {
  const request = requestOf(live, key);
  if (!request) return; // already answered (say, when the cancel grace ran out)
  if (request.method === AGENT_METHODS.initialize) {
    // A delegated initialize: advertise what the handler found; the version stays negotiated here.
    const found = (result ?? {}) as { agentCapabilities?: AgentCapabilities; authMethods?: NativeAgent['authMethods']; agentInfo?: NativeAgent['agentInfo'] };
    settled(live, request);
    live.capabilities = found.agentCapabilities ?? live.capabilities;
    live.authMethods = found.authMethods ?? live.authMethods;
    live.agentInfo = found.agentInfo ?? live.agentInfo;
    completeInitialize(live, request.rpcId);
    return;
  }
  const checked = checkedResult(request.method, result);
  if ('error' in checked) return deliverError(live, key, checked.error);
  // What goes out is what the schema parsed: unknown root fields stay home (ACP: use _meta).
  // A relay link's client gates the options itself (relay-link.ts): its capabilities are its host's to read.
  const value = checked.parsed === undefined ? result : live.relay ? checked.parsed : withoutUnsupportedOptions(live, checked.parsed);
  settled(live, request);
  trackSessions(live, request, value as Record<string, unknown>);
  // v2: a resumed session's current state comes before the answer.
  if (live.v2 && (request.method === AGENT_METHODS.session_load || request.method === AGENT_METHODS.session_resume)) v2StateSnapshot(live, live.v2, request.sessionId as string);
  // v1: a whole replay says so on its answer (v2 was told by its replay_complete update).
  respond(live.connection, request.rpcId, live.v2 ? (coreResultToV2(request.method, value) ?? {}) : withReplayMarker(request, value ?? {}));
  if (request.method.startsWith('session/')) sync(live);
  checkDrained(live);
}

/** Sends an error answer; a refused delegated initialize lets the editor try again. */
export function deliverError(live: Live, key: string, error: RpcError): void {
  const request = requestOf(live, key);
  if (!request) return;
  settled(live, request);
  respondError(live.connection, request.rpcId, live.v2 ? RpcError.fromErrorObject(v2ErrorObject(error.toErrorObject())) : error);
  if (request.method === AGENT_METHODS.initialize && live.phase.value === 'initializing') {
    // The agent refused initialize: the editor may try again; what waited is refused as uninitialized.
    const { inputEnded } = live.phase;
    live.phase = { value: 'awaitingInitialize' };
    sync(live);
    live.serveHeld();
    if (inputEnded) startDraining(live, inputEnded);
  }
  checkDrained(live);
}

export function trackSessions(live: Live, request: PendingRequest, result: Record<string, unknown>): void {
  const setup = (sessionId: string) => {
    const known = live.sessions.get(sessionId);
    live.sessions.set(sessionId, {
      id: sessionId,
      hasModes: result?.modes !== undefined && result.modes !== null,
      hasConfigOptions: Array.isArray(result?.configOptions) && result.configOptions.length > 0,
      bare: known ? known.bare : live.input.agent.ownsTurns ? undefined : bareTurns(live, sessionId),
      route: undefined,
    });
  };
  switch (request.method) {
    case AGENT_METHODS.session_new:
    case UNSTABLE_AGENT_METHODS.session_fork:
      if (typeof result?.sessionId === 'string') setup(result.sessionId);
      return;
    case AGENT_METHODS.session_load:
    case AGENT_METHODS.session_resume:
      setup(request.sessionId as string);
      return;
    case AGENT_METHODS.session_close:
    case AGENT_METHODS.session_delete: {
      const sessionId = request.sessionId as string;
      const session = live.sessions.get(sessionId);
      // What the closed session still owes is answered (before the close itself), then it is forgotten.
      if (session?.bare) {
        session.bare.close();
        stopBare(live, session.bare);
      }
      live.sessions.delete(sessionId);
      return;
    }
    default:
      return;
  }
}

export function requestClient(live: Live, key: string, method: string, params: unknown): void {
  const caps = live.context?.clientCapabilities ?? {};
  if (!clientAllows(caps, method, params)) {
    const error: ErrorObject = RpcError.methodNotFound(method).toErrorObject();
    live.handler.send({ type: 'client.error', key, error: { ...error, message: `The client did not advertise support for ${method}` } });
    return;
  }
  const edge = live.v2;
  const asking = edge && method === CLIENT_METHODS.session_request_permission ? (params as RequestPermissionRequest).sessionId : undefined;
  if (edge && asking !== undefined) v2PermissionAsked(live, edge, asking);
  const answered = () => {
    if (edge && asking !== undefined) v2PermissionAnswered(live, edge, asking);
  };
  sendRequest(live.connection, method, asking === undefined ? params : permissionRequestToV2(params as RequestPermissionRequest)).then(
    (result) => {
      answered();
      live.handler.send({ type: 'client.response', key, result });
    },
    (error: unknown) => {
      answered();
      // The editor can no longer write, so it cannot answer: a permission is cancelled, and the turn goes on to its end.
      const inputEnded = (error as RpcError | undefined)?.data as { reason?: string } | undefined;
      if (method === CLIENT_METHODS.session_request_permission && inputEnded?.reason === 'input_ended') {
        live.handler.send({ type: 'client.response', key, result: cancelledPermission });
        return;
      }
      live.handler.send({ type: 'client.error', key, error: toRpcError(error).toErrorObject() });
    },
  );
}

/**
 * Answers everything pending with `error`: a bare agent's prompts get what their session's
 * turns decide for a failed session (a cancelled one still ends `cancelled`), the rest in the
 * order it came.
 */
export function failAllPending(live: Live, error: RpcError): void {
  for (const session of live.sessions.values()) session.bare?.fail(error.toErrorObject());
  for (const { key } of requestsHandedOn(live)) deliverError(live, key, error);
}

/** Stops a bare agent session's machine (a child of the server). */
export function stopBare(live: Live, bare: BareTurns): void {
  bare.release();
  if (bare.machine.getSnapshot().status === 'active') live.scope.stopChild(bare.machine);
}

/**
 * Sends a session's prompt or cancel down the line a handler that owns its turns hands out
 * (`NativeAgent.routeSession`: the host agent's, straight to the session's machine), so that
 * the handler's own mailbox is not on each prompt's path; `false`: the handler gets it.
 */
export function routed(live: Live, sessionId: string, event: AgentHandlerEvent): boolean {
  const { agent } = live.input;
  const session = live.sessions.get(sessionId);
  if (!agent.ownsTurns || !agent.routeSession || !session) return false;
  if (session.route === undefined) session.route = agent.routeSession(live.handler, sessionId) ?? null;
  return session.route?.send(event) ?? false;
}
