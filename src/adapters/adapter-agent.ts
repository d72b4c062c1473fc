/**
 * Runs an adapter definition as a native agent: the ACP agent server serves an adapted CLI
 * exactly as it serves a native agent.
 *
 * Each ACP session is a supervisor (rest_for_one: the session adapter, then its CLI's port)
 * under this agent's dynamic `sessions` supervisor. A crash of the CLI restarts only the
 * port, with backoff and within the definition's intensity; the session adapter keeps its
 * state, hears `port.exited` then `port.started` (with the restart count), and re-initialises
 * the new CLI, which was started with the resume state the adapter last reported. When the
 * session's supervisor gives up, what the session still owed the editor is answered with an
 * error, and the other sessions go on.
 */
import { nanoid } from 'nanoid';
import { createActor, type ActorLogic, type ActorScope, type ActorSystem, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import type { AgentHandlerEvent, AgentRequestEvent, NativeAgent } from '../acp/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { portLogic, portStopBudgetMs, type PortEmitted, type PortInput } from '../port/port.js';
import { createDynamicSupervisor } from '../supervision/dynamic-supervisor.js';
import { createSupervisor } from '../supervision/supervisor.js';
import { whichChildren } from '../supervision/introspection.js';
import type { StartChildResult, SupervisionEvent } from '../supervision/events.js';
import { describeExit, type ExitReason } from '../supervision/exit-reason.js';
import type { AdapterDefinition, SessionAdapterOutput } from './adapter.js';

/** How to run an adapter here. */
export interface AdapterAgentOptions {
  readonly definition: AdapterDefinition;
  /** The executable, resolved (registry, `--agent-command`). */
  readonly executable: string;
  /** `isolated` (default) or `inherit`. */
  readonly envPolicy?: 'isolated' | 'inherit';
  /** Extra variables (`--env`); `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Extra host variable names passed through (`--env NAME`). */
  readonly passthrough?: readonly string[];
}

/** A native agent that runs `definition` for every ACP session. */
export function createAdapterAgent(options: AdapterAgentOptions): NativeAgent {
  const { definition } = options;
  return {
    logic: adapterAgentLogic,
    input: options,
    agentInfo: definition.agentInfo,
    capabilities: definition.capabilities,
    authMethods: definition.authMethods ?? [],
  };
}

interface Session {
  readonly id: string;
  readonly cwd: string;
  readonly params: Record<string, unknown>;
  supervisor: AnyActorRef | undefined;
  adapter: AnyActorRef | undefined;
  port: AnyActorRef | undefined;
  resume: unknown;
  restarts: number;
  /** Requests routed to this session and not answered yet. */
  readonly pending: Set<string>;
  adapterSubscription: Subscription | undefined;
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
  transition(snapshot: AgentSnapshot, event: AgentHandlerEvent | { type: `xstate.${string}` } | { type: 'adapter.sessionEnded'; sessionId: string; reason: ExitReason }, scope: Scope): AgentSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    switch (event.type) {
      case 'session.new':
        newSession(live, event as AgentRequestEvent);
        break;
      case 'session.close':
        closeSession(live, event as AgentRequestEvent);
        break;
      case 'session.prompt':
      case 'session.setMode':
      case 'session.setConfigOption':
        route(live, (event as AgentRequestEvent).params.sessionId as string, event, (event as AgentRequestEvent).requestId);
        break;
      case 'session.cancel':
        route(live, event.sessionId, event);
        break;
      case 'client.response':
      case 'client.error': {
        const [sessionId, key] = event.key.split(keySeparator) as [string, string];
        route(live, sessionId, { ...event, key });
        break;
      }
      case 'adapter.sessionEnded':
        sessionEnded(live, event.sessionId, event.reason);
        break;
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

function newSession(live: Live, request: AgentRequestEvent): void {
  const { definition } = live.options;
  const id = `${definition.name}-${nanoid(10)}`;
  const session: Session = {
    id,
    cwd: request.params.cwd as string,
    params: request.params,
    supervisor: undefined,
    adapter: undefined,
    port: undefined,
    resume: undefined,
    restarts: 0,
    pending: new Set([request.requestId]),
    adapterSubscription: undefined,
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
    intensity: restart.intensity ?? 3,
    period: restart.period ?? 60_000,
    children,
  });
  let started: StartChildResult | undefined;
  live.sessionsSupervisor.send({
    type: 'supervisor.startChild',
    spec: { id, restart: 'temporary', type: 'supervisor', start: { logic } },
    reply: (result: StartChildResult) => {
      started = result;
    },
  });
  if (!started?.ok) {
    live.sessions.delete(id);
    const reason = started && !started.ok ? started.reason : 'not started';
    const cause = typeof reason === 'object' && reason !== null && 'startFailed' in reason ? (reason.startFailed as Error) : undefined;
    live.scope.emit({ type: 'acp.error', requestId: request.requestId, error: { code: -32603, message: `${definition.name} could not start: ${cause?.message ?? JSON.stringify(reason)}`, data: { reason: 'start_failed' } } });
    return;
  }
  const supervisor = started.ref;
  session.supervisor = supervisor;
  bindAdapter(live, session);
  session.adapter?.send({ type: 'adapter.start', requestId: request.requestId, sessionId: id, params: request.params, context: request.context });
  if (definition.command) bindPort(live, session);
  // Later (re)starts of the adapter or the port, and the end of the session's supervisor.
  session.other.push(supervisor.on('child.started', (event: Extract<SupervisionEvent, { type: 'child.started' }>) => {
    if (event.childId === 'adapter') bindAdapter(live, session);
    if (event.childId === 'port') {
      session.restarts = event.restarts;
      bindPort(live, session);
    }
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
  session.adapterSubscription?.unsubscribe();
  session.adapter = adapter;
  session.adapterSubscription = adapter.on('*', (output: SessionAdapterOutput) => onAdapterOutput(live, session, output));
}

function bindPort(live: Live, session: Session): void {
  const port = refOf(session, 'port');
  if (!port || port === session.port) return;
  for (const subscription of session.portSubscriptions) subscription.unsubscribe();
  session.port = port;
  const adapter = () => session.adapter;
  session.portSubscriptions = [
    port.on('port.message', (event: Extract<PortEmitted, { type: 'port.message' }>) => adapter()?.send({ type: 'native.message', message: event.message })),
    port.on('port.nonJson', (event: Extract<PortEmitted, { type: 'port.nonJson' }>) => adapter()?.send({ type: 'native.nonJson', preview: event.preview })),
    port.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => adapter()?.send({ type: 'port.exited', exit: event.exit })),
  ];
  const pid = (port.getSnapshot() as { context?: { pid?: number } }).context?.pid;
  if (pid !== undefined) session.adapter?.send({ type: 'port.started', pid, restarts: session.restarts });
}

function onAdapterOutput(live: Live, session: Session, output: SessionAdapterOutput): void {
  switch (output.type) {
    case 'port.write':
      session.port?.send({ type: 'port.write', message: output.message });
      return;
    case 'port.busy':
      session.port?.send({ type: 'port.busy', busy: output.busy });
      return;
    case 'adapter.resume':
      session.resume = output.state;
      return;
    case 'acp.clientRequest':
      live.scope.emit({ ...output, key: `${session.id}${keySeparator}${output.key}` });
      return;
    case 'acp.respond':
    case 'acp.error':
      session.pending.delete(output.requestId);
      live.scope.emit(output);
      return;
    default:
      live.scope.emit(output);
  }
}

function route(live: Live, sessionId: string, event: AgentHandlerEvent, requestId?: string): void {
  const session = live.sessions.get(sessionId);
  if (!session?.adapter) {
    if (requestId) live.scope.emit({ type: 'acp.error', requestId, error: RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }).toErrorObject() });
    return;
  }
  if (requestId) {
    session.pending.add(requestId);
  }
  session.adapter.send(event);
}

function closeSession(live: Live, request: AgentRequestEvent): void {
  const sessionId = request.params.sessionId as string;
  const session = live.sessions.get(sessionId);
  live.scope.emit({ type: 'acp.respond', requestId: request.requestId, result: {} });
  if (!session) return;
  // Graceful: the port closes the CLI's stdin, then signals its group.
  live.sessionsSupervisor.send({ type: 'supervisor.terminateChild', id: sessionId });
}

/** The session's supervisor ended: answer what it still owed, with why. */
function sessionEnded(live: Live, sessionId: string, reason: ExitReason | undefined): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  live.sessions.delete(sessionId);
  for (const subscription of [...session.other, ...session.portSubscriptions]) subscription.unsubscribe();
  session.adapterSubscription?.unsubscribe();
  const why = reason ? describeExit(reason) : 'stopped';
  for (const requestId of session.pending) {
    live.scope.emit({
      type: 'acp.error',
      requestId,
      error: { code: -32603, message: `${live.options.definition.name} kept failing and the session was closed (${why})`, data: { reason: 'session_failed', sessionId, restarts: session.restarts } },
    });
  }
  if (reason && !(reason.kind === 'shutdown' && reason.detail === undefined)) {
    live.scope.emit({
      type: 'acp.update',
      sessionId,
      update: { sessionUpdate: 'notice', severity: 'error', title: `${live.options.definition.name} stopped`, description: `The agent kept failing after ${session.restarts} restarts; the session is closed (${why}).` } as never,
    });
  }
}
