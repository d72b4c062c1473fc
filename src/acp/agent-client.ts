/**
 * The ACP client side: what drives an ACP agent (Gemini, OpenCode, claude-agent-acp, any
 * `acp:<command>`). An actor holding the JSON-RPC connection to the agent and the terminals
 * it runs; functions to call the agent's methods; and a handler for the agent's requests:
 * a permission policy, file access confined to each session's workspace, terminals as
 * supervised ports.
 *
 * The client keeps its side of the protocol: it advertises only what it serves, refuses
 * locally the methods the agent did not advertise, and when a prompt is cancelled answers
 * every pending permission request of that session with `cancelled` (ACP makes that the
 * client's job).
 */
import type {
  AgentCapabilities,
  ClientCapabilities,
  CreateElicitationRequest,
  CreateElicitationResponse,
  Implementation,
  InitializeResponse,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionUpdate,
} from '@agentclientprotocol/sdk';
import { createActor, type ActorLogic, type ActorScope, type ActorSystem, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import {
  connectionLogic,
  respond,
  respondError,
  sendNotification,
  sendRequest,
  type ConnectionEmitted,
  type MethodTable,
  type ParamsParser,
  type TimeoutPolicy,
} from '../jsonrpc/connection.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { PeerLost, Transport } from '../jsonrpc/transport.js';
import { createDynamicSupervisor } from '../supervision/dynamic-supervisor.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { readGateOf } from '../port/read-gate.js';
import { AGENT_METHODS, CLIENT_METHODS, clientNotifications, clientRequests, PROTOCOL_VERSION, UNSTABLE_AGENT_METHODS } from '../protocol/methods.js';
import { clientAllows, missingAgentCapability, sessionSetupRefusal, unadvertisedContent } from './capability-gate.js';
import { isHotSessionUpdate } from './hot-update-check.js';
import { parserOf } from './schemas.js';
import { Terminals, type TerminalLimits } from './terminals.js';
import type { FileReadLimits } from './bounded-read.js';
import { readTextFile, writeTextFile, type FileReadOptions, type WorkspaceRoots } from './workspace-fs.js';

/** What the client does with the agent's requests. */
export interface ClientHandler {
  /**
   * Decides a permission request. Default: the first `reject_once` option (nothing runs
   * without a policy that says so). Return `{ outcome: 'cancelled' }` to cancel.
   */
  readonly permission?: (request: RequestPermissionRequest) => RequestPermissionResponse['outcome'] | Promise<RequestPermissionResponse['outcome']>;
  /**
   * Serve `fs/*` inside each session's cwd and additional directories. Default `true`;
   * `{ limits }` bounds what one `fs/read_text_file` may answer (default 64 MiB);
   * `linkStores` names the package stores whose hard links may be read (a file with other
   * names is refused otherwise; see {@link FileReadOptions}).
   */
  readonly fs?: boolean | { readonly limits?: FileReadLimits; readonly linkStores?: readonly string[] };
  /**
   * Run `terminal/*` as supervised ports. Default `true`, with an isolated environment
   * (the baseline variables plus the ones the agent passes); `{ env: 'inherit' }` gives
   * terminals the host's environment (agent API keys still removed); `limits` caps the
   * output an agent may ask to keep and the terminals a session may hold.
   */
  readonly terminals?: boolean | { readonly env?: 'isolated' | 'inherit'; readonly limits?: TerminalLimits };
  /**
   * Advertise `session.notices`: the agent sends its notices as `notice` updates, apart from
   * its messages (a client without it gets them as signed agent messages). Default `false`.
   */
  readonly notices?: boolean;
  /** Answer `elicitation/create` (form mode); advertised only when given. */
  readonly elicitation?: (request: CreateElicitationRequest) => CreateElicitationResponse | Promise<CreateElicitationResponse>;
  /**
   * A proxy's mode: every request of the agent is handed to `relay` (say, passed on to the
   * editor), and `capabilities` is what is advertised (the editor's own), instead of the
   * policies above.
   */
  readonly relay?: (method: string, params: unknown) => Promise<unknown>;
  /** What to advertise; default: derived from the policies above. */
  readonly capabilities?: ClientCapabilities;
}

/** What an agent client runs on. */
export interface AgentClientInput {
  /** The agent's side: `portTransport(port)` for a subprocess, a memory pair in tests. */
  readonly transport: Transport;
  readonly clientInfo?: Implementation;
  readonly handler?: ClientHandler;
  readonly timeouts?: TimeoutPolicy;
}

/** The phase of an agent client. */
export type AgentClientPhase = 'connected' | 'ready' | 'closed';

/** Plain facts about an agent client. */
export interface AgentClientContext {
  readonly agentInfo: Implementation | undefined;
  readonly protocolVersion: number | undefined;
  readonly sessions: number;
  readonly terminals: number;
}

/** The snapshot of an agent client; its output is why the agent went away. */
export type AgentClientSnapshot = Snapshot<PeerLost> & { readonly value: AgentClientPhase; readonly context: AgentClientContext };

/** Events of an agent client (internal). */
export type AgentClientEvent =
  | { readonly type: 'client.closed'; readonly reason: PeerLost }
  | { readonly type: 'client.sync' }
  | { readonly type: typeof SHUTDOWN_EVENT }
  | { readonly type: `xstate.${string}` };

/** Events an agent client emits: every session update, and the agent going away. */
export type AgentClientEmitted =
  | { readonly type: 'acp.update'; readonly sessionId: string; readonly update: SessionUpdate }
  | { readonly type: 'acp.notification'; readonly method: string; readonly params: unknown }
  | { readonly type: 'acp.closed'; readonly reason: PeerLost };

type Scope = ActorScope<AgentClientSnapshot, AgentClientEvent, ActorSystem<any>, AgentClientEmitted>;

interface PromptRun {
  readonly updates: SessionUpdate[];
  readonly wake: Array<() => void>;
  done: boolean;
  cancelled: boolean;
  /** Updates are kept for the `updates` iterator (a relay that takes the events says no). */
  readonly keep: boolean;
}

interface SessionInfo {
  readonly roots: WorkspaceRoots;
  prompt: PromptRun | undefined;
  /** Permission requests of this session not answered yet, by JSON-RPC id. */
  readonly permissions: Set<JsonRpcId>;
}

interface Live {
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
}

const lives = new WeakMap<AnyActorRef, Live>();

function advertised(handler: ClientHandler): ClientCapabilities {
  const fs = handler.fs !== false;
  return {
    fs: { readTextFile: fs, writeTextFile: fs },
    terminal: handler.terminals !== false,
    ...(handler.elicitation ? { elicitation: { form: {} } } : {}),
    ...(handler.notices ? { session: { notices: {} } } : {}),
  };
}

function methodTable(): MethodTable {
  const requests: Record<string, ParamsParser> = {};
  for (const [method, types] of Object.entries(clientRequests)) requests[method] = parserOf(types.params);
  const notifications: Record<string, ParamsParser> = {};
  for (const [method, type] of Object.entries(clientNotifications)) notifications[method] = parserOf(type);
  // The hot kinds skip the schema when it would only copy them (hot-update-check.ts); the rest,
  // and anything malformed, is validated in full, with the same verdicts and errors.
  const fullUpdate = notifications[CLIENT_METHODS.session_update] as ParamsParser;
  notifications[CLIENT_METHODS.session_update] = (params) => (isHotSessionUpdate(params) ? params : fullUpdate(params));
  return { requests, notifications };
}

/** Actor logic of an ACP client: `createActor(agentClientLogic, { input: { transport } })`. */
export const agentClientLogic = gracefulShutdown({
  config: { name: 'acpAgentClient' },
  getInitialSnapshot(scope: Scope, input: AgentClientInput): AgentClientSnapshot {
    if (!input?.transport) throw new TypeError('Expected the agent client input to have a `transport`.');
    const connection = createActor(connectionLogic, {
      parent: scope.self,
      id: 'connection',
      input: { transport: input.transport, name: 'agent', methods: methodTable(), ...(input.timeouts ? { timeouts: input.timeouts } : {}) },
    });
    const terminalSupervisor = createActor(createDynamicSupervisor({ name: 'terminals', intensity: 1000, period: 1000 }), { parent: scope.self, id: 'terminals' });
    const live: Live = {
      scope,
      input,
      connection,
      terminalSupervisor,
      terminals: new Terminals(terminalSupervisor, typeof input.handler?.terminals === 'object' ? input.handler.terminals.limits : undefined),
      capabilities: input.handler?.capabilities ?? advertised(input.handler ?? {}),
      sessions: new Map(),
      subscriptions: [],
      agent: undefined,
      phase: 'connected',
    };
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, value: 'connected', context: summary(live) };
  },
  start(_snapshot: AgentClientSnapshot, scope: Scope): void {
    const live = lives.get(scope.self) as Live;
    live.subscriptions.push(
      live.connection.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => void onAgentRequest(live, event.id, event.method, event.params as Record<string, unknown>)),
      live.connection.on('rpc.notification', (event: Extract<ConnectionEmitted, { type: 'rpc.notification' }>) => onAgentNotification(live, event.method, event.params)),
      live.connection.on('rpc.closed', (event: Extract<ConnectionEmitted, { type: 'rpc.closed' }>) => scope.self.send({ type: 'client.closed', reason: event.reason })),
    );
    live.terminalSupervisor.start();
    live.connection.start();
  },
  transition(snapshot: AgentClientSnapshot, event: AgentClientEvent, scope: Scope): AgentClientSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    switch (event.type) {
      case 'client.closed':
        return close(live, snapshot, event.reason, 'done');
      case SHUTDOWN_EVENT:
        return close(live, snapshot, { message: 'the client was shut down' }, 'done');
      case 'xstate.stop':
        return close(live, snapshot, { message: 'the client was stopped' }, 'stopped');
      default:
        return { ...snapshot, value: live.phase, context: summary(live) };
    }
  },
  getPersistedSnapshot(snapshot: AgentClientSnapshot): AgentClientSnapshot {
    return snapshot;
  },
  restoreSnapshot(): AgentClientSnapshot {
    throw new Error('An ACP agent client cannot be restored from a persisted snapshot; create a new one over a live transport.');
  },
} as ActorLogic<AgentClientSnapshot, AgentClientEvent, AgentClientInput, ActorSystem<any>, AgentClientEmitted>);

function summary(live: Live): AgentClientContext {
  return { agentInfo: live.agent?.agentInfo ?? undefined, protocolVersion: live.agent?.protocolVersion, sessions: live.sessions.size, terminals: live.terminals.size };
}

function close(live: Live, snapshot: AgentClientSnapshot, reason: PeerLost, status: 'done' | 'stopped'): AgentClientSnapshot {
  live.phase = 'closed';
  for (const session of live.sessions.values()) endPrompt(session);
  live.scope.emit({ type: 'acp.closed', reason });
  for (const subscription of live.subscriptions) subscription.unsubscribe();
  // Children of custom logic are not stopped by XState: stop them here (terminals die with
  // their groups, and what left a group by its marker).
  if (live.terminalSupervisor.getSnapshot().status === 'active') live.scope.stopChild(live.terminalSupervisor);
  live.terminals.killStragglers();
  if (live.connection.getSnapshot().status === 'active') live.scope.stopChild(live.connection);
  const base = { ...snapshot, value: 'closed' as const, context: summary(live) };
  return status === 'done' ? ({ ...base, status: 'done', output: reason } as AgentClientSnapshot) : ({ ...base, status: 'stopped' } as AgentClientSnapshot);
}

function endPrompt(session: SessionInfo): void {
  const run = session.prompt;
  if (!run) return;
  run.done = true;
  for (const wake of run.wake.splice(0)) wake();
}

// ---------------------------------------------------------------------------------------
// The agent's requests and notifications

async function onAgentRequest(live: Live, id: JsonRpcId, method: string, params: Record<string, unknown>): Promise<void> {
  const session = live.sessions.get(params.sessionId as string);
  try {
    const result = await serve(live, id, method, params, session);
    if (result !== undefined) respond(live.connection, id, result);
  } catch (error) {
    respondError(live.connection, id, error);
  }
}

async function serve(live: Live, id: JsonRpcId, method: string, params: Record<string, unknown>, session: SessionInfo | undefined): Promise<unknown> {
  const handler = live.input.handler ?? {};
  const roots = session?.roots ?? [];
  if (handler.relay) return handler.relay(method, params);
  // What we did not advertise is not served, whatever the handler could do (capability-gate.ts).
  if (!clientAllows(live.capabilities, method, params)) throw RpcError.methodNotFound(method);
  switch (method) {
    case CLIENT_METHODS.session_request_permission: {
      if (!session || session.prompt?.cancelled) return { outcome: { outcome: 'cancelled' } };
      session.permissions.add(id);
      const request = params as unknown as RequestPermissionRequest;
      const outcome = handler.permission ? await handler.permission(request) : defaultPermission(request);
      // A cancel may have answered it meanwhile: then this answer is not sent (exactly once).
      if (!session.permissions.delete(id)) return undefined;
      return { outcome };
    }
    case CLIENT_METHODS.fs_read_text_file:
      return readTextFile(params as { path: string; line?: number; limit?: number }, roots, typeof handler.fs === 'object' ? { ...handler.fs.limits, linkStores: handler.fs.linkStores } : undefined);
    case CLIENT_METHODS.fs_write_text_file:
      return writeTextFile(params as { path: string; content: string }, roots);
    case CLIENT_METHODS.terminal_create:
      if (!session) throw RpcError.resourceNotFound(`session ${String(params.sessionId)}`, { sessionId: params.sessionId });
      return live.terminals.create(params as Parameters<Terminals['create']>[0], roots, terminalEnv(handler)).finally(() => sync(live));
    case CLIENT_METHODS.terminal_output:
      return live.terminals.output(params as { sessionId: string; terminalId: string });
    case CLIENT_METHODS.terminal_wait_for_exit:
      return live.terminals.waitForExit(params as { sessionId: string; terminalId: string });
    case CLIENT_METHODS.terminal_kill:
      return live.terminals.kill(params as { sessionId: string; terminalId: string });
    case CLIENT_METHODS.terminal_release:
      return live.terminals.release(params as { sessionId: string; terminalId: string }).finally(() => sync(live));
    case CLIENT_METHODS.elicitation_create:
      // Only form mode is advertised, and only with a handler.
      if (!handler.elicitation) throw RpcError.methodNotFound(method);
      return handler.elicitation(params as unknown as CreateElicitationRequest);
    default:
      throw RpcError.methodNotFound(method);
  }
}

function terminalEnv(handler: ClientHandler): 'isolated' | 'inherit' {
  return typeof handler.terminals === 'object' && handler.terminals.env === 'inherit' ? 'inherit' : 'isolated';
}

/** Without a policy, nothing runs: the first reject option, or cancelled. */
function defaultPermission(request: RequestPermissionRequest): RequestPermissionResponse['outcome'] {
  const reject = request.options.find((option) => option.kind === 'reject_once') ?? request.options.find((option) => option.kind === 'reject_always');
  return reject ? { outcome: 'selected', optionId: reject.optionId } : { outcome: 'cancelled' };
}

function onAgentNotification(live: Live, method: string, params: unknown): void {
  if (method === CLIENT_METHODS.session_update) {
    const { sessionId, update } = params as { sessionId: string; update: SessionUpdate };
    const run = live.sessions.get(sessionId)?.prompt;
    if (run && !run.done && run.keep) {
      run.updates.push(update);
      for (const wake of run.wake.splice(0)) wake();
    }
    live.scope.emit({ type: 'acp.update', sessionId, update });
    return;
  }
  live.scope.emit({ type: 'acp.notification', method, params });
}

function sync(live: Live): void {
  if (live.scope.self.getSnapshot().status === 'active') live.scope.self.send({ type: 'client.sync' });
}

// ---------------------------------------------------------------------------------------
// Calling the agent

function liveOf(client: AnyActorRef): Live {
  const live = lives.get(client);
  if (!live) throw new TypeError(`Expected an ACP agent client actor, got actor "${client.id}".`);
  return live;
}

/**
 * The agent's capabilities, once it may be called with `method`; throws (callers are async:
 * their promise rejects) before `initialize`, and -32601 when the method needs a capability
 * the agent did not advertise (capability-gate.ts).
 */
function requireInitialized(live: Live, method: string): AgentCapabilities {
  if (!live.agent) throw new RpcError(-32600, `Call initialize before ${method}`, { method }, 'local');
  const caps = live.agent.agentCapabilities ?? {};
  const missing = missingAgentCapability(caps, method);
  if (missing) throw new RpcError(-32601, `The agent did not advertise ${missing.path}${missing.unstable ? ' (unstable)' : ''}: ${method} is not available`, { method }, 'local');
  return caps;
}

/**
 * `initialize`: sends the latest protocol version we speak and the capabilities we serve;
 * refuses (and closes) an agent that answers with a version we do not speak.
 */
export async function initialize(client: AnyActorRef): Promise<InitializeResponse> {
  const live = liveOf(client);
  const result = (await sendRequest(live.connection, AGENT_METHODS.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: live.capabilities,
    clientInfo: live.input.clientInfo ?? { name: 'acp-warden', version: '0.1.0' },
  })) as InitializeResponse;
  if (result.protocolVersion !== PROTOCOL_VERSION) {
    client.send({ type: 'client.closed', reason: { message: `the agent speaks protocol version ${result.protocolVersion}, we speak ${PROTOCOL_VERSION}` } });
    throw new RpcError(-32600, `Unsupported protocol version ${result.protocolVersion}: acp-warden speaks ${PROTOCOL_VERSION}`, { requested: result.protocolVersion }, 'local');
  }
  live.agent = result;
  live.phase = 'ready';
  sync(live);
  return result;
}

function rootsOf(params: { cwd: string; additionalDirectories?: string[] | null }): WorkspaceRoots {
  return [params.cwd, ...(params.additionalDirectories ?? [])];
}

function track(live: Live, sessionId: string, params: { cwd: string; additionalDirectories?: string[] | null }): void {
  live.sessions.set(sessionId, { roots: rootsOf(params), prompt: undefined, permissions: new Set() });
  sync(live);
}

/** A relative cwd, MCP transports and additional directories the agent did not advertise: refused locally (capability-gate.ts). */
function checkSetup(method: string, caps: AgentCapabilities, params: { cwd: unknown; mcpServers?: unknown[]; additionalDirectories?: string[] }): void {
  const refusal = sessionSetupRefusal(caps, params);
  switch (refusal?.kind) {
    case undefined:
      return;
    case 'cwd_not_absolute':
      throw new RpcError(-32602, `${method}: cwd must be an absolute path`, { cwd: refusal.cwd }, 'local');
    case 'mcp_transport':
      throw new RpcError(-32602, `${method}: the agent does not accept ${refusal.transport} MCP servers (mcpCapabilities)`, { type: refusal.transport }, 'local');
    case 'additional_directories':
      throw new RpcError(-32602, `${method}: the agent does not accept additionalDirectories`, {}, 'local');
  }
}

/** `session/new`. */
export async function newSession(client: AnyActorRef, params: { cwd: string; mcpServers?: unknown[]; additionalDirectories?: string[] }): Promise<Record<string, unknown> & { sessionId: string }> {
  const live = liveOf(client);
  const caps = requireInitialized(live, AGENT_METHODS.session_new);
  checkSetup(AGENT_METHODS.session_new, caps, params);
  const result = (await sendRequest(live.connection, AGENT_METHODS.session_new, { mcpServers: [], ...params })) as Record<string, unknown> & { sessionId: string };
  track(live, result.sessionId, params);
  return result;
}

/** `session/load`: resolves with the response and the updates the agent replayed before it. */
export async function loadSession(client: AnyActorRef, params: { sessionId: string; cwd: string; mcpServers?: unknown[]; additionalDirectories?: string[] }): Promise<{ response: Record<string, unknown>; replayed: SessionUpdate[] }> {
  const live = liveOf(client);
  const caps = requireInitialized(live, AGENT_METHODS.session_load);
  checkSetup(AGENT_METHODS.session_load, caps, params);
  const replayed: SessionUpdate[] = [];
  const listener = client.on('acp.update', (event: Extract<AgentClientEmitted, { type: 'acp.update' }>) => {
    if (event.sessionId === params.sessionId) replayed.push(event.update);
  });
  try {
    const response = (await sendRequest(live.connection, AGENT_METHODS.session_load, { mcpServers: [], ...params })) as Record<string, unknown>;
    track(live, params.sessionId, params);
    return { response, replayed };
  } finally {
    listener.unsubscribe();
  }
}

/** The extension request of {@link drainReplay}: any answer will do, `-32601` included. */
export const DRAIN_METHOD = '_acp-warden/drain';

/** How {@link drainReplay} ended. */
export interface DrainOutcome {
  /** The session's updates that arrived while it waited. */
  readonly updates: number;
  /** Round trips made. */
  readonly rounds: number;
  /** `false` when it gave up (a round trip unanswered in `timeoutMs`, or `maxRounds` used): the replay may go on. */
  readonly drained: boolean;
}

/**
 * Waits until the agent has written everything it had queued for `sessionId`, such as a
 * `session/load` replay it goes on streaming after its answer (Gemini CLI 0.61.0). It sends
 * a cheap request ({@link DRAIN_METHOD}) and waits for the answer, again and again, until two
 * round trips in a row bring no update of the session. One stdio pipe is FIFO, so an update
 * written before an answer arrives before it; an agent still writing its replay one update
 * after the other has written the next one before it reads the next request, so a round trip
 * that brings none means the replay is over (the second one covers an answer and an update
 * finishing in either order). A call made while nothing is pending costs two round trips.
 * A round gives up after `timeoutMs` (10 s) of the read gate being open: time the editor
 * stalls (the gate closed, the agent's output unread) does not count.
 * Rejects as the request does when the agent dies (`peer_lost`).
 */
export async function drainReplay(client: AnyActorRef, sessionId: string, options: { readonly timeoutMs?: number; readonly maxRounds?: number } = {}): Promise<DrainOutcome> {
  const live = liveOf(client);
  requireInitialized(live, DRAIN_METHOD);
  const maxRounds = options.maxRounds ?? 1000;
  let window = 0;
  let updates = 0;
  const listener = client.on('acp.update', (event: Extract<AgentClientEmitted, { type: 'acp.update' }>) => {
    if (event.sessionId === sessionId) window++;
  });
  try {
    let quiet = 0;
    for (let rounds = 1; rounds <= maxRounds; rounds++) {
      window = 0;
      if ((await drainRound(client, live.connection, sessionId, options.timeoutMs ?? 10_000)) === 'timed_out') return { updates: updates + window, rounds, drained: false };
      updates += window;
      quiet = window === 0 ? quiet + 1 : 0;
      if (quiet === 2) return { updates, rounds, drained: true };
    }
    return { updates, rounds: maxRounds, drained: false };
  } finally {
    listener.unsubscribe();
  }
}

/**
 * One round trip of {@link drainReplay}. Its deadline runs only while the read gate is open:
 * while the editor's output is backed up, the agent's answer is not read (the port waits), so
 * a stalled editor must not look like an agent that never answers.
 */
async function drainRound(client: AnyActorRef, connection: AnyActorRef, sessionId: string, timeoutMs: number): Promise<'answered' | 'timed_out'> {
  const deadline = readGateOf(client.system).openDeadline(timeoutMs);
  const abort = new AbortController();
  const timedOut = deadline.expired.then(() => 'timed_out' as const);
  const answered = sendRequest(connection, DRAIN_METHOD, { sessionId }, { timeout: 'none', signal: abort.signal }).then(
    () => 'answered' as const,
    (error: unknown) => {
      // Any answer is the agent's: an error answer (method not found) is as good as a result.
      if ((error as RpcError).failure === 'error_response') return 'answered' as const;
      if (abort.signal.aborted) return 'timed_out' as const;
      throw error;
    },
  );
  try {
    const outcome = await Promise.race([answered, timedOut]);
    if (outcome === 'timed_out') {
      abort.abort();
      await answered.catch(() => undefined);
    }
    return outcome;
  } finally {
    deadline.cancel();
  }
}

/** `session/resume` (no replay). */
export async function resumeSession(client: AnyActorRef, params: { sessionId: string; cwd: string; mcpServers?: unknown[]; additionalDirectories?: string[] }): Promise<Record<string, unknown>> {
  const live = liveOf(client);
  const caps = requireInitialized(live, AGENT_METHODS.session_resume);
  checkSetup(AGENT_METHODS.session_resume, caps, params);
  const response = (await sendRequest(live.connection, AGENT_METHODS.session_resume, params)) as Record<string, unknown>;
  track(live, params.sessionId, params);
  return response;
}

/** Unstable `session/fork`: a new, independent session starting from another's history. */
export async function forkSession(client: AnyActorRef, params: { sessionId: string; cwd: string; mcpServers?: unknown[]; additionalDirectories?: string[] }): Promise<Record<string, unknown> & { sessionId: string }> {
  const live = liveOf(client);
  const caps = requireInitialized(live, UNSTABLE_AGENT_METHODS.session_fork);
  checkSetup(UNSTABLE_AGENT_METHODS.session_fork, caps, params);
  const result = (await sendRequest(live.connection, UNSTABLE_AGENT_METHODS.session_fork, params)) as Record<string, unknown> & { sessionId: string };
  track(live, result.sessionId, params);
  return result;
}

/** `session/list`, one page; pass `cursor` from the previous page's `nextCursor`. */
export async function listSessions(client: AnyActorRef, params: { cwd?: string; cursor?: string } = {}): Promise<{ sessions: Array<Record<string, unknown>>; nextCursor?: string }> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.session_list);
  return (await sendRequest(live.connection, AGENT_METHODS.session_list, params)) as { sessions: Array<Record<string, unknown>>; nextCursor?: string };
}

/** `session/close`: the agent cancels work and frees the session; its terminals are released. */
export async function closeSession(client: AnyActorRef, sessionId: string): Promise<void> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.session_close);
  await sendRequest(live.connection, AGENT_METHODS.session_close, { sessionId });
  await forget(live, sessionId);
}

/** `session/delete`. */
export async function deleteSession(client: AnyActorRef, sessionId: string): Promise<void> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.session_delete);
  await sendRequest(live.connection, AGENT_METHODS.session_delete, { sessionId });
  await forget(live, sessionId);
}

async function forget(live: Live, sessionId: string): Promise<void> {
  const session = live.sessions.get(sessionId);
  if (session) endPrompt(session);
  live.sessions.delete(sessionId);
  await live.terminals.releaseAll(sessionId);
  sync(live);
}

/** `session/set_mode`. */
export async function setMode(client: AnyActorRef, sessionId: string, modeId: string): Promise<void> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.session_set_mode);
  await sendRequest(live.connection, AGENT_METHODS.session_set_mode, { sessionId, modeId });
}

/** `session/set_config_option` (models are a config option); resolves with the complete list. */
export async function setConfigOption(client: AnyActorRef, sessionId: string, configId: string, value: unknown): Promise<{ configOptions: unknown[] }> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.session_set_config_option);
  return (await sendRequest(live.connection, AGENT_METHODS.session_set_config_option, { sessionId, configId, value })) as { configOptions: unknown[] };
}

/**
 * `authenticate` with one of the agent's auth methods. A terminal method is never sent
 * (ACP: the client runs the agent's command in a terminal instead): refused locally, as is
 * an id the agent did not offer.
 */
export async function authenticate(client: AnyActorRef, methodId: string): Promise<void> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.authenticate);
  const method = (live.agent?.authMethods ?? []).find((entry) => entry.id === methodId);
  if (!method) return Promise.reject(new RpcError(-32602, `The agent offers no auth method ${JSON.stringify(methodId)}`, { methodId }, 'local'));
  if ((method as { type?: string }).type === 'terminal') {
    return Promise.reject(new RpcError(-32602, `Auth method ${methodId} runs in a terminal: run the agent's command with its args instead of calling authenticate`, { methodId }, 'local'));
  }
  await sendRequest(live.connection, AGENT_METHODS.authenticate, { methodId });
}

/** `logout`. */
export async function logout(client: AnyActorRef): Promise<void> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.logout);
  await sendRequest(live.connection, AGENT_METHODS.logout, {});
}

/** A prompt in flight: its updates as they come, and its result. */
export interface PromptRunHandle {
  /** The session's updates until the prompt ends, in order. */
  readonly updates: AsyncIterable<SessionUpdate>;
  /** The stop reason; rejects with an `RpcError` (say `peer_lost` if the agent died). */
  readonly result: Promise<PromptResponse>;
  /** `session/cancel`: the prompt will end with `cancelled`. */
  cancel(): void;
}

/** Content the agent did not advertise (capability-gate.ts): refused locally. */
function contentRefusal(caps: AgentCapabilities, content: unknown[]): RpcError | undefined {
  const type = unadvertisedContent(caps, content);
  return type ? new RpcError(-32602, `The agent does not accept ${type} content (promptCapabilities)`, { type }, 'local') : undefined;
}

/**
 * `session/prompt`. Aborting `signal` cancels this prompt (`session/cancel`), and only this one.
 * `keepUpdates: false` is for relays that take the updates as `acp.update` events: they are not
 * also kept for `updates` (which then ends empty), so a turn of any size costs no memory.
 * `meta` is sent as the request's `_meta` (a relay passes the turn's W3C trace context on with it).
 */
export function prompt(client: AnyActorRef, sessionId: string, content: unknown[], options: { signal?: AbortSignal; keepUpdates?: boolean; meta?: Readonly<Record<string, unknown>> } = {}): PromptRunHandle {
  const live = liveOf(client);
  const session = live.sessions.get(sessionId);
  const run: PromptRun = { updates: [], wake: [], done: false, cancelled: false, keep: options.keepUpdates ?? true };
  const finish = () => {
    run.done = true;
    options.signal?.removeEventListener('abort', cancel);
    for (const wake of run.wake.splice(0)) wake();
  };
  const cancel = () => {
    // Only while this run is the session's prompt: a late abort never cancels the next one.
    if (session?.prompt === run && !run.done) cancelPrompt(client, sessionId);
  };
  let result: Promise<PromptResponse>;
  const refusal = !live.agent
    ? new RpcError(-32600, `Call initialize before ${AGENT_METHODS.session_prompt}`, {}, 'local')
    : !session
      ? new RpcError(-32002, `Unknown session ${sessionId}: create, load or resume it first`, { sessionId }, 'local')
      : session.prompt && !session.prompt.done
        ? new RpcError(-32600, `A prompt is already running in session ${sessionId}`, { sessionId }, 'local')
        : contentRefusal(live.agent.agentCapabilities ?? {}, content);
  if (refusal || !session) {
    result = Promise.reject(refusal);
  } else {
    session.prompt = run;
    result = sendRequest(live.connection, AGENT_METHODS.session_prompt, { sessionId, prompt: content, ...(options.meta ? { _meta: options.meta } : {}) }) as Promise<PromptResponse>;
    if (options.signal?.aborted) cancel();
    else options.signal?.addEventListener('abort', cancel, { once: true });
  }
  result.then(finish, finish);
  const updates: AsyncIterable<SessionUpdate> = {
    async *[Symbol.asyncIterator]() {
      let index = 0;
      for (;;) {
        if (index < run.updates.length) {
          yield run.updates[index++] as SessionUpdate;
          continue;
        }
        if (run.done) return;
        await new Promise<void>((resolve) => run.wake.push(resolve));
      }
    },
  };
  return { updates, result, cancel };
}

/**
 * `session/cancel` for the session's prompt, and `cancelled` for every permission request of
 * that session still waiting for the user (the client's duty in ACP).
 */
export function cancelPrompt(client: AnyActorRef, sessionId: string): void {
  const live = liveOf(client);
  const session = live.sessions.get(sessionId);
  if (!session?.prompt || session.prompt.done || session.prompt.cancelled) return;
  session.prompt.cancelled = true;
  sendNotification(live.connection, AGENT_METHODS.session_cancel, { sessionId });
  for (const id of [...session.permissions]) {
    session.permissions.delete(id);
    respond(live.connection, id, { outcome: { outcome: 'cancelled' } });
  }
}

/** The agent's initialize answer, once initialized. */
export function agentInfo(client: AnyActorRef): InitializeResponse | undefined {
  return liveOf(client).agent;
}
