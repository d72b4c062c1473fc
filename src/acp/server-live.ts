/**
 * An agent server's live record (agent-server.ts): what it is, its phase, the requests it
 * answers, the sessions it knows, and the helpers every part of it uses (its snapshot's summary,
 * the gate it closes while the editor's output is backed up).
 */
import type { AgentCapabilities } from '@agentclientprotocol/sdk';
import { type ActorScope, type ActorSystem, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import { findTagged, incomingRequest, requestTag, respondError, tagRequest, taggedRequests, type TaggedRequest, type TimeoutPolicy } from '../jsonrpc/connection.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { PeerLost, Transport } from '../jsonrpc/transport.js';
import { readGateOf, type ReadGate } from '../port/read-gate.js';
import { deliveryGateOf } from '../session/subscriber.js';
import { BareTurns } from './bare-turns.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { type AgentEventContext, type NativeAgent, type SessionRoute } from '../protocol/native-agent.js';
import type { V2Edge } from './v2-connection.js';


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

export type Scope = ActorScope<AgentServerSnapshot, AgentServerEvent, ActorSystem<any>>;

/**
 * A request handed on and not answered yet, as the server sees it: the id mapping only (the
 * server's key, the editor's id, what its answer is checked against, its session), read from
 * the connection's record of the request (see {@link handOn}); not the request itself, which
 * its handler (a prompt: the session's machine) keeps.
 */
export interface PendingRequest {
  /** The server's key for it (what its handler answers by). */
  readonly key: string;
  readonly rpcId: JsonRpcId;
  readonly method: string;
  readonly sessionId: string | undefined;
  /** A replay this request asked for delivered the whole history up to this journal entry (its answer says so). */
  readonly replayedTo?: number;
}

/** What the editor sent while its `initialize` was with the agent: served in order once it is answered. */
export type HeldMessage =
  | { readonly kind: 'request'; readonly rpcId: JsonRpcId; readonly method: string; readonly params: Record<string, unknown> }
  | { readonly kind: 'notification'; readonly method: string; readonly params: unknown };

export interface SessionState {
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
export type Phase =
  | { readonly value: Exclude<AgentServerPhase, 'initializing' | 'draining'> }
  | { readonly value: 'initializing'; readonly inputEnded?: PeerLost }
  | { readonly value: 'draining'; readonly inputEnded: PeerLost };

export interface Live {
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
  readonly sessions: Map<string, SessionState>;
  /** Requests and notifications that arrived in phase `initializing`, oldest first. */
  readonly held: HeldMessage[];
  context: AgentEventContext | undefined;
  /** The editor speaks ACP v2 (its `initialize` opened v2): what its rendering keeps; `undefined`: v1. */
  v2: V2Edge | undefined;
  /** A peer host's relay link (relay-link.ts): the core's own output goes to it, not v1's rendering. */
  relay: boolean;
  phase: Phase;
  nextKey: number;
  nextSession: number;
  /** Why the agent handler failed, once it did: the server then ends in error, not done. */
  failure: Error | undefined;
  /** Serves what the editor sent while its delegated initialize was with the agent (editor-requests.ts `serveHeld`). */
  readonly serveHeld: () => void;
}

export const lives = new WeakMap<AnyActorRef, Live>();

/** The requests an agent server has handed on and not answered yet, by its own key (read-only; for inspection and specs). */
export function requestsInFlight(server: AnyActorRef): ReadonlyMap<string, { readonly rpcId: JsonRpcId; readonly method: string }> {
  const live = lives.get(server);
  return new Map((live ? requestsHandedOn(live) : []).map((request) => [request.key, { rpcId: request.rpcId, method: request.method }]));
}

/*
 * The editor's requests the server has handed on and not answered yet are kept where the
 * request already is: as a tag on the JSON-RPC connection's own record of it (its incoming
 * request, owed an answer). So the connection's id map is the one record of a request on the
 * editor's side, and an answer removes it from there once. The tag is the server's key for the
 * request (`rN`, never reused: an editor may reuse an id once it is answered, and a late answer
 * to the old request, say after a cancel's grace ran out, must not answer the new one) and its
 * session. Requests in flight are few (the connection stops reading past its limit of
 * unanswered ones), so a key is found by walking them.
 */

/** What the server keeps of a request, on the connection's record of it. */
interface ServerTag {
  readonly key: string;
  readonly sessionId: string | undefined;
  readonly replayedTo?: number;
}

/** Hands on request `rpcId` (of `sessionId`, if it names one): tagged with a new key of the server's, returned. */
export function handOn(live: Live, rpcId: JsonRpcId, sessionId: string | undefined): string {
  const key = `r${live.nextKey++}`;
  tagRequest(live.connection, rpcId, { key, sessionId } satisfies ServerTag);
  return key;
}

/** The request the server's key names, while it is unanswered. */
export function requestOf(live: Live, key: string): PendingRequest | undefined {
  const request = findTagged<ServerTag>(live.connection, (tag) => tag.key === key);
  return request && pendingOf(request);
}

/** The request the editor's id names, if the server handed it on and it is unanswered. */
export function requestByRpcId(live: Live, rpcId: JsonRpcId): PendingRequest | undefined {
  const request = incomingRequest<ServerTag>(live.connection, rpcId);
  return request?.tag ? pendingOf({ ...request, tag: request.tag }) : undefined;
}

/** Every request handed on and unanswered, in the order they came. */
export function requestsHandedOn(live: Live): PendingRequest[] {
  return [...taggedRequests<ServerTag>(live.connection)].map(pendingOf);
}

/** A tagged request of the connection as the server sees it. */
function pendingOf(request: TaggedRequest<ServerTag>): PendingRequest {
  const { key, sessionId, replayedTo } = request.tag;
  return { key, rpcId: request.id, method: request.method, sessionId, ...(replayedTo === undefined ? {} : { replayedTo }) };
}

/** Notes on the request the server's key names that its replay delivered everything up to `seq` (nothing when it was answered meanwhile). */
export function noteReplayed(live: Live, key: string, seq: number): void {
  const request = findTagged<ServerTag>(live.connection, (tag) => tag.key === key);
  if (request) tagRequest(live.connection, request.id, { ...request.tag, replayedTo: seq } satisfies ServerTag);
}

/** The request is the server's no more (answered by the server itself, or the connection closed): untagged. */
export function settled(live: Live, request: PendingRequest): void {
  // Only this request's tag: the editor may have reused its id for a new request meanwhile.
  if (requestTag<ServerTag>(live.connection, request.rpcId)?.key === request.key) tagRequest(live.connection, request.rpcId, undefined);
}

/** Each server's live record by its handler's actor (server-answers.ts `outputLineOf`). */
export const livesByHandler = new WeakMap<AnyActorRef, Live>();

/**
 * The `_meta` key of a `session/update`'s params that carries the journal sequence number of
 * what it stands for: increasing in a session's order, the same live and in a replay
 * (`session/load`), so that an editor can tell what it has seen. See docs/acp.md.
 */
export const SEQ_META_KEY = 'acp-warden/seq';

/** The gate the server closes while the editor's output is backed up (see `NativeAgent.deliversFromJournal`). */
export function backedUpGate(live: Live): ReadGate {
  return live.input.agent.deliversFromJournal ? deliveryGateOf(live.scope.system) : readGateOf(live.scope.system);
}

export { defaultCancelGraceMs } from '../supervision/cancel-grace.js';


/** Lets the snapshot catch up with a change made on the data path (rare: sessions, phase). */
export function sync(live: Live): void {
  live.scope.self.send({ type: 'acp.sync' });
}

/**
 * Runs a listener's work so that a fault in it (a bug, a value JSON cannot encode) answers
 * the request it concerns with -32603 instead of escaping as an uncaught exception.
 */
export function guarded(live: Live, work: () => void, rpcId?: JsonRpcId): void {
  try {
    work();
  } catch (error) {
    if (rpcId !== undefined) respondError(live.connection, rpcId, RpcError.internalError(error instanceof Error ? error.message : String(error)));
  }
}

export function summary(live: Live): AgentServerContext {
  let activePrompts = 0;
  if (live.input.agent.ownsTurns) {
    // The handler queues them: the sessions with a prompt unanswered.
    const prompting = requestsHandedOn(live).filter((request) => request.method === AGENT_METHODS.session_prompt).map((request) => request.sessionId);
    // A v2 editor's prompt is answered when inserted: its turn runs on until its `idle`.
    activePrompts = new Set([...prompting, ...(live.v2?.inserted.values() ?? [])]).size;
  } else {
    for (const session of live.sessions.values()) if (session.bare?.running) activePrompts++;
  }
  return { name: live.name, protocolVersion: live.context?.protocolVersion, sessions: live.sessions.size, activePrompts };
}

export function withSummary(snapshot: AgentServerSnapshot, live: Live): AgentServerSnapshot {
  return { ...snapshot, value: live.phase.value, context: summary(live) };
}
