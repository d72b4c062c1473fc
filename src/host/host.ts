/**
 * The embedding API: `createHost(...)` gives a program what `warden acp` gives an editor.
 *
 * A host is the host agent (host-agent.ts: journal, recovery notices, session state charts,
 * several agents) served by an ACP agent server. `warden acp` serves it on stdio; the
 * program's own sessions go through an in-process ACP client over a memory pair, so that a
 * program and an editor get exactly the same protocol rules (gating, FIFO prompts, cancel).
 *
 * The actor tree under a host:
 * ```
 * editor (agent server)            one per transport served (the program's, stdio's)
 * └── agent (host agent)
 *     ├── agent:<name>             one per agent used, started on first use
 *     │   └── sessions             dynamic supervisor (adapters; a passthrough has its agent supervisor)
 *     │       └── session <id>     supervisor, rest_for_one: adapter, port
 *     └── session:<id>             the session state chart
 * ```
 */
import type { ContentBlock, PromptResponse, RequestPermissionRequest, RequestPermissionResponse, SessionUpdate } from '@agentclientprotocol/sdk';
import { createActor, type AnyActorRef, type InspectionEvent, type Observer, type Subscription } from 'xstate';
import {
  agentClientLogic,
  cancelPrompt,
  closeSession,
  initialize,
  listSessions,
  loadSession,
  newSession,
  prompt as sendPrompt,
  resumeSession,
} from '../acp/agent-client.js';
import { agentServerLogic, handlerOf } from '../acp/agent-server.js';
import type { NativeAgent } from '../acp/native-agent.js';
import { validTerminalLimits, type TerminalLimits } from '../acp/terminals.js';
import { validFileReadLimits } from '../acp/bounded-read.js';
import { validLinkStores } from '../acp/hard-links.js';
import type { FileReadOptions } from '../acp/workspace-fs.js';
import { agentFor, type AgentOptions } from '../adapters/agent-factory.js';
import { createMemoryTransportPair } from '../jsonrpc/memory-transport.js';
import type { Transport } from '../jsonrpc/transport.js';
import { SHUTDOWN_EVENT, type SupervisionEvent } from '../supervision/events.js';
import { supervisionTree, whichChildren, type SupervisionTreeNode } from '../supervision/introspection.js';
import { AGENT_META_KEY, createHostAgent, innerAgentsOf, isHostAgent, journalWritesSettled, sessionMachinesOf } from './host-agent.js';
import type { HostEvent } from './host-event.js';
import type { Journal, JournalSession } from './journal.js';
import { defaultJournalPath, sqliteJournal } from './sqlite-journal.js';
import type { AsyncJournal } from './async-journal.js';
import { isAsyncJournal, type HostStore } from './host-journal.js';
import { deferredJournal } from './deferred-journal.js';
import { delayedJournal, type JournalDelay } from './delayed-journal.js';
import { asyncJournalOf } from './async-journal-of.js';
import { isPostgresUrl } from './store-url.js';
import type { PostgresJournalOptions } from './postgres-journal.js';
import { logEntryOf, type HostLogEntry } from './host-log.js';
import { sessionMachine } from '../session/session-machine.js';
import { createLiveActors } from './live-actors.js';
import { observerOnDemand } from './observer-on-demand.js';
import { agentRestartDefaults } from '../supervision/agent-restart-defaults.js';
import { connectionHubLogic, hostAgentOfHub, hubConnections, hubDrained, hubSessions, HUB_METHODS, type HubOptions, type HubSessionInfo } from '../serve/connection-hub.js';
import { connectionAgentLogic, connectionSessionRoute } from '../serve/connection-agent.js';
import { placementSelfOf, startTakingOver, watchLease, type ClusterStore } from '../cluster/host-duties.js';
import { shutdownInReverse } from '../supervision/commands.js';
import type { HostTelemetry } from '../telemetry/host-telemetry.js';

export type { HostEvent } from './host-event.js';

/** What the host needs of the live view's tap (src/inspect/live-view.ts), loaded on the first `inspect.serve()`. */
interface LiveViewTap {
  readonly observer: Observer<InspectionEvent>;
  serve(options?: { readonly port?: number }): Promise<{ readonly url: string; readonly port: number; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** Options of {@link createHost}. */
export interface HostOptions {
  /**
   * Agents by name, in addition to the known ones (`claude`, `codex`, `gemini`, …, `demo`,
   * `acp:<command line>`): a name here wins over a known agent of the same name.
   */
  readonly agents?: Readonly<Record<string, NativeAgent>>;
  /** The agent of sessions that do not name one. Default `demo`. */
  readonly defaultAgent?: string;
  /** How known agents are found and run: `--agent-command`, `--env`, `--inherit-env`. */
  readonly agentOptions?: AgentOptions;
  /**
   * The journal: a SQLite path, `:memory:`, a PostgreSQL URL (`postgres://user@host:port/db`:
   * the store several hosts share, docs/cluster.md), or a {@link Journal} (or
   * {@link AsyncJournal}) of your own. Default: the SQLite file under the user's state
   * directory (`defaultJournalPath()`). A PostgreSQL store opens in the background: await
   * {@link Host.opened} to fail early; until then every call waits for it.
   */
  readonly store?: string | Journal | AsyncJournal;
  /** Options of a PostgreSQL store (`lease`, `advertise`, `connections`: see `openPostgresJournal`). */
  readonly postgres?: PostgresJournalOptions;
  /**
   * Timing faults for tests and chaos runs: every journal call delayed by a seeded random time
   * up to `maxMs` (reads answered late, possibly stale; commits acknowledged late), see
   * `delayedJournal`. A SQLite store then runs as an asynchronous journal. Never for production.
   * The CLI reads it from `WARDEN_FAULT_JOURNAL_DELAY=SEED:MAX_MS`.
   */
  readonly journalDelay?: JournalDelay;
  /**
   * A store that answers with promises (PostgreSQL): the most bytes of entries the host holds
   * before the journal acknowledged them; past it the host stops reading its agents' output until
   * the journal caught up to half (a slow or restarting database costs no memory). Default 8 MiB.
   */
  readonly maxPendingWriteBytes?: number;
  /**
   * How known agents' processes are supervised: at most `intensity` restarts in `period` ms
   * per session (default 3 in 60 s), and `hangAfterMs`, the watchdog's patience with a
   * silent agent working on a prompt (default: none). Your own `agents` bring their own.
   */
  readonly supervision?: { readonly intensity?: number; readonly period?: number; readonly hangAfterMs?: number };
  /**
   * Agents whose own sessions `listSessions` shows after the journal's (say `['codex']`: its
   * threads, even those started outside warden), besides the default agent and the agents
   * in use; only agents that can list (Codex) are asked.
   */
  readonly listAgents?: readonly string[];
  /**
   * The XState inspector: a `ws://` URL (every actor of the host is sent there, payloads
   * made safe: errors with their stack, secrets redacted, large values cut; see
   * src/inspect/inspector.ts), or your own inspection observer.
   */
  readonly inspect?: string | Observer<InspectionEvent>;
  /**
   * Receives every event as a log entry with a level (`debug` routine facts, `info`
   * recoveries, `warn` restarts and dropped messages, `error` failures): filter as you like,
   * or use `createLogSink` for JSON or pretty lines.
   */
  readonly logger?: (entry: HostLogEntry) => void;
  /**
   * Bounds on the terminals agents run through the program's client: `maxOutputByteLimit`
   * (default 16 MiB; a larger `outputByteLimit` is lowered to it) and `maxPerSession`
   * (default 32 held at once; past it `terminal/create` is refused with -32600). A bad value
   * throws a TypeError from `createHost`.
   */
  readonly terminals?: TerminalLimits;
  /**
   * How agents read files through the program's client: `maxReadBytes` (default 64 MiB) is
   * the most one `fs/read_text_file` answers; a larger file, or a `line`/`limit` range that
   * comes to more, is refused with -32602 naming it (ranges are streamed: a range of a larger
   * file is fine). A file with more than one name (a hard link) is refused with -32602, its
   * other names may be outside the workspace, unless it is a file of a package store named in
   * `linkStores` (say the directory `pnpm store path` prints, for pnpm's `node_modules`). A
   * bad value throws a TypeError from `createHost`.
   */
  readonly files?: FileReadOptions;
  /**
   * OpenTelemetry traces and metrics of this host: what `startTelemetry()` of
   * `acp-warden/telemetry` resolves to (docs/observability.md). Every connection the host
   * serves is observed (the program's own sessions, `host.serve`, each client of `host.hub`,
   * named by its `peer`), the journal's writes are timed, the host's events heard. Default:
   * none (no OpenTelemetry module is loaded). The program shuts it down after `host.stop()`.
   */
  readonly telemetry?: HostTelemetry | undefined;
  /** The program's permission policy; default: reject (nothing runs without a policy that says so). */
  readonly permission?: (request: RequestPermissionRequest) => RequestPermissionResponse['outcome'] | Promise<RequestPermissionResponse['outcome']>;
}


/** A prompt in flight. */
export interface HostPromptRun extends AsyncIterable<SessionUpdate> {
  /** The stop reason; rejects with an `RpcError` naming a crash, a failed session, a refusal. */
  readonly result: Promise<PromptResponse>;
  /** Ends this prompt with `cancelled`. */
  cancel(): void;
}

/** One session of a host. */
export interface HostSessionHandle {
  readonly sessionId: string;
  readonly agent: string;
  /**
   * Sends a prompt: iterate the result for its updates, await `.result` for its stop reason.
   * Prompts sent before the previous one ended wait their turn (FIFO).
   */
  prompt(content: string | readonly ContentBlock[], options?: { readonly signal?: AbortSignal }): HostPromptRun;
  /** Cancels the prompt in progress (it ends `cancelled`). */
  cancel(): void;
  /** Where the session stands: `ready`, `prompting`, `awaitingPermission`, `recovering`, … */
  state(): string;
  /** Closes the session: its agent process stops, the journal keeps its history. */
  close(): Promise<void>;
}

/** A running host. */
export interface Host {
  /** A new session on `agent` (default: the host's default agent) in `cwd` (absolute). */
  newSession(options: { readonly cwd: string; readonly agent?: string; readonly mcpServers?: unknown[] }): Promise<HostSessionHandle>;
  /**
   * A journaled session, running again: `load` replays its history into `replayed` first;
   * `resume` (default) does not. Works after a restart of the program.
   */
  openSession(sessionId: string, options?: { readonly cwd?: string; readonly how?: 'load' | 'resume' }): Promise<HostSessionHandle & { readonly replayed: readonly SessionUpdate[] }>;
  /** Journaled sessions, most recent first. */
  listSessions(query?: { readonly cwd?: string }): Promise<ReadonlyArray<{ sessionId: string; cwd: string; title: string | null; updatedAt: string }>>;
  /**
   * The journal (read it, or close it yourself when you passed your own): a {@link Journal}
   * for a SQLite store (answers at once), an {@link AsyncJournal} for a PostgreSQL one
   * (answers with promises). `await` works on both.
   */
  readonly journal: HostStore;
  /**
   * Resolves once the store is open (at once for SQLite, whose bad path throws from
   * `createHost`); rejects with the open's error (a PostgreSQL store that cannot be reached
   * or migrated, named without its password). `warden acp` and `warden serve` await it
   * before they answer or listen.
   */
  readonly opened: Promise<void>;
  /** The supervision tree now: every agent, session supervisor, port (with pids) and session state. */
  tree(): HostTreeNode;
  /**
   * The agent processes running now: each port with its agent, its OS pid and the port
   * actor (send it `port.injectLine` to inject a fault, as `warden chaos` does).
   */
  processes(): ReadonlyArray<{ readonly agent: string; readonly pid: number; readonly port: AnyActorRef }>;
  /** Listens to session and supervision events; returns the unsubscribe function. */
  on(listener: (event: HostEvent) => void): () => void;
  /** Looking at the host while it runs. */
  readonly inspect: {
    /**
     * Serves the live view of this host on 127.0.0.1 (`port` 0, the default: a free one): a
     * page with the supervision tree (status, restarts, pids, uptime), each session's state on
     * its chart, the pending requests and a timeline of starts, exits, restarts and
     * escalations, updated as it happens. Rejects with the listen error (`EADDRINUSE`) when
     * the port is taken. `host.stop()` closes it too.
     *
     * @example
     * ```ts
     * const view = await host.inspect.serve({ port: 8081 });
     * console.error(`live view: ${view.url}`);
     * await view.close();
     * ```
     */
    serve(options?: { readonly port?: number }): Promise<{ readonly url: string; readonly port: number; close(): Promise<void> }>;
  };
  /**
   * Serves the host to an editor over `transport` (what `warden acp` does on stdio). When the
   * editor's input ends but it still reads (EOF on stdin), what it asked is served and answered
   * first, for at most `options.drainTimeoutMs` (default 30 s) before running turns are cancelled.
   */
  serve(transport: Transport, options?: ServeOptions): AnyActorRef;
  /**
   * The host as a daemon (`warden serve`): ONE host agent whose sessions outlive every
   * connection, served to any number of connections that come and go (src/serve/connection-hub.ts:
   * cursors per connection, one controller and observers per session, detach and re-attach).
   * Made on first call (later calls return the same hub; `options` count only then).
   *
   * @example
   * ```ts
   * const hub = host.hub({ idleTimeoutMs: 600_000 });
   * wss.on('connection', (socket) => hub.attach(webSocketTransport(socket)));
   * ```
   */
  hub(options?: HubOptions): ServeHub;
  /**
   * Stops everything gracefully (each agent process: stdin closed, then signals); no process is
   * left. `handOver` (a PostgreSQL store): the sessions are not released but handed over to the
   * live members of the cluster, which resume them (a rolling restart, docs/cluster.md); waits
   * up to two leases and 2 s for them to be taken.
   */
  stop(options?: { readonly handOver?: boolean }): Promise<void>;
}

/** A host's connection hub (see {@link Host.hub}). */
export interface ServeHub {
  /** Serves one connection; the returned server actor ends when the connection closes (its sessions go on). */
  attach(transport: Transport, info?: { readonly peer?: string }): AnyActorRef;
  /** The sessions the hub runs and the journal keeps, with their clients. */
  sessions(): Promise<HubSessionInfo[]>;
  /** The connections, with their role and cursor in each session they attached. */
  connections(): ReturnType<typeof hubConnections>;
  /** Resolves `true` when no prompt is in flight any more, `false` after `timeoutMs` if some still are. */
  drain(timeoutMs: number): Promise<boolean>;
}

/** Options of {@link Host.serve}. */
export interface ServeOptions {
  /** After the editor's EOF, how long its requests may still run before turns are cancelled, in ms (default 30 000); anything but a number ≥ 0 throws a TypeError from `serve`. */
  readonly drainTimeoutMs?: number;
}

/** A node of {@link Host.tree}. */
export interface HostTreeNode {
  readonly id: string;
  readonly type: 'host' | 'agent' | 'session';
  readonly status: string;
  readonly children: ReadonlyArray<HostTreeNode | SupervisionTreeNode>;
}

/**
 * Creates a host. Agents start on first use; the journal opens now (a bad `store` path
 * throws here, naming it).
 *
 * @example
 * ```ts
 * const host = createHost({ store: '/var/lib/my-app/agents.sqlite', permission: (request) => allowOnce(request.options) });
 * const session = await host.newSession({ agent: 'claude', cwd: '/path/to/repo' });
 * const run = session.prompt('Explain the failing test');
 * // stderr: a program that embeds warden may itself speak a protocol on stdout
 * for await (const update of run) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') process.stderr.write(update.content.text);
 * console.error((await run.result).stopReason);
 * await host.stop();
 * ```
 */
export function createHost(options: HostOptions = {}): Host {
  // A bad bound fails here, where the program gave it, not at an agent's first read.
  if (options.files) {
    validFileReadLimits(options.files);
    validLinkStores(options.files.linkStores);
  }
  if (options.terminals) validTerminalLimits(options.terminals);
  const bound = options.maxPendingWriteBytes;
  if (bound !== undefined && !(Number.isInteger(bound) && bound > 0)) throw new TypeError(`Expected \`maxPendingWriteBytes\` of createHost() to be a positive integer of bytes, got \`${String(bound)}\`.`);
  const ownsJournal = typeof options.store !== 'object';
  const store = openStore(options);
  const telemetry = options.telemetry;
  const journal = telemetry ? telemetry.timeJournal(store.journal) : store.journal;
  /** What the host knows of sessions' states without asking the journal (an asynchronous one cannot answer `state()` at once). */
  const knownStates = new Map<string, string>();
  const listeners = new Set<(event: HostEvent) => void>(telemetry ? [telemetry.hostListener] : []);
  const publish = (event: HostEvent) => {
    // A session event may follow a new agent or a new agent supervisor (a passthrough that
    // started again): relay its supervision events from now on (warden acp logs them).
    if (event.type.startsWith('session.') || event.type === 'agent.started') watchSupervisors();
    if (event.type === 'session.closed') knownStates.set(event.sessionId, 'closed');
    else if (event.type === 'session.failed') knownStates.set(event.sessionId, 'failed');
    else if (event.type === 'session.opened') knownStates.delete(event.sessionId);
    for (const listener of listeners) {
      // A listener's bug must not take the host (or the protocol) down: it becomes a warning.
      try {
        listener(event);
      } catch (error) {
        process.emitWarning(`a host.on listener threw on ${event.type}: ${error instanceof Error ? error.message : String(error)}`, 'AcpWardenListenerWarning');
      }
    }
  };
  const supervision = options.supervision ?? {};
  const agentOptions: AgentOptions = {
    ...options.agentOptions,
    ...(supervision.intensity !== undefined || supervision.period !== undefined
      ? { restart: { intensity: supervision.intensity ?? agentRestartDefaults.intensity, period: supervision.period ?? agentRestartDefaults.period } }
      : {}),
    ...(supervision.hangAfterMs ? { hangAfterMs: supervision.hangAfterMs } : {}),
  };
  const resolve = (name: string): NativeAgent => {
    const custom = options.agents?.[name];
    if (custom) return custom;
    return agentFor(name, agentOptions);
  };
  const logger = options.logger;
  if (logger) {
    listeners.add((event) => logger(logEntryOf(event)));
  }
  const defaultAgent = options.defaultAgent ?? 'demo';
  const hostAgent = createHostAgent({ defaultAgent, resolve, journal, onEvent: publish, ...(options.listAgents ? { listAgents: options.listAgents } : {}), ...(options.maxPendingWriteBytes !== undefined ? { maxPendingWriteBytes: options.maxPendingWriteBytes } : {}) });
  // The inspector and the live view are src/inspect/, on top of the host: loaded on demand.
  const url = typeof options.inspect === 'string' ? options.inspect : undefined;
  const inspection = url ? observerOnDemand(async () => (await import('../inspect/inspector.js')).connectInspector({ url })) : undefined;
  // Every actor is remembered for the live view from its actor system (no inspection observer
  // until the view is first served); the view's tap, loaded then, goes on from what was remembered.
  const alive = createLiveActors();
  let liveView: LiveViewTap | undefined;
  let loadingLiveView: Promise<LiveViewTap> | undefined;
  const liveObserver: Observer<InspectionEvent> = { next: (event) => (liveView ? liveView.observer.next?.(event) : alive.note(event)) };
  /** The root actors (the editors' servers, the program's client), to attach the live view's observer to while a view is open. */
  const roots = new Set<AnyActorRef>();
  /** The live view's observer on each root, while at least one view is open (none otherwise: XState then makes no inspection events). */
  const observing = new Map<AnyActorRef, Subscription>();
  let openViews = 0;
  const observe = (root: AnyActorRef) => {
    if (!observing.has(root)) observing.set(root, root.system.inspect(liveObserver));
  };
  const unobserveAll = () => {
    for (const subscription of observing.values()) subscription.unsubscribe();
    observing.clear();
  };
  /** Call before `root.start()`. */
  const rootStarting = (root: AnyActorRef) => {
    alive.follow(root);
    roots.add(root);
    if (openViews > 0) observe(root);
    const gone = () => {
      roots.delete(root);
      observing.get(root)?.unsubscribe();
      observing.delete(root);
    };
    root.subscribe({ complete: gone, error: gone });
  };
  const serveLiveView = async (serveOptions?: { readonly port?: number }) => {
    if (openViews++ === 0) for (const root of roots) observe(root);
    const viewClosed = () => {
      if (--openViews === 0) unobserveAll();
    };
    let served: Awaited<ReturnType<LiveViewTap['serve']>>;
    try {
      loadingLiveView ??= import('../inspect/live-view.js').then(({ createLiveViewTap }) => (liveView = createLiveViewTap({ machines: [sessionMachine.config], live: alive })));
      served = await (await loadingLiveView).serve(serveOptions);
    } catch (error) {
      viewClosed();
      throw error;
    }
    let closed = false;
    return {
      ...served,
      async close() {
        if (!closed) {
          closed = true;
          viewClosed();
        }
        await served.close();
      },
    };
  };
  // The inspector (a URL, or the program's own observer) sees every actor from the start.
  const inspect = inspection?.observer ?? (typeof options.inspect === 'object' ? options.inspect : undefined);
  const servers = new Set<AnyActorRef>();
  const watched = new WeakSet<AnyActorRef>();

  let hubRef: AnyActorRef | undefined;
  /** The hub's takeover of lost hosts' sessions (a PostgreSQL store, advertised). */
  let takeover: { close(): Promise<void> } | undefined;
  // Only the host agents themselves: a hub connection's handler would take the event for its client's.
  const leaseWatch = watchLease(store.postgres, () => hostAgents().filter(isHostAgent));
  let hubApi: ServeHub | undefined;
  /** The host agents running: each editor server's, and the hub's. */
  const hostAgents = (): AnyActorRef[] => {
    const found: AnyActorRef[] = [];
    for (const server of servers) {
      const handler = handlerOf(server);
      if (handler) found.push(handler); // a hub connection's handler runs no agents: it lists none
    }
    const shared = hubRef ? hostAgentOfHub(hubRef) : undefined;
    if (shared) found.push(shared);
    return found;
  };

  /** Relays each agent's supervision events, once per supervisor. */
  const watchSupervisors = () => {
    for (const handler of hostAgents()) {
      for (const [name, inner] of innerAgentsOf(handler)) {
        for (const supervisor of supervisorsOf(inner)) {
          if (watched.has(supervisor)) continue;
          watched.add(supervisor);
          supervisor.on('*', (event: SupervisionEvent) => publish({ ...event, agent: name }));
        }
      }
    }
  };
  const serve = (served: Transport, serveOptions: ServeOptions = {}, agent: NativeAgent = hostAgent, name = 'editor', peer?: string): AnyActorRef => {
    const { drainTimeoutMs } = serveOptions;
    // A NaN or negative timeout would fire at once and cancel the editor's turns on its first EOF.
    if (drainTimeoutMs !== undefined && !(typeof drainTimeoutMs === 'number' && drainTimeoutMs >= 0 && drainTimeoutMs <= 2 ** 31 - 1)) {
      throw new TypeError(`Expected \`drainTimeoutMs\` of host.serve() to be a number of milliseconds from 0 to ${2 ** 31 - 1}, got \`${String(drainTimeoutMs)}\`.`);
    }
    const transport = telemetry ? telemetry.tapEditor(served, { peer }) : served;
    const input = { transport, agent, name, ...(drainTimeoutMs !== undefined ? { drainTimeoutMs } : {}) };
    const server = createActor(agentServerLogic, { input, ...(inspect ? { inspect } : {}) });
    servers.add(server);
    rootStarting(server);
    server.on('acp.dropped', (emitted) => {
      const dropped = emitted as unknown as { reason: string; detail: string };
      publish({ type: 'protocol.dropped', peer: 'editor', reason: dropped.reason, detail: dropped.detail });
    });
    server.subscribe({ complete: () => servers.delete(server), error: () => servers.delete(server) });
    server.start();
    return server;
  };

  let nextConnection = 1;
  const hub = (hubOptions: HubOptions = {}): ServeHub => {
    if (hubApi) return hubApi;
    const ref = createActor(connectionHubLogic, { input: { ...hubOptions, host: hostAgent, journal, ...placementSelfOf(store.postgres) }, ...(inspect ? { inspect } : {}) });
    hubRef = ref;
    rootStarting(ref);
    ref.start();
    takeover = options.postgres?.advertise === undefined ? undefined : startTakingOver(store.postgres, ref);
    const extensions = {
      requests: [...(hostAgent.extensions?.requests ?? []), HUB_METHODS.sessions, HUB_METHODS.takeControl, HUB_METHODS.closeSession],
      notifications: [...(hostAgent.extensions?.notifications ?? [])],
    };
    hubApi = {
      attach(transport, info = {}) {
        const connectionId = `c${nextConnection++}`;
        // The connection's server keeps its protocol rules; its handler stands for the hub, and shuts no agent down on close.
        const { supervisors: _none, ...advertised } = hostAgent;
        const agent: NativeAgent = { ...advertised, logic: connectionAgentLogic, routeSession: connectionSessionRoute, input: { hub: ref, connectionId, peer: info.peer }, extensions };
        return serve(transport, {}, agent, `client ${connectionId}`, info.peer);
      },
      sessions: () => hubSessions(ref),
      connections: () => hubConnections(ref),
      drain: (timeoutMs) =>
        new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), timeoutMs);
          void hubDrained(ref).then(() => {
            clearTimeout(timer);
            resolve(true);
          });
        }),
    };
    return hubApi;
  };
  /** Stops the hub: its host agent's supervisors gracefully (the last started first), then the hub. */
  const stopHub = async () => {
    const ref = hubRef;
    if (!ref || ref.getSnapshot().status !== 'active') return;
    const shared = hostAgentOfHub(ref);
    await shutdownInReverse(shared ? hostAgent.supervisors?.(shared) ?? [] : []);
    ref.stop();
  };

  // The program's own connection, made on first use (`warden acp` only serves stdio). It takes
  // notices as `notice` updates: the program shows warden's words apart from the agent's.
  let program: { readonly client: AnyActorRef; readonly server: AnyActorRef; readonly ready: Promise<unknown> } | undefined;
  const connect = async (): Promise<AnyActorRef> => {
    if (!program) {
      const [programSide, hostSide] = createMemoryTransportPair();
      const server = serve(hostSide);
      const connected = createActor(agentClientLogic, {
        id: 'program', // how the inspector and the live view name it
        ...(inspect ? { inspect } : {}),
        input: { transport: programSide, clientInfo: { name: 'acp-warden-embedding', version: '0.1.0' }, handler: { notices: true, ...(options.permission ? { permission: options.permission } : {}), ...(options.terminals ? { terminals: { limits: options.terminals } } : {}), ...(options.files ? { fs: { limits: options.files, linkStores: options.files.linkStores } } : {}) } },
      });
      rootStarting(connected);
      connected.start();
      program = { client: connected, server, ready: initialize(connected) };
    }
    await program.ready;
    return program.client;
  };
  const queues = new Map<string, Promise<unknown>>();

  const handle = (client: AnyActorRef, sessionId: string, agent: string): HostSessionHandle => ({
    sessionId,
    agent,
    prompt(content, promptOptions = {}) {
      const blocks: ContentBlock[] = typeof content === 'string' ? [{ type: 'text', text: content }] : [...content];
      // The client refuses a second prompt while one runs (it could not tell their updates
      // apart): the program's prompts wait for each other here, in order.
      const previous = queues.get(sessionId) ?? Promise.resolve();
      let cancelled = false;
      let run: ReturnType<typeof sendPrompt> | undefined;
      const started = previous.then(() => {
        run = sendPrompt(client, sessionId, blocks, promptOptions.signal ? { signal: promptOptions.signal } : {});
        watchSupervisors();
        if (cancelled) run.cancel();
        return run;
      });
      const result = started.then((running) => running.result);
      const tail = result.catch(() => undefined);
      queues.set(sessionId, tail);
      // The last prompt of a session settled: forget its queue (the map does not grow with sessions).
      void tail.then(() => {
        if (queues.get(sessionId) === tail) queues.delete(sessionId);
      });
      return {
        result,
        cancel() {
          cancelled = true;
          run?.cancel();
        },
        async *[Symbol.asyncIterator]() {
          const running = await started;
          yield* running.updates;
        },
      };
    },
    cancel() {
      cancelPrompt(client, sessionId);
    },
    state() {
      const handler = program ? handlerOf(program.server) : undefined;
      const machine = handler ? sessionMachinesOf(handler).get(sessionId) : undefined;
      if (machine) return String(machine.getSnapshot().value);
      if (isAsyncJournal(journal)) return knownStates.get(sessionId) ?? 'unknown';
      return journal.getSession(sessionId)?.state ?? 'unknown';
    },
    async close() {
      await closeSession(client, sessionId);
    },
  });

  return {
    journal,
    opened: store.opened,
    async newSession({ cwd, agent, mcpServers }) {
      const client = await connect();
      const params = { cwd, mcpServers: mcpServers ?? [], ...(agent ? { _meta: { [AGENT_META_KEY]: agent } } : {}) };
      const { sessionId } = await newSession(client, params as { cwd: string });
      watchSupervisors();
      return handle(client, sessionId, agent ?? defaultAgent);
    },
    async openSession(sessionId, openOptions = {}) {
      const client = await connect();
      const journaled: JournalSession | undefined = await journal.getSession(sessionId);
      const cwd = openOptions.cwd ?? journaled?.cwd ?? process.cwd();
      let replayed: SessionUpdate[] = [];
      if (openOptions.how === 'load') replayed = (await loadSession(client, { sessionId, cwd })).replayed;
      else await resumeSession(client, { sessionId, cwd });
      watchSupervisors();
      // A session an agent listed (a Codex thread) is journaled by the open itself.
      const agent = journaled?.agent ?? (await journal.getSession(sessionId))?.agent ?? defaultAgent;
      return { ...handle(client, sessionId, agent), replayed };
    },
    async listSessions(query = {}) {
      const client = await connect();
      const { sessions } = await listSessions(client, query.cwd ? { cwd: query.cwd } : {});
      return sessions as Array<{ sessionId: string; cwd: string; title: string | null; updatedAt: string }>;
    },
    tree() {
      watchSupervisors();
      const children: HostTreeNode[] = [];
      for (const handler of hostAgents()) {
        for (const [name, inner] of innerAgentsOf(handler)) {
          children.push({ id: `agent:${name}`, type: 'agent', status: inner.ref.getSnapshot().status, children: supervisorsOf(inner).map((supervisor) => supervisionTree(supervisor)) });
        }
        for (const [sessionId, machine] of sessionMachinesOf(handler)) {
          children.push({ id: `session:${sessionId}`, type: 'session', status: String(machine.getSnapshot().value), children: [] });
        }
      }
      return { id: 'host', type: 'host', status: servers.size > 0 || hubRef?.getSnapshot().status === 'active' ? 'running' : 'stopped', children };
    },
    processes() {
      const found: Array<{ agent: string; pid: number; port: AnyActorRef }> = [];
      for (const handler of hostAgents()) {
        for (const [name, inner] of innerAgentsOf(handler)) {
          for (const supervisor of supervisorsOf(inner)) for (const port of portsUnder(supervisor)) found.push({ agent: name, ...port });
        }
      }
      return found;
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    serve: (transport, serveOptions) => serve(transport, serveOptions),
    hub,
    inspect: { serve: serveLiveView },
    async stop(stopOptions = {}) {
      const handingOver = stopOptions.handOver && store.postgres ? await store.postgres.journal.catch(() => undefined) : undefined;
      await handingOver?.startHandOver().catch(() => undefined);
      await takeover?.close();
      leaseWatch?.close();
      await stopServers(servers);
      await stopHub();
      if (program?.client.getSnapshot().status === 'active') program.client.stop();
      inspection?.stop();
      if (loadingLiveView) await (await loadingLiveView).close();
      if (!ownsJournal) return;
      // What the host agents queued is written before the store closes.
      for (const handler of hostAgents()) await journalWritesSettled(handler);
      if (handingOver) await handingOver.handOver(2 * handingOver.lease + 2000).catch(() => undefined);
      await journal.close();
    },
  };
}

/**
 * The store a host runs on: a synchronous journal opened now (a bad SQLite path throws here),
 * a PostgreSQL URL opened in the background (`pg` loaded only then), or the program's own.
 */
function openStore(options: HostOptions): { readonly journal: HostStore; readonly opened: Promise<void>; readonly postgres?: ClusterStore } {
  const given = options.store;
  const delay = options.journalDelay;
  const delayed = (store: HostStore): HostStore => (delay ? delayedJournal(isAsyncJournal(store) ? store : asyncJournalOf(store), delay) : store);
  if (typeof given === 'object') return { journal: delayed(given), opened: Promise.resolve() };
  const path = given ?? defaultJournalPath();
  if (!isPostgresUrl(path)) return { journal: delayed(sqliteJournal(path)), opened: Promise.resolve() };
  const opening = import('./postgres-journal.js').then(({ openPostgresJournal }) => openPostgresJournal(path, options.postgres));
  // The cluster's own calls (lease, takeover) keep the store's timing: only the host's journal calls are delayed.
  const journal = deferredJournal(delay ? opening.then((opened) => delayedJournal(opened, delay)) : opening);
  const opened = journal.opened.then(() => undefined);
  opened.catch(() => undefined);
  return { journal, opened, postgres: { url: path, journal: opening } };
}

/**
 * Shuts the servers down gracefully, the last served first: each answers what its editor
 * waits for, then shuts its agents' supervisors down, the last started first (each port:
 * stdin closed, SIGTERM, SIGKILL after its budget), and ends.
 */
export async function stopServers(servers: Iterable<AnyActorRef>): Promise<void> {
  for (const server of [...servers].reverse()) {
    if (server.getSnapshot().status !== 'active') continue;
    await new Promise<void>((resolve) => {
      server.subscribe({ complete: () => resolve(), error: () => resolve() });
      server.send({ type: SHUTDOWN_EVENT });
    });
  }
}

/** Running ports anywhere under a supervisor, with their pids. */
function portsUnder(supervisor: AnyActorRef): Array<{ pid: number; port: AnyActorRef }> {
  const found: Array<{ pid: number; port: AnyActorRef }> = [];
  for (const child of whichChildren(supervisor)) {
    if (!child.ref || child.status !== 'running') continue;
    if (child.type === 'supervisor') {
      found.push(...portsUnder(child.ref));
      continue;
    }
    const pid = (child.ref.getSnapshot() as { context?: { pid?: unknown } }).context?.pid;
    if (child.id === 'port' && typeof pid === 'number' && child.ref.getSnapshot().status === 'active') found.push({ pid, port: child.ref });
  }
  return found;
}

function supervisorsOf(inner: { readonly agent: NativeAgent; readonly ref: AnyActorRef }): readonly AnyActorRef[] {
  return inner.agent.supervisors?.(inner.ref) ?? [];
}
