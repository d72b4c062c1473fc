/**
 * The real agents a host agent runs: one child actor per agent name, started on first use.
 */
import type { AgentCapabilities } from '@agentclientprotocol/sdk';
import { createActor, type AnyActorRef, type Subscription } from 'xstate';
import { shutdownInReverse } from '../../supervision/commands.js';
import type { AgentHandlerEvent, AgentHandlerOutput, SessionRoute } from '../../protocol/native-agent.js';
import type { ClientCall, HostSession, InnerAgent, Live } from './live.js';

/**
 * What the host adds to any agent: sessions come back from the journal, and leave it
 * (`delete`). `fork` stays only when the agent forks (the host forwards it and journals the fork).
 */
export function withHostCapabilities(capabilities: AgentCapabilities): AgentCapabilities {
  return {
    ...capabilities,
    loadSession: true,
    sessionCapabilities: { ...capabilities.sessionCapabilities, list: {}, resume: {}, close: {}, delete: {} },
  };
}

/** The named agent's actor, started on first use. */
export function innerAgent(live: Live, name: string): InnerAgent {
  const existing = live.inner.get(name);
  if (existing) return existing;
  const agent = name === live.input.defaultAgent ? live.input.base : live.input.resolve(name);
  const ref = createActor(agent.logic, { parent: live.scope.self, id: `agent:${name}`, input: agent.input });
  const self = live.scope.self;
  const subscription = ref.on('*', (output: AgentHandlerOutput) => self.send({ type: 'host.inner', agent: name, output } as never));
  const inner: InnerAgent = { name, agent, ref, subscription, waiting: undefined, capabilities: agent.capabilities ?? {} };
  live.inner.set(name, inner);
  ref.start();
  live.input.onEvent?.({ type: 'agent.started', agent: name });
  // A delegating agent learns the client through its own initialize: any but the editor's
  // default, and the default too when started again after a release (the editor's is answered).
  if (agent.delegateInitialize && live.context && (name !== live.input.defaultAgent || live.initialized)) {
    inner.waiting = [];
    const key = `h${live.nextKey++}`;
    live.pending.set(key, { kind: 'initialize', agent: name, editor: false });
    ref.send({ type: 'initialize', requestId: key, method: 'initialize', params: { protocolVersion: live.context.protocolVersion, clientCapabilities: live.context.clientCapabilities }, context: live.context });
  } else if (live.initialized && live.context) {
    ref.send({ type: 'initialized', context: live.context });
  }
  return inner;
}

export function sendTo(inner: InnerAgent, event: AgentHandlerEvent): void {
  if (inner.waiting) inner.waiting.push(event);
  else inner.ref.send(event);
}

/**
 * Sends a session-scoped event (its prompt, cancel, setting, an answer to its client request)
 * straight to the session's actor inside its agent when the agent offers that line
 * (`NativeAgent.routeSession`), else to the agent: the agent's own actor stays off the turn's path.
 */
export function sendToSession(live: Live, session: HostSession, event: AgentHandlerEvent): void {
  const inner = innerAgent(live, session.agent);
  if (!inner.waiting) {
    if (session.route === undefined) session.route = inner.agent.routeSession?.(inner.ref, session.sessionId) ?? null;
    if (session.route && !session.updates) watchUpdates(live, session, inner.name, session.route);
    if (session.route?.send(event)) return;
  }
  sendTo(inner, event);
}

/**
 * Takes the session's updates from the actor that makes them (`SessionRoute.watchUpdates`), as
 * the agent's other outputs come (`host.inner`), so that the agent's own actor is off each
 * update's path; bound again to each new such actor (a restart).
 */
function watchUpdates(live: Live, session: HostSession, agent: string, route: SessionRoute): void {
  const self = live.scope.self;
  const { sessionId } = session;
  const take = (output: UpdateOutput) => self.send({ type: 'host.inner', agent, output } as never);
  let from: AnyActorRef | undefined;
  const watch = route.watchUpdates?.((actor) => {
    if (from) leaveUpdateLine(from, sessionId, take);
    from = actor;
    if (actor) joinUpdateLine(actor, sessionId, take, route.carried?.bind(route));
  });
  if (!watch) return;
  session.updates = {
    unwatch() {
      if (from) leaveUpdateLine(from, sessionId, take);
      from = undefined;
      watch.unwatch();
    },
  };
}

type UpdateOutput = Extract<AgentHandlerOutput, { type: 'acp.update' }>;

/**
 * One listener per actor that makes updates, handing each to its session's taker by the
 * session's id: an agent's client makes every session's updates of that agent, and a listener
 * per session would run for each of them on every update.
 */
interface UpdateLine {
  readonly subscription: Subscription;
  readonly takers: Map<string, (output: UpdateOutput) => void>;
  /** How the actor's sessions carry a subagent child's updates (`SessionRoute.carried`): by its top parent's taker, in its order. */
  carried: SessionRoute['carried'];
}

const updateLines = new WeakMap<AnyActorRef, UpdateLine>();

function joinUpdateLine(actor: AnyActorRef, sessionId: string, take: (output: UpdateOutput) => void, carried: SessionRoute['carried']): void {
  let line = updateLines.get(actor);
  if (!line) {
    const takers = new Map<string, (output: UpdateOutput) => void>();
    const onUpdate = (output: UpdateOutput) => {
      const own = takers.get(output.sessionId);
      if (own) return own(output);
      const way = created.carried?.(output.sessionId, output.update);
      if (way && way.sessionId !== output.sessionId) takers.get(way.sessionId)?.({ ...output, ...way });
    };
    const created: UpdateLine = { takers, carried, subscription: actor.on('acp.update', onUpdate) };
    line = created;
    updateLines.set(actor, line);
  }
  line.takers.set(sessionId, take);
  line.carried ??= carried;
}

function leaveUpdateLine(actor: AnyActorRef, sessionId: string, take: (output: UpdateOutput) => void): void {
  const line = updateLines.get(actor);
  if (!line || line.takers.get(sessionId) !== take) return;
  line.takers.delete(sessionId);
  if (line.takers.size > 0) return;
  line.subscription.unsubscribe();
  updateLines.delete(actor);
}

/** The host no longer takes the session's updates itself: its agent relays them again. */
export function unwatchUpdates(session: HostSession): void {
  session.updates?.unwatch();
  session.updates = undefined;
}

/**
 * Sends the answer to an agent's client request back to the agent that asked: the way its
 * session's events go when `session` is that agent's (see {@link sendToSession}), else to the agent.
 */
export function answerClientCall(live: Live, call: ClientCall, session: HostSession | undefined, answer: AgentHandlerEvent): void {
  if (session && session.agent === call.agent) sendToSession(live, session, answer);
  else live.inner.get(call.agent)?.ref.send(answer);
}

/**
 * Stops the named agent when it serves nothing: no session of the host open on it, no request
 * waiting for its answer. Its supervisors shut down gracefully (the last started first: stdin
 * closed, then signals), in the background; it is forgotten at once, so a later use starts a
 * new one. `false` (nothing done) when it still serves something or does not run.
 */
export function releaseAgent(live: Live, name: string): boolean {
  const inner = live.inner.get(name);
  if (!inner || inner.waiting) return false;
  for (const session of live.sessions.values()) if (session.agent === name) return false;
  for (const pending of live.pending.values()) {
    if ('agent' in pending && pending.agent === name) return false;
    if ('sessionId' in pending && live.sessions.get(pending.sessionId)?.agent === name) return false;
  }
  live.inner.delete(name);
  inner.subscription.unsubscribe();
  live.releasing.add(inner.ref);
  const self = live.scope.self;
  void shutdownInReverse(inner.agent.supervisors?.(inner.ref) ?? []).then(() => {
    // A child actor is stopped by its parent: the host agent, in its own transition.
    if (self.getSnapshot().status === 'active') self.send({ type: 'host.releasedDown', ref: inner.ref } as never);
  });
  live.input.onEvent?.({ type: 'agent.released', agent: name });
  return true;
}

/** A released agent whose supervisors are down: its actor is stopped now. */
export function releasedDown(live: Live, ref: AnyActorRef): void {
  if (!live.releasing.delete(ref)) return;
  if (ref.getSnapshot().status === 'active') live.scope.stopChild(ref);
}
