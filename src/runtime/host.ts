/**
 * The embedding API: `createHost(...)` gives a program what `warden acp` gives an editor.
 * It is also the composition root (docs/architecture.md, "Layers"): it builds the host agent,
 * the hub of serve/, the cluster duties (host-duties.ts) on the store it opened (host-store.ts),
 * and plugs telemetry and the live view in from above; no layer below runtime/ imports it.
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
import type { ContentBlock, SessionUpdate } from '@agentclientprotocol/sdk';
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
import { IDEMPOTENCY_KEY_META, type NativeAgent } from '../protocol/native-agent.js';
import { validTerminalLimits } from '../acp/terminals.js';
import { validFileReadLimits } from '../acp/bounded-read.js';
import { validLinkStores } from '../acp/hard-links.js';
import { agentOf } from '../adapters/agent-factory.js';
import { agentSettingsOf } from '../adapters/agent-settings.js';
import { createMemoryTransportPair } from '../jsonrpc/memory-transport.js';
import type { Transport } from '../jsonrpc/transport.js';
import { SHUTDOWN_EVENT, type SupervisionEvent } from '../supervision/events.js';
import { supervisionTree, whichChildren } from '../supervision/introspection.js';
import { AGENT_META_KEY, createHostAgent, innerAgentsOf, isHostAgent, journalWritesSettled, sessionMachinesOf } from '../host/host-agent.js';
import type { HostEvent } from '../host/host-event.js';
import type { JournalSession } from '../journal/journal.js';
import { isAsyncJournal } from '../journal/host-journal.js';
import { logEntryOf } from '../host/host-log.js';
import { sessionMachine } from '../session/session-machine.js';
import { createLiveActors } from '../host/live-actors.js';
import { observerOnDemand } from '../host/observer-on-demand.js';
import { connectionHubLogic, hostAgentOfHub, hubConnections, hubDrained, hubSessions, HUB_METHODS } from '../serve/connection-hub.js';
import { connectionAgentLogic, connectionSessionRoute } from '../serve/connection-agent.js';
import { placementSelfOf, startTakingOver, watchLease } from './host-duties.js';
import { openStore } from './host-store.js';
import { shutdownInReverse } from '../supervision/commands.js';
import type { HostHubOptions, ServeHub } from '../serve/serve-hub.js';

export type { HostEvent } from '../host/host-event.js';
export type { HostHubOptions, ServeHub } from '../serve/serve-hub.js';
export type { Host, HostOptions, HostPromptRun, HostSessionHandle, HostTreeNode, ServeOptions } from './host-api.js';
import type { Host, HostOptions, HostSessionHandle, HostTreeNode, ServeOptions } from './host-api.js';

/** What the host needs of the live view's tap (src/inspect/live-view.ts), loaded on the first `inspect.serve()`. */
interface LiveViewTap {
  readonly observer: Observer<InspectionEvent>;
  serve(options?: { readonly port?: number }): Promise<{ readonly url: string; readonly port: number; close(): Promise<void> }>;
  close(): Promise<void>;
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
  const agentSettings = agentSettingsOf(options.agentOptions, options.supervision);
  const resolve = (name: string): NativeAgent => {
    const custom = options.agents?.[name];
    if (custom) return custom;
    return agentOf(name, agentSettings);
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
  const hub = (hubOptions: HostHubOptions = {}): ServeHub => {
    if (hubApi) return hubApi;
    const { routingOn, ...own } = hubOptions;
    // Routing over the cluster is made from the host's own store: the one pool of the process.
    const routing = routingOn && store.postgres ? { routing: routingOn(store.postgres.store) } : {};
    const ref = createActor(connectionHubLogic, { input: { ...own, ...routing, host: hostAgent, journal, ...placementSelfOf(store.postgres) }, ...(inspect ? { inspect } : {}) });
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
        // It speaks v1 or v2, as its client asks (the host agent's versions): the hub hands each connection its turns' entries, which its server renders in its version.
        const agent: NativeAgent = { ...advertised, logic: connectionAgentLogic, routeSession: connectionSessionRoute, input: { hub: ref, connectionId, peer: info.peer }, extensions, servesPeerLinks: true };
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
        run = sendPrompt(client, sessionId, blocks, {
          ...(promptOptions.signal ? { signal: promptOptions.signal } : {}),
          // The same `_meta` key an editor sends (ACP v1): the host agent honours it alike.
          ...(promptOptions.idempotencyKey !== undefined ? { meta: { [IDEMPOTENCY_KEY_META]: promptOptions.idempotencyKey } } : {}),
        });
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
      await store.postgres?.store.then((opened) => opened.end(), () => undefined);
    },
  };
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
