/**
 * Runs an adapter definition as a native agent: the ACP agent server serves an adapted CLI
 * exactly as it serves a native agent.
 *
 * Each ACP session is a supervisor (rest_for_one: the session adapter, then its CLI's port)
 * under this agent's dynamic `sessions` supervisor. A definition with `ownsPort` (Claude
 * Code, Codex: `fromCliSession`) has its session adapter read and write its port itself:
 * this agent hands it the port at each (re)start and stays out of the line path; for other
 * definitions it relays the port's lines to the adapter and the adapter's writes to the port. A crash of the CLI restarts only the
 * port, with backoff and within the definition's intensity; the session adapter keeps its
 * state, hears `port.exited` then `port.started` (with the restart count), and re-initialises
 * the new CLI, which was started with the resume state the adapter last reported. When the
 * session's supervisor gives up, what the session still owed the editor is answered with an
 * error, and the other sessions go on.
 *
 * The host hears what happens to each session (`SessionLifecycleOutput`): the resume state
 * whenever the session adapter reports one (`session.resumeState`), a CLI that ended and
 * will be restarted (`session.restarting`), a restarted CLI initialized again
 * (`session.recovered`), a supervisor that gave up (`session.failed`).
 *
 * `session/resume` and `session/load` of a session this process does not run (the host
 * restarted and journaled it) start it under the given id, like `session/new`, with the
 * journaled resume state from `_meta["acp-warden/resume"]`: the first start of its CLI
 * already resumes the conversation (Claude's `--resume`, Codex's `thread/resume`). Without
 * a state, the CLI starts a new conversation (right for a session that had no turn yet).
 * The state comes from outside (the editor, the journal): the definition's `checkResume`
 * refuses a malformed one with -32602 before anything is started.
 * Neither replays the history: for `session/load`, the host replays its journal. Of a
 * session that runs, both answer its current setup. `session/close` stops the session's
 * CLI gracefully; a prompt still running ends `cancelled`.
 *
 * `session/list`, for a definition with a `list` (`ListingAdapterDefinition`), runs a
 * short-lived CLI of its own: a supervisor `list-<id>` (the lister, then its port) under the
 * same `sessions` supervisor, which ends once the lister answered (the CLI is stopped
 * gracefully), and fails the request if the CLI cannot start, exits or hangs first.
 */
import { nanoid } from 'nanoid';
import { createActor, type ActorLogic, type ActorScope, type ActorSystem, type AnyActorLogic, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import { RESUME_META_KEY, type AgentHandlerEvent, type AgentRequestEvent, type NativeAgent, type SessionRoute } from '../acp/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { PortExit } from '../port/port-exit.js';
import { lineKindOf } from '../jsonrpc/envelope-scan.js';
import { portLogic, portStopBudgetMs, type PortEmitted, type PortInput } from '../port/port.js';
import { createDynamicSupervisor } from '../supervision/dynamic-supervisor.js';
import { createSupervisor } from '../supervision/supervisor.js';
import { whichChildren } from '../supervision/introspection.js';
import type { StartChildResult, SupervisionEvent } from '../supervision/events.js';
import { describeExit, type ExitReason } from '../supervision/exit-reason.js';
import type { AdapterDefinition, CommandLine, SessionAdapterOutput } from './adapter.js';
import { relayPortLines } from './port-link.js';
import { resumeCheckError } from './resume-check.js';
import { agentRestartDefaults } from '../supervision/agent-restart-defaults.js';
import { AGENT_METHODS } from '../acp/methods.js';

/**
 * How an adapter answers ACP `session/list` from what its CLI keeps (Codex's `thread/list`):
 * a **lister**, actor logic run against one short-lived CLI process started for the request.
 *
 * The lister's input is `{ requestId, params, pageSize }` (`params`: the `session/list`
 * params). It receives the port events a session adapter receives (`port.started`,
 * `native.message`, `native.nonJson`, `port.exited`), emits `port.write` and `port.busy`,
 * answers `requestId` once with `acp.respond` (a `ListSessionsResponse`) or `acp.error`, and
 * then reaches a final state: that ends the listing and stops its CLI gracefully.
 */
export interface SessionListing {
  readonly logic: AnyActorLogic;
  /** The listing CLI's command line; default: the definition's `command` for a first start. */
  readonly command?: (context: { readonly executable: string; readonly cwd: string }) => CommandLine;
  /** How many sessions to ask the CLI for per page (default 50). */
  readonly pageSize?: number;
  /** The listing fails when the CLI prints nothing for this long while it owes an answer (default 20 000 ms). */
  readonly timeoutMs?: number;
}

/** An adapter definition that may also list the sessions its CLI keeps (it then advertises `sessionCapabilities.list`). */
export interface ListingAdapterDefinition extends AdapterDefinition {
  readonly list?: SessionListing;
}

/** How to run an adapter here. */
export interface AdapterAgentOptions {
  readonly definition: ListingAdapterDefinition;
  /** The executable, resolved (registry, `--agent-command`). */
  readonly executable: string;
  /** `isolated` (default) or `inherit`. */
  readonly envPolicy?: 'isolated' | 'inherit';
  /** Extra variables (`--env`); `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Extra host variable names passed through (`--env NAME`). */
  readonly passthrough?: readonly string[];
}

/**
 * A native agent that runs `definition` for every ACP session: one supervisor per session
 * with the session adapter and its CLI's port (docs/adapters.md).
 *
 * @example
 * ```ts
 * const shout = createAdapterAgent({ definition: shoutAdapter, executable: '/usr/local/bin/shout' });
 * const host = createHost({ agents: { shout } });
 * const session = await host.newSession({ agent: 'shout', cwd: process.cwd() });
 * ```
 */
export function createAdapterAgent(options: AdapterAgentOptions): NativeAgent {
  const { definition } = options;
  return {
    logic: adapterAgentLogic,
    input: options,
    agentInfo: definition.agentInfo,
    capabilities: definition.capabilities,
    authMethods: definition.authMethods ?? [],
    supervisors: (agent) => {
      const live = lives.get(agent);
      return live ? [live.sessionsSupervisor] : [];
    },
    routeSession: sessionRoute,
  };
}

/**
 * A host's direct line to session `sessionId`'s adapter: what `route` does for the session's
 * events, without a trip through this agent's mailbox. The request is owed an answer all the
 * same (its `pending` entry), so a close or a failure of the session still answers it.
 */
function sessionRoute(agent: AnyActorRef, sessionId: string): SessionRoute {
  return {
    send(event) {
      const session = lives.get(agent)?.sessions.get(sessionId);
      if (!session?.adapter || sessionOf(event) !== sessionId) return false;
      toAdapter(session, session.adapter, event);
      return true;
    },
    watchUpdates(onActor) {
      const live = lives.get(agent);
      const session = live?.sessions.get(sessionId);
      if (!live || !session?.adapter || session.updatesWatcher) return undefined;
      const watcher = onActor;
      session.updatesWatcher = watcher;
      bindAdapterOutputs(live, session);
      onActor(session.adapter);
      return {
        unwatch() {
          if (session.updatesWatcher !== watcher) return;
          session.updatesWatcher = undefined;
          if (session.adapter) bindAdapterOutputs(live, session);
        },
      };
    },
  };
}

interface Session {
  readonly id: string;
  readonly cwd: string;
  readonly params: Record<string, unknown>;
  /** The `session/new` (`session/resume`, `session/load`) that started it. */
  readonly startRequestId: string;
  /** The request that started it (answered when the sessions supervisor answers). */
  readonly startRequest: AgentRequestEvent;
  supervisor: AnyActorRef | undefined;
  adapter: AnyActorRef | undefined;
  port: AnyActorRef | undefined;
  resume: unknown;
  restarts: number;
  /** Requests routed to this session and not answered yet: request id → ACP method. */
  readonly pending: Map<string, string>;
  /** `session/resume` and `session/load` requests: their answer has no `sessionId`. */
  readonly resumeRequests: Set<string>;
  /** How the CLI last ended, for `session.restarting`. */
  lastExit: PortExit | undefined;
  /** `session/close` stops it: its end is no failure. */
  closing: boolean;
  /** Resume and load requests that came while it was closing: served once it has ended. */
  readonly deferred: AgentRequestEvent[];
  /** Its listeners on the adapter's outputs (each type it relays: the updates not while a host watches them). */
  adapterSubscriptions: Subscription[];
  /** The host that takes the session's updates from its adapter itself (`SessionRoute.watchUpdates`): told of each new adapter. */
  updatesWatcher: ((adapter: AnyActorRef) => void) | undefined;
  portSubscriptions: Subscription[];
  readonly other: Subscription[];
}

interface Live {
  readonly scope: Scope;
  readonly options: AdapterAgentOptions;
  readonly sessions: Map<string, Session>;
  readonly sessionsSupervisor: AnyActorRef;
}

type AgentSnapshot = Snapshot<undefined> & { readonly context: { readonly sessions: number } };
type Scope = ActorScope<AgentSnapshot, AgentHandlerEvent, ActorSystem<any>, SessionAdapterOutput>;

const lives = new WeakMap<AnyActorRef, Live>();
const keySeparator = '\u0000';

/** Actor logic of an adapter agent (see `createAdapterAgent`). */
export const adapterAgentLogic = {
  config: { name: 'adapterAgent' },
  getInitialSnapshot(scope: Scope, options: AdapterAgentOptions): AgentSnapshot {
    const sessionsSupervisor = createActor(createDynamicSupervisor({ name: 'sessions', intensity: 1000, period: 1000 }), { parent: scope.self, id: 'sessions' });
    lives.set(scope.self, { scope, options, sessions: new Map(), sessionsSupervisor });
    return { status: 'active', output: undefined, error: undefined, context: { sessions: 0 } };
  },
  start(_snapshot: AgentSnapshot, scope: Scope): void {
    (lives.get(scope.self) as Live).sessionsSupervisor.start();
  },
  transition(
    snapshot: AgentSnapshot,
    event:
      | AgentHandlerEvent
      | { type: `xstate.${string}` }
      | { type: 'adapter.sessionEnded'; sessionId: string; reason: ExitReason }
      | { type: 'adapter.sessionStartAnswered'; sessionId: string; result: StartChildResult },
    scope: Scope,
  ): AgentSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    switch (event.type) {
      case 'session.new':
        startSession(live, event as AgentRequestEvent, `${live.options.definition.name}-${nanoid(10)}`, undefined);
        break;
      case 'session.resume':
      case 'session.load':
        resumeSession(live, event as AgentRequestEvent);
        break;
      case 'session.close':
        closeSession(live, event as AgentRequestEvent);
        break;
      case 'session.list':
        if (live.options.definition.list) listSessions(live, event as AgentRequestEvent, live.options.definition.list);
        else scope.emit({ type: 'acp.error', requestId: (event as AgentRequestEvent).requestId, error: RpcError.methodNotFound(AGENT_METHODS.session_list).toErrorObject() });
        break;
      case 'session.prompt':
      case 'session.setMode':
      case 'session.setConfigOption':
      case 'session.cancel':
      case 'client.response':
      case 'client.error':
        route(live, sessionOf(event), event);
        break;
      case 'adapter.sessionEnded':
        sessionEnded(live, event.sessionId, event.reason);
        break;
      case 'adapter.sessionStartAnswered': {
        const waiting = live.sessions.get(event.sessionId);
        if (waiting) sessionStartAnswered(live, waiting.startRequest, event.sessionId, waiting.resume, event.result);
        break;
      }
      case 'xstate.stop':
        if (live.sessionsSupervisor.getSnapshot().status === 'active') scope.stopChild(live.sessionsSupervisor);
        return { ...snapshot, status: 'stopped' } as AgentSnapshot;
      default:
        if ('requestId' in event && typeof event.requestId === 'string') {
          scope.emit({ type: 'acp.error', requestId: event.requestId, error: { code: -32603, message: `${live.options.definition.name} does not implement ${(event as AgentRequestEvent).method}` } });
        }
        break;
    }
    return { ...snapshot, context: { sessions: live.sessions.size } };
  },
  getPersistedSnapshot(snapshot: AgentSnapshot): AgentSnapshot {
    return snapshot;
  },
} as unknown as ActorLogic<AgentSnapshot, AgentHandlerEvent, AdapterAgentOptions, ActorSystem<any>, SessionAdapterOutput>;

function portInput(live: Live, session: Session): PortInput {
  const { definition, executable, envPolicy, env, passthrough } = live.options;
  const command = definition.command?.({ executable, cwd: session.cwd, params: session.params, resume: session.resume, restarts: session.restarts });
  const base = command ?? { args: [], env: {} };
  return {
    // One long line (a tool result with a screenshot) is skipped, not a reason to kill the CLI.
    oversize: 'skip',
    ...definition.port,
    command: executable,
    args: base.args,
    cwd: session.cwd,
    env: {
      ...base.env,
      policy: envPolicy ?? base.env.policy ?? 'isolated',
      passthrough: [...(base.env.passthrough ?? []), ...(passthrough ?? [])],
      explicit: { ...base.env.explicit, ...env },
    },
  };
}

const isResumeOrLoad = (request: AgentRequestEvent) => request.type === 'session.resume' || request.type === 'session.load';

/** The resume state the host journaled, from `_meta["acp-warden/resume"]`. */
function journaledState(params: Record<string, unknown>): unknown {
  const meta = params._meta;
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[RESUME_META_KEY] : undefined;
}

/**
 * `session/resume` or `session/load`: a session that runs answers its current setup (its
 * adapter hears `adapter.start` again); any other id is started here, with the journaled
 * resume state. Neither replays history (for `session/load`, the host replays its journal).
 */
function resumeSession(live: Live, request: AgentRequestEvent): void {
  const sessionId = request.params.sessionId as string;
  const running = live.sessions.get(sessionId);
  if (running?.closing) {
    running.deferred.push(request);
    return;
  }
  if (running) {
    if (!running.adapter) {
      live.scope.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('agent_starting', `${live.options.definition.name} session ${sessionId} is restarting; try again in a moment`).toErrorObject() });
      return;
    }
    running.pending.set(request.requestId, request.method);
    running.resumeRequests.add(request.requestId);
    running.adapter.send({ type: 'adapter.start', requestId: request.requestId, sessionId, params: request.params, context: request.context, resume: running.resume });
    return;
  }
  const resume = journaledState(request.params);
  // From outside (the editor, the journal): checked before it can reach a command line.
  const check = live.options.definition.checkResume?.(resume);
  if (check && !check.ok) {
    live.scope.emit({ type: 'acp.error', requestId: request.requestId, error: resumeCheckError(check).toErrorObject() });
    return;
  }
  startSession(live, request, sessionId, resume);
}

/** Starts session `id` (its supervisor, adapter and port) for `request`; `resume` seeds the first start. */
function startSession(live: Live, request: AgentRequestEvent, id: string, resume: unknown): void {
  const { definition } = live.options;
  const session: Session = {
    id,
    cwd: request.params.cwd as string,
    params: request.params,
    startRequestId: request.requestId,
    startRequest: request,
    supervisor: undefined,
    adapter: undefined,
    port: undefined,
    resume,
    restarts: 0,
    pending: new Map([[request.requestId, request.method]]),
    resumeRequests: new Set(isResumeOrLoad(request) ? [request.requestId] : []),
    lastExit: undefined,
    closing: false,
    deferred: [],
    adapterSubscriptions: [],
    updatesWatcher: undefined,
    portSubscriptions: [],
    other: [],
  };
  live.sessions.set(id, session);
  const restart = definition.restart ?? {};
  const children = [{ id: 'adapter', start: { logic: definition.session } }];
  if (definition.command) {
    children.push({
      id: 'port',
      start: { logic: portLogic, inputFor: () => portInput(live, session) },
      ...(restart.backoff ? { backoff: restart.backoff } : {}),
      shutdown: portStopBudgetMs(definition.port?.shutdown),
    } as never);
  }
  const logic = createSupervisor({
    name: `session ${id}`,
    strategy: 'rest_for_one',
    intensity: restart.intensity ?? agentRestartDefaults.intensity,
    period: restart.period ?? agentRestartDefaults.period,
    children,
  });
  // The sessions supervisor answers at once, unless it is busy stopping another session (as an
  // OTP supervisor blocks in terminate): then the answer comes later, through our mailbox.
  let answered: StartChildResult | undefined;
  let waiting = false;
  live.sessionsSupervisor.send({
    type: 'supervisor.startChild',
    spec: { id, restart: 'temporary', type: 'supervisor', start: { logic } },
    reply: (result: StartChildResult) => {
      if (waiting) live.scope.self.send({ type: 'adapter.sessionStartAnswered', sessionId: id, result } as never);
      else answered = result;
    },
  });
  waiting = answered === undefined;
  if (answered) sessionStartAnswered(live, request, id, resume, answered);
}

/** The sessions supervisor started session `id`'s supervisor, or could not. */
function sessionStartAnswered(live: Live, request: AgentRequestEvent, id: string, resume: unknown, started: StartChildResult): void {
  const { definition } = live.options;
  const session = live.sessions.get(id);
  if (!session) return;
  if (!started.ok) {
    live.sessions.delete(id);
    live.scope.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('start_failed', `${definition.name} could not start: ${startFailure(started.reason)}`).toErrorObject() });
    for (const deferred of session.deferred) resumeSession(live, deferred);
    return;
  }
  const supervisor = started.ref;
  session.supervisor = supervisor;
  bindAdapter(live, session);
  session.adapter?.send({ type: 'adapter.start', requestId: request.requestId, sessionId: id, params: request.params, context: request.context, ...(resume === undefined ? {} : { resume }) });
  if (definition.command) bindPort(live, session);
  // Later (re)starts of the adapter or the port, and the end of the session's supervisor.
  session.other.push(supervisor.on('child.started', (event: Extract<SupervisionEvent, { type: 'child.started' }>) => {
    if (event.childId === 'adapter') bindAdapter(live, session);
    if (event.childId === 'port') {
      session.restarts = event.restarts;
      bindPort(live, session);
    }
  }));
  // The CLI ended and its supervisor restarts it (a restart refused later ends the session: `session.failed`).
  session.other.push(supervisor.on('child.exited', (event: Extract<SupervisionEvent, { type: 'child.exited' }>) => {
    if (event.childId !== 'port' || (event.action !== 'restart' && event.action !== 'restart_delayed') || session.closing) return;
    const exit = session.lastExit;
    live.scope.emit({
      type: 'session.restarting',
      sessionId: id,
      restarts: session.restarts,
      exit: exit ? { reason: exit.reason, ...(exit.stderrTail ? { stderrTail: exit.stderrTail } : {}) } : { reason: event.reason },
    });
  }));
  session.other.push(supervisor.subscribe({
    complete: () => live.scope.self.send({ type: 'adapter.sessionEnded', sessionId: id, reason: supervisor.getSnapshot().output as ExitReason } as never),
  }));
}

function refOf(session: Session, childId: string): AnyActorRef | undefined {
  return session.supervisor ? whichChildren(session.supervisor).find((row) => row.id === childId)?.ref : undefined;
}

function bindAdapter(live: Live, session: Session): void {
  const adapter = refOf(session, 'adapter');
  if (!adapter || adapter === session.adapter) return;
  session.adapter = adapter;
  bindAdapterOutputs(live, session);
  session.updatesWatcher?.(adapter);
}

/** Every type of output a session adapter emits (the compiler checks the list is whole). */
const adapterOutputTypes = Object.keys({
  'acp.respond': true,
  'acp.error': true,
  'acp.update': true,
  'acp.updates': true,
  'acp.clientRequest': true,
  'acp.notify': true,
  'session.restarting': true,
  'session.recovered': true,
  'session.failed': true,
  'session.resumeState': true,
  'agent.lineDropped': true,
  'session.turnJournaled': true,
  'port.write': true,
  'port.busy': true,
  'adapter.resume': true,
  'adapter.ready': true,
} satisfies Record<SessionAdapterOutput['type'], true>) as ReadonlyArray<SessionAdapterOutput['type']>;

/**
 * Listens to the session adapter's outputs, one listener per type: all of them, but the updates
 * while a host takes them from the adapter itself (its watcher), so that this agent is not on
 * their path at all.
 */
function bindAdapterOutputs(live: Live, session: Session): void {
  for (const subscription of session.adapterSubscriptions.splice(0)) subscription.unsubscribe();
  const adapter = session.adapter;
  if (!adapter) return;
  for (const type of adapterOutputTypes) {
    if (type === 'acp.update' && session.updatesWatcher) continue;
    session.adapterSubscriptions.push(adapter.on(type, (output: SessionAdapterOutput) => onAdapterOutput(live, session, output)));
  }
}

function bindPort(live: Live, session: Session): void {
  const port = refOf(session, 'port');
  if (!port || port === session.port) return;
  for (const subscription of session.portSubscriptions) subscription.unsubscribe();
  session.port = port;
  const ownsPort = live.options.definition.ownsPort === true;
  const pid = (port.getSnapshot() as { context?: { pid?: number } }).context?.pid;
  // What the host hears of the port, before the session adapter does.
  session.portSubscriptions = [
    port.on('port.oversize', (event: Extract<PortEmitted, { type: 'port.oversize' }>) => {
      live.scope.emit({ type: 'agent.lineDropped', sessionId: session.id, bytes: event.bytesSeen, limit: event.limit, what: lineKindOf(event.head) });
    }),
    port.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => {
      session.lastExit = event.exit;
    }),
    // A session adapter that owns its port (`ownsPort`) reads it itself; to any other, its lines are relayed from here.
    ...(ownsPort ? [] : relayPortLines(port, (event) => session.adapter?.send(event))),
  ];
  const started = (spawned: number) => session.adapter?.send({ type: 'port.started', pid: spawned, restarts: session.restarts, ...(ownsPort ? { port } : {}) });
  // The first spawn of a process waits for execa to load (src/port/execa-loader.ts): its pid comes with `port.spawned`.
  if (pid !== undefined) started(pid);
  else session.portSubscriptions.push(port.on('port.spawned', (event: Extract<PortEmitted, { type: 'port.spawned' }>) => started(event.pid)));
}

function onAdapterOutput(live: Live, session: Session, output: SessionAdapterOutput): void {
  // Each request is answered once: a late answer (a prompt that `session/close` already ended, whose CLI then stopped) is dropped.
  if ((output.type === 'acp.respond' || output.type === 'acp.error') && !session.pending.has(output.requestId)) return;
  switch (output.type) {
    case 'port.write':
      // An adapter that owns its port has written it already.
      if (!live.options.definition.ownsPort) session.port?.send({ type: 'port.write', message: output.message });
      return;
    case 'port.busy':
      if (!live.options.definition.ownsPort) session.port?.send({ type: 'port.busy', busy: output.busy, toolRunning: output.toolRunning === true });
      return;
    case 'adapter.resume':
      session.resume = output.state;
      live.scope.emit({ type: 'session.resumeState', sessionId: session.id, state: output.state });
      return;
    case 'adapter.ready':
      if (output.restarts > 0) live.scope.emit({ type: 'session.recovered', sessionId: session.id, restarts: output.restarts });
      return;
    case 'acp.clientRequest':
      live.scope.emit({ ...output, key: `${session.id}${keySeparator}${output.key}` });
      return;
    case 'acp.respond': {
      session.pending.delete(output.requestId);
      if (session.resumeRequests.delete(output.requestId) && typeof output.result === 'object' && output.result !== null) {
        // LoadSessionResponse / ResumeSessionResponse: the setup without the id the editor gave.
        const { sessionId: _id, ...setup } = output.result as Record<string, unknown>;
        live.scope.emit({ ...output, result: setup });
        return;
      }
      live.scope.emit(output);
      return;
    }
    case 'acp.error':
      session.pending.delete(output.requestId);
      session.resumeRequests.delete(output.requestId);
      live.scope.emit(output);
      // The session never opened (its CLI refused the thread, say): nothing may keep running for it.
      if (output.requestId === session.startRequestId) closeQuietly(live, session);
      return;
    default:
      live.scope.emit(output);
  }
}

/** The session a session's own event is about (an answer to a client request says it in its key). */
function sessionOf(event: AgentHandlerEvent): string | undefined {
  if (event.type === 'client.response' || event.type === 'client.error') return event.key.split(keySeparator)[0];
  if (event.type === 'session.cancel') return event.sessionId;
  return typeof (event as AgentRequestEvent).params?.sessionId === 'string' ? ((event as AgentRequestEvent).params.sessionId as string) : undefined;
}

/** The request a session's own event makes (its answer is owed): prompts and settings, not cancels or answers. */
function requestOf(event: AgentHandlerEvent): AgentRequestEvent | undefined {
  return event.type === 'session.prompt' || event.type === 'session.setMode' || event.type === 'session.setConfigOption' ? (event as AgentRequestEvent) : undefined;
}

/** Hands a session's own event to its adapter: a request is owed an answer (`pending`), a client answer gets the adapter's own key back. */
function toAdapter(session: Session, adapter: AnyActorRef, event: AgentHandlerEvent): void {
  const request = requestOf(event);
  if (request) session.pending.set(request.requestId, request.method);
  if (event.type === 'client.response' || event.type === 'client.error') adapter.send({ ...event, key: event.key.slice(event.key.indexOf(keySeparator) + 1) });
  else adapter.send(event);
}

function route(live: Live, sessionId: string | undefined, event: AgentHandlerEvent): void {
  const session = sessionId === undefined ? undefined : live.sessions.get(sessionId);
  if (!session?.adapter) {
    const request = requestOf(event);
    if (request) live.scope.emit({ type: 'acp.error', requestId: request.requestId, error: RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }).toErrorObject() });
    return;
  }
  toAdapter(session, session.adapter, event);
}

function closeSession(live: Live, request: AgentRequestEvent): void {
  const sessionId = request.params.sessionId as string;
  const session = live.sessions.get(sessionId);
  live.scope.emit({ type: 'acp.respond', requestId: request.requestId, result: {} });
  if (!session) return;
  // ACP: closing a session cancels its work; the prompt ends now, its CLI stops after.
  for (const [requestId, method] of session.pending) {
    if (method !== AGENT_METHODS.session_prompt) continue;
    session.pending.delete(requestId);
    live.scope.emit({ type: 'acp.respond', requestId, result: { stopReason: 'cancelled' } });
  }
  closeQuietly(live, session);
}

/** Stops a session's supervisor, gracefully (the port closes the CLI's stdin, then signals its group). */
function closeQuietly(live: Live, session: Session): void {
  if (session.closing) return;
  session.closing = true;
  live.sessionsSupervisor.send({ type: 'supervisor.terminateChild', id: session.id });
}

/** The session's supervisor ended: answer what it still owed, with why; a failure is `session.failed` (the host tells the editor). */
function sessionEnded(live: Live, sessionId: string, reason: ExitReason | undefined): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  live.sessions.delete(sessionId);
  for (const subscription of [...session.other, ...session.portSubscriptions, ...session.adapterSubscriptions.splice(0)]) subscription.unsubscribe();
  session.updatesWatcher = undefined;
  const name = live.options.definition.name;
  const closed = session.closing || !reason || (reason.kind === 'shutdown' && reason.detail === undefined);
  const why = reason ? describeExit(reason) : 'stopped';
  for (const [requestId, method] of session.pending) {
    if (closed && method === AGENT_METHODS.session_prompt) {
      // ACP: closing a session cancels its work.
      live.scope.emit({ type: 'acp.respond', requestId, result: { stopReason: 'cancelled' } });
    } else if (closed) {
      live.scope.emit({ type: 'acp.error', requestId, error: RpcError.because('session_closed', `${name} session ${sessionId} was closed`, { sessionId }).toErrorObject() });
    } else {
      live.scope.emit({
        type: 'acp.error',
        requestId,
        error: RpcError.because('session_failed', `${name} kept failing and the session was closed (${why})`, { sessionId, restarts: session.restarts }).toErrorObject(),
      });
    }
  }
  if (!closed) live.scope.emit({ type: 'session.failed', sessionId, restarts: session.restarts, reason: why });
  for (const request of session.deferred) resumeSession(live, request);
}

// ---------------------------------------------------------------------------------------
// session/list: a short-lived CLI

/**
 * Runs the definition's lister against a CLI started for this request, under the `sessions`
 * supervisor: `list-<id>` (autoShutdown `any_significant`) with the lister (significant) and
 * the port, neither restarted. The lister's final state ends the supervisor, which stops the
 * CLI gracefully; whatever ends it first (the CLI could not start, exited, hung; the lister
 * crashed; the agent is stopping) fails the request instead.
 */
function listSessions(live: Live, request: AgentRequestEvent, listing: SessionListing): void {
  const { definition, executable, envPolicy, env, passthrough } = live.options;
  const id = `list-${nanoid(8)}`;
  const cwd = process.cwd();
  const base = listing.command?.({ executable, cwd }) ?? definition.command?.({ executable, cwd, params: request.params, resume: undefined, restarts: 0 }) ?? { args: [], env: {} };
  const port: PortInput = {
    oversize: 'skip',
    ...definition.port,
    // Owed an answer and silent this long, from its start on (a lister has one budget): hung.
    watchdog: { idleMs: listing.timeoutMs ?? 20_000, startupMs: listing.timeoutMs ?? 20_000 },
    command: executable,
    args: base.args,
    cwd,
    env: {
      ...base.env,
      policy: envPolicy ?? base.env.policy ?? 'isolated',
      passthrough: [...(base.env.passthrough ?? []), ...(passthrough ?? [])],
      explicit: { ...base.env.explicit, ...env },
    },
  };
  const logic = createSupervisor({
    name: `list ${id}`,
    strategy: 'one_for_all',
    intensity: 0,
    period: 1000,
    autoShutdown: 'any_significant',
    children: [
      { id: 'lister', start: { logic: listing.logic, input: { requestId: request.requestId, params: request.params, pageSize: listing.pageSize ?? 50 } }, restart: 'temporary', significant: true },
      { id: 'port', start: { logic: portLogic, input: port }, restart: 'temporary', shutdown: portStopBudgetMs(definition.port?.shutdown) },
    ],
  });
  let answered = false;
  const subscriptions: Subscription[] = [];
  const answer = (output: SessionAdapterOutput) => {
    if (answered) return;
    answered = true;
    live.scope.emit(output);
  };
  // Answered at once, or later when the sessions supervisor is busy stopping a session: the
  // lister only subscribes and emits, which is safe from the supervisor's reply.
  live.sessionsSupervisor.send({
    type: 'supervisor.startChild',
    spec: { id, restart: 'temporary', type: 'supervisor', start: { logic } },
    reply: (started: StartChildResult) => listerStarted(started),
  });

  function listerStarted(started: StartChildResult): void {
    if (!started.ok) {
      answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('start_failed', `${definition.name} could not list its sessions: ${startFailure(started.reason)}`).toErrorObject() });
      return;
    }
    const supervisor = started.ref;
    const children = whichChildren(supervisor);
    const lister = children.find((row) => row.id === 'lister')?.ref;
    const cli = children.find((row) => row.id === 'port')?.ref;
    if (lister) {
      subscriptions.push(lister.on('*', (output: SessionAdapterOutput) => {
        if (output.type === 'port.write' || output.type === 'port.busy') cli?.send(output);
        else if ((output.type === 'acp.respond' || output.type === 'acp.error') && output.requestId === request.requestId) answer(output);
      }));
    }
    if (lister && cli) {
      // The lister hears its CLI's lines as a session adapter does (port-link.ts).
      subscriptions.push(...relayPortLines(cli, (event) => lister.send(event)));
      const pid = (cli.getSnapshot() as { context?: { pid?: number } }).context?.pid;
      if (pid !== undefined) lister.send({ type: 'port.started', pid, restarts: 0 });
      else subscriptions.push(cli.on('port.spawned', (event: Extract<PortEmitted, { type: 'port.spawned' }>) => lister.send({ type: 'port.started', pid: event.pid, restarts: 0 })));
    }
    subscriptions.push(supervisor.subscribe({
      complete: () => {
        for (const subscription of subscriptions) subscription.unsubscribe();
        const output = supervisor.getSnapshot().output as ExitReason | undefined;
        answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.because('list_failed', `${definition.name} stopped before listing its sessions (${output ? describeExit(output) : 'stopped'})`).toErrorObject() });
      },
    }));
  }
}

/** Why a supervisor could not start, in words: the innermost cause's message (a port's "could not start (ENOENT) …"). */
function startFailure(reason: unknown): string {
  let current: unknown = reason;
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const object = current as { startFailed?: unknown; detail?: { cause?: unknown }; shortMessage?: unknown; message?: unknown };
    if (typeof object.shortMessage === 'string') return object.shortMessage;
    if (object.startFailed !== undefined) current = object.startFailed;
    else if (object.detail?.cause !== undefined) current = object.detail.cause;
    else if (typeof object.message === 'string') return object.message;
    else break;
  }
  return typeof reason === 'string' ? reason : JSON.stringify(reason);
}

