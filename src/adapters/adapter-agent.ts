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
 *
 * This file is the actor (its sessions' start, resume, close and end); its parts:
 * adapter-agent-live.ts (its options and live record), adapter-session-lines.ts (a session's
 * lines to its adapter and port, and a host's direct line), adapter-session-list.ts (`session/list`).
 */
import { nanoid } from 'nanoid';
import { createActor, type ActorLogic, type ActorSystem } from 'xstate';
import { RESUME_META_KEY, type AgentHandlerEvent, type AgentRequestEvent, type NativeAgent } from '../protocol/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { portLogic, portStopBudgetMs, type PortInput } from '../port/port.js';
import { isServedRecycle } from '../port/port-exit.js';
import { createDynamicSupervisor } from '../supervision/dynamic-supervisor.js';
import { createSupervisor } from '../supervision/supervisor.js';
import type { StartChildResult, SupervisionEvent } from '../supervision/events.js';
import { describeExit, type ExitReason } from '../supervision/exit-reason.js';
import type { SessionAdapterOutput } from './adapter.js';
import { resumeCheckError } from './resume-check.js';
import { agentRestartDefaults } from '../supervision/agent-restart-defaults.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { type AdapterAgentOptions, type Session, type Live, type AgentSnapshot, type Scope, lives, closeQuietly } from './adapter-agent-live.js';
import { sessionRoute, bindAdapter, bindPort, sessionOf, route } from './adapter-session-lines.js';
import { listSessions, startFailure } from './adapter-session-list.js';

export type { AdapterAgentOptions, ListingAdapterDefinition, SessionListing } from './adapter-agent-live.js';

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
    routed: false,
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
  const children = [{ id: 'adapter', start: { logic: definition.session, ...(live.options.crash ? { input: { crash: live.options.crash } } : {}) } }];
  if (definition.command) {
    children.push({
      id: 'port',
      start: { logic: portLogic, inputFor: () => portInput(live, session) },
      ...(restart.backoff ? { backoff: restart.backoff } : {}),
      shutdown: portStopBudgetMs(definition.port?.shutdown),
      // A soft memory recycle after a served turn is planned: not counted towards the intensity.
      uncounted: isServedRecycle,
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
  const failure = RpcError.because('session_failed', `${name} kept failing and the session was closed (${why})`, { sessionId, restarts: session.restarts }).toErrorObject();
  for (const [requestId, method] of session.pending) {
    if (closed && method === AGENT_METHODS.session_prompt) {
      // ACP: closing a session cancels its work.
      live.scope.emit({ type: 'acp.respond', requestId, result: { stopReason: 'cancelled' } });
    } else if (closed) {
      live.scope.emit({ type: 'acp.error', requestId, error: RpcError.because('session_closed', `${name} session ${sessionId} was closed`, { sessionId }).toErrorObject() });
    } else {
      live.scope.emit({ type: 'acp.error', requestId, error: failure });
    }
  }
  // A router answers the prompts it sent with the same error.
  if (!closed) live.scope.emit({ type: 'session.failed', sessionId, restarts: session.restarts, reason: why, ...(session.routed ? { error: failure } : {}) });
  for (const request of session.deferred) resumeSession(live, request);
}

// session/list: a short-lived CLI
