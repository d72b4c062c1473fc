/**
 * The live state of one agent client actor, kept beside it in a `WeakMap` keyed by its ref:
 * the connection and terminals it owns, the sessions it tracks (each with its workspace
 * roots, its prompt run and its unanswered permission requests) and the agent's
 * `initialize` answer, with the checks every call to the agent makes against that answer.
 */
import type { AgentCapabilities, ClientCapabilities, InitializeResponse, SessionUpdate } from '@agentclientprotocol/sdk';
import type { ActorScope, ActorSystem, AnyActorRef, Subscription } from 'xstate';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { missingAgentCapability } from './capability-gate.js';
import type { Terminals } from './terminals.js';
import type { WorkspaceRoots } from './workspace-fs.js';
import type { InboundState } from './v2-inbound.js';
import type { TurnEnd } from './v2-turn-state.js';
import type { AgentClientContext, AgentClientEmitted, AgentClientEvent, AgentClientInput, AgentClientPhase, AgentClientSnapshot } from './agent-client-contract.js';

/** The actor scope an agent client's logic runs in. */
export type Scope = ActorScope<AgentClientSnapshot, AgentClientEvent, ActorSystem<any>, AgentClientEmitted>;

/** A prompt in flight in a session: its updates so far and who waits for the next. */
export interface PromptRun {
  readonly updates: SessionUpdate[];
  readonly wake: Array<() => void>;
  done: boolean;
  cancelled: boolean;
  /** Updates are kept for the `updates` iterator (a relay that takes the events says no). */
  readonly keep: boolean;
  /** A v2 agent's turn: settled by the session's `idle` (or the agent going away), after the prompt's `{ messageId }`. */
  turn?: { readonly resolve: (end: TurnEnd) => void; readonly reject: (error: unknown) => void };
}

/** A session the client tracks. */
export interface SessionInfo {
  readonly roots: WorkspaceRoots;
  prompt: PromptRun | undefined;
  /** Permission requests of this session not answered yet, by JSON-RPC id. */
  readonly permissions: Set<JsonRpcId>;
}

/** The live state of one agent client actor. */
export interface Live {
  readonly scope: Scope;
  readonly input: AgentClientInput;
  readonly connection: AnyActorRef;
  readonly terminalSupervisor: AnyActorRef;
  readonly terminals: Terminals;
  readonly capabilities: ClientCapabilities;
  readonly sessions: Map<string, SessionInfo>;
  readonly subscriptions: Subscription[];
  agent: InitializeResponse | undefined;
  phase: AgentClientPhase;
  /** Whether the agent answered ACP v2 (read by the method table's parsers too). */
  readonly mode: { v2: boolean };
  /** A v2 agent's sessions as the update mapping remembers them (v2-inbound.ts). */
  readonly inbound: Map<string, InboundState>;
}

const lives = new WeakMap<AnyActorRef, Live>();

/** Keeps `live` as the live state of its agent client actor. */
export function keepLive(live: Live): void {
  lives.set(live.scope.self, live);
}

/** The live state of an agent client actor; throws for an actor that is not one. */
export function liveOf(client: AnyActorRef): Live {
  const live = lives.get(client);
  if (!live) throw new TypeError(`Expected an ACP agent client actor, got actor "${client.id}".`);
  return live;
}

/**
 * The agent's capabilities, once it may be called with `method`; throws (callers are async:
 * their promise rejects) before `initialize`, and -32601 when the method needs a capability
 * the agent did not advertise (capability-gate.ts).
 */
export function requireInitialized(live: Live, method: string): AgentCapabilities {
  if (!live.agent) throw new RpcError(-32600, `Call initialize before ${method}`, { method }, 'local');
  const caps = live.agent.agentCapabilities ?? {};
  const missing = missingAgentCapability(caps, method);
  if (missing) throw new RpcError(-32601, `The agent did not advertise ${missing.path}${missing.unstable ? ' (unstable)' : ''}: ${method} is not available`, { method }, 'local');
  return caps;
}

/** The snapshot's context. */
export function summary(live: Live): AgentClientContext {
  return { agentInfo: live.agent?.agentInfo ?? undefined, protocolVersion: live.agent?.protocolVersion, sessions: live.sessions.size, terminals: live.terminals.size };
}

/** Asks the actor to refresh its snapshot (sessions or terminals changed outside a transition). */
export function sync(live: Live): void {
  if (live.scope.self.getSnapshot().status === 'active') live.scope.self.send({ type: 'client.sync' });
}

/** Ends a session's prompt run: its `updates` iterator finishes (and a v2 turn still owed fails with `lost`, when given). */
export function endPrompt(session: SessionInfo, lost?: unknown): void {
  const run = session.prompt;
  if (!run) return;
  if (lost !== undefined) run.turn?.reject(lost);
  run.done = true;
  for (const wake of run.wake.splice(0)) wake();
}
