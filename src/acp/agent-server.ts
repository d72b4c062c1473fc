/**
 * The ACP agent side: what an editor talks to. An actor that serves ACP over a JSON-RPC
 * connection (its child) on behalf of a native agent handler (its other child).
 *
 * The server owns the protocol rules so that handlers cannot break them: `initialize`
 * first, version negotiation, capability gating in both directions (the agent's methods,
 * prompt content, MCP transports; the client's fs, terminal and elicitation), known
 * sessions, results checked against the ACP schema. A handler that owns its turns
 * (`NativeAgent.ownsTurns`: the host agent, whose session machines decide them) gets every
 * prompt and cancel at once (down its `routeSession` line when it has one: straight to the
 * session's machine); the server keeps only the gating and the request ids. A bare native
 * agent's sessions get their turns from the same session machine (bare-turns.ts: one prompt at
 * a time, FIFO, cancel and its grace, the prompt ends `cancelled`, its late turn updates
 * dropped), a child of the server, which sends the handler the turn and the cancel and
 * answers the editor.
 */
import type { AgentCapabilities, ClientCapabilities, SessionUpdate } from '@agentclientprotocol/sdk';
import { createActor, type ActorLogic, type ActorScope, type ActorSystem, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import {
  connectionLogic,
  respond,
  respondError,
  sendNotification,
  sendRequest,
  type ConnectionEmitted,
  type MethodTable,
  type ParamsParser,
  type TimeoutPolicy,
} from '../jsonrpc/connection.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError, toRpcError, type ErrorObject } from '../jsonrpc/rpc-error.js';
import type { PeerLost, Transport } from '../jsonrpc/transport.js';
import { readGateOf, type ReadGate } from '../port/read-gate.js';
import { deliveryGateOf } from '../session/subscriber.js';
import { BareTurns } from './bare-turns.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { shutdownInReverse } from '../supervision/commands.js';
import { AGENT_METHODS, agentNotifications, agentRequests, CLIENT_METHODS, UNSTABLE_AGENT_METHODS, unstableAgentRequests } from './methods.js';
import { parserOf, schemaOf } from './schemas.js';
import { advertisesFork, clientAllows, missingAgentCapability, sessionSetupRefusal, unadvertisedContent } from './capability-gate.js';
import {
  handlerEventTypes,
  type AgentEventContext,
  type AgentHandlerEvent,
  type AgentHandlerOutput,
  type NativeAgent,
  type SessionRoute,
} from './native-agent.js';

/** What an agent server runs on. */
export interface AgentServerInput {
  /** The editor's side: `stdioTransport()` for `warden acp`, a memory pair in tests. */
  readonly transport: Transport;
  readonly agent: NativeAgent;
  readonly name?: string;
  /** Deadlines of the agent's own requests to the client (permission has none by default). */
  readonly timeouts?: TimeoutPolicy;
  /**
   * Once the editor's input ends (EOF), how long what it already asked may still run before
   * the turns in progress are cancelled, in ms (default {@link defaultDrainTimeoutMs}).
   */
  readonly drainTimeoutMs?: number;
}

/** How long requests received before the editor's EOF may still run by default: 30 s. */
export const defaultDrainTimeoutMs = 30_000;
/** After the drain timeout, how long cancelled turns get to end before what is left is answered -32603: 2 s. */
export const drainCancelGraceMs = 2000;
/** The -32603 message of a request still unanswered when draining gives up. */
export const drainGaveUpMessage = 'warden acp is shutting down: the editor closed its input';

/**
 * The phase of an agent server. `initializing`: the editor's `initialize` is with the agent
 * (a delegated initialize); what the editor sends meanwhile waits, in order, for its answer.
 * `draining`: the editor's input ended (EOF); what it asked before is served and answered,
 * then the server closes.
 */
export type AgentServerPhase = 'awaitingInitialize' | 'initializing' | 'ready' | 'draining' | 'closing' | 'closed';

/** Plain facts about an agent server. */
export interface AgentServerContext {
  readonly name: string;
  readonly protocolVersion: number | undefined;
  readonly sessions: number;
  readonly activePrompts: number;
}

/** The snapshot of an agent server; its output is why the editor went away. */
export type AgentServerSnapshot = Snapshot<PeerLost> & { readonly value: AgentServerPhase; readonly context: AgentServerContext };

/** Events of an agent server (internal: timers and closing). */
export type AgentServerEvent =
  | { readonly type: 'acp.closed'; readonly reason: PeerLost }
  /** The editor sends nothing more (EOF) but still reads: what it asked is served, then the server closes. */
  | { readonly type: 'acp.inputEnded'; readonly reason: PeerLost }
  /** Draining: everything the editor asked has been answered. */
  | { readonly type: 'acp.drained' }
  /** Draining took longer than the drain timeout: the turns still running are cancelled. */
  | { readonly type: 'acp.drainTimeout' }
  /** The cancelled turns' grace is over: what is still unanswered gets -32603, the server closes. */
  | { readonly type: 'acp.drainGrace' }
  /** The agent's supervisors have shut down gracefully: the server ends. */
  | { readonly type: 'acp.finish'; readonly reason: PeerLost }
  | { readonly type: 'acp.sync' }
  | { readonly type: typeof SHUTDOWN_EVENT }
  | { readonly type: `xstate.${string}` };

type Scope = ActorScope<AgentServerSnapshot, AgentServerEvent, ActorSystem<any>>;

interface PendingRequest {
  readonly rpcId: JsonRpcId;
  readonly method: string;
  readonly sessionId: string | undefined;
  readonly params: Record<string, unknown>;
}

/** What the editor sent while its `initialize` was with the agent: served in order once it is answered. */
type HeldMessage =
  | { readonly kind: 'request'; readonly rpcId: JsonRpcId; readonly method: string; readonly params: Record<string, unknown> }
  | { readonly kind: 'notification'; readonly method: string; readonly params: unknown };

interface SessionState {
  readonly id: string;
  hasModes: boolean;
  hasConfigOptions: boolean;
  /** A bare native agent's turns, decided and carried out by a session machine (bare-turns.ts); a handler that owns its turns has none here. */
  readonly bare: BareTurns | undefined;
  /** A handler that owns its turns: its line to this session (`NativeAgent.routeSession`), made on first use; `null`: none. */
  route: SessionRoute | null | undefined;
}

/**
 * Where the server stands, with what that phase knows: the editor's input may end while its
 * delegated initialize is with the agent (`initializing`, then draining once it is answered),
 * and `draining` is the server after the editor's input ended.
 */
type Phase =
  | { readonly value: Exclude<AgentServerPhase, 'initializing' | 'draining'> }
  | { readonly value: 'initializing'; readonly inputEnded?: PeerLost }
  | { readonly value: 'draining'; readonly inputEnded: PeerLost };

interface Live {
  readonly scope: Scope;
  readonly input: AgentServerInput;
  readonly name: string;
  /** What the agent advertises; a delegated initialize fills it from the handler's answer. */
  capabilities: AgentCapabilities;
  authMethods: NonNullable<NativeAgent['authMethods']>;
  agentInfo: NativeAgent['agentInfo'];
  readonly connection: AnyActorRef;
  readonly handler: AnyActorRef;
  readonly subscriptions: Subscription[];
  readonly pending: Map<string, PendingRequest>;
  readonly sessions: Map<string, SessionState>;
  /** Requests and notifications that arrived in phase `initializing`, oldest first. */
  readonly held: HeldMessage[];
  context: AgentEventContext | undefined;
  phase: Phase;
  nextKey: number;
  nextSession: number;
  /** Why the agent handler failed, once it did: the server then ends in error, not done. */
  failure: Error | undefined;
}

const lives = new WeakMap<AnyActorRef, Live>();

/**
 * The `_meta` key of a `session/update`'s params that carries the journal sequence number of
 * what it stands for: increasing in a session's order, the same live and in a replay
 * (`session/load`), so that an editor can tell what it has seen. See docs/acp.md.
 */
export const SEQ_META_KEY = 'acp-warden/seq';

/** The gate the server closes while the editor's output is backed up (see `NativeAgent.deliversFromJournal`). */
function backedUpGate(live: Live): ReadGate {
  return live.input.agent.deliversFromJournal ? deliveryGateOf(live.scope.system) : readGateOf(live.scope.system);
}

/** Validators of the params of every agent method, stable and unstable. */
const paramsParsers: Record<string, ParamsParser> = {
  ...Object.fromEntries(Object.entries(agentRequests).map(([method, types]) => [method, parserOf(types.params)])),
  [UNSTABLE_AGENT_METHODS.session_fork]: parserOf(unstableAgentRequests[UNSTABLE_AGENT_METHODS.session_fork].params, 'unstable'),
};

const defaultCancelGraceMs = 5000;

export { advertisesFork } from './capability-gate.js';

/**
 * The methods the connection accepts (others: -32601). Params are validated by the server
 * itself, after the initialize check, so that a request before `initialize` gets -32600
 * whatever its params (as the SDK answers).
 */
function methodTable(agent: NativeAgent): MethodTable {
  const requests: Record<string, ParamsParser | true> = {};
  for (const method of Object.keys(agentRequests)) requests[method] = true;
  for (const method of agent.extensions?.requests ?? []) requests[method] = true;
  // A delegated initialize learns the capabilities later: `gate` refuses fork when they lack it.
  if (advertisesFork(agent.capabilities) || agent.delegateInitialize) requests[UNSTABLE_AGENT_METHODS.session_fork] = true;
  const notifications: Record<string, ParamsParser | true> = {};
  for (const [method, type] of Object.entries(agentNotifications)) notifications[method] = parserOf(type);
  for (const method of agent.extensions?.notifications ?? []) notifications[method] = true;
  return { requests, notifications };
}

/** Actor logic of an ACP agent server: `createActor(agentServerLogic, { input: { transport, agent } })`. */
export const agentServerLogic = gracefulShutdown({
  config: { name: 'acpAgentServer' },
  getInitialSnapshot(scope: Scope, input: AgentServerInput): AgentServerSnapshot {
    if (!input?.transport || !input.agent?.logic || !input.agent.agentInfo) {
      throw new TypeError('Expected the agent server input to have a `transport` and an `agent` with `logic` and `agentInfo`.');
    }
    const connection = createActor(connectionLogic, {
      parent: scope.self,
      id: 'connection',
      input: { transport: input.transport, name: input.name ?? 'editor', methods: methodTable(input.agent), ...(input.timeouts ? { timeouts: input.timeouts } : {}) },
    });
    const handler = createActor(input.agent.logic, { parent: scope.self, id: 'agent', input: input.agent.input });
    const live: Live = {
      scope,
      input,
      name: input.name ?? input.agent.agentInfo.name,
      capabilities: input.agent.capabilities ?? {},
      authMethods: input.agent.authMethods ?? [],
      agentInfo: input.agent.agentInfo,
      connection,
      handler,
      subscriptions: [],
      pending: new Map(),
      sessions: new Map(),
      held: [],
      context: undefined,
      phase: { value: 'awaitingInitialize' },
      nextKey: 1,
      nextSession: 1,
      failure: undefined,
    };
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, value: 'awaitingInitialize', context: summary(live) };
  },
  start(_snapshot: AgentServerSnapshot, scope: Scope): void {
    const live = lives.get(scope.self) as Live;
    live.subscriptions.push(
      live.handler.on('*', (event: AgentHandlerOutput) => guarded(live, () => onHandlerOutput(live, event))),
      live.connection.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) =>
        guarded(live, () => onRequest(live, event.id, event.method, (event.params ?? {}) as Record<string, unknown>), event.id)),
      live.connection.on('rpc.notification', (event: Extract<ConnectionEmitted, { type: 'rpc.notification' }>) => onNotification(live, event.method, event.params)),
      live.connection.on('rpc.cancelRequested', (event: Extract<ConnectionEmitted, { type: 'rpc.cancelRequested' }>) => onCancelRequested(live, event.id)),
      live.connection.on('rpc.closed', (event: Extract<ConnectionEmitted, { type: 'rpc.closed' }>) => scope.self.send({ type: 'acp.closed', reason: event.reason })),
      live.connection.on('rpc.inputEnded', (event: Extract<ConnectionEmitted, { type: 'rpc.inputEnded' }>) => scope.self.send({ type: 'acp.inputEnded', reason: event.reason })),
      // The editor reads slower than we write: a handler that delivers from its journal pauses
      // its delivery (the agents go on); any other handler's agents wait (the read gate).
      live.connection.on('rpc.backpressure', (event: Extract<ConnectionEmitted, { type: 'rpc.backpressure' }>) => {
        if (event.backedUp && live.phase.value !== 'closed') backedUpGate(live).hold(scope.self);
        else backedUpGate(live).release(scope.self);
      }),
      // What the editor sent that could not be served is the owner's to log (acp.dropped).
      live.connection.on('rpc.dropped', (event: Extract<ConnectionEmitted, { type: 'rpc.dropped' }>) => (scope as unknown as { emit: (event: unknown) => void }).emit({ type: 'acp.dropped', reason: event.reason, detail: event.detail })),
    );
    // A handler that fails is a bug in the agent: the editor hears it as internal errors
    // on what was pending, and the server ends in error (its owner decides what happens
    // next: `warden acp` exits 1 naming it), never as if the editor had left.
    live.subscriptions.push(live.handler.subscribe({
      error: (error) => {
        const message = (error as Error)?.message ?? String(error);
        live.failure = new Error(`the agent handler failed: ${message}`, { cause: error });
        failAllPending(live, RpcError.internalError(`the agent failed: ${message}`));
        scope.self.send({ type: 'acp.closed', reason: { message: 'the agent handler failed', exit: { error: String(error) } } });
      },
    }));
    live.handler.start();
    live.connection.start();
  },
  transition(snapshot: AgentServerSnapshot, event: AgentServerEvent, scope: Scope): AgentServerSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    switch (event.type) {
      case 'acp.closed':
        return close(live, snapshot, event.reason);
      case 'acp.inputEnded': {
        const { phase } = live;
        if (phase.value === 'initializing' && !phase.inputEnded) {
          // A delegated initialize still with the agent is waited for, but no longer than the drain timeout.
          live.phase = { value: 'initializing', inputEnded: event.reason };
          scheduleDrainTimeout(live);
        } else startDraining(live, event.reason);
        return withSummary(snapshot, live);
      }
      case 'acp.drained':
        return live.phase.value === 'draining' ? close(live, snapshot, live.phase.inputEnded) : snapshot;
      case 'acp.drainTimeout':
        // The agent never answered initialize: nothing held behind it can be served.
        if (live.phase.value === 'initializing' && live.phase.inputEnded) return close(live, snapshot, live.phase.inputEnded, drainGaveUp());
        if (live.phase.value === 'draining') cancelAllTurns(live);
        return withSummary(snapshot, live);
      case 'acp.drainGrace':
        return live.phase.value === 'draining' ? close(live, snapshot, live.phase.inputEnded, drainGaveUp()) : snapshot;
      case SHUTDOWN_EVENT:
        return close(live, snapshot, { message: 'the agent server was shut down' });
      case 'acp.finish':
        return finish(live, snapshot, event.reason, 'done');
      case 'xstate.stop':
        return finish(live, snapshot, { message: 'the agent server was stopped' }, 'stopped');
      default:
        return withSummary(snapshot, live);
    }
  },
  getPersistedSnapshot(snapshot: AgentServerSnapshot): AgentServerSnapshot {
    return snapshot;
  },
  restoreSnapshot(): AgentServerSnapshot {
    throw new Error('An ACP agent server cannot be restored from a persisted snapshot; create a new one over a live transport.');
  },
} as ActorLogic<AgentServerSnapshot, AgentServerEvent, AgentServerInput, ActorSystem<any>>);

/** The native agent's actor behind a server (the host uses it for its tree and shutdown). */
export function handlerOf(server: AnyActorRef): AnyActorRef | undefined {
  return lives.get(server)?.handler;
}

/** Lets the snapshot catch up with a change made on the data path (rare: sessions, phase). */
function sync(live: Live): void {
  live.scope.self.send({ type: 'acp.sync' });
}

/**
 * Runs a listener's work so that a fault in it (a bug, a value JSON cannot encode) answers
 * the request it concerns with -32603 instead of escaping as an uncaught exception.
 */
function guarded(live: Live, work: () => void, rpcId?: JsonRpcId): void {
  try {
    work();
  } catch (error) {
    if (rpcId !== undefined) respondError(live.connection, rpcId, RpcError.internalError(error instanceof Error ? error.message : String(error)));
  }
}

function summary(live: Live): AgentServerContext {
  let activePrompts = 0;
  if (live.input.agent.ownsTurns) {
    // The handler queues them: the sessions with a prompt unanswered.
    activePrompts = new Set([...live.pending.values()].filter((request) => request.method === AGENT_METHODS.session_prompt).map((request) => request.sessionId)).size;
  } else {
    for (const session of live.sessions.values()) if (session.bare?.running) activePrompts++;
  }
  return { name: live.name, protocolVersion: live.context?.protocolVersion, sessions: live.sessions.size, activePrompts };
}

function withSummary(snapshot: AgentServerSnapshot, live: Live): AgentServerSnapshot {
  return { ...snapshot, value: live.phase.value, context: summary(live) };
}

/**
 * The editor went away or the server was asked to shut down: what the editor still waits for
 * is answered, then the agent's supervisors (`NativeAgent.supervisors`) shut down gracefully,
 * the last started first (each port: stdin closed, SIGTERM, SIGKILL after its budget), and
 * only then does the server end. (`stop()` ends at once, killing.)
 */
function close(live: Live, snapshot: AgentServerSnapshot, reason: PeerLost, refusal = RpcError.because('shutdown', 'Internal error: the agent is shutting down')): AgentServerSnapshot {
  if (live.phase.value === 'closing') return snapshot;
  // What waited behind initialize is refused as shutting down (not as uninitialized when initialize fails below).
  const held = live.held.splice(0);
  failAllPending(live, refusal);
  live.phase = { value: 'closing' };
  // After failAllPending: a delegated initialize refused there may have started draining again.
  const scheduler = live.scope.system.scheduler;
  scheduler.cancel(live.scope.self, 'drain:timeout');
  scheduler.cancel(live.scope.self, 'drain:grace');
  for (const waiting of held) if (waiting.kind === 'request') respondError(live.connection, waiting.rpcId, refusal);
  const self = live.scope.self;
  void shutdownInReverse(live.input.agent.supervisors?.(live.handler) ?? []).finally(() => self.send({ type: 'acp.finish', reason }));
  return withSummary(snapshot, live);
}

function finish(live: Live, snapshot: AgentServerSnapshot, reason: PeerLost, status: 'done' | 'stopped'): AgentServerSnapshot {
  live.phase = { value: 'closed' };
  backedUpGate(live).release(live.scope.self);
  for (const subscription of live.subscriptions) subscription.unsubscribe();
  live.pending.clear();
  for (const session of live.sessions.values()) if (session.bare) stopBare(live, session.bare);
  // Children of custom logic are not stopped by XState: stop them here.
  if (live.handler.getSnapshot().status === 'active') live.scope.stopChild(live.handler);
  if (live.connection.getSnapshot().status === 'active') live.scope.stopChild(live.connection);
  const base = { ...snapshot, value: 'closed' as const, context: summary(live) };
  if (live.failure && status === 'done') return { ...base, status: 'error', error: live.failure } as AgentServerSnapshot;
  return status === 'done' ? ({ ...base, status: 'done', output: reason } as AgentServerSnapshot) : ({ ...base, status: 'stopped' } as AgentServerSnapshot);
}

// ---------------------------------------------------------------------------------------
// Draining: the editor's input ended

/**
 * The editor wrote its last request and half-closed: what it asked is served (prompts run to
 * their end, queued ones too), and the server closes once nothing is left, or after the drain
 * timeout. A delegated initialize still with the agent is waited for first (what was held
 * behind it is served, then draining starts).
 */
function startDraining(live: Live, inputEnded: PeerLost): void {
  if (live.phase.value !== 'ready' && live.phase.value !== 'awaitingInitialize') return;
  live.phase = { value: 'draining', inputEnded };
  // The drain's own deadline starts now (one set while initialize was with the agent gives way to it).
  live.scope.system.scheduler.cancel(live.scope.self, 'drain:timeout');
  scheduleDrainTimeout(live);
  sync(live);
  checkDrained(live);
}

/** Arms the drain timeout (`acp.drainTimeout`, `drainTimeoutMs` from now). */
function scheduleDrainTimeout(live: Live): void {
  const self = live.scope.self;
  live.scope.system.scheduler.schedule(self, self, { type: 'acp.drainTimeout' } satisfies AgentServerEvent, live.input.drainTimeoutMs ?? defaultDrainTimeoutMs, 'drain:timeout');
}

/** What a request still unanswered when draining gives up is answered. */
function drainGaveUp(): RpcError {
  return RpcError.because('shutdown', drainGaveUpMessage);
}

/** Draining and nothing left to answer: the server closes. */
function checkDrained(live: Live): void {
  if (live.phase.value === 'draining' && live.pending.size === 0 && live.held.length === 0) live.scope.self.send({ type: 'acp.drained' });
}

/** The drain timeout passed: every turn still running or queued is cancelled, as by session/cancel. */
function cancelAllTurns(live: Live): void {
  if (live.input.agent.ownsTurns) {
    // The handler queues and runs them: every session with a prompt unanswered is cancelled there.
    const prompted = new Set([...live.pending.values()].filter((request) => request.method === AGENT_METHODS.session_prompt && request.sessionId).map((request) => request.sessionId as string));
    for (const sessionId of prompted) forwardCancel(live, sessionId, '');
  } else {
    for (const session of live.sessions.values()) if (session.bare?.busy) session.bare.cancel();
  }
  const self = live.scope.self;
  if (live.pending.size > 0) live.scope.system.scheduler.schedule(self, self, { type: 'acp.drainGrace' } satisfies AgentServerEvent, Math.min(drainCancelGraceMs, live.input.agent.cancelGraceMs ?? defaultCancelGraceMs), 'drain:grace');
  checkDrained(live);
}

/** The permission answer of an editor that can no longer write: cancelled (ACP's outcome for a turn that ends). */
const cancelledPermission = { outcome: { outcome: 'cancelled' } };

// ---------------------------------------------------------------------------------------
// From the editor

function onRequest(live: Live, rpcId: JsonRpcId, method: string, rawParams: Record<string, unknown>): void {
  let params = rawParams;
  if (method === AGENT_METHODS.initialize) {
    try {
      params = parserOf('InitializeRequest')(params) as Record<string, unknown>;
    } catch (error) {
      respondError(live.connection, rpcId, error);
      return;
    }
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
  const key = `r${live.nextKey++}`;
  live.pending.set(key, { rpcId, method, sessionId, params });
  bare?.asked();
  if (bare && method === AGENT_METHODS.session_prompt) {
    bare.came(key, params);
    return;
  }
  dispatch(live, key, method, params);
}

/** Hands a request to the handler (or answers it by default when the handler has no transition for it). */
function dispatch(live: Live, key: string, method: string, params: Record<string, unknown>): void {
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
function handles(handler: AnyActorRef, event: { type: string }): boolean {
  const snapshot = handler.getSnapshot() as { can?: (event: { type: string }) => boolean };
  if (typeof snapshot.can !== 'function') return true;
  try {
    return snapshot.can(event);
  } catch {
    return true;
  }
}

/** Defaults for requests the handler does not handle, as the seed documents them. */
function unhandled(live: Live, key: string, method: string): void {
  if (method === AGENT_METHODS.session_new) {
    answer(live, key, { sessionId: `session-${live.nextSession++}` });
    return;
  }
  failRequest(live, key, RpcError.internalError(`the agent does not implement ${method}`));
}

function initialize(live: Live, rpcId: JsonRpcId, params: Record<string, unknown>): void {
  const supported = [...(live.input.agent.protocolVersions ?? [1])].sort((a, b) => a - b);
  const requested = params.protocolVersion as number;
  const protocolVersion = supported.includes(requested) ? requested : (supported.at(-1) as number);
  const clientCapabilities = (params.clientCapabilities ?? {}) as ClientCapabilities;
  live.context = {
    protocolVersion,
    clientCapabilities,
    clientInfo: params.clientInfo as AgentEventContext['clientInfo'],
  };
  if (live.input.agent.delegateInitialize) {
    // The handler learns what to advertise from elsewhere (a downstream agent): ask it.
    const key = `r${live.nextKey++}`;
    live.phase = { value: 'initializing' };
    sync(live);
    live.pending.set(key, { rpcId, method: AGENT_METHODS.initialize, sessionId: undefined, params });
    live.handler.send({ type: 'initialize', requestId: key, method: AGENT_METHODS.initialize, params, context: live.context });
    return;
  }
  completeInitialize(live, rpcId);
}

/** Answers `initialize` from what the agent advertises, and opens the connection. */
function completeInitialize(live: Live, rpcId: JsonRpcId): void {
  const context = live.context as AgentEventContext;
  const inputEnded = live.phase.value === 'initializing' ? live.phase.inputEnded : undefined;
  live.phase = { value: 'ready' };
  sync(live);
  // Terminal auth methods only for clients that can run them.
  const authMethods = live.authMethods.filter((method) => (method as { type?: string }).type !== 'terminal' || context.clientCapabilities.auth?.terminal === true);
  respond(live.connection, rpcId, {
    protocolVersion: context.protocolVersion,
    agentCapabilities: live.capabilities,
    authMethods,
    agentInfo: live.agentInfo,
  });
  live.handler.send({ type: 'initialized', context });
  serveHeld(live);
  if (inputEnded) startDraining(live, inputEnded);
}

/**
 * The editor's `initialize` was answered (or refused): what it sent meanwhile is served now, in
 * the order it came; after a refusal each request gets the error of a request before initialize.
 */
function serveHeld(live: Live): void {
  for (const message of live.held.splice(0)) {
    if (message.kind === 'request') guarded(live, () => onRequest(live, message.rpcId, message.method, message.params), message.rpcId);
    else onNotification(live, message.method, message.params);
  }
}

/** The protocol's gates, before the handler sees anything. `undefined` lets the request through. */
function gate(live: Live, method: string, params: Record<string, unknown>): RpcError | undefined {
  const caps = live.capabilities;
  if (missingAgentCapability(caps, method)) return RpcError.methodNotFound(method);
  switch (method) {
    case AGENT_METHODS.authenticate: {
      const methods = live.authMethods.filter((entry) => (entry as { type?: string }).type !== 'terminal');
      if (methods.length === 0) return RpcError.methodNotFound(method);
      if (!methods.some((entry) => entry.id === params.methodId)) return RpcError.invalidParams(`unknown auth method ${JSON.stringify(params.methodId)}`);
      return undefined;
    }
    case AGENT_METHODS.session_new:
    case AGENT_METHODS.session_load:
    case AGENT_METHODS.session_resume:
      return sessionSetupGate(live, params);
    case AGENT_METHODS.session_close:
      return knownSession(live, params);
    case UNSTABLE_AGENT_METHODS.session_fork:
      return knownSession(live, params) ?? sessionSetupGate(live, params);
    case AGENT_METHODS.session_set_mode: {
      const unknown = knownSession(live, params);
      if (unknown) return unknown;
      return live.sessions.get(params.sessionId as string)?.hasModes ? undefined : RpcError.invalidParams('this session has no modes');
    }
    case AGENT_METHODS.session_set_config_option: {
      const unknown = knownSession(live, params);
      if (unknown) return unknown;
      return live.sessions.get(params.sessionId as string)?.hasConfigOptions ? undefined : RpcError.invalidParams('this session has no config options');
    }
    case AGENT_METHODS.session_prompt: {
      const unknown = knownSession(live, params);
      if (unknown) return unknown;
      return promptContentGate(caps, params.prompt as Array<{ type: string }>);
    }
    default:
      return undefined; // extensions the agent declared
  }
}

function knownSession(live: Live, params: Record<string, unknown>): RpcError | undefined {
  const sessionId = params.sessionId as string;
  const session = live.sessions.get(sessionId);
  return session ? undefined : RpcError.resourceNotFound(`session ${sessionId}`, { sessionId });
}

function sessionSetupGate(live: Live, params: Record<string, unknown>): RpcError | undefined {
  const refusal = sessionSetupRefusal(live.capabilities, params);
  switch (refusal?.kind) {
    case undefined:
      return undefined;
    case 'cwd_not_absolute':
      return RpcError.invalidParams(`cwd must be an absolute path, got ${JSON.stringify(refusal.cwd)}`);
    case 'additional_directories':
      return RpcError.invalidParams('additionalDirectories is not supported by this agent');
    case 'mcp_transport':
      return RpcError.invalidParams(`${refusal.transport.toUpperCase()} MCP servers are not supported by this agent`);
  }
}

function promptContentGate(caps: AgentCapabilities, prompt: Array<{ type: string }>): RpcError | undefined {
  const type = unadvertisedContent(caps, prompt);
  if (!type) return undefined;
  return RpcError.invalidParams(type === 'resource' ? 'embedded resources are not supported by this agent' : `${type} content is not supported by this agent`);
}

function onNotification(live: Live, method: string, params: unknown): void {
  if (live.phase.value === 'initializing') {
    live.held.push({ kind: 'notification', method, params });
    return;
  }
  if (live.phase.value !== 'ready') return;
  if (method === AGENT_METHODS.session_cancel) {
    const { sessionId } = params as { sessionId: string };
    if (live.input.agent.ownsTurns) forwardCancel(live, sessionId, '');
    else cancelTurns(live, sessionId, undefined);
    return;
  }
  if (method.startsWith('_')) live.handler.send({ type: 'ext.notification', method, params });
}

function onCancelRequested(live: Live, rpcId: JsonRpcId): void {
  for (const [key, request] of live.pending) {
    if (request.rpcId === rpcId && request.method === AGENT_METHODS.session_prompt && request.sessionId) {
      if (live.input.agent.ownsTurns) return forwardCancel(live, request.sessionId, key);
      // A prompt still waiting its turn ends alone; the running one is cancelled on the handler.
      cancelTurns(live, request.sessionId, key);
      return;
    }
  }
}

/** A cancel for a handler that owns its turns (`requestId`: the prompt, or `''` for all of the session's). */
function forwardCancel(live: Live, sessionId: string, requestId: string): void {
  const event = { type: 'session.cancel', sessionId, requestId, context: live.context as AgentEventContext } as const;
  if (routed(live, sessionId, event)) return;
  if (handles(live.handler, event)) live.handler.send(event);
}

/**
 * Sends a session's prompt or cancel down the line a handler that owns its turns hands out
 * (`NativeAgent.routeSession`: the host agent's, straight to the session's machine), so that
 * the handler's own mailbox is not on each prompt's path; `false`: the handler gets it.
 */
function routed(live: Live, sessionId: string, event: AgentHandlerEvent): boolean {
  const { agent } = live.input;
  const session = live.sessions.get(sessionId);
  if (!agent.ownsTurns || !agent.routeSession || !session) return false;
  if (session.route === undefined) session.route = agent.routeSession(live.handler, sessionId) ?? null;
  return session.route?.send(event) ?? false;
}

/** `session/cancel` (`requestId` undefined) or a `$/cancel_request` of one prompt, for a bare agent: its turns decide. */
function cancelTurns(live: Live, sessionId: string, requestId: string | undefined): void {
  live.sessions.get(sessionId)?.bare?.cancel(requestId);
}

/** A bare agent's session turns, carried out with this server: the handler gets the turn and the cancel, the editor the answer. */
function bareTurns(live: Live, sessionId: string): BareTurns {
  return new BareTurns(sessionId, {
    parent: live.scope.self,
    agent: live.name,
    cancelGraceMs: live.input.agent.cancelGraceMs ?? defaultCancelGraceMs,
    send: (request) => {
      const pending = live.pending.get(request.requestId);
      if (pending) dispatch(live, request.requestId, pending.method, pending.params);
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
function bareOf(live: Live, key: string): BareTurns | undefined {
  const request = live.pending.get(key);
  if (live.input.agent.ownsTurns || (request && request.method !== AGENT_METHODS.session_prompt)) return undefined;
  // A pending prompt names its session; one answered already may be any session's.
  const candidates = request?.sessionId ? [live.sessions.get(request.sessionId)] : live.sessions.values();
  for (const session of candidates) if (session?.bare?.holds(key)) return session.bare;
  return undefined;
}

// ---------------------------------------------------------------------------------------
// From the handler

function onHandlerOutput(live: Live, event: AgentHandlerOutput): void {
  if (live.phase.value === 'closed' || live.phase.value === 'closing') return;
  switch (event.type) {
    case 'acp.respond':
      answer(live, event.requestId, event.result);
      return;
    case 'acp.error':
      failRequest(live, event.requestId, RpcError.fromErrorObject(event.error));
      return;
    case 'acp.update':
      relayUpdate(live, event.sessionId, event.update, event.seq);
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
  }
}

/** A session update to the editor (`seq`: its journal entry, sent as `_meta["acp-warden/seq"]`). */
function relayUpdate(live: Live, sessionId: string, agentUpdate: SessionUpdate, seq: number | undefined): void {
  if (live.sessions.get(sessionId)?.bare?.lateUpdate(agentUpdate.sessionUpdate)) return; // the turn was cancelled
  const update = gateUpdate(live, agentUpdate);
  if (!update) return;
  sendNotification(live.connection, CLIENT_METHODS.session_update, seq === undefined ? { sessionId, update } : { sessionId, update, _meta: { [SEQ_META_KEY]: seq } });
}

/** The handler's result (or the server's default) for a request: a bare agent's prompt goes by its turns. */
function answer(live: Live, key: string, result: unknown): void {
  const bare = bareOf(live, key);
  if (!bare) return deliver(live, key, result);
  // An invalid result is the handler's error (a cancelled prompt still ends `cancelled`).
  const checked = checkedResult(AGENT_METHODS.session_prompt, result);
  bare.settled(key, result, 'error' in checked ? checked.error.toErrorObject() : undefined);
}

/** The handler's error (or the server's) for a request: a bare agent's prompt goes by its turns. */
function failRequest(live: Live, key: string, error: RpcError): void {
  const bare = bareOf(live, key);
  if (bare) bare.settled(key, undefined, error.toErrorObject());
  else deliverError(live, key, error);
}

/** A result checked against its method's ACP schema: what the schema parsed (`undefined`: it has none), or why it does not conform. */
function checkedResult(method: string, result: unknown): { readonly parsed: unknown } | { readonly error: RpcError } {
  const stable = agentRequests[method as keyof typeof agentRequests];
  const types = stable ?? unstableAgentRequests[method as keyof typeof unstableAgentRequests];
  if (!types) return { parsed: undefined };
  const checked = schemaOf(types.result, stable ? 'stable' : 'unstable').safeParse(result ?? {});
  if (checked.success) return { parsed: checked.data };
  return { error: RpcError.internalError(`the agent produced an invalid ${method} result`, { issues: (checked.error as { issues?: unknown })?.issues }) };
}

/** Sends a result, after the protocol's bookkeeping and a schema check. */
function deliver(live: Live, key: string, result: unknown): void {
  const request = live.pending.get(key);
  if (!request) return; // already answered (say, when the cancel grace ran out)
  if (request.method === AGENT_METHODS.initialize) {
    // A delegated initialize: advertise what the handler found; the version stays negotiated here.
    const found = (result ?? {}) as { agentCapabilities?: AgentCapabilities; authMethods?: NativeAgent['authMethods']; agentInfo?: NativeAgent['agentInfo'] };
    live.pending.delete(key);
    live.capabilities = found.agentCapabilities ?? live.capabilities;
    live.authMethods = found.authMethods ?? live.authMethods;
    live.agentInfo = found.agentInfo ?? live.agentInfo;
    completeInitialize(live, request.rpcId);
    return;
  }
  const checked = checkedResult(request.method, result);
  if ('error' in checked) return deliverError(live, key, checked.error);
  // What goes out is what the schema parsed: unknown root fields stay home (ACP: use _meta).
  const value = checked.parsed === undefined ? result : withoutUnsupportedOptions(live, checked.parsed);
  live.pending.delete(key);
  trackSessions(live, request, value as Record<string, unknown>);
  respond(live.connection, request.rpcId, value ?? {});
  if (request.method.startsWith('session/')) sync(live);
  checkDrained(live);
}

/** Sends an error answer; a refused delegated initialize lets the editor try again. */
function deliverError(live: Live, key: string, error: RpcError): void {
  const request = live.pending.get(key);
  if (!request) return;
  live.pending.delete(key);
  respondError(live.connection, request.rpcId, error);
  if (request.method === AGENT_METHODS.initialize && live.phase.value === 'initializing') {
    // The agent refused initialize: the editor may try again; what waited is refused as uninitialized.
    const { inputEnded } = live.phase;
    live.phase = { value: 'awaitingInitialize' };
    sync(live);
    serveHeld(live);
    if (inputEnded) startDraining(live, inputEnded);
  }
  checkDrained(live);
}

function trackSessions(live: Live, request: PendingRequest, result: Record<string, unknown>): void {
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
      setup(request.params.sessionId as string);
      return;
    case AGENT_METHODS.session_close:
    case AGENT_METHODS.session_delete: {
      const sessionId = request.params.sessionId as string;
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

/**
 * Updates the client did not ask for: `compaction_*` without `session.compaction` are
 * dropped; a `notice` without `session.notices` becomes a short agent message signed by
 * acp-warden (`noticeAsText`: the editor still learns what happened); boolean config options
 * without `configOptions.boolean` are left out.
 */
function gateUpdate(live: Live, update: SessionUpdate): SessionUpdate | undefined {
  const session = live.context?.clientCapabilities.session as { notices?: unknown; compaction?: unknown } | undefined;
  switch (update.sessionUpdate) {
    case 'compaction_update':
    case 'compaction_summary_chunk':
      return session?.compaction ? update : undefined;
    case 'notice':
      return session?.notices ? update : noticeAsText(update as unknown as Notice);
    case 'config_option_update':
      return withoutUnsupportedOptions(live, update) as SessionUpdate;
    default:
      return update;
  }
}

/** A `notice` update's fields. */
interface Notice {
  readonly severity: string;
  readonly title: string;
  readonly description?: string | null;
}

/** The `_meta` key that marks an agent message as acp-warden's rendering of a notice (and carries it). */
export const NOTICE_META_KEY = 'acp-warden/notice';

/**
 * A notice for a client without `session.notices`: an agent message, on lines of its own and
 * signed by acp-warden (so that neither the user nor the editor takes it for the agent's
 * words), with the notice itself under `_meta["acp-warden/notice"]`.
 */
function noticeAsText(notice: Notice): SessionUpdate {
  const text = `\n\n[acp-warden ${notice.severity}] ${notice.title}${notice.description ? `: ${notice.description}` : ''}\n\n`;
  const meta = { [NOTICE_META_KEY]: { severity: notice.severity, title: notice.title, description: notice.description ?? null } };
  return { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text, _meta: meta }, _meta: meta };
}

/** Drops boolean config options from a result or update when the client cannot show them. */
function withoutUnsupportedOptions(live: Live, value: unknown): unknown {
  const options = (value as { configOptions?: unknown } | undefined)?.configOptions;
  const booleans = (live.context?.clientCapabilities.session as { configOptions?: { boolean?: unknown } } | undefined)?.configOptions?.boolean;
  if (!Array.isArray(options) || booleans) return value;
  return { ...(value as object), configOptions: options.filter((option: { type?: string }) => option.type !== 'boolean') };
}

function requestClient(live: Live, key: string, method: string, params: unknown): void {
  const caps = live.context?.clientCapabilities ?? {};
  if (!clientAllows(caps, method, params)) {
    const error: ErrorObject = RpcError.methodNotFound(method).toErrorObject();
    live.handler.send({ type: 'client.error', key, error: { ...error, message: `The client did not advertise support for ${method}` } });
    return;
  }
  sendRequest(live.connection, method, params).then(
    (result) => live.handler.send({ type: 'client.response', key, result }),
    (error: unknown) => {
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
function failAllPending(live: Live, error: RpcError): void {
  for (const session of live.sessions.values()) session.bare?.fail(error.toErrorObject());
  for (const [key] of live.pending) deliverError(live, key, error);
}

/** Stops a bare agent session's machine (a child of the server). */
function stopBare(live: Live, bare: BareTurns): void {
  bare.release();
  if (bare.machine.getSnapshot().status === 'active') live.scope.stopChild(bare.machine);
}
