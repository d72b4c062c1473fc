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
 *
 * This module is the actor and the calls to the agent's methods. Beside it, one concept
 * per file: the contract (`agent-client-contract.ts`), the live state
 * (`agent-client-state.ts`), serving the agent's requests (`agent-client-serving.ts`) and
 * draining a session's replay (`drain-replay.ts`).
 */
import type { AgentCapabilities, InitializeResponse, PromptResponse, SessionUpdate } from '@agentclientprotocol/sdk';
import { createActor, type ActorLogic, type ActorSystem, type AnyActorRef } from 'xstate';
import { connectionLogic, respond, sendNotification, sendRequest, type ConnectionEmitted } from '../jsonrpc/connection.js';
import { RpcError, toRpcError } from '../jsonrpc/rpc-error.js';
import type { PeerLost } from '../jsonrpc/transport.js';
import { createDynamicSupervisor } from '../supervision/dynamic-supervisor.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { AGENT_METHODS, PROTOCOL_VERSION, UNSTABLE_AGENT_METHODS } from '../protocol/methods.js';
import { sessionSetupRefusal, unadvertisedContent } from './capability-gate.js';
import { Terminals } from './terminals.js';
import type { WorkspaceRoots } from './workspace-fs.js';
import type { AgentClientEmitted, AgentClientEvent, AgentClientInput, AgentClientSnapshot } from './agent-client-contract.js';
import { endPrompt, keepLive, liveOf, requireInitialized, summary, sync, type Live, type PromptRun, type Scope } from './agent-client-state.js';
import { advertised, methodTable, onAgentNotification, onAgentRequest } from './agent-client-serving.js';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { V2_AGENT_METHODS, V2_PROTOCOL_VERSION } from '../protocol/methods-v2.js';
import { agentInitializeFromV2, initializeRequestOfferingV2 } from './v2-agent-initialize.js';
import { configOptionFromV2 } from './v2-inbound.js';
import type { TurnEnd } from './v2-turn-state.js';

/** ACP's "unsupported protocol version" (an agent that will not speak the version asked). */
const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** A v2 agent's answer carrying config options, with them in v1's terms (`configId` is `id`). */
function answerOf<T>(live: Live, result: T): T {
  const options = (result as { configOptions?: unknown } | undefined)?.configOptions;
  if (!live.mode.v2 || !Array.isArray(options)) return result;
  return { ...result, configOptions: options.map((option) => configOptionFromV2(option as V2.SessionConfigOption)) };
}

export * from './agent-client-contract.js';
export * from './drain-replay.js';

/** Actor logic of an ACP client: `createActor(agentClientLogic, { input: { transport } })`. */
export const agentClientLogic = gracefulShutdown({
  config: { name: 'acpAgentClient' },
  getInitialSnapshot(scope: Scope, input: AgentClientInput): AgentClientSnapshot {
    if (!input?.transport) throw new TypeError('Expected the agent client input to have a `transport`.');
    const mode = { v2: false };
    const offersV2 = input.protocol === 'v2' || input.protocol === 'auto';
    const connection = createActor(connectionLogic, {
      parent: scope.self,
      id: 'connection',
      input: { transport: input.transport, name: 'agent', methods: offersV2 ? methodTable(mode) : methodTable(), ...(input.timeouts ? { timeouts: input.timeouts } : {}) },
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
      mode,
      inbound: new Map(),
    };
    keepLive(live);
    return { status: 'active', output: undefined, error: undefined, value: 'connected', context: summary(live) };
  },
  start(_snapshot: AgentClientSnapshot, scope: Scope): void {
    const live = liveOf(scope.self);
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
    const live = liveOf(scope.self);
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

function close(live: Live, snapshot: AgentClientSnapshot, reason: PeerLost, status: 'done' | 'stopped'): AgentClientSnapshot {
  live.phase = 'closed';
  // A v2 turn owed by an agent that went away fails as a v1 prompt's request does (peer_lost).
  const lost = live.mode.v2 ? RpcError.because('peer_lost', `The peer is gone: ${reason.message}`, { method: AGENT_METHODS.session_prompt, exit: reason.exit }) : undefined;
  for (const session of live.sessions.values()) endPrompt(session, lost);
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

// ---------------------------------------------------------------------------------------
// Calling the agent

/**
 * `initialize`: sends the protocol version offered (v1, or v2 in both shapes: the input's
 * `protocol`) and the capabilities we serve; refuses (and closes) an agent that answers with a
 * version we do not speak. A v2 answer is kept in v1's terms (`protocolVersion` 2).
 */
export async function initialize(client: AnyActorRef): Promise<InitializeResponse> {
  const live = liveOf(client);
  const clientInfo = live.input.clientInfo ?? { name: 'acp-warden', version: '0.1.0' };
  const v1Request = { protocolVersion: PROTOCOL_VERSION, clientCapabilities: live.capabilities, clientInfo };
  let result: InitializeResponse;
  if (live.input.protocol === 'v2' || live.input.protocol === 'auto') {
    try {
      result = (await sendRequest(live.connection, AGENT_METHODS.initialize, initializeRequestOfferingV2(clientInfo, live.capabilities))) as InitializeResponse;
    } catch (error) {
      // `auto`: an agent that refuses version 2 is asked again in v1 (the SDK's router allows a second initialize).
      if (live.input.protocol !== 'auto' || toRpcError(error).code !== UNSUPPORTED_PROTOCOL_VERSION) throw error;
      result = (await sendRequest(live.connection, AGENT_METHODS.initialize, v1Request)) as InitializeResponse;
    }
    if (result.protocolVersion === V2_PROTOCOL_VERSION) {
      live.mode.v2 = true;
      result = agentInitializeFromV2(result as unknown as V2.InitializeResponse);
    }
  } else {
    result = (await sendRequest(live.connection, AGENT_METHODS.initialize, v1Request)) as InitializeResponse;
  }
  if (result.protocolVersion !== PROTOCOL_VERSION && !live.mode.v2) {
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
  const result = answerOf(live, (await sendRequest(live.connection, AGENT_METHODS.session_new, { mcpServers: [], ...params })) as Record<string, unknown> & { sessionId: string });
  track(live, result.sessionId, params);
  return result;
}

/** `session/load` (a v2 agent: `session/resume` replaying from the start): resolves with the response and the updates the agent replayed before it. */
export async function loadSession(client: AnyActorRef, params: { sessionId: string; cwd: string; mcpServers?: unknown[]; additionalDirectories?: string[] }): Promise<{ response: Record<string, unknown>; replayed: SessionUpdate[] }> {
  const live = liveOf(client);
  const caps = requireInitialized(live, AGENT_METHODS.session_load);
  checkSetup(AGENT_METHODS.session_load, caps, params);
  const replayed: SessionUpdate[] = [];
  const listener = client.on('acp.update', (event: Extract<AgentClientEmitted, { type: 'acp.update' }>) => {
    if (event.sessionId === params.sessionId) replayed.push(event.update);
  });
  try {
    const response = live.mode.v2
      ? answerOf(live, (await sendRequest(live.connection, V2_AGENT_METHODS.session_resume, { mcpServers: [], ...params, replayFrom: { type: 'start' } })) as Record<string, unknown>)
      : ((await sendRequest(live.connection, AGENT_METHODS.session_load, { mcpServers: [], ...params })) as Record<string, unknown>);
    track(live, params.sessionId, params);
    return { response, replayed };
  } finally {
    listener.unsubscribe();
  }
}

/** `session/resume` (no replay). */
export async function resumeSession(client: AnyActorRef, params: { sessionId: string; cwd: string; mcpServers?: unknown[]; additionalDirectories?: string[] }): Promise<Record<string, unknown>> {
  const live = liveOf(client);
  const caps = requireInitialized(live, AGENT_METHODS.session_resume);
  checkSetup(AGENT_METHODS.session_resume, caps, params);
  const response = answerOf(live, (await sendRequest(live.connection, AGENT_METHODS.session_resume, params)) as Record<string, unknown>);
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
  // A v2 turn whose idle never came before the session went: it fails rather than wait for ever.
  if (session) endPrompt(session, live.mode.v2 ? RpcError.because('session_closed', `Session ${sessionId} was closed before its turn ended`, { sessionId }, { failure: 'local' }) : undefined);
  live.sessions.delete(sessionId);
  await live.terminals.releaseAll(sessionId);
  sync(live);
}

/** `session/set_mode`. */
export async function setMode(client: AnyActorRef, sessionId: string, modeId: string): Promise<void> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.session_set_mode);
  // v2 has no modes (they are config options).
  if (live.mode.v2) throw new RpcError(-32601, `${AGENT_METHODS.session_set_mode} is not in ACP v2, which the agent speaks: modes are config options there`, { method: AGENT_METHODS.session_set_mode }, 'local');
  await sendRequest(live.connection, AGENT_METHODS.session_set_mode, { sessionId, modeId });
}

/** `session/set_config_option` (models are a config option); resolves with the complete list. */
export async function setConfigOption(client: AnyActorRef, sessionId: string, configId: string, value: unknown): Promise<{ configOptions: unknown[] }> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.session_set_config_option);
  // v2 names the value's type.
  const params = live.mode.v2 ? { sessionId, configId, type: typeof value === 'boolean' ? 'boolean' : 'id', value } : { sessionId, configId, value };
  return answerOf(live, (await sendRequest(live.connection, AGENT_METHODS.session_set_config_option, params)) as { configOptions: unknown[] });
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
  await sendRequest(live.connection, live.mode.v2 ? V2_AGENT_METHODS.auth_login : AGENT_METHODS.authenticate, { methodId });
}

/** `logout`. */
export async function logout(client: AnyActorRef): Promise<void> {
  const live = liveOf(client);
  requireInitialized(live, AGENT_METHODS.logout);
  await sendRequest(live.connection, live.mode.v2 ? V2_AGENT_METHODS.auth_logout : AGENT_METHODS.logout, {});
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
    const params = { sessionId, prompt: content, ...(options.meta ? { _meta: options.meta } : {}) };
    result = live.mode.v2 ? promptV2(live, run, params) : (sendRequest(live.connection, AGENT_METHODS.session_prompt, params) as Promise<PromptResponse>);
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
 * A v2 agent's prompt: its answer (`{ messageId }`) says the prompt was taken, not that the
 * turn is over; the turn ends at the session's `idle` state (onAgentNotification), which may
 * come before that answer. Resolves as a v1 prompt does (`{ stopReason }`); an `idle` with an
 * error rejects with the agent's error, an agent gone away with `peer_lost`.
 */
function promptV2(live: Live, run: PromptRun, params: Record<string, unknown>): Promise<PromptResponse> {
  const turn = new Promise<TurnEnd>((resolve, reject) => {
    run.turn = { resolve, reject };
  });
  // Rejected while the answer is an error too: that error is the one the caller gets.
  turn.catch(() => undefined);
  return sendRequest(live.connection, AGENT_METHODS.session_prompt, params)
    .then(() => turn)
    .then((end) => (end.kind === 'stop' ? { stopReason: end.stopReason } : Promise.reject(RpcError.fromErrorObject(end.error))));
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

/**
 * Cancels the current work of the subagent child `childId` (ACP's subagent sessions: the
 * client's `session/cancel` on the child's id, for a child that advertised `cancel`); the
 * child's end comes from the agent as updates. The child is no session of this client.
 */
export function cancelChild(client: AnyActorRef, childId: string): void {
  sendNotification(liveOf(client).connection, AGENT_METHODS.session_cancel, { sessionId: childId });
}

/** The agent's initialize answer, once initialized. */
export function agentInfo(client: AnyActorRef): InitializeResponse | undefined {
  return liveOf(client).agent;
}
