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
 *
 * This file is the actor (its lifecycle: start, close, finish); its parts, one concept a
 * file: server-live.ts (the live record), editor-requests.ts (what the editor sends),
 * request-gate.ts and update-gate.ts (the gates each way), server-answers.ts (the traffic
 * with the handler, answers to the editor), server-draining.ts (after the editor's EOF).
 */
import { createActor, type ActorLogic, type ActorSystem, type AnyActorRef } from 'xstate';
import { connectionLogic, respondError, type ConnectionEmitted } from '../jsonrpc/connection.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { PeerLost } from '../jsonrpc/transport.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { shutdownInReverse } from '../supervision/commands.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { type AgentHandlerOutput } from '../protocol/native-agent.js';
import { type AgentServerInput, type AgentServerSnapshot, type AgentServerEvent, type Scope, type Live, lives, livesByHandler, backedUpGate, defaultCancelGraceMs, guarded, summary, withSummary, requestsHandedOn, settled } from './server-live.js';
import { drainCancelGraceMs, startDraining, scheduleDrainTimeout, drainGaveUp, checkDrained } from './server-draining.js';
import { methodTable } from './request-gate.js';
import { handOutput, failAllPending, stopBare } from './server-answers.js';
import { onRequest, serveHeld, onNotification, onCancelRequested, cancelTurns } from './editor-requests.js';

export { advertisesFork } from './capability-gate.js';
export { SEQ_META_KEY, type AgentServerContext, type AgentServerEvent, type AgentServerInput, type AgentServerPhase, type AgentServerSnapshot } from './server-live.js';
export { defaultDrainTimeoutMs } from './drain-timeout.js';
export { drainCancelGraceMs, drainGaveUpMessage } from './server-draining.js';
export { NOTICE_META_KEY } from './update-gate.js';

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
      sessions: new Map(),
      held: [],
      context: undefined,
      v2: undefined,
      relay: false,
      phase: { value: 'awaitingInitialize' },
      nextKey: 1,
      nextSession: 1,
      failure: undefined,
      serveHeld: () => serveHeld(live),
    };
    lives.set(scope.self, live);
    livesByHandler.set(handler, live);
    return { status: 'active', output: undefined, error: undefined, value: 'awaitingInitialize', context: summary(live) };
  },
  start(_snapshot: AgentServerSnapshot, scope: Scope): void {
    const live = lives.get(scope.self) as Live;
    live.subscriptions.push(
      live.handler.on('*', (event: AgentHandlerOutput) => handOutput(live, event)),
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
  for (const request of requestsHandedOn(live)) settled(live, request);
  for (const session of live.sessions.values()) if (session.bare) stopBare(live, session.bare);
  // Children of custom logic are not stopped by XState: stop them here.
  if (live.handler.getSnapshot().status === 'active') live.scope.stopChild(live.handler);
  if (live.connection.getSnapshot().status === 'active') live.scope.stopChild(live.connection);
  const base = { ...snapshot, value: 'closed' as const, context: summary(live) };
  if (live.failure && status === 'done') return { ...base, status: 'error', error: live.failure } as AgentServerSnapshot;
  return status === 'done' ? ({ ...base, status: 'done', output: reason } as AgentServerSnapshot) : ({ ...base, status: 'stopped' } as AgentServerSnapshot);
}

/** The drain timeout passed: every turn still running or queued is cancelled, as by session/cancel. */
function cancelAllTurns(live: Live): void {
  // Every session with a prompt unanswered (running or waiting) is cancelled, by its turns.
  const handedOn = requestsHandedOn(live);
  const prompted = new Set(handedOn.filter((request) => request.method === AGENT_METHODS.session_prompt && request.sessionId).map((request) => request.sessionId as string));
  // A v2 editor's acknowledged prompts are no longer handed on: their turns run on (v2-edge.ts).
  for (const sessionId of live.v2?.inserted.values() ?? []) prompted.add(sessionId);
  for (const sessionId of prompted) cancelTurns(live, sessionId, undefined);
  const self = live.scope.self;
  if (handedOn.length > 0 || prompted.size > 0) live.scope.system.scheduler.schedule(self, self, { type: 'acp.drainGrace' } satisfies AgentServerEvent, Math.min(drainCancelGraceMs, live.input.agent.cancelGraceMs ?? defaultCancelGraceMs), 'drain:grace');
  checkDrained(live);
}
