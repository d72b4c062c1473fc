/**
 * What the editor sends an agent server: `initialize` first (answered by the server, or by the
 * handler when it delegates it), requests gated then handed to the handler (or, for a bare
 * agent's prompt, to its session's turns; for a handler that owns its turns, down its line),
 * cancels, extension notifications, and what waited behind a delegated initialize.
 */
import type { ClientCapabilities } from '@agentclientprotocol/sdk';
import { respondError } from '../jsonrpc/connection.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { parserOf } from './schemas.js';
import { type AgentEventContext } from '../protocol/native-agent.js';
import { type Live, sync, guarded, handOn, requestByRpcId } from './server-live.js';
import { paramsParsers, gate } from './request-gate.js';
import { dispatch, handles, completeInitialize, routed } from './server-answers.js';
import { negotiate } from './v2-negotiation.js';
import { v2OnlyMethods, v2RequestToCore } from './v2-requests.js';
import { clientContextOfV2 } from './v2-initialize.js';
import { v2Edge } from './v2-connection.js';
import { optsInToSubagents } from './subagent-updates.js';
import { asksForRelay } from './relay-link.js';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';

/** A v2 connection's `initialize` after another request: refused as the SDK's router refuses it (the previous one stays in effect). */
const repeatRefused = { kind: 'refused', error: RpcError.invalidRequest('ACP v2 initialize must not be repeated after other requests') } as const;

export function onRequest(live: Live, rpcId: JsonRpcId, sentMethod: string, rawParams: Record<string, unknown>): void {
  let params = rawParams;
  let method = sentMethod;
  if (method === AGENT_METHODS.initialize) {
    const negotiation = live.v2?.requested ? repeatRefused : negotiate(params.protocolVersion, rpcId, live.input.agent.protocolVersions ?? [1], live.context?.protocolVersion);
    if (negotiation.kind === 'refused') {
      respondError(live.connection, rpcId, negotiation.error);
      return;
    }
    if (negotiation.kind === 'v2') {
      initializeV2(live, rpcId, params);
      return;
    }
    try {
      params = withUnknownCapabilities(parserOf('InitializeRequest')(params) as Record<string, unknown>, rawParams);
    } catch (error) {
      respondError(live.connection, rpcId, error);
      return;
    }
    // A peer host's link for its ACP v2 client (docs/cluster.md, "Routing"): served on a hub connection only.
    live.relay = live.input.agent.servesPeerLinks === true && asksForRelay(rawParams);
    initialize(live, rpcId, params);
    return;
  }
  if (live.phase.value === 'closing') {
    respondError(live.connection, rpcId, RpcError.internalError('the agent is shutting down'));
    return;
  }
  if (live.phase.value === 'initializing') {
    // Pipelined behind initialize (written before its answer came): served once it is answered.
    live.held.push({ kind: 'request', rpcId, method, params });
    return;
  }
  if ((live.phase.value !== 'ready' && live.phase.value !== 'draining') || !live.context) {
    respondError(live.connection, rpcId, RpcError.invalidRequest(`ACP connection must be initialized before '${method}'`));
    return;
  }
  if (live.v2) {
    live.v2.requested = true;
    // A v2 editor's request, as the core names and shapes it (v2-requests.ts).
    const core = v2RequestToCore(method, params);
    if (core instanceof RpcError) {
      respondError(live.connection, rpcId, core);
      return;
    }
    ({ method, params } = core);
  } else if (v2OnlyMethods.includes(method) && !live.relay) {
    // A relay link carries the core's requests of a v2 client (its tool_call/cancel, terminal/cancel); a v1 editor has none.
    respondError(live.connection, rpcId, RpcError.methodNotFound(method));
    return;
  }
  const parser = paramsParsers[method];
  if (parser) {
    try {
      params = parser(params) as Record<string, unknown>;
    } catch (error) {
      respondError(live.connection, rpcId, error);
      return;
    }
  }
  const refusal = gate(live, method, params);
  if (refusal) {
    respondError(live.connection, rpcId, refusal);
    return;
  }
  const sessionId = typeof params.sessionId === 'string' ? params.sessionId : undefined;
  // A bare agent's turns are its session machine's (bare-turns.ts); a handler that owns its turns decides them itself.
  const bare = sessionId ? live.sessions.get(sessionId)?.bare : undefined;
  // ACP: session/close cancels work as if session/cancel had been sent, then frees (delete too).
  if (bare && (method === AGENT_METHODS.session_close || method === AGENT_METHODS.session_delete)) bare.cancel();
  const key = handOn(live, rpcId, sessionId);
  bare?.asked();
  if (bare && method === AGENT_METHODS.session_prompt) {
    bare.came(key, params);
    return;
  }
  dispatch(live, key, method, params);
}

/**
 * A v1 editor's client capabilities beyond the stable v1 schema's, which that schema drops as
 * unknown keys: kept as the editor sent them, so that they reach the agent (ACP: capabilities
 * not understood are ignored, never stripped on the way; issue 30). `subagents` (ACP's unstable
 * subagent sessions) is kept only when it opts in, an object, as the spec says (docs/acp.md,
 * "Subagent sessions"). The keys the schema knows stay as it parsed them.
 */
function withUnknownCapabilities(parsed: Record<string, unknown>, raw: Record<string, unknown>): Record<string, unknown> {
  const given = raw.clientCapabilities;
  if (typeof given !== 'object' || given === null || Array.isArray(given)) return parsed;
  const known = (parsed.clientCapabilities ?? {}) as Record<string, unknown>;
  const unknown = Object.entries(given as Record<string, unknown>).filter(([key, value]) => !(key in known) && value !== undefined && (key !== 'subagents' || optsInToSubagents(value)));
  if (unknown.length === 0) return parsed;
  return { ...parsed, clientCapabilities: { ...known, ...Object.fromEntries(unknown) } };
}

export function initialize(live: Live, rpcId: JsonRpcId, params: Record<string, unknown>): void {
  const supported = [...(live.input.agent.protocolVersions ?? [1])].sort((a, b) => a - b);
  const requested = params.protocolVersion as number;
  const protocolVersion = supported.includes(requested) ? requested : (supported.at(-1) as number);
  const clientCapabilities = (params.clientCapabilities ?? {}) as ClientCapabilities;
  live.v2 = undefined;
  live.context = {
    protocolVersion,
    clientCapabilities,
    clientInfo: params.clientInfo as AgentEventContext['clientInfo'],
  };
  openConnection(live, rpcId, params);
}

/**
 * An `initialize` that opened ACP v2: the context the core keeps is the version-neutral one
 * (v2-initialize.ts: v2's info and capabilities, unknown keys and `_meta` kept), the
 * connection renders for v2 from now on (v2-edge.ts).
 */
function initializeV2(live: Live, rpcId: JsonRpcId, params: Record<string, unknown>): void {
  const context = clientContextOfV2(params as unknown as V2.InitializeRequest);
  live.context = context as AgentEventContext;
  // A repeated initialize (the SDK's router allows it, for 2 or later) keeps the connection's
  // turns, permissions and work: the sessions and their turns go on under it.
  live.v2 = live.v2 ?? v2Edge();
  live.relay = false;
  openConnection(live, rpcId, { protocolVersion: context.protocolVersion, clientCapabilities: context.clientCapabilities, ...(context.clientInfo ? { clientInfo: context.clientInfo } : {}) });
}

/** Answers `initialize` (`params`: as the core reads them), or asks the handler when it delegates it. */
function openConnection(live: Live, rpcId: JsonRpcId, params: Record<string, unknown>): void {
  if (live.input.agent.delegateInitialize) {
    // The handler learns what to advertise from elsewhere (a downstream agent): ask it.
    const key = handOn(live, rpcId, undefined);
    live.phase = { value: 'initializing' };
    sync(live);
    live.handler.send({ type: 'initialize', requestId: key, method: AGENT_METHODS.initialize, params, context: live.context as AgentEventContext });
    return;
  }
  completeInitialize(live, rpcId);
}

/**
 * The editor's `initialize` was answered (or refused): what it sent meanwhile is served now, in
 * the order it came; after a refusal each request gets the error of a request before initialize.
 */
export function serveHeld(live: Live): void {
  for (const message of live.held.splice(0)) {
    if (message.kind === 'request') guarded(live, () => onRequest(live, message.rpcId, message.method, message.params), message.rpcId);
    else onNotification(live, message.method, message.params);
  }
}

export function onNotification(live: Live, method: string, params: unknown): void {
  if (live.phase.value === 'initializing') {
    live.held.push({ kind: 'notification', method, params });
    return;
  }
  if (live.phase.value !== 'ready') return;
  if (method === AGENT_METHODS.session_cancel) {
    cancelTurns(live, (params as { sessionId: string }).sessionId, undefined);
    return;
  }
  if (method.startsWith('_')) live.handler.send({ type: 'ext.notification', method, params });
}

export function onCancelRequested(live: Live, rpcId: JsonRpcId): void {
  const request = requestByRpcId(live, rpcId);
  // A prompt still waiting its turn ends alone; the running one is cancelled on the handler.
  if (request?.method === AGENT_METHODS.session_prompt && request.sessionId) cancelTurns(live, request.sessionId, request.key);
}

/** A cancel for a handler that owns its turns (`requestId`: the prompt, or `''` for all of the session's). */
function forwardCancel(live: Live, sessionId: string, requestId: string): void {
  const event = { type: 'session.cancel', sessionId, requestId, context: live.context as AgentEventContext } as const;
  if (routed(live, sessionId, event)) return;
  if (handles(live.handler, event)) live.handler.send(event);
}


/**
 * `session/cancel` (`requestId` undefined) or a `$/cancel_request` of one prompt: the session's
 * turns decide, a bare agent's session machine or the handler that owns them.
 */
export function cancelTurns(live: Live, sessionId: string, requestId: string | undefined): void {
  const bare = live.sessions.get(sessionId)?.bare;
  if (bare) bare.cancel(requestId);
  else if (live.input.agent.ownsTurns) forwardCancel(live, sessionId, requestId ?? '');
}
