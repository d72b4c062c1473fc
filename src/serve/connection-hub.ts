/**
 * The connection hub: ONE host agent (its sessions, agents, journal) served to any number of
 * connections that come and go (`warden serve`). Each connection has its own agent server
 * (initialize, gating, request ids, backpressure) whose handler is a connection agent
 * (connection-agent.ts) standing for this hub; the hub is the host agent's only "editor",
 * always there, so sessions outlive every connection.
 *
 * - **Cursors per connection**: each connection reads each session it attached through its
 *   own cursor over the journal (src/session/subscriber.ts), paused by its own delivery gate:
 *   a slow client pauses only itself. `session/load` replays from the start; `session/resume`
 *   with `_meta["acp-warden/after"]` = the last `seq` the client saw replays exactly what came
 *   after it; then the live stream. The replay is the hub's, per connection: a session the host
 *   agent runs now is attached and answered here at once (its current modes and config, what
 *   the host agent would answer); only a session that is not running (only in the journal, or
 *   being opened or closed) is asked of the host agent (`session/resume`) first.
 * - **Roles** (session-roles.ts): one controller per session may prompt, cancel, answer the
 *   agent's requests, set mode and config, close; observers receive everything, including the
 *   controller's prompts and each turn's end (`turnEndUpdate`); control passes when the
 *   controller leaves, or by `_acp-warden/take_control`.
 * - **Detach**: a connection that closes leaves its sessions running; the agent's requests of a
 *   session without a controller follow the unattended policy (unattended-policy.ts); a session
 *   without any connection for the idle timeout is closed on its agent (the journal keeps it;
 *   the next attach restores it).
 */
import type { ActorLogic, ActorScope, ActorSystem, AnyActorRef, Snapshot, Subscription } from 'xstate';
import { createActor } from 'xstate';
import type { AgentEventContext, AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent, TurnEntry } from '../acp/native-agent.js';
import { AGENT_METHODS, CLIENT_METHODS } from '../acp/methods.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { ReadGate } from '../port/read-gate.js';
import type { JournalRecord, JournalSessionPage } from '../host/journal.js';
import { callNowOrLater, hostJournalOf, type CallResult, type HostJournal, type HostStore } from '../host/host-journal.js';
import { runningSessionAgent, runningSessionSetup, settleJournal, sessionMachinesOf, TAKEOVER_META_KEY } from '../host/host-agent.js';
import { journalReads } from '../host/agent/delivery.js';
import { Subscriber } from '../session/subscriber.js';
import { updatesOf, updatesWithTurns } from '../session/cursor.js';
import type { Forwarding, HubRouting } from '../cluster/forwarding.js';
import type { SessionLocation } from '../cluster/routing-table.js';
import { PLACED_META_KEY, type PlacementSelf } from '../cluster/placement.js';
import type { HubEvent } from './hub-events.js';
import { attach, attached, detach, roleOf, takeControl, unattended, type Role, type SessionRoles } from './session-roles.js';
import { defaultUnattendedPolicy, denied, type UnattendedPolicy } from './unattended-policy.js';

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

interface HubConnection {
  readonly id: string;
  readonly ref: AnyActorRef;
  readonly peer: string | undefined;
  readonly subscriber: Subscriber;
  /** Its delivery gate (closed while its transport is backed up). */
  readonly gate: ReadGate;
  context: AgentEventContext | undefined;
  /** The sessions it reaches on their owner hosts (made at the first one). */
  forwarding: Forwarding | undefined;
}

interface HubSession {
  readonly sessionId: string;
  roles: SessionRoles;
  lastActivity: number | undefined;
  /** Prompts of this session the host has not answered (from any connection, gone or not). */
  prompts: number;
  /** Which connection started the turn each turn entry (`seq`) belongs to, for the latest turns. */
  readonly turnSenders: Map<number, string>;
  idleArmed: boolean;
}

/** A request under way at the host agent, by the hub's key. */
type HubRequest =
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
interface HubCall {
  readonly key: string;
  readonly sessionId: string | undefined;
  readonly method: string;
  readonly params: unknown;
  /** Where it is now: the connection and the key it has there. */
  sentTo: { readonly connectionId: string; readonly connectionKey: string } | undefined;
  waiting: boolean;
}

interface HubLive {
  readonly scope: HubScope;
  readonly input: HubInput;
  readonly journal: HostJournal;
  readonly host: AnyActorRef;
  readonly subscription: Subscription;
  readonly connections: Map<string, HubConnection>;
  readonly sessions: Map<string, HubSession>;
  readonly requests: Map<string, HubRequest>;
  /** The hub's key of each connection request (`connectionId` + separator + its key). */
  readonly requestKeys: Map<string, string>;
  readonly calls: Map<string, HubCall>;
  /** The host key of each call, by the key a connection has for it. */
  readonly callKeys: Map<string, string>;
  initialize: { readonly result: unknown } | { readonly error: unknown } | undefined;
  readonly initializeWaiting: Array<{ readonly connectionId: string; readonly requestId: string }>;
  nextKey: number;
  promptsInFlight: number;
  readonly drained: Array<() => void>;
}

/** The hub's snapshot context: its clients with their role and cursor per session (the live view shows them). */
export interface HubContext {
  readonly connections: number;
  readonly sessions: number;
  /** Walked when first read (a getter, kept in its snapshot), as of that moment: a hub nobody inspects never walks them. */
  readonly clients: ReturnType<typeof hubConnections>;
}

type HubSnapshot = Snapshot<undefined> & { readonly context: HubContext };
type HubScope = ActorScope<HubSnapshot, HubEvent | { readonly type: `xstate.${string}` }, ActorSystem<any>>;

const lives = new WeakMap<AnyActorRef, HubLive>();
const separator = '\u0000';
/** Turn entries remembered per session to tell a connection its own turns from others' (older ones are shown as others'). */
const turnSendersKept = 256;

/** What the hub tells the host agent it is: a client that can do everything a connection might (each connection's server still gates its own). */
const daemonContext: AgentEventContext = {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  clientInfo: { name: 'acp-warden-serve', version: '0.1.0' },
};

/** Actor logic of the hub (see the module's doc). */
export const connectionHubLogic = {
  config: { name: 'connectionHub' },
  getInitialSnapshot(scope: HubScope, input: HubInput): HubSnapshot {
    const host = createActor(input.host.logic, { parent: scope.self, id: 'agent', input: input.host.input });
    const live: HubLive = {
      scope,
      input,
      journal: hostJournalOf(input.journal),
      host,
      subscription: host.on('*', (output: AgentHandlerOutput) => onHostOutput(live, output)),
      connections: new Map(),
      sessions: new Map(),
      requests: new Map(),
      requestKeys: new Map(),
      calls: new Map(),
      callKeys: new Map(),
      initialize: undefined,
      initializeWaiting: [],
      nextKey: 1,
      promptsInFlight: 0,
      drained: [],
    };
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, context: summary(live) };
  },
  start(_snapshot: HubSnapshot, scope: HubScope): void {
    const live = lives.get(scope.self) as HubLive;
    live.host.start();
    if (live.input.host.delegateInitialize) {
      live.requests.set('init', { kind: 'initialize' });
      live.host.send({ type: 'initialize', requestId: 'init', method: AGENT_METHODS.initialize, params: { protocolVersion: daemonContext.protocolVersion, clientCapabilities: daemonContext.clientCapabilities, clientInfo: daemonContext.clientInfo }, context: daemonContext });
    } else {
      live.initialize = { result: undefined };
      live.host.send({ type: 'initialized', context: daemonContext });
    }
  },
  transition(snapshot: HubSnapshot, event: HubEvent | { readonly type: `xstate.${string}` }, scope: HubScope): HubSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as HubLive;
    switch (event.type) {
      case 'hub.connect':
        connect(live, event as Extract<HubEvent, { type: 'hub.connect' }>);
        break;
      case 'hub.disconnect':
        disconnect(live, (event as Extract<HubEvent, { type: 'hub.disconnect' }>).connectionId);
        break;
      case 'hub.client': {
        const { connectionId, event: clientEvent } = event as Extract<HubEvent, { type: 'hub.client' }>;
        const connection = live.connections.get(connectionId);
        if (connection) onClientEvent(live, connection, clientEvent);
        break;
      }
      case 'hub.takeover':
        takeOver(live, event as Extract<HubEvent, { type: 'hub.takeover' }>);
        break;
      case 'hub.continue':
        (event as Extract<HubEvent, { type: 'hub.continue' }>).run();
        break;
      case 'hub.step': {
        const { connectionId, sessionId } = event as Extract<HubEvent, { type: 'hub.step' }>;
        live.connections.get(connectionId)?.subscriber.step(sessionId);
        break;
      }
      case 'hub.idle':
        idle(live, (event as Extract<HubEvent, { type: 'hub.idle' }>).sessionId);
        break;
      case 'hub.unattended': {
        const call = live.calls.get((event as Extract<HubEvent, { type: 'hub.unattended' }>).key);
        if (call?.waiting) answerHost(live, call, { type: 'client.response', key: call.key, result: denied(call.params) });
        break;
      }
      case 'xstate.stop':
        live.subscription.unsubscribe();
        for (const connection of live.connections.values()) {
          connection.subscriber.close();
          connection.forwarding?.close();
        }
        void live.input.routing?.close().catch(() => undefined);
        if (live.host.getSnapshot().status === 'active') scope.stopChild(live.host);
        for (const resolve of live.drained.splice(0)) resolve();
        return { ...snapshot, status: 'stopped', context: summary(live) } as HubSnapshot;
      default:
        break;
    }
    return { ...snapshot, context: summary(live) };
  },
  getPersistedSnapshot(snapshot: HubSnapshot): HubSnapshot {
    return snapshot;
  },
} as unknown as ActorLogic<HubSnapshot, HubEvent, HubInput, ActorSystem<any>>;

/**
 * The hub's snapshot context, made at every transition: the counts, and the clients walked
 * only when read (the live view's observer reads them when it shows the hub) and then kept in
 * that snapshot. A hub with no observer, the common case, never walks them.
 */
function summary(live: HubLive): HubContext {
  let clients: ReturnType<typeof hubConnections> | undefined;
  return {
    connections: live.connections.size,
    sessions: live.sessions.size,
    get clients() {
      return (clients ??= connectionsOf(live));
    },
  };
}

/** The host agent a hub runs (for the host's tree, processes and shutdown). */
export function hostAgentOfHub(hub: AnyActorRef): AnyActorRef | undefined {
  return lives.get(hub)?.host;
}

/** Resolves once no prompt is in flight on the hub (at once when none is). */
export function hubDrained(hub: AnyActorRef): Promise<void> {
  const live = lives.get(hub);
  if (!live || live.promptsInFlight === 0 || hub.getSnapshot().status !== 'active') return Promise.resolve();
  return new Promise((resolve) => live.drained.push(resolve));
}

/** The sessions the hub serves now and the journal keeps (see {@link HubSessionInfo}). */
export function hubSessions(hub: AnyActorRef): Promise<HubSessionInfo[]> {
  const live = lives.get(hub);
  if (!live) return Promise.resolve([]);
  return new Promise((resolve, reject) => sessionsOf(live, (listed) => (listed.ok ? resolve(listed.value) : reject(listed.error))));
}

/** Where each connection stands in each session it attached (for the live view). */
export function hubConnections(hub: AnyActorRef): Array<{ readonly connectionId: string; readonly peer: string | undefined; readonly sessions: ReadonlyArray<{ readonly sessionId: string; readonly role: Role; readonly delivered: number | undefined; readonly state: string | undefined }> }> {
  const live = lives.get(hub);
  return live ? connectionsOf(live) : [];
}

/** Each connection with its sessions (role and cursor), in one walk over the sessions' attachments. */
function connectionsOf(live: HubLive): ReturnType<typeof hubConnections> {
  const sessionsOf = new Map<string, Array<ReturnType<typeof hubConnections>[number]['sessions'][number]>>();
  for (const session of live.sessions.values()) {
    for (const connectionId of attached(session.roles)) {
      const connection = live.connections.get(connectionId);
      if (!connection) continue;
      const position = connection.subscriber.positionOf(session.sessionId);
      const role: Role = connectionId === session.roles.controller ? 'controller' : 'observer';
      const entry = { sessionId: session.sessionId, role, delivered: position?.delivered, state: position?.state };
      const list = sessionsOf.get(connectionId);
      if (list) list.push(entry);
      else sessionsOf.set(connectionId, [entry]);
    }
  }
  return [...live.connections.values()].map((connection) => ({ connectionId: connection.id, peer: connection.peer, sessions: sessionsOf.get(connection.id) ?? [] }));
}

// ---------------------------------------------------------------------------------------
// Connections

function connect(live: HubLive, event: Extract<HubEvent, { type: 'hub.connect' }>): void {
  const { connectionId, ref, gate, peer } = event;
  const connection: HubConnection = { id: connectionId, ref, peer, subscriber: subscriberFor(live, connectionId, ref, gate), gate, context: undefined, forwarding: undefined };
  live.connections.set(connectionId, connection);
}

function subscriberFor(live: HubLive, connectionId: string, ref: AnyActorRef, gate: ReadGate): Subscriber {
  const self = live.scope.self;
  return new Subscriber({
    write: (output) => ref.send({ type: 'hub.output', output }),
    ...journalReads(live.journal),
    gate,
    later: (run) => laterInHub(live, run),
    schedule: (sessionId) =>
      setImmediate(() => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'hub.step', connectionId, sessionId } satisfies HubEvent);
      }),
    settle: () => settleJournal(live.host),
    // A replay shows every turn; a catch-up shows the turns this connection did not start (its own it got live: its prompt, its answer).
    shows: (sessionId, record, replaying) => (replaying || !ownTurnEntry(live, sessionId, record, connectionId) ? updatesWithTurns(record.entry) : updatesOf(record.entry, false)),
  });
}

/** Runs `run` in a later turn of the hub (a journal read that answered with a promise). */
function laterInHub(live: HubLive, run: () => void): void {
  const self = live.scope.self;
  if (self.getSnapshot().status === 'active') self.send({ type: 'hub.continue', run } satisfies HubEvent);
}

function ownTurnEntry(live: HubLive, sessionId: string, record: JournalRecord, connectionId: string): boolean {
  if (record.entry.kind !== 'prompt' && record.entry.kind !== 'stop' && record.entry.kind !== 'error') return true;
  return live.sessions.get(sessionId)?.turnSenders.get(record.seq) === connectionId;
}

function disconnect(live: HubLive, connectionId: string): void {
  const connection = live.connections.get(connectionId);
  if (!connection) return;
  live.connections.delete(connectionId);
  connection.subscriber.close();
  connection.forwarding?.close();
  for (const key of live.callKeys.keys()) if (key.startsWith(`${connectionId}${separator}`)) live.callKeys.delete(key);
  for (const session of live.sessions.values()) {
    if (!roleOf(session.roles, connectionId)) continue;
    const { roles } = detach(session.roles, connectionId);
    session.roles = roles;
    if (attached(roles).length === 0) armIdle(live, session);
  }
  // What it was asked and did not answer goes to whoever controls the session now (or waits).
  for (const call of live.calls.values()) {
    if (call.sentTo?.connectionId !== connectionId) continue;
    call.sentTo = undefined;
    route(live, call);
  }
}

/** The connection leaves one session here, as at its disconnect: its role passes on, what the agent asked it goes to whoever controls the session now. */
function leaveSession(live: HubLive, connectionId: string, sessionId: string): void {
  const session = live.sessions.get(sessionId);
  if (!session || !roleOf(session.roles, connectionId)) return;
  session.roles = detach(session.roles, connectionId).roles;
  if (attached(session.roles).length === 0) armIdle(live, session);
  rerouteCalls(live, sessionId, connectionId);
}

/** What the agent asked `connectionId` in the session and it did not answer goes to whoever controls the session now (or waits). */
function rerouteCalls(live: HubLive, sessionId: string, connectionId: string): void {
  for (const call of live.calls.values()) {
    if (call.sessionId !== sessionId || call.sentTo?.connectionId !== connectionId) continue;
    live.callKeys.delete(requestKey(connectionId, call.sentTo.connectionKey));
    call.sentTo = undefined;
    route(live, call);
  }
}

// ---------------------------------------------------------------------------------------
// From the clients

function onClientEvent(live: HubLive, connection: HubConnection, event: AgentHandlerEvent): void {
  switch (event.type) {
    case 'initialized':
      connection.context = event.context;
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
      const requestId = event.requestId ? live.requestKeys.get(requestKey(connection.id, event.requestId)) : '';
      if (requestId === undefined) return;
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

function onClientRequest(live: HubLive, connection: HubConnection, request: AgentRequestEvent): void {
  const sessionId = typeof request.params.sessionId === 'string' ? request.params.sessionId : undefined;
  // A session this connection reaches on its owner host: everything about it goes there.
  if (sessionId !== undefined && connection.forwarding?.request(request, sessionId)) return;
  const session = sessionId === undefined ? undefined : live.sessions.get(sessionId);
  switch (request.type) {
    case 'session.new': {
      const { placed, request: unmarked } = placementMark(request);
      const self = live.input.placementSelf?.();
      // A session another host placed here is made here; one of this host's own clients may go elsewhere.
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
    case 'session.setConfigOption': {
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
function controllerRefusal(session: HubSession | undefined, sessionId: string | undefined, connectionId: string, method: string): RpcError | undefined {
  if (sessionId === undefined) return undefined; // the host agent answers what is wrong
  const role = session ? roleOf(session.roles, connectionId) : undefined;
  if (role === 'controller') return undefined;
  if (role === 'observer') return notController(sessionId, session as HubSession, method);
  return RpcError.because('not_attached', `session ${sessionId} is not attached to this connection: session/load or session/resume it first, then ${method}`, { sessionId });
}

function notController(sessionId: string, session: HubSession, method: string): RpcError {
  return RpcError.because('not_controller', `this connection observes session ${sessionId}: only its controller may ${method} (take control with ${HUB_METHODS.takeControl})`, { sessionId, controller: session.roles.controller ?? null });
}

function takeControlOf(live: HubLive, connection: HubConnection, request: AgentRequestEvent): void {
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

function forward(live: HubLive, connection: HubConnection, request: AgentRequestEvent, record: HubRequest): void {
  const key = `h${live.nextKey++}`;
  live.requests.set(key, record);
  live.requestKeys.set(requestKey(connection.id, request.requestId), key);
  toHost(live, { ...request, requestId: key }, 'sessionId' in record ? record.sessionId : undefined);
}

/**
 * To the host agent; a prompt or a cancel of a session it runs goes down its line instead
 * (`NativeAgent.routeSession`: straight to the session's machine, no hop through the host agent).
 */
function toHost(live: HubLive, event: AgentHandlerEvent, sessionId: string | undefined): void {
  if (sessionId !== undefined && (event.type === 'session.prompt' || event.type === 'session.cancel') && live.input.host.routeSession?.(live.host, sessionId).send(event)) return;
  live.host.send(event);
}

function refuse(live: HubLive, connection: HubConnection, requestId: string, error: RpcError): void {
  connection.ref.send({ type: 'hub.output', output: { type: 'acp.error', requestId, error: error.toErrorObject() } });
}

function answer(live: HubLive, connection: HubConnection, requestId: string, sessionId: string | undefined, result: unknown): void {
  connection.subscriber.deliver(sessionId, { type: 'acp.respond', requestId, result });
}

function answerInitialize(live: HubLive, connectionId: string, requestId: string): void {
  const connection = live.connections.get(connectionId);
  const done = live.initialize;
  if (!connection || !done) return;
  connection.ref.send({ type: 'hub.output', output: 'error' in done ? { type: 'acp.error', requestId, error: done.error as never } : { type: 'acp.respond', requestId, result: done.result } });
}

function requestKey(connectionId: string, key: string): string {
  return `${connectionId}${separator}${key}`;
}

// ---------------------------------------------------------------------------------------
// From the host agent

function onHostUpdate(live: HubLive, output: Extract<AgentHandlerOutput, { type: 'acp.update' }>): void {
  const session = live.sessions.get(output.sessionId);
  if (!session) return; // nobody attached it yet: an attach replays it from the journal
  session.lastActivity = Date.now();
  for (const id of attached(session.roles)) live.connections.get(id)?.subscriber.deliver(output.sessionId, output, output.seq);
}

function onHostOutput(live: HubLive, output: AgentHandlerOutput): void {
  switch (output.type) {
    case 'acp.update':
      onHostUpdate(live, output);
      return;
    case 'acp.updates':
      // The host agent shows updates one by one; a batch is taken apart all the same.
      for (const { sessionId, update } of output.updates) onHostUpdate(live, { type: 'acp.update', sessionId, update });
      return;
    case 'acp.respond':
    case 'acp.error':
      onHostAnswer(live, output);
      return;
    case 'acp.clientRequest': {
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      const call: HubCall = { key: output.key, sessionId: typeof sessionId === 'string' ? sessionId : undefined, method: output.method, params: output.params, sentTo: undefined, waiting: false };
      live.calls.set(output.key, call);
      route(live, call);
      return;
    }
    case 'acp.notify': {
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      const session = typeof sessionId === 'string' ? live.sessions.get(sessionId) : undefined;
      const to = session ? attached(session.roles) : [...live.connections.keys()];
      for (const id of to) live.connections.get(id)?.ref.send({ type: 'hub.output', output });
      return;
    }
    case 'session.turnJournaled':
      onTurnJournaled(live, output.sessionId, output.requestId, output.seq, output.entry);
      return;
    default:
      return; // facts for the host itself (restarts, resume state, dropped lines)
  }
}

function onHostAnswer(live: HubLive, output: Extract<AgentHandlerOutput, { type: 'acp.respond' | 'acp.error' }>): void {
  const request = live.requests.get(output.requestId);
  if (!request) return;
  live.requests.delete(output.requestId);
  if (request.kind === 'initialize') {
    live.initialize = output.type === 'acp.respond' ? { result: output.result } : { error: output.error };
    if (output.type === 'acp.respond') live.host.send({ type: 'initialized', context: daemonContext });
    for (const waiting of live.initializeWaiting.splice(0)) answerInitialize(live, waiting.connectionId, waiting.requestId);
    return;
  }
  if (request.kind === 'takeover') {
    // Ours now, with nobody attached: idle until a client attaches (another host may have won it: nothing to do then).
    if (output.type === 'acp.respond') armIdle(live, sessionRecord(live, request.sessionId));
    return;
  }
  if (request.kind === 'idleClose') {
    // Its agent process stops too when no other session is open on it (the host decides).
    if (request.agent !== undefined) live.host.send({ type: 'host.releaseAgent', agent: request.agent });
    return;
  }
  live.requestKeys.delete(requestKey(request.connectionId, request.requestId));
  const session = request.sessionId === undefined ? undefined : live.sessions.get(request.sessionId);
  if (request.kind === 'prompt') promptEnded(live, session);
  const connection = live.connections.get(request.connectionId);
  const out = { ...output, requestId: request.requestId };
  if (request.kind === 'close' && output.type === 'acp.respond' && request.sessionId !== undefined) {
    // Closed (or deleted) on its agent: nobody is attached any more; the journal keeps it (a close) for the next attach.
    live.sessions.delete(request.sessionId);
  }
  const opened = output.type === 'acp.respond' ? openedSession(request, output.result) : undefined;
  if (!connection) {
    // Gone before the answer: a session it opened runs with nobody attached (idle from now); a prompt's end is in the journal, shown to whoever attaches.
    if (opened !== undefined) armIdle(live, sessionRecord(live, opened));
    return;
  }
  if (request.kind === 'new' && output.type === 'acp.respond') {
    const sessionId = opened;
    if (typeof sessionId !== 'string') return void connection.ref.send({ type: 'hub.output', output: out });
    attachConnection(live, connection, sessionId);
    connection.ref.send({ type: 'hub.output', output: out });
    // What the agent said before its answer reached here (commands, modes) is in the journal.
    connection.subscriber.replay(sessionId, { after: 0, withPrompts: false, done: () => undefined, failed: () => undefined });
    return;
  }
  if (request.kind === 'attach' && output.type === 'acp.respond') return attachAndReplay(live, connection, request, { type: 'acp.respond', requestId: request.requestId, result: output.result });
  const ownedElsewhere = output.type === 'acp.error' && (output.error.data as { reason?: unknown } | undefined)?.reason === 'session_owned';
  if (request.kind === 'attach' && ownedElsewhere && live.input.routing) {
    return routeAttach(live, live.input.routing, request, { ...(output as Extract<AgentHandlerOutput, { type: 'acp.error' }>), requestId: request.requestId });
  }
  if (request.kind === 'close' && ownedElsewhere && live.input.routing && request.sessionId !== undefined) {
    return routeClose(live, live.input.routing, request, request.sessionId, { ...(output as Extract<AgentHandlerOutput, { type: 'acp.error' }>), requestId: request.requestId });
  }
  connection.subscriber.deliver(request.sessionId, out);
}

/** The session a `session/new`, `session/fork`, `session/load` or `session/resume` answer opened, if any. */
function openedSession(request: HubRequest, result: unknown): string | undefined {
  if (request.kind === 'attach') return request.sessionId;
  if (request.kind !== 'new') return undefined;
  const sessionId = (result as { sessionId?: unknown } | undefined)?.sessionId;
  return typeof sessionId === 'string' ? sessionId : undefined;
}

/** The connection's forwarding, made at its first session served on another host. */
function forwardingOf(routing: HubRouting, connection: HubConnection): Forwarding {
  return (connection.forwarding ??= routing.forwarding({ deliver: (output) => connection.ref.send({ type: 'hub.output', output }), gate: connection.gate }));
}

/** Whether a `session/new` was placed here by another host ({@link PLACED_META_KEY}), and the request without the mark. */
function placementMark(request: AgentRequestEvent): { readonly placed: boolean; readonly request: AgentRequestEvent } {
  const meta = request.params._meta as Record<string, unknown> | undefined;
  if (!meta || !(PLACED_META_KEY in meta)) return { placed: false, request };
  const { [PLACED_META_KEY]: placed, ...rest } = meta;
  const { _meta: _dropped, ...params } = request.params;
  return { placed: placed === true, request: { ...request, params: Object.keys(rest).length > 0 ? { ...params, _meta: rest } : params } };
}

/**
 * A `session/new` on a host of a cluster: placed by the policy (cluster/placement.ts) here, or
 * on the least-loaded live host, where the client's request goes over this connection's
 * forwarding (the session is relayed from then on). The database not answering, or the chosen
 * host not reached, makes the session here: a session refused is worse than a busy host.
 */
function placeSession(live: HubLive, routing: HubRouting, connection: HubConnection, request: AgentRequestEvent, self: PlacementSelf): void {
  const here = () => {
    if (!live.connections.has(connection.id)) return; // gone meanwhile: nothing to make
    forward(live, connection, request, { kind: 'new', connectionId: connection.id, requestId: request.requestId, sessionId: undefined });
  };
  routing.place(self).then(
    (target) =>
      laterInHub(live, () => {
        if (target.where === 'local') return here();
        if (!live.connections.has(connection.id)) return;
        forwardingOf(routing, connection).place(request, target, () => laterInHub(live, here));
      }),
    () => laterInHub(live, here),
  );
}

/**
 * A load or resume refused here because another host owns the session (`session_owned`): when
 * that host is live and advertised, the client's own request goes to it over this connection's
 * forwarding, and the session is relayed from then on; otherwise the refusal is the answer.
 */
function routeAttach(live: HubLive, routing: HubRouting, request: Extract<HubRequest, { kind: 'attach' }>, refusal: Extract<AgentHandlerOutput, { type: 'acp.error' }>): void {
  toOwner(live, routing, request.connectionId, request.sessionId, refusal, (connection, location) => {
    // Attached here before (the session moved away since): it follows the session on its owner only.
    leaveSession(live, connection.id, request.sessionId);
    forwardingOf(routing, connection).attach(request.asked, request.sessionId, location);
  });
}

/**
 * Looks `sessionId` up and, in a later turn of the hub, hands the connection (if still there)
 * and the owner to `forward` when a live host that advertised owns it; otherwise (not
 * routable, or the database did not say: the client may try again) answers `refusal`.
 */
function toOwner(live: HubLive, routing: HubRouting, connectionId: string, sessionId: string, refusal: Extract<AgentHandlerOutput, { type: 'acp.error' }>, forward: (connection: HubConnection, owner: Extract<SessionLocation, { kind: 'remote' }>) => void): void {
  const settle = (location: SessionLocation | undefined) => {
    const connection = live.connections.get(connectionId);
    if (!connection) return; // gone meanwhile: nothing to answer
    if (location?.kind !== 'remote') return connection.ref.send({ type: 'hub.output', output: refusal });
    forward(connection, location);
  };
  routing.locate(sessionId).then(
    (location) => laterInHub(live, () => settle(location)),
    () => laterInHub(live, () => settle(undefined)),
  );
}

/**
 * A close (or delete, or `warden sessions --close`) refused here because another host owns the
 * session: when that host is live and advertised, the client's own request goes there, once
 * (the session is not relayed: closing it needs no stream); otherwise the refusal is the answer.
 */
function routeClose(live: HubLive, routing: HubRouting, request: Extract<HubRequest, { kind: 'close' }>, sessionId: string, refusal: Extract<AgentHandlerOutput, { type: 'acp.error' }>): void {
  toOwner(live, routing, request.connectionId, sessionId, refusal, (connection, owner) => forwardingOf(routing, connection).forwardOnce(request.asked, sessionId, owner));
}

/**
 * Attaches the connection to the session and answers `answer` (the setup a load or resume
 * answers): at once without a replay (`after` < 0: a resume without a cursor), else after the
 * journal's entries after `after` (0: the whole history), then the live stream.
 */
function attachAndReplay(live: HubLive, connection: HubConnection, attachment: Pick<Extract<HubRequest, { kind: 'attach' }>, 'requestId' | 'sessionId' | 'after'>, answer: Extract<AgentHandlerOutput, { type: 'acp.respond' }>): void {
  const { requestId, sessionId, after } = attachment;
  attachConnection(live, connection, sessionId);
  if (after < 0) return connection.subscriber.deliver(sessionId, answer);
  connection.subscriber.replay(sessionId, {
    after,
    // The history first, then the answer, then the live stream.
    done: () => connection.ref.send({ type: 'hub.output', output: answer }),
    failed: (error) => connection.ref.send({ type: 'hub.output', output: { type: 'acp.error', requestId, error: RpcError.internalError(`the journal could not be read: ${(error as Error)?.message ?? String(error)}`, { sessionId }).toErrorObject() } }),
  });
}

function sessionRecord(live: HubLive, sessionId: string): HubSession {
  let session = live.sessions.get(sessionId);
  if (!session) {
    session = { sessionId, roles: unattended, lastActivity: undefined, prompts: 0, turnSenders: new Map(), idleArmed: false };
    live.sessions.set(sessionId, session);
  }
  return session;
}

function attachConnection(live: HubLive, connection: HubConnection, sessionId: string): void {
  const session = sessionRecord(live, sessionId);
  const hadController = session.roles.controller !== undefined;
  session.roles = attach(session.roles, connection.id).roles;
  session.lastActivity = Date.now();
  disarmIdle(live, session);
  // A controller again: what the agent asked meanwhile reaches it.
  if (!hadController && session.roles.controller === connection.id) {
    for (const call of live.calls.values()) if (call.sessionId === sessionId && !call.sentTo) route(live, call);
  }
}

function onTurnJournaled(live: HubLive, sessionId: string, hostKey: string, seq: number, entry: TurnEntry): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  const request = live.requests.get(hostKey);
  const sender = request && request.kind === 'prompt' ? request.connectionId : undefined;
  if (sender !== undefined) {
    session.turnSenders.set(seq, sender);
    if (session.turnSenders.size > turnSendersKept) session.turnSenders.delete(session.turnSenders.keys().next().value as number);
  }
  for (const id of attached(session.roles)) {
    const subscriber = live.connections.get(id)?.subscriber;
    if (!subscriber) continue;
    if (id === sender) {
      subscriber.journaled(sessionId, seq, entry);
      continue;
    }
    // Another connection's turn (or one whose connection is gone): its prompt and its end are news here.
    for (const update of updatesWithTurns(entry)) subscriber.deliver(sessionId, { type: 'acp.update', sessionId, update, seq }, seq);
  }
}

function promptEnded(live: HubLive, session: HubSession | undefined): void {
  live.promptsInFlight--;
  if (session) {
    session.prompts--;
    session.lastActivity = Date.now();
    if (attached(session.roles).length === 0) armIdle(live, session);
  }
  if (live.promptsInFlight === 0) for (const resolve of live.drained.splice(0)) resolve();
}

// ---------------------------------------------------------------------------------------
// The agent's requests to a client

/** Sends the call to the session's controller (not `except`), or follows the unattended policy. */
function route(live: HubLive, call: HubCall, except?: string): void {
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

function answerHost(live: HubLive, call: HubCall, event: Extract<AgentHandlerEvent, { type: 'client.response' | 'client.error' }>): void {
  if (call.waiting) live.scope.system.scheduler.cancel(live.scope.self, `unattended:${call.key}`);
  live.calls.delete(call.key);
  live.host.send(event);
}

// ---------------------------------------------------------------------------------------
// Idle sessions

function armIdle(live: HubLive, session: HubSession): void {
  const timeout = live.input.idleTimeoutMs ?? defaultIdleTimeoutMs;
  if (timeout <= 0 || session.idleArmed || attached(session.roles).length > 0) return;
  session.idleArmed = true;
  live.scope.system.scheduler.schedule(live.scope.self, live.scope.self, { type: 'hub.idle', sessionId: session.sessionId } satisfies HubEvent as never, timeout, `idle:${session.sessionId}`);
}

function disarmIdle(live: HubLive, session: HubSession): void {
  if (!session.idleArmed) return;
  session.idleArmed = false;
  live.scope.system.scheduler.cancel(live.scope.self, `idle:${session.sessionId}`);
}

/** Claims and resumes a session whose host was lost, unless this hub has it (or is taking it) already. */
function takeOver(live: HubLive, event: Extract<HubEvent, { type: 'hub.takeover' }>): void {
  const { sessionId, previousOwner, handedOver } = event;
  if (live.sessions.has(sessionId) || runningSessionAgent(live.host, sessionId) !== undefined) return;
  for (const request of live.requests.values()) if (request.kind === 'takeover' && request.sessionId === sessionId) return;
  const key = `h${live.nextKey++}`;
  live.requests.set(key, { kind: 'takeover', sessionId });
  live.host.send({ type: 'session.resume', requestId: key, method: AGENT_METHODS.session_resume, params: { sessionId, mcpServers: [], _meta: { [TAKEOVER_META_KEY]: { previousOwner, handedOver } } }, context: daemonContext });
}

function idle(live: HubLive, sessionId: string): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  session.idleArmed = false;
  if (attached(session.roles).length > 0) return;
  // A turn still runs: it may go on; the session is idle once it ended and the timeout passed again.
  if (session.prompts > 0) return armIdle(live, session);
  live.sessions.delete(sessionId);
  const key = `h${live.nextKey++}`;
  live.requests.set(key, { kind: 'idleClose', sessionId, agent: runningSessionAgent(live.host, sessionId) });
  live.host.send({ type: 'session.close', requestId: key, method: AGENT_METHODS.session_close, params: { sessionId }, context: daemonContext });
}

// ---------------------------------------------------------------------------------------
// Listing

/** The sessions the hub runs and the journal keeps, to `then` (at once with a journal that answers at once). */
function sessionsOf(live: HubLive, then: (result: CallResult<HubSessionInfo[]>) => void): void {
  const machines = sessionMachinesOf(live.host);
  const found = new Map<string, HubSessionInfo>();
  const info = (sessionId: string, agent: string | undefined, state: string): HubSessionInfo => {
    const session = live.sessions.get(sessionId);
    const clients = session
      ? attached(session.roles).map((connectionId) => {
          const connection = live.connections.get(connectionId);
          return { connectionId, role: roleOf(session.roles, connectionId) as Role, peer: connection?.peer, delivered: connection?.subscriber.positionOf(sessionId)?.delivered };
        })
      : [];
    return { sessionId, agent, state, clients, lastActivity: session?.lastActivity === undefined ? undefined : new Date(session.lastActivity).toISOString() };
  };
  for (const [sessionId, machine] of machines) found.set(sessionId, info(sessionId, runningSessionAgent(live.host, sessionId), String(machine.getSnapshot().value)));
  const from = (cursor: string | undefined): void => {
    const read = (page: CallResult<JournalSessionPage>) => {
      if (!page.ok) return then(page);
      for (const session of page.value.sessions) {
        const known = found.get(session.sessionId) ?? info(session.sessionId, session.agent, 'stored');
        found.set(session.sessionId, session.owner ? { ...known, owner: session.owner } : known);
      }
      if (page.value.nextCursor !== undefined) return from(page.value.nextCursor);
      then({ ok: true, value: [...found.values()] });
    };
    callNowOrLater(() => live.journal.listSessions(cursor === undefined ? {} : { cursor }), read, (page) => laterInHub(live, () => read(page)));
  };
  from(undefined);
}
