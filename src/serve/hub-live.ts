/**
 * A connection hub's options and live record (connection-hub.ts): its connections, sessions,
 * requests under way at the host agent and the agent's requests to clients, and the small
 * helpers every part of it uses (answers to a connection, the keys of requests, the way to the host agent).
 */
import type { ActorScope, ActorSystem, AnyActorRef, Snapshot, Subscription } from 'xstate';
import type { AgentEventContext, AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent } from '../protocol/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { ReadGate } from '../port/read-gate.js';
import { type HostJournal, type HostStore } from '../journal/host-journal.js';
import { Subscriber } from '../session/subscriber.js';
import type { SubagentParents } from '../session/subagent-tree.js';
import type { Forwarding, HubRouting } from '../cluster/forwarding.js';
import { PLACED_META_KEY, type PlacementSelf } from '../cluster/placement.js';
import type { HubEvent } from './hub-events.js';
import { unattended, type Role, type SessionRoles } from './session-roles.js';
import { type UnattendedPolicy } from './unattended-policy.js';


/** The `_meta` key of `session/resume` that names the last `seq` the client saw: the updates after it are replayed (exclusive). */
export const AFTER_META_KEY = 'acp-warden/after';

/** The hub's extension requests: the daemon's sessions, and taking control of one. */
export const HUB_METHODS = Object.freeze({
  sessions: '_acp-warden/sessions',
  takeControl: '_acp-warden/take_control',
  /** Closes a session whether or not this connection attached it (`warden sessions --close`); an observer may not. */
  closeSession: '_acp-warden/close_session',
} as const);

/** What a hub runs on. */
export interface HubOptions {
  /** Permission requests of a session without a controller: `wait` (default, 10 min, then denied) or `deny`. */
  readonly unattended?: UnattendedPolicy;
  /** A session with no connection this long (ms) is closed on its agent; 0: never. Default 30 min. */
  readonly idleTimeoutMs?: number;
  /**
   * At most this many sessions live on their agents (0 or absent: no cap): past it, the least
   * recently used ones nobody is attached to and no turn runs in are hibernated (closed on their
   * agent, kept in the journal, resumed by the next attach; hibernateOverCap below).
   */
  readonly maxLiveSessions?: number;
  /**
   * On a store several hosts share: a session refused here because another live host owns it
   * is forwarded to that host (src/cluster/forwarding.ts, `clusterRouting`); the hub closes it
   * when it stops. Without it the client gets the refusal (`session_owned`).
   */
  readonly routing?: HubRouting;
}

/** What a hub is made of. */
export interface HubInput extends HubOptions {
  /** The host agent's descriptor (`createHostAgent`): the hub runs it as its child. */
  readonly host: NativeAgent;
  /** The host's store (a synchronous journal, or one that answers with promises). */
  readonly journal: HostStore;
  /** With routing, on a store several hosts share: this host's id and load once its store is open (a new session may be placed elsewhere: docs/cluster.md, "Placement"). */
  readonly placementSelf?: () => PlacementSelf | undefined;
}

/** A session as `_acp-warden/sessions` lists it. */
export interface HubSessionInfo {
  readonly sessionId: string;
  readonly agent: string | undefined;
  /** The session state chart's state (`idle`, `prompting`, ...), or `stored`: only in the journal. */
  readonly state: string;
  readonly clients: ReadonlyArray<{ readonly connectionId: string; readonly role: Role; readonly peer: string | undefined; readonly delivered: number | undefined }>;
  /** ISO time of the last update, prompt or attach seen here (undefined: none since the daemon started). */
  readonly lastActivity: string | undefined;
  /** On a store several hosts share (PostgreSQL): the host that owns the session, its epoch and name, as the journal says (absent: nobody, or SQLite). */
  readonly owner?: { readonly hostId: string; readonly epoch: number; readonly hostName?: string };
}

/** The default idle timeout: 30 minutes. */
export const defaultIdleTimeoutMs = 30 * 60 * 1000;

export interface HubConnection {
  readonly id: string;
  /**
   * Hands an output to the connection's client: a call into its agent server's handling (in
   * this step: no mailbox between the hub and the client's server), so every output for it
   * goes this one way, in the order the hub hands them.
   */
  readonly deliver: (output: AgentHandlerOutput) => void;
  readonly peer: string | undefined;
  readonly subscriber: Subscriber;
  /** Its delivery gate (closed while its transport is backed up). */
  readonly gate: ReadGate;
  context: AgentEventContext | undefined;
  /** The sessions it reaches on their owner hosts (made at the first one). */
  forwarding: Forwarding | undefined;
}

export interface HubSession {
  readonly sessionId: string;
  roles: SessionRoles;
  lastActivity: number | undefined;
  /** Prompts of this session the host has not answered (from any connection, gone or not). */
  prompts: number;
  idleArmed: boolean;
}

/** A request under way at the host agent, by the hub's key. */
export type HubRequest =
  | { readonly kind: 'plain' | 'prompt' | 'new'; readonly connectionId: string; readonly requestId: string; readonly sessionId: string | undefined }
  /** `asked`: the client's own close (or delete), as forwarded to the session's owner when another host owns it. */
  | { readonly kind: 'close'; readonly connectionId: string; readonly requestId: string; readonly sessionId: string | undefined; readonly asked: AgentRequestEvent }
  /** `asked`: the client's own request (a load or a resume, its cursor in it), as forwarded to the session's owner when another host owns it. */
  | { readonly kind: 'attach'; readonly connectionId: string; readonly requestId: string; readonly sessionId: string; readonly after: number; readonly asked: AgentRequestEvent }
  | { readonly kind: 'initialize' }
  /** The hub's own close of an idle session. */
  | { readonly kind: 'idleClose'; readonly sessionId: string; readonly agent: string | undefined }
  /** The hub's own resume of a session whose host was lost (a takeover). */
  | { readonly kind: 'takeover'; readonly sessionId: string };

/** A request of the agent to the client (permission, fs, terminal), by the host's key. */
export interface HubCall {
  readonly key: string;
  readonly sessionId: string | undefined;
  readonly method: string;
  readonly params: unknown;
  /** Where it is now: the connection and the key it has there. */
  sentTo: { readonly connectionId: string; readonly connectionKey: string } | undefined;
  waiting: boolean;
}

export interface HubLive {
  readonly scope: HubScope;
  readonly input: HubInput;
  readonly journal: HostJournal;
  readonly host: AnyActorRef;
  readonly subscription: Subscription;
  readonly connections: Map<string, HubConnection>;
  readonly sessions: Map<string, HubSession>;
  /** The requests under way at the host agent, by the hub's key; not a prompt: its key says whose it is ({@link promptKey}). */
  readonly requests: Map<string, HubRequest>;
  /** The hub's key of each connection request (`connectionId` + separator + its key); not a prompt's ({@link promptKey}). */
  readonly requestKeys: Map<string, string>;
  readonly calls: Map<string, HubCall>;
  /** The host key of each call, by the key a connection has for it. */
  readonly callKeys: Map<string, string>;
  initialize: { readonly result: unknown } | { readonly error: unknown } | undefined;
  readonly initializeWaiting: Array<{ readonly connectionId: string; readonly requestId: string }>;
  nextKey: number;
  /** Makes the hub's prompt keys its own: a prompt's key is journaled with its turn, and another hub (a restart, another host) reads that journal. */
  readonly keyNonce: string;
  promptsInFlight: number;
  /** Whether a client asked for subagent sessions: the host's agents are told so from then on ({@link daemonContextOf}). */
  subagents: boolean;
  /** The subagent children a client attached, to their parents (the host's answer names the parent): a cursor on a child reads its top parent's journal. */
  readonly children: SubagentParents;
  readonly drained: Array<() => void>;
}

/** The hub's snapshot context: its clients with their role and cursor per session (the live view shows them). */
export interface HubContext {
  readonly connections: number;
  readonly sessions: number;
  /** Walked when first read (a getter, kept in its snapshot), as of that moment: a hub nobody inspects never walks them. */
  readonly clients: HubClientInfo[];
}

/** A connection of a hub with its sessions (role and cursor), as `hub.connections()` lists it. */
export interface HubClientInfo {
  readonly connectionId: string;
  readonly peer: string | undefined;
  readonly sessions: ReadonlyArray<{ readonly sessionId: string; readonly role: Role; readonly delivered: number | undefined; readonly state: string | undefined }>;
}

export type HubSnapshot = Snapshot<undefined> & { readonly context: HubContext };

export type HubScope = ActorScope<HubSnapshot, HubEvent | { readonly type: `xstate.${string}` }, ActorSystem<any>>;

export const lives = new WeakMap<AnyActorRef, HubLive>();

export const separator = '\u0000';

/** What the hub tells the host agent it is: a client that can do everything a connection might (each connection's server still gates its own). */
export const daemonContext: AgentEventContext = {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  clientInfo: { name: 'acp-warden-serve', version: '0.1.0' },
};

/**
 * What the hub tells the host it is now: {@link daemonContext}, with `subagents` once a client
 * that takes subagent sessions connected (docs/serve.md, "Subagent sessions").
 */
export function daemonContextOf(live: HubLive): AgentEventContext {
  return live.subagents ? { ...daemonContext, clientCapabilities: { ...daemonContext.clientCapabilities, subagents: {} } as AgentEventContext['clientCapabilities'] } : daemonContext;
}

/** Runs `run` in a later turn of the hub (a journal read that answered with a promise). */
export function laterInHub(live: HubLive, run: () => void): void {
  const self = live.scope.self;
  if (self.getSnapshot().status === 'active') self.send({ type: 'hub.continue', run } satisfies HubEvent);
}

export function requestKey(connectionId: string, key: string): string {
  return `${connectionId}${separator}${key}`;
}

// From the host agent

export function answer(live: HubLive, connection: HubConnection, requestId: string, sessionId: string | undefined, result: unknown): void {
  connection.subscriber.deliver(sessionId, { type: 'acp.respond', requestId, result });
}

export function refuse(live: HubLive, connection: HubConnection, requestId: string, error: RpcError): void {
  connection.deliver({ type: 'acp.error', requestId, error: error.toErrorObject() });
}

export function answerInitialize(live: HubLive, connectionId: string, requestId: string): void {
  const connection = live.connections.get(connectionId);
  const done = live.initialize;
  if (!connection || !done) return;
  connection.deliver('error' in done ? { type: 'acp.error', requestId, error: done.error as never } : { type: 'acp.respond', requestId, result: done.result });
}

/**
 * To the host agent; a prompt or a cancel of a session it runs goes down its line instead
 * (`NativeAgent.routeSession`: straight to the session's machine, no hop through the host agent).
 */
export function toHost(live: HubLive, event: AgentHandlerEvent, sessionId: string | undefined): void {
  if (sessionId !== undefined && (event.type === 'session.prompt' || event.type === 'session.cancel') && live.input.host.routeSession?.(live.host, sessionId).send(event)) return;
  live.host.send(event);
}

export function forward(live: HubLive, connection: HubConnection, request: AgentRequestEvent, record: HubRequest): void {
  // A prompt's key is its address (its connection, its key there, its session): the hub keeps no record of it.
  const key = record.kind === 'prompt' && record.sessionId !== undefined ? promptKey(live.keyNonce, connection.id, request.requestId, record.sessionId) : hostKey(live);
  if (!key.startsWith(promptKeyPrefix)) {
    live.requests.set(key, record);
    live.requestKeys.set(requestKey(connection.id, request.requestId), key);
  }
  toHost(live, { ...request, requestId: key }, 'sessionId' in record ? record.sessionId : undefined);
}

/** What starts the hub's key of a connection's prompt ({@link promptKey}); the other keys start with `h`. */
const promptKeyPrefix = `p${separator}`;

/**
 * The hub's key of a connection's prompt at the host: the hub (its `keyNonce`: the key is
 * journaled with the turn, and another hub, a restart or another host, reads that journal),
 * the connection, the prompt's key there (its agent server never reuses one) and its session,
 * so that the host's answer, its turn's journal entries and a `$/cancel_request` find their
 * way without a record ({@link promptOfKey}).
 */
export function promptKey(hub: string, connectionId: string, requestId: string, sessionId: string): string {
  return `${promptKeyPrefix}${hub}${separator}${connectionId}${separator}${requestId}${separator}${sessionId}`;
}

/** A connection's prompt under way at the host agent, as its hub key names it. */
export interface HubPrompt {
  readonly kind: 'prompt';
  /** The `keyNonce` of the hub that made the key. */
  readonly hub: string;
  readonly connectionId: string;
  readonly requestId: string;
  readonly sessionId: string;
}

/** The prompt a hub key names ({@link promptKey}); `undefined` for any other key. */
export function promptOfKey(key: string): HubPrompt | undefined {
  if (!key.startsWith(promptKeyPrefix)) return undefined;
  const parts = key.slice(promptKeyPrefix.length).split(separator);
  if (parts.length < 4) return undefined;
  const [hub, connectionId, requestId, ...session] = parts as [string, string, string, ...string[]];
  return { kind: 'prompt', hub, connectionId, requestId, sessionId: session.join(separator) };
}

/** The prompt of this hub a key names (`undefined`: another hub's key, or not a prompt's). */
export function ownPromptOfKey(live: HubLive, key: string): HubPrompt | undefined {
  const prompt = promptOfKey(key);
  return prompt?.hub === live.keyNonce ? prompt : undefined;
}

/**
 * The connection of this hub that sent the prompt a turn entry of `sessionId` names
 * (`undefined`: not a prompt of this hub, or of another session: a fork copies its parent's
 * entries with their keys, and those turns were not sent in the fork).
 */
export function promptSenderOf(live: HubLive, key: string | undefined, sessionId: string): string | undefined {
  return key === undefined ? undefined : ownPromptIn(live, key, sessionId)?.connectionId;
}

/** This hub's prompt that `key` names, if it was sent in `sessionId` (see {@link promptSenderOf}). */
export function ownPromptIn(live: HubLive, key: string, sessionId: string): HubPrompt | undefined {
  const prompt = ownPromptOfKey(live, key);
  return prompt?.sessionId === sessionId ? prompt : undefined;
}

/** A new key for a request of the hub to its host agent. */
export function hostKey(live: HubLive): string {
  // Not the host's own `h<n>` keys (its agents' initializes, listings): an answer goes to the request it is for.
  return `hub${live.nextKey++}`;
}

export function sessionRecord(live: HubLive, sessionId: string): HubSession {
  let session = live.sessions.get(sessionId);
  if (!session) {
    session = { sessionId, roles: unattended, lastActivity: undefined, prompts: 0, idleArmed: false };
    live.sessions.set(sessionId, session);
  }
  return session;
}

/** The connection's forwarding, made at its first session served on another host. */
export function forwardingOf(routing: HubRouting, connection: HubConnection): Forwarding {
  return (connection.forwarding ??= routing.forwarding({ deliver: connection.deliver, gate: connection.gate }));
}

/** Whether a `session/new` was placed here by another host ({@link PLACED_META_KEY}), and the request without the mark. */
export function placementMark(request: AgentRequestEvent): { readonly placed: boolean; readonly request: AgentRequestEvent } {
  const meta = request.params._meta as Record<string, unknown> | undefined;
  if (!meta || !(PLACED_META_KEY in meta)) return { placed: false, request };
  const { [PLACED_META_KEY]: placed, ...rest } = meta;
  const { _meta: _dropped, ...params } = request.params;
  return { placed: placed === true, request: { ...request, params: Object.keys(rest).length > 0 ? { ...params, _meta: rest } : params } };
}

/** The session a `session/new`, `session/fork`, `session/load` or `session/resume` answer opened, if any. */
export function openedSession(request: HubRequest, result: unknown): string | undefined {
  if (request.kind === 'attach') return request.sessionId;
  if (request.kind !== 'new') return undefined;
  const sessionId = (result as { sessionId?: unknown } | undefined)?.sessionId;
  return typeof sessionId === 'string' ? sessionId : undefined;
}

/**
 * The hub's records of a connection's prompt under way at the host agent: the hub's key (the
 * host's request id) and whether it is in `requests` and in `requestKeys` (the connection's key
 * → the hub's). Read-only; for inspection and specs.
 */
export function hubPromptsOf(hub: AnyActorRef): ReadonlyArray<{ readonly hostKey: string; readonly requestId: string; readonly records: readonly string[] }> {
  const live = lives.get(hub);
  if (!live) return [];
  const keyed = new Set(live.requestKeys.values());
  return [...live.requests]
    .filter(([, request]) => request.kind === 'prompt')
    .map(([hostKey, request]) => ({ hostKey, requestId: (request as { requestId: string }).requestId, records: ['requests', ...(keyed.has(hostKey) ? ['requestKeys'] : [])] }));
}
