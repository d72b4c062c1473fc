/**
 * Native ACP agents (`gemini --acp`, `opencode acp`, claude-agent-acp, codex-acp,
 * `acp:<command line>`), passed through under supervision.
 *
 * A native agent for our ACP agent server that is itself an ACP client of the real agent:
 * the agent process is a port and our client rides on it, rest_for_one under one supervisor.
 * Requests go down, updates come up, and the agent's requests to the client (permissions,
 * files, terminals) are relayed to the editor, which advertised what it serves. When the
 * agent process dies, the prompt in flight fails naming the crash, the process restarts
 * with backoff, the connection is initialized again, and every open session is re-attached
 * with `session/resume` (or `session/load`, its replay kept from the editor, which has the
 * history, until round trips show it is over: Gemini goes on replaying after its answer) when
 * the agent advertises them; the next prompt continues the conversation.
 *
 * The host hears it per open session (`SessionLifecycleOutput`): `session.restarting` when
 * the agent process ended and will be restarted, `session.recovered` for each session
 * re-attached after the restart, `session.failed` for a session that could not be
 * re-attached and for every open session when the supervisor gives up. `session/resume`
 * and `session/load` (with the host's `_meta`) go to the agent as they are.
 */
import type { InitializeResponse } from '@agentclientprotocol/sdk';
import { createActor, type ActorLogic, type ActorScope, type ActorSystem, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import {
  agentClientLogic,
  authenticate,
  cancelPrompt,
  closeSession,
  deleteSession,
  drainReplay,
  forkSession,
  initialize,
  listSessions,
  loadSession,
  logout,
  newSession,
  prompt,
  resumeSession,
  setConfigOption,
  setMode,
  type AgentClientEmitted,
} from '../acp/agent-client.js';
import type { AgentEventContext, AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent } from '../acp/native-agent.js';
import type { PortExit } from '../port/port-exit.js';
import { portTransport } from '../jsonrpc/port-transport.js';
import { RpcError, toRpcError } from '../jsonrpc/rpc-error.js';
import { lineKindOf } from '../jsonrpc/envelope-scan.js';
import { portLogic, portStopBudgetMs, type PortEmitted, type PortInput } from '../port/port.js';
import type { BackoffOptions } from '../supervision/backoff.js';
import type { SupervisionEvent } from '../supervision/events.js';
import { whichChildren } from '../supervision/introspection.js';
import { createSupervisor } from '../supervision/supervisor.js';
import { exitFromOutput } from '../supervision/exit-reason.js';
import { shutdown } from '../supervision/commands.js';

/** How to run a native ACP agent. */
export interface AcpPassthroughOptions {
  /** A name for the agent (`gemini`). */
  readonly name: string;
  readonly executable: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  readonly envPolicy?: 'isolated' | 'inherit';
  readonly passthrough?: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly restart?: { readonly intensity?: number; readonly period?: number; readonly backoff?: BackoffOptions };
  readonly port?: Partial<Omit<PortInput, 'command' | 'args' | 'env'>>;
}

/** A native agent that passes ACP through to an ACP agent process, under supervision. */
export function createAcpPassthrough(options: AcpPassthroughOptions): NativeAgent {
  return {
    logic: passthroughLogic,
    input: options,
    agentInfo: { name: options.name, version: 'unknown' },
    // The passthrough itself always serves session/close: it forgets the session (never
    // re-attached after a restart) and forwards the close when the agent advertises it.
    capabilities: { sessionCapabilities: { close: {} } },
    // What to advertise is what the agent behind says: the server asks us.
    delegateInitialize: true,
    cancelGraceMs: 10_000,
    supervisors: (agent) => {
      const supervisor = lives.get(agent)?.supervisor;
      return supervisor ? [supervisor] : [];
    },
  };
}

interface OpenSession {
  readonly cwd: string;
  readonly additionalDirectories: string[] | undefined;
  readonly mcpServers: unknown[];
}

interface Live {
  readonly scope: Scope;
  readonly options: AcpPassthroughOptions;
  supervisor: AnyActorRef | undefined;
  client: AnyActorRef | undefined;
  context: AgentEventContext | undefined;
  downstream: InitializeResponse | undefined;
  readonly sessions: Map<string, OpenSession>;
  /** Sessions being re-attached after a restart, until their replay is over: it is not the editor's news. */
  readonly reattaching: Set<string>;
  readonly relays: Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>;
  /** Requests that arrived while the agent restarts, run once it is back. */
  readonly waiting: AgentHandlerEvent[];
  recovering: boolean;
  failed: string | undefined;
  subscriptions: Subscription[];
  nextRelay: number;
  /** How many times the agent process was restarted. */
  restarts: number;
  /** How the agent process last ended, for `session.restarting`. */
  lastExit: PortExit | undefined;
  portSubscriptions: Subscription[];
  /**
   * Requests the agent owes an answer to (prompts, re-initialisation, re-attachment, any
   * forwarded request): while any is and no relay waits for the editor, the port's hang
   * watchdog is armed. A hang during recovery is a hang too.
   */
  working: number;
}

type PassthroughSnapshot = Snapshot<undefined> & { readonly context: { readonly sessions: number; readonly recovering: boolean } };
type Scope = ActorScope<PassthroughSnapshot, AgentHandlerEvent, ActorSystem<any>, AgentHandlerOutput>;

const lives = new WeakMap<AnyActorRef, Live>();

/**
 * Updates that state how the session is now (not its history): passed on while a session is
 * re-attached, since the restarted agent's commands, mode or options are the editor's news.
 */
const stateKinds: ReadonlySet<string> = new Set(['available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'usage_update']);

const passthroughLogic = {
  config: { name: 'acpPassthrough' },
  getInitialSnapshot(scope: Scope, options: AcpPassthroughOptions): PassthroughSnapshot {
    lives.set(scope.self, {
      scope, options, supervisor: undefined, client: undefined, context: undefined, downstream: undefined,
      sessions: new Map(), reattaching: new Set(), relays: new Map(), waiting: [], recovering: false, failed: undefined, subscriptions: [], nextRelay: 1, working: 0,
      restarts: 0, lastExit: undefined, portSubscriptions: [],
    });
    return { status: 'active', output: undefined, error: undefined, context: { sessions: 0, recovering: false } };
  },
  transition(snapshot: PassthroughSnapshot, event: AgentHandlerEvent | { type: `xstate.${string}` } | { type: 'passthrough.restarted' } | { type: 'passthrough.failed'; why: string }, scope: Scope): PassthroughSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    switch (event.type) {
      case 'xstate.stop':
        for (const subscription of live.subscriptions) subscription.unsubscribe();
        for (const subscription of live.portSubscriptions.splice(0)) subscription.unsubscribe();
        if (live.supervisor?.getSnapshot().status === 'active') scope.stopChild(live.supervisor);
        return { ...snapshot, status: 'stopped' } as PassthroughSnapshot;
      case 'passthrough.restarted':
        void recover(live);
        break;
      case 'passthrough.failed':
        live.failed = event.why;
        for (const subscription of live.portSubscriptions.splice(0)) subscription.unsubscribe();
        // Every open session is over: the host hears it once per session.
        for (const sessionId of live.sessions.keys()) emit(live, { type: 'session.failed', sessionId, restarts: live.restarts, reason: `${live.options.name} ${event.why}` });
        live.sessions.clear();
        for (const waiting of live.waiting.splice(0)) handle(live, waiting);
        break;
      default:
        if (event.type.startsWith('xstate.')) break;
        handle(live, event as AgentHandlerEvent);
    }
    return { ...snapshot, context: { sessions: live.sessions.size, recovering: live.recovering } };
  },
  getPersistedSnapshot(snapshot: PassthroughSnapshot): PassthroughSnapshot {
    return snapshot;
  },
} as unknown as ActorLogic<PassthroughSnapshot, AgentHandlerEvent, AcpPassthroughOptions, ActorSystem<any>, AgentHandlerOutput>;

const emit = (live: Live, output: AgentHandlerOutput) => live.scope.emit(output);
const respondTo = (live: Live, requestId: string, result: unknown) => emit(live, { type: 'acp.respond', requestId, result: result ?? {} });

function failWith(live: Live, requestId: string, error: unknown): void {
  const rpc = toRpcError(error);
  if (rpc.failure === 'peer_lost') {
    emit(live, {
      type: 'acp.error',
      requestId,
      error: RpcError.internalError(`${live.options.name} stopped during the request; acp-warden restarts it and re-attaches the session`, { reason: 'agent_crashed', exit: (rpc.data as { exit?: unknown } | undefined)?.exit }).toErrorObject(),
    });
    return;
  }
  emit(live, { type: 'acp.error', requestId, error: rpc.toErrorObject() });
}

function handle(live: Live, event: AgentHandlerEvent): void {
  switch (event.type) {
    case 'initialize':
      // A second initialize from the editor re-negotiates nothing downstream: the agent that
      // runs answers it again (booting another one would leak a process and lose the sessions).
      if (live.supervisor && live.downstream) {
        live.context = event.context;
        const found = live.downstream;
        respondTo(live, event.requestId, { agentCapabilities: found.agentCapabilities, authMethods: found.authMethods, agentInfo: found.agentInfo ?? { name: live.options.name, version: 'unknown' } });
        return;
      }
      void start(live, event);
      return;
    case 'client.response':
    case 'client.error': {
      const relay = live.relays.get(event.key);
      if (!relay) return;
      live.relays.delete(event.key);
      if (event.type === 'client.response') relay.resolve(event.result);
      else relay.reject(RpcError.fromErrorObject(event.error));
      return;
    }
    case 'session.cancel':
      if (live.client) cancelPrompt(live.client, event.sessionId);
      return;
    case 'initialized':
    case 'ext.notification':
      return;
    default:
      break;
  }
  const request = event as AgentRequestEvent;
  // Closed for the editor from now on, whatever the agent answers or whenever it can: a
  // restart (even one under way) does not re-attach it, nor report on it.
  if (request.type === 'session.close') live.sessions.delete(request.params.sessionId as string);
  if (live.failed && live.context && (request.type === 'session.new' || request.type === 'session.resume' || request.type === 'session.load')) {
    live.waiting.push(event);
    if (!live.recovering) void restartAgent(live);
    return;
  }
  if (live.failed) {
    emit(live, { type: 'acp.error', requestId: request.requestId, error: RpcError.internalError(`${live.options.name} kept failing and was given up: ${live.failed}`, { reason: 'agent_failed' }).toErrorObject() });
    return;
  }
  if (live.recovering || !live.client) {
    live.waiting.push(event);
    return;
  }
  void forward(live, live.client, request);
}

async function forward(live: Live, client: AnyActorRef, request: AgentRequestEvent): Promise<void> {
  await working(live, () => forwardNow(live, client, request));
}

/** Runs `work` (which awaits the agent) with the hang watchdog armed. */
async function working<T>(live: Live, work: () => Promise<T>): Promise<T> {
  live.working++;
  updateBusy(live);
  try {
    return await work();
  } finally {
    live.working--;
    updateBusy(live);
  }
}

async function forwardNow(live: Live, client: AnyActorRef, request: AgentRequestEvent): Promise<void> {
  const { params } = request;
  const sessionId = params.sessionId as string;
  try {
    switch (request.type) {
      case 'session.new': {
        const result = await newSession(client, params as never);
        live.sessions.set(result.sessionId, { cwd: params.cwd as string, additionalDirectories: params.additionalDirectories as string[] | undefined, mcpServers: (params.mcpServers as unknown[]) ?? [] });
        return respondTo(live, request.requestId, result);
      }
      case 'session.load': {
        const { response } = await loadSession(client, params as never);
        // Answered once the replay is over, as ACP promises: the host (which replayed its
        // journal) drops the agent's replay until this answer.
        await drainReplay(client, sessionId);
        live.sessions.set(sessionId, { cwd: params.cwd as string, additionalDirectories: params.additionalDirectories as string[] | undefined, mcpServers: (params.mcpServers as unknown[]) ?? [] });
        return respondTo(live, request.requestId, response);
      }
      case 'session.resume': {
        const response = await resumeSession(client, params as never);
        live.sessions.set(sessionId, { cwd: params.cwd as string, additionalDirectories: params.additionalDirectories as string[] | undefined, mcpServers: (params.mcpServers as unknown[]) ?? [] });
        return respondTo(live, request.requestId, response);
      }
      case 'session.fork': {
        const result = await forkSession(client, params as never);
        live.sessions.set(result.sessionId, { cwd: params.cwd as string, additionalDirectories: params.additionalDirectories as string[] | undefined, mcpServers: (params.mcpServers as unknown[]) ?? [] });
        return respondTo(live, request.requestId, result);
      }
      case 'session.list':
        return respondTo(live, request.requestId, await listSessions(client, params as never));
      case 'session.close':
        if (live.downstream?.agentCapabilities?.sessionCapabilities?.close) await closeSession(client, sessionId);
        return respondTo(live, request.requestId, {});
      case 'session.delete':
        await deleteSession(client, sessionId);
        live.sessions.delete(sessionId);
        return respondTo(live, request.requestId, {});
      case 'session.setMode':
        await setMode(client, sessionId, params.modeId as string);
        return respondTo(live, request.requestId, {});
      case 'session.setConfigOption':
        return respondTo(live, request.requestId, await setConfigOption(client, sessionId, params.configId as string, params.value));
      case 'authenticate':
        await authenticate(client, params.methodId as string);
        return respondTo(live, request.requestId, {});
      case 'logout':
        await logout(client);
        return respondTo(live, request.requestId, {});
      case 'session.prompt':
        return respondTo(live, request.requestId, await prompt(client, sessionId, params.prompt as unknown[], { keepUpdates: false }).result);
      default:
        emit(live, { type: 'acp.error', requestId: request.requestId, error: RpcError.methodNotFound(request.method).toErrorObject() });
    }
  } catch (error) {
    failWith(live, request.requestId, error);
  }
}

function portInput(live: Live): PortInput {
  const { options } = live;
  return {
    // A long line (an update with a screenshot, a big diff) is skipped, not a reason to kill the agent.
    oversize: 'skip',
    ...options.port,
    command: options.executable,
    args: options.args ?? [],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { policy: options.envPolicy ?? 'isolated', passthrough: options.passthrough ?? [], explicit: options.env ?? {} },
  };
}

/** The editor's `initialize`: start the agent under supervision and initialize it with the editor's capabilities. */
async function start(live: Live, event: AgentRequestEvent): Promise<void> {
  live.context = event.context;
  const failure = boot(live);
  if (failure) {
    emit(live, { type: 'acp.error', requestId: event.requestId, error: RpcError.internalError(failure).toErrorObject() });
    return;
  }
  try {
    live.downstream = await working(live, () => initialize(live.client as AnyActorRef));
    const found = live.downstream;
    respondTo(live, event.requestId, { agentCapabilities: found.agentCapabilities, authMethods: found.authMethods, agentInfo: found.agentInfo ?? { name: live.options.name, version: 'unknown' } });
  } catch (error) {
    failWith(live, event.requestId, error);
  }
}

/**
 * The agent was given up (restart intensity exceeded) and a new session asks for it: a fresh
 * supervisor starts it again, as a parent would restart a child that gave up. The request
 * (and any that arrive meanwhile) waits for the new process to be initialized.
 */
async function restartAgent(live: Live): Promise<void> {
  live.failed = undefined;
  live.recovering = true;
  for (const subscription of live.subscriptions.splice(0)) subscription.unsubscribe();
  // The one that gave up has ended; one that could not be initialized is stopped here.
  const previous = live.supervisor;
  if (previous?.getSnapshot().status === 'active') await shutdown(previous).catch(() => undefined);
  let failure = boot(live);
  if (!failure) {
    try {
      live.downstream = await working(live, () => initialize(live.client as AnyActorRef));
    } catch (error) {
      // Its exit restarts it (or gives up again); the waiting requests go to what comes next.
      if (toRpcError(error).failure !== 'peer_lost') failure = `${live.options.name} could not be initialized again: ${toRpcError(error).message}`;
    }
  }
  live.recovering = false;
  const waiting = live.waiting.splice(0);
  if (failure) {
    // One attempt per request: what waited is refused with why, not handed back for another try.
    live.failed = failure;
    const supervisor = live.supervisor;
    if (supervisor?.getSnapshot().status === 'active') void shutdown(supervisor).catch(() => undefined);
    for (const event of waiting) {
      if ('requestId' in event && typeof event.requestId === 'string') emit(live, { type: 'acp.error', requestId: event.requestId, error: RpcError.internalError(failure, { reason: 'agent_failed' }).toErrorObject() });
    }
    return;
  }
  for (const event of waiting) handle(live, event);
}

/** Starts the agent's supervisor (port, then client) and binds to it; a message when it cannot start. */
function boot(live: Live): string | undefined {
  const restart = live.options.restart ?? {};
  const supervisorLogic = createSupervisor({
    name: `${live.options.name} agent`,
    strategy: 'rest_for_one',
    intensity: restart.intensity ?? 3,
    period: restart.period ?? 60_000,
    children: [
      { id: 'port', start: { logic: portLogic, inputFor: () => portInput(live) }, backoff: restart.backoff ?? { minDelay: 200, maxDelay: 5000 }, shutdown: portStopBudgetMs(live.options.port?.shutdown) },
      {
        id: 'client',
        // Transient: when the agent process dies, the client ends normally (its peer is
        // gone) and waits; the port's restart restarts it with the new process (rest_for_one).
        restart: 'transient',
        start: {
          logic: agentClientLogic,
          inputFor: () => ({
            transport: portTransport(whichChildren(live.supervisor as AnyActorRef).find((row) => row.id === 'port')?.ref as AnyActorRef),
            handler: { relay: (method: string, params: unknown) => relay(live, method, params), capabilities: live.context?.clientCapabilities ?? {} },
            ...(live.context?.clientInfo ? { clientInfo: live.context.clientInfo } : {}),
          }),
        },
        shutdown: 'brutal_kill',
      },
    ],
  });
  const supervisor = createActor(supervisorLogic, { parent: live.scope.self, id: 'agent' });
  live.supervisor = supervisor;
  live.subscriptions.push(
    supervisor.on('child.started', (started: Extract<SupervisionEvent, { type: 'child.started' }>) => {
      if (started.childId === 'port') {
        live.restarts = started.restarts;
        bindPort(live);
      }
      if (started.childId === 'client' && started.restarts > 0) live.scope.self.send({ type: 'passthrough.restarted' } as never);
    }),
    // The agent process ended and will be restarted: every open session is restarting.
    supervisor.on('child.exited', (exited: Extract<SupervisionEvent, { type: 'child.exited' }>) => {
      if (exited.childId !== 'port' || (exited.action !== 'restart' && exited.action !== 'restart_delayed')) return;
      const exit = live.lastExit ? { reason: live.lastExit.reason, ...(live.lastExit.stderrTail ? { stderrTail: live.lastExit.stderrTail } : {}) } : { reason: exited.reason };
      for (const sessionId of live.sessions.keys()) emit(live, { type: 'session.restarting', sessionId, restarts: live.restarts, exit });
    }),
    supervisor.subscribe({
      complete: () => {
        // A shutdown asked for (host.stop, the editor gone) is not a failure of the agent.
        const reason = exitFromOutput(supervisor.getSnapshot().output);
        if (reason.kind === 'shutdown' && reason.detail === undefined) return;
        live.scope.self.send({ type: 'passthrough.failed', why: 'kept failing: its restart intensity was exceeded' } as never);
      },
    }),
  );
  supervisor.start();
  if (supervisor.getSnapshot().status !== 'active') {
    const output = supervisor.getSnapshot().output as { detail?: { cause?: Error } } | undefined;
    return `${live.options.name} could not start: ${output?.detail?.cause?.message ?? 'unknown reason'}`;
  }
  bindClient(live);
  return undefined;
}

function relay(live: Live, method: string, params: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const key = `relay-${live.nextRelay++}`;
    const settled = <T>(settle: (value: T) => void) => (value: T) => {
      settle(value);
      updateBusy(live);
    };
    live.relays.set(key, { resolve: settled(resolve), reject: settled(reject) });
    updateBusy(live);
    emit(live, { type: 'acp.clientRequest', key, method, params });
  });
}

/** Arms the port's hang watchdog while the agent works on a prompt and waits for nobody. */
function updateBusy(live: Live): void {
  const port = live.supervisor ? whichChildren(live.supervisor).find((row) => row.id === 'port')?.ref : undefined;
  if (port?.getSnapshot().status === 'active') port.send({ type: 'port.busy', busy: live.working > 0 && live.relays.size === 0 });
}

/** Listens to the current agent process's exit (for `session.restarting`). */
function bindPort(live: Live): void {
  const port = whichChildren(live.supervisor as AnyActorRef).find((row) => row.id === 'port')?.ref;
  for (const subscription of live.portSubscriptions.splice(0)) subscription.unsubscribe();
  if (!port) return;
  live.portSubscriptions.push(
    port.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => {
      live.lastExit = event.exit;
    }),
    // The client's connection fails the request a skipped answer was for; this is the log's news.
    port.on('port.oversize', (event: Extract<PortEmitted, { type: 'port.oversize' }>) => {
      emit(live, { type: 'agent.lineDropped', bytes: event.bytesSeen, limit: event.limit, what: lineKindOf(event.head) });
    }),
  );
}

function bindClient(live: Live): void {
  const client = whichChildren(live.supervisor as AnyActorRef).find((row) => row.id === 'client')?.ref;
  if (!client) return;
  live.client = client;
  live.subscriptions.push(
    client.on('acp.update', (event: Extract<AgentClientEmitted, { type: 'acp.update' }>) => {
      if (client !== live.client || (live.reattaching.has(event.sessionId) && !stateKinds.has(event.update.sessionUpdate))) return;
      emit(live, { type: 'acp.update', sessionId: event.sessionId, update: event.update });
    }),
    // The agent process is gone: requests wait for its restart (or for the supervisor to give up).
    client.subscribe({
      complete: () => {
        if (live.client === client) live.client = undefined;
        // Its requests to the editor died with it: an answer would reach nobody, and a relay
        // left open would keep the hang watchdog disarmed for every later prompt.
        const gone = new RpcError(-32603, `${live.options.name} ended before the editor answered`, { reason: 'agent_crashed' }, 'peer_lost');
        for (const [key, relayed] of [...live.relays]) {
          live.relays.delete(key);
          relayed.reject(gone);
        }
      },
    }),
  );
}

/** The agent process restarted: initialize again, re-attach every open session, then serve what waited. */
async function recover(live: Live): Promise<void> {
  live.recovering = true;
  bindClient(live);
  await working(live, () => reattach(live, live.client as AnyActorRef));
  live.recovering = false;
  for (const waiting of live.waiting.splice(0)) handle(live, waiting);
}

/** Initializes the restarted agent and re-attaches every open session. */
async function reattach(live: Live, client: AnyActorRef): Promise<void> {
  try {
    const found = await initialize(client);
    const caps = found.agentCapabilities ?? {};
    for (const [sessionId, session] of live.sessions) {
      const params = { sessionId, cwd: session.cwd, mcpServers: session.mcpServers, ...(session.additionalDirectories ? { additionalDirectories: session.additionalDirectories } : {}) };
      live.reattaching.add(sessionId);
      try {
        if (caps.sessionCapabilities?.resume) await resumeSession(client, params as never);
        else if (caps.loadSession) {
          await loadSession(client, params as never);
          // Its replay may go on after the answer: hidden until it is over, and what waits
          // (the next prompt) runs only then.
          await drainReplay(client, sessionId);
        } else throw new Error('the agent offers neither session/resume nor session/load');
        // Closed while its re-attachment was under way: the editor hears nothing more of it.
        if (live.sessions.has(sessionId)) emit(live, { type: 'session.recovered', sessionId, restarts: live.restarts });
      } catch (error) {
        // The new process died too: its restart re-attaches the session (or the supervisor gives up).
        if (toRpcError(error).failure === 'peer_lost') continue;
        // Cannot be re-attached: the session is over (the next prompt says unknown session).
        if (!live.sessions.delete(sessionId)) continue; // closed meanwhile: nothing to report
        emit(live, { type: 'session.failed', sessionId, restarts: live.restarts, reason: `${live.options.name} could not re-attach the session after its restart: ${error instanceof Error ? error.message : String(error)}` });
      } finally {
        live.reattaching.delete(sessionId);
      }
    }
  } catch {
    // The new process fails too: its own exit will restart it again (or give up).
  }
}
