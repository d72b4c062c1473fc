/**
 * The host's agent: the native agent the editor (or the embedding API) talks to. It sits
 * between the ACP agent server and the real agents (adapters, passthroughs, the demo agent)
 * and adds what makes sessions survive:
 *
 * - the **journal**: the prompt, every update, permission answers, stop reasons, restarts,
 *   appended before the editor hears of them (an append is durable when it returns);
 * - `session/list` and `session/load` from the journal, so that a host that was restarted
 *   (even after SIGKILL) lists every session, replays it, and resumes it on the agent side
 *   (the journaled resume state goes back to the agent in `session/resume`);
 * - the agents' own sessions: after the journal's, `session/list` shows what each agent that
 *   can list (`sessionCapabilities.list`: Codex's threads) keeps and the journal does not map,
 *   and `session/load` / `session/resume` of one of those journals it and resumes it there;
 * - **recovery notices**: when an agent process dies and restarts, the editor is told what
 *   happened and the restart count (a `notice`, journaled as a `notice` entry, never as
 *   conversation; the server signs it as acp-warden's message for clients without
 *   `session.notices`);
 * - `session/fork` (when the agent forks: journaled with a copy of the source's history) and
 *   `session/delete` (the session leaves the journal); `session/load` / `session/resume` of a
 *   live session answer its current modes and config options (kept in its state chart);
 * - one **session state chart** per session (src/session/session-machine.ts), a child actor
 *   fed with the facts, for the inspector and `host.tree()`; it holds the session's state (the
 *   modes, config options, title, commands and resume handle the agent reported, what the user
 *   chose);
 * - **journaled choices**: a mode or config option the user set (once the agent answered) or
 *   the agent switched to, and each new resume handle, is a journal entry (`mode`, `config`,
 *   `resume`: never conversation); a new agent process (after a restart, or a warden restart's
 *   load or resume) gets them again (src/session/reapply.ts) before the next prompt reaches it;
 * - several agents at once: `session/new` picks one with `_meta["acp-warden/agent"]`
 *   (the embedding API does), else the default.
 *
 * Each real agent is a child actor (`agent:<name>`) started on first use; its own sessions
 * supervisor holds the session supervisors and their ports.
 */
import type { AgentCapabilities, ContentBlock, SessionConfigOption, SessionInfo, SessionModeState, SessionUpdate, StopReason } from '@agentclientprotocol/sdk';
import { createActor, type ActorLogic, type ActorScope, type ActorSystem, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import {
  RESUME_META_KEY,
  type AgentEventContext,
  type AgentHandlerEvent,
  type AgentHandlerOutput,
  type AgentRequestEvent,
  type NativeAgent,
} from '../acp/native-agent.js';
import { advertisesFork } from '../acp/agent-server.js';
import { RpcError, type ErrorObject } from '../jsonrpc/rpc-error.js';
import { describePortExit, type PortExitReason } from '../port/port-exit.js';
import { noticeUpdate } from '../session/cursor.js';
import { deliveryGateOf, Subscriber } from '../session/subscriber.js';
import { InvalidCursorError, JournalError, SessionOwnedError, stateEntryKinds, type Journal, type JournalEntry, type JournalSession } from './journal.js';
import { sessionMachine, type SessionMachineContext, type SessionMachineEvent } from '../session/session-machine.js';
import { chosenFromEntries, hasChoices, setupOf, stateUpdateKinds, type ChosenSettings, type ConfigValue, type SessionState, type SessionStateFact } from '../session/session-state.js';
import { reapplyRequests, type ReapplyRequest } from '../session/reapply.js';
import { canonical, decodeListCursor, encodeListCursor, type ListCursor } from './list-cursor.js';

/**
 * The `_meta` key that names a session's agent: in `session/new` (which agent to run it on),
 * in each `session/list` entry (which agent keeps it), and in `session/load` /
 * `session/resume` of a session the journal does not know (with the resume state under
 * `RESUME_META_KEY`: which agent to resume it on, and how).
 */
export const AGENT_META_KEY = 'acp-warden/agent';

/** The `_meta` key of a `session/list` answer that names the agents whose sessions could not be listed, and why. */
export const SKIPPED_META_KEY = 'acp-warden/skipped';

/** What a host agent runs on. */
export interface HostAgentOptions {
  /** The agent a `session/new` without `_meta["acp-warden/agent"]` gets. */
  readonly defaultAgent: string;
  /** The native agent for a name; throws (with how to install it) when there is none. */
  readonly resolve: (name: string) => NativeAgent;
  readonly journal: Journal;
  /** What the host calls itself in `initialize`. */
  readonly agentInfo?: { readonly name: string; readonly title?: string; readonly version: string };
  /** Facts for the embedding program (`host.on`): session state changes and recovery. */
  readonly onEvent?: (event: HostSessionEvent) => void;
  /**
   * Agents whose own sessions `session/list` shows after the journal's, besides the default
   * agent and the agents this host already runs; only those that advertise
   * `sessionCapabilities.list` (Codex) are asked, and one that cannot be found is skipped.
   */
  readonly listAgents?: readonly string[];
  /** Sessions per journal page of `session/list` (default: the journal's, 50 for SQLite). */
  readonly listPageSize?: number;
}

/** What the host tells an embedding program about its sessions. */
export type HostSessionEvent =
  /** An agent was started (on first use): its supervisors exist from now on. */
  | { readonly type: 'agent.started'; readonly agent: string }
  | { readonly type: 'session.opened'; readonly sessionId: string; readonly agent: string; readonly how: 'new' | 'load' | 'resume' | 'fork' }
  | { readonly type: 'session.state'; readonly sessionId: string; readonly state: string }
  | { readonly type: 'session.restarting'; readonly sessionId: string; readonly restarts: number; readonly exit: string }
  | { readonly type: 'session.recovered'; readonly sessionId: string; readonly restarts: number }
  | { readonly type: 'session.failed'; readonly sessionId: string; readonly reason: string }
  | { readonly type: 'session.closed'; readonly sessionId: string }
  /** An agent process printed a line over the line limit (`--max-line-mib`): skipped unread, the process goes on. */
  | { readonly type: 'agent.lineDropped'; readonly agent: string; readonly sessionId?: string; readonly bytes: number; readonly limit: number; readonly what: string }
  /** The journal failed; `sessionId` is absent when the write or read was for no one session (`session/list`). */
  | { readonly type: 'journal.error'; readonly sessionId?: string; readonly message: string };

/** A native agent that serves `options.defaultAgent` (and any other agent by name) with a journal. */
export function createHostAgent(options: HostAgentOptions): NativeAgent {
  const base = options.resolve(options.defaultAgent);
  return {
    logic: hostAgentLogic,
    input: { ...options, base },
    // The editor shows the agent it asked for; the title says who keeps it alive.
    agentInfo: options.agentInfo ?? { ...base.agentInfo, title: `${base.agentInfo.title ?? base.agentInfo.name} (acp-warden)` },
    capabilities: withHostCapabilities(base.capabilities ?? {}),
    authMethods: base.authMethods ?? [],
    ...(base.protocolVersions ? { protocolVersions: base.protocolVersions } : {}),
    ...(base.extensions ? { extensions: base.extensions } : {}),
    ...(base.delegateInitialize ? { delegateInitialize: true } : {}),
    cancelGraceMs: base.cancelGraceMs ?? 5000,
    // A slow editor pauses this connection's subscriber, never the agents: the journal is the buffer.
    deliversFromJournal: true,
    // Every agent's supervisors, in start order: the server shuts them down gracefully on close.
    supervisors: (host) => [...innerAgentsOf(host).values()].flatMap((inner) => inner.agent.supervisors?.(inner.ref) ?? []),
  };
}

/**
 * What the host adds to any agent: sessions come back from the journal, and leave it
 * (`delete`). `fork` stays only when the agent forks (the host forwards it and journals the fork).
 */
function withHostCapabilities(capabilities: AgentCapabilities): AgentCapabilities {
  return {
    ...capabilities,
    loadSession: true,
    sessionCapabilities: { ...capabilities.sessionCapabilities, list: {}, resume: {}, close: {}, delete: {} },
  };
}

interface HostInput extends HostAgentOptions {
  readonly base: NativeAgent;
}

interface InnerAgent {
  readonly name: string;
  readonly agent: NativeAgent;
  readonly ref: AnyActorRef;
  readonly subscription: Subscription;
  /** Requests held until its own `initialize` (a delegating agent that is not the default) is answered. */
  waiting: AgentHandlerEvent[] | undefined;
  /** What it advertises: its own, or (when it delegates initialize) what its initialize answered. */
  capabilities: AgentCapabilities;
}

interface HostSession {
  readonly sessionId: string;
  readonly agent: string;
  readonly machine: AnyActorRef;
  /** Updates of an agent-side `session/load` are not news: the host replayed its journal. */
  replaying: boolean;
  /** Prompts that came while a new agent process is to get the user's choices first (journaled, not sent yet), in order. */
  readonly held: AgentRequestEvent[];
  /** What waits for the re-apply under way (a load or resume's answer), run when it ends or the session does. */
  readonly afterReapply: Array<() => void>;
}

type Pending =
  | { readonly kind: 'initialize'; readonly agent: string; readonly editor: boolean }
  | { readonly kind: 'new'; readonly agent: string; readonly cwd: string; readonly context: AgentEventContext }
  /** `adopted`: journaled by this request (an agent's session the journal did not know), forgotten again if the agent refuses it. */
  | { readonly kind: 'attach'; readonly agent: string; readonly sessionId: string; readonly how: 'load' | 'resume'; readonly adopted: Adopted | undefined; readonly job: AttachJob; readonly context: AgentEventContext }
  | { readonly kind: 'prompt'; readonly sessionId: string }
  /** `holds`: it made later loads and resumes of the session wait (see `Live.opening`). */
  | { readonly kind: 'close'; readonly sessionId: string; readonly holds: boolean }
  | { readonly kind: 'fork'; readonly agent: string; readonly from: string; readonly cwd: string; readonly context: AgentEventContext }
  /** The host's own close of a session the editor was told failed: its answer goes nowhere. */
  | { readonly kind: 'abandon' }
  | { readonly kind: 'delete'; readonly sessionId: string; readonly holds: boolean }
  /** `session/set_mode` (with the mode asked for) or `session/set_config_option` (with the option and value). */
  | { readonly kind: 'setting'; readonly sessionId: string; readonly modeId: string | undefined; readonly config: { readonly configId: string; readonly value: ConfigValue } | undefined }
  /** The host's own set_mode or set_config_option, giving a new agent process the user's choice (`round`: the chart's re-apply round). */
  | { readonly kind: 'reapply'; readonly sessionId: string; readonly round: number; readonly request: ReapplyRequest }
  | { readonly kind: 'list'; readonly job: ListJob; readonly index: number }
  | { readonly kind: 'other' };

/** One `session/list` being answered: the journal's page, then the listing agents' pages. */
interface ListJob {
  readonly requestId: string;
  readonly context: AgentEventContext;
  readonly cwd: string | undefined;
  /** The agents asked, in order (sorted by name, so that a cursor names a stable place). */
  readonly agents: readonly string[];
  readonly sessions: SessionInfo[];
  readonly skipped: Array<{ readonly agent: string; readonly reason: string }>;
}

/** A session an agent listed: which agent keeps it, and the resume state that continues it. */
interface ListedSession {
  readonly agent: string;
  readonly resume: unknown;
}

/**
 * One `session/load` or `session/resume` under way, from its request to its answer: a
 * `session/close` or `session/delete` of the session meanwhile (during the replay, or while its
 * agent opens it) interrupts it, and it answers that instead of opening the session.
 */
interface AttachJob {
  readonly sessionId: string;
  /** It opens a session not running here: later loads and resumes of it wait for its answer. */
  readonly opens: boolean;
  interrupted: 'closed' | 'deleted' | undefined;
}

/** A session journaled by the load or resume that attaches it; `listed`: what an agent's listing said of it, if it came from there. */
interface Adopted {
  readonly listed: ListedSession | undefined;
}

interface ClientCall {
  readonly agent: string;
  readonly key: string;
  readonly sessionId: string | undefined;
  readonly method: string;
  readonly params: unknown;
}

interface Live {
  readonly scope: Scope;
  readonly input: HostInput;
  readonly inner: Map<string, InnerAgent>;
  readonly sessions: Map<string, HostSession>;
  readonly pending: Map<string, Pending>;
  readonly clientCalls: Map<string, ClientCall>;
  /** Sessions whose agent gave up, with why: a prompt is refused naming it, load/resume starts them again. */
  readonly failed: Map<string, string>;
  /** Sessions agents listed that the journal does not know: what `session/load` / `session/resume` of one needs. */
  readonly listed: Map<string, ListedSession>;
  context: AgentEventContext | undefined;
  initialized: boolean;
  nextKey: number;
  journalErrors: number;
  /** Sessions closed by the editor (while not opened again): what their agents still say is dropped. */
  readonly closed: Set<string>;
  /** Updates journaled in this event-loop turn, not yet committed, so not yet shown (group commit). */
  group: { readonly outbox: Array<Extract<AgentHandlerOutput, { type: 'acp.update' }>>; readonly sessions: Set<string> } | undefined;
  /** The editor's connection, reading each session from a cursor: what the host tells the editor goes through it. */
  readonly subscriber: Subscriber;
  /** The session each unanswered editor request is about: its answer goes out in that session's order. */
  readonly requestSessions: Map<string, string>;
  /**
   * Updates, by agent, for sessions the host does not know, sent while that agent's
   * `session/new` or `session/fork` is unanswered (a passthrough may deliver them before the
   * answer): held until it settles, then journaled and shown, or dropped if that setup failed.
   */
  readonly held: Map<string, AgentHandlerOutput[]>;
  /** Loads and resumes under way, by session. */
  readonly attaching: Map<string, Set<AttachJob>>;
  /**
   * Sessions a load or resume is opening, or that their agent is closing or deleting, with the
   * loads and resumes of them that came since: run, in order, once that is answered (a load
   * after a close opens the session again; after a delete it finds none).
   */
  readonly opening: Map<string, Array<() => void>>;
}

/** Plain facts about the host agent. */
export interface HostAgentContext {
  readonly agents: readonly string[];
  readonly sessions: number;
  readonly journalErrors: number;
}

type HostSnapshot = Snapshot<undefined> & { readonly context: HostAgentContext };
type InnerOutput = { readonly type: 'host.inner'; readonly agent: string; readonly output: AgentHandlerOutput };
type CatchUp = { readonly type: 'host.catchUp'; readonly sessionId: string };
type HostEvent = AgentHandlerEvent | InnerOutput | CatchUp | { readonly type: `xstate.${string}` };
type Scope = ActorScope<HostSnapshot, HostEvent, ActorSystem<any>, AgentHandlerOutput>;

const lives = new WeakMap<AnyActorRef, Live>();
const keySeparator = '\u0000';

/** Actor logic of the host agent (see `createHostAgent`). */
export const hostAgentLogic = {
  config: { name: 'hostAgent' },
  getInitialSnapshot(scope: Scope, input: HostInput): HostSnapshot {
    const live: Live = { scope, input, inner: new Map(), sessions: new Map(), pending: new Map(), clientCalls: new Map(), failed: new Map(), listed: new Map(), closed: new Set(), context: undefined, initialized: false, nextKey: 1, journalErrors: 0, group: undefined, subscriber: undefined as unknown as Subscriber, requestSessions: new Map(), held: new Map(), attaching: new Map(), opening: new Map() };
    (live as { subscriber: Subscriber }).subscriber = subscriberOf(live);
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, context: summary(live) };
  },
  transition(snapshot: HostSnapshot, event: HostEvent, scope: Scope): HostSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    if (event.type === 'xstate.stop') {
      for (const inner of live.inner.values()) {
        inner.subscription.unsubscribe();
        if (inner.ref.getSnapshot().status === 'active') scope.stopChild(inner.ref);
      }
      for (const session of live.sessions.values()) {
        if (session.machine.getSnapshot().status === 'active') scope.stopChild(session.machine);
        releaseOwnership(live, session.sessionId);
      }
      live.subscriber.close();
      return { ...snapshot, status: 'stopped', context: summary(live) } as HostSnapshot;
    }
    if (event.type === 'host.inner') onInnerOutput(live, (event as InnerOutput).agent, (event as InnerOutput).output);
    else if (event.type === 'host.catchUp') live.subscriber.step((event as CatchUp).sessionId);
    else if (!event.type.startsWith('xstate.')) onEditorEvent(live, event as AgentHandlerEvent);
    return { ...snapshot, context: summary(live) };
  },
  getPersistedSnapshot(snapshot: HostSnapshot): HostSnapshot {
    return snapshot;
  },
} as unknown as ActorLogic<HostSnapshot, AgentHandlerEvent, HostInput, ActorSystem<any>, AgentHandlerOutput>;

function summary(live: Live): HostAgentContext {
  return { agents: [...live.inner.keys()], sessions: live.sessions.size, journalErrors: live.journalErrors };
}

/** The real agents a host agent runs, by name, with their actors (for the tree and for shutdown). */
export function innerAgentsOf(host: AnyActorRef): ReadonlyMap<string, { readonly agent: NativeAgent; readonly ref: AnyActorRef }> {
  const live = lives.get(host);
  return new Map([...(live?.inner ?? new Map<string, InnerAgent>())].map(([name, inner]) => [name, { agent: inner.agent, ref: inner.ref }]));
}

/** The session state charts, by session id. */
export function sessionMachinesOf(host: AnyActorRef): ReadonlyMap<string, AnyActorRef> {
  const live = lives.get(host);
  return new Map([...(live?.sessions ?? new Map<string, HostSession>())].map(([id, session]) => [id, session.machine]));
}

/** Everything the host tells the editor goes out here, after the updates journaled before it. */
function emit(live: Live, output: AgentHandlerOutput): void {
  commitGroup(live);
  deliver(live, output, undefined);
}

/** Hands an output to the editor's subscriber, in its session's order (`seq`: the journal entry it stands for). */
function deliver(live: Live, output: AgentHandlerOutput, seq: number | undefined): void {
  live.subscriber.deliver(sessionOfOutput(live, output), output, seq);
}

/** The session an output belongs to, if any: its order is that session's. */
function sessionOfOutput(live: Live, output: AgentHandlerOutput): string | undefined {
  switch (output.type) {
    case 'acp.update':
      return output.sessionId;
    case 'acp.respond':
    case 'acp.error': {
      const sessionId = live.requestSessions.get(output.requestId);
      live.requestSessions.delete(output.requestId);
      return sessionId;
    }
    case 'acp.clientRequest': {
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      return typeof sessionId === 'string' ? sessionId : undefined;
    }
    default:
      return undefined;
  }
}

/** Journal entries read per page when a cursor catches up or replays, and the most bytes of them. */
const cursorPageSize = 100;
const cursorPageBytes = 256 * 1024;

/** The editor's connection as a subscriber: it reads this host's journal, paused by the connection's delivery gate. */
function subscriberOf(live: Live): Subscriber {
  const journal = live.input.journal;
  const self = live.scope.self;
  return new Subscriber({
    write: (output) => live.scope.emit(output),
    read: (sessionId, afterSeq) => (journal.readEntries ? journal.readEntries(sessionId, { afterSeq, limit: cursorPageSize, maxBytes: cursorPageBytes }) : journal.entries(sessionId, afterSeq)),
    paged: journal.readEntries !== undefined,
    // Without it, what is answered during a replay waits for the replay's end.
    lastSeq: (sessionId) => (journal.lastSeq ? journal.lastSeq(sessionId) : Number.MAX_SAFE_INTEGER),
    gate: deliveryGateOf(live.scope.system),
    // A turn of its own: what was written had a turn to go out; a stopped host reads no more.
    schedule: (sessionId) =>
      setImmediate(() => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'host.catchUp', sessionId } as never);
      }),
    settle: () => commitGroup(live),
    readFailed: (sessionId, error) => failedWrite(live, sessionId, error),
  });
}
const fail = (live: Live, requestId: string, error: RpcError | ErrorObject) =>
  emit(live, { type: 'acp.error', requestId, error: error instanceof RpcError ? error.toErrorObject() : error });

// ---------------------------------------------------------------------------------------
// The real agents

/** The named agent's actor, started on first use. */
function innerAgent(live: Live, name: string): InnerAgent {
  const existing = live.inner.get(name);
  if (existing) return existing;
  const agent = name === live.input.defaultAgent ? live.input.base : live.input.resolve(name);
  const ref = createActor(agent.logic, { parent: live.scope.self, id: `agent:${name}`, input: agent.input });
  const self = live.scope.self;
  const subscription = ref.on('*', (output: AgentHandlerOutput) => self.send({ type: 'host.inner', agent: name, output } as never));
  const inner: InnerAgent = { name, agent, ref, subscription, waiting: undefined, capabilities: agent.capabilities ?? {} };
  live.inner.set(name, inner);
  ref.start();
  live.input.onEvent?.({ type: 'agent.started', agent: name });
  // A delegating agent that is not the editor's learns the client through its own initialize.
  if (agent.delegateInitialize && live.context && name !== live.input.defaultAgent) {
    inner.waiting = [];
    const key = `h${live.nextKey++}`;
    live.pending.set(key, { kind: 'initialize', agent: name, editor: false });
    ref.send({ type: 'initialize', requestId: key, method: 'initialize', params: { protocolVersion: live.context.protocolVersion, clientCapabilities: live.context.clientCapabilities }, context: live.context });
  } else if (live.initialized && live.context) {
    ref.send({ type: 'initialized', context: live.context });
  }
  return inner;
}

function sendTo(inner: InnerAgent, event: AgentHandlerEvent): void {
  if (inner.waiting) inner.waiting.push(event);
  else inner.ref.send(event);
}

// ---------------------------------------------------------------------------------------
// From the editor

function onEditorEvent(live: Live, event: AgentHandlerEvent): void {
  switch (event.type) {
    case 'initialize': {
      live.context = event.context;
      live.pending.set(event.requestId, { kind: 'initialize', agent: live.input.defaultAgent, editor: true });
      innerAgent(live, live.input.defaultAgent).ref.send(event);
      return;
    }
    case 'initialized':
      live.context = event.context;
      live.initialized = true;
      for (const inner of live.inner.values()) if (!inner.waiting) inner.ref.send(event);
      return;
    case 'session.cancel': {
      const session = live.sessions.get(event.sessionId);
      if (!session) return;
      // Prompts still held never reached the agent: they end here.
      answerHeld(live, session, 'cancelled');
      session.machine.send({ type: 'cancel' });
      sendTo(innerAgent(live, session.agent), event);
      return;
    }
    case 'client.response':
    case 'client.error': {
      const call = live.clientCalls.get(event.key);
      if (!call) return;
      live.clientCalls.delete(event.key);
      if (call.method === 'session/request_permission' && call.sessionId) {
        const outcome = event.type === 'client.response' ? (event.result as { outcome?: unknown } | undefined)?.outcome : { outcome: 'error', error: event.error.message };
        const toolCall = (call.params as { toolCall?: { toolCallId?: string; title?: string } }).toolCall;
        record(live, call.sessionId, { kind: 'permission', toolCallId: toolCall?.toolCallId, title: toolCall?.title ?? undefined, outcome });
        live.sessions.get(call.sessionId)?.machine.send({ type: 'permission.answered' });
      }
      const inner = live.inner.get(call.agent);
      inner?.ref.send({ ...event, key: call.key });
      return;
    }
    case 'ext.notification':
      innerAgent(live, live.input.defaultAgent).ref.send(event);
      return;
    default:
      onEditorRequest(live, event);
  }
}

function onEditorRequest(live: Live, request: AgentRequestEvent): void {
  const sessionId = typeof request.params.sessionId === 'string' ? request.params.sessionId : undefined;
  if (sessionId !== undefined) live.requestSessions.set(request.requestId, sessionId);
  // A store that fails (a damaged page, say) fails the request that met it, not the host.
  journalFailureAnswers(live, request.requestId, sessionId, () => serveEditorRequest(live, request, sessionId));
}

function serveEditorRequest(live: Live, request: AgentRequestEvent, sessionId: string | undefined): void {
  const { params } = request;
  switch (request.type) {
    case 'session.new': {
      const meta = params._meta as Record<string, unknown> | undefined;
      const name = typeof meta?.[AGENT_META_KEY] === 'string' ? (meta[AGENT_META_KEY] as string) : live.input.defaultAgent;
      let inner: InnerAgent;
      try {
        inner = innerAgent(live, name);
      } catch (error) {
        fail(live, request.requestId, RpcError.invalidParams((error as Error).message, { agent: name }));
        return;
      }
      live.pending.set(request.requestId, { kind: 'new', agent: name, cwd: params.cwd as string, context: request.context });
      sendTo(inner, request);
      return;
    }
    case 'session.list':
      listSessions(live, request);
      return;
    case 'session.load':
    case 'session.resume':
      attach(live, request, request.type === 'session.load' ? 'load' : 'resume');
      return;
    case 'session.prompt': {
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      if (!session || !sessionId) {
        const why = sessionId ? live.failed.get(sessionId) : undefined;
        fail(live, request.requestId, why
          ? RpcError.internalError(`session ${sessionId} failed (${why}); session/load or session/resume starts it again in a new agent process`, { sessionId, reason: 'session_failed' })
          : RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }));
        return;
      }
      // Journaled before the agent sees it: a prompt the host lost track of is still on record.
      const refused = recordOrError(live, sessionId, { kind: 'prompt', prompt: params.prompt as ContentBlock[] });
      if (refused) {
        fail(live, request.requestId, journalFailure(refused, sessionId, 'the prompt was not sent to the agent'));
        return;
      }
      // A new agent process gets the user's mode and config first: the prompt waits for that.
      if (holdsPrompts(session)) session.held.push(request);
      else sendPrompt(live, session, request);
      return;
    }
    case 'session.fork':
      fork(live, request);
      return;
    case 'session.delete':
      deleteSession(live, request);
      return;
    case 'session.setMode':
    case 'session.setConfigOption': {
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      if (!session || !sessionId) {
        live.pending.set(request.requestId, { kind: 'other' });
        sendTo(innerAgent(live, live.input.defaultAgent), request);
        return;
      }
      const config = request.type === 'session.setConfigOption' && typeof params.configId === 'string' && (typeof params.value === 'string' || typeof params.value === 'boolean') ? { configId: params.configId, value: params.value } : undefined;
      live.pending.set(request.requestId, { kind: 'setting', sessionId, modeId: request.type === 'session.setMode' ? (params.modeId as string) : undefined, config });
      sendTo(innerAgent(live, session.agent), request);
      return;
    }
    case 'session.close': {
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      if (!session || !sessionId) {
        // Known only to the journal (a previous host): closing it is just a record, unless
        // another warden that still runs has it live (refused, naming it, like load and delete).
        if (sessionId && live.input.journal.getSession(sessionId)) {
          if (!claimed(live, request.requestId, sessionId)) return;
          closed(live, sessionId);
        }
        emit(live, { type: 'acp.respond', requestId: request.requestId, result: {} });
        return;
      }
      const inner = innerAgent(live, session.agent);
      if (inner.agent.capabilities?.sessionCapabilities?.close) {
        live.pending.set(request.requestId, { kind: 'close', sessionId, holds: holdAttaches(live, sessionId) });
        sendTo(inner, request);
      } else {
        closed(live, sessionId);
        emit(live, { type: 'acp.respond', requestId: request.requestId, result: {} });
      }
      return;
    }
    default: {
      // Auth, extensions: the session's agent (or the default) answers.
      const session = sessionId ? live.sessions.get(sessionId) : undefined;
      live.pending.set(request.requestId, { kind: 'other' });
      sendTo(innerAgent(live, session?.agent ?? live.input.defaultAgent), request);
    }
  }
}

/**
 * `session/load` and `session/resume`. A session this host runs answers at once (load
 * replays the journal first). A session known only to the journal (a previous host) is
 * re-created on its agent with the journaled resume state: `session/resume` when the
 * agent can, else its own `session/load` whose replay is dropped (the host replayed).
 */
function attach(live: Live, request: AgentRequestEvent, how: 'load' | 'resume'): void {
  const sessionId = request.params.sessionId as string;
  const opens = !live.sessions.has(sessionId);
  // Another load or resume is opening it, or its agent is closing or deleting it: this one waits for that answer, then goes on as it finds the session.
  const waiting = live.opening.get(sessionId);
  if (waiting) {
    waiting.push(() => journalFailureAnswers(live, request.requestId, sessionId, () => attach(live, request, how)));
    return;
  }
  const known = live.input.journal.getSession(sessionId);
  const origin = known ? undefined : live.listed.get(sessionId);
  const journaled = known ?? adopt(live, request);
  if (!journaled) return;
  // What an adopted session came from: a refusal by its agent forgets it (and a listed one is listed again).
  const adopted: Adopted | undefined = known ? undefined : { listed: origin };
  // Live in another warden: running it here too would split its history (checked before the replay).
  if (opens && !claimed(live, request.requestId, sessionId)) return;
  // A session that failed (here or in a previous host) starts again in a fresh agent process.
  live.failed.delete(sessionId);
  const job = beginAttach(live, sessionId, opens);
  if (how === 'load') replay(live, sessionId, request.requestId, () => reattach(live, request, how, job, adopted), () => endAttach(live, job));
  else reattach(live, request, how, job, adopted);
}

function beginAttach(live: Live, sessionId: string, opens: boolean): AttachJob {
  const job: AttachJob = { sessionId, opens, interrupted: undefined };
  const jobs = live.attaching.get(sessionId) ?? new Set();
  jobs.add(job);
  live.attaching.set(sessionId, jobs);
  if (opens) live.opening.set(sessionId, []);
  return job;
}

/** The load or resume was answered: the ones that waited for it go on. */
function endAttach(live: Live, job: AttachJob): void {
  const jobs = live.attaching.get(job.sessionId);
  jobs?.delete(job);
  if (jobs?.size === 0) live.attaching.delete(job.sessionId);
  if (job.opens) releaseAttaches(live, job.sessionId);
}

/** Makes later loads and resumes of the session wait (unless something already does); whether it did. */
function holdAttaches(live: Live, sessionId: string): boolean {
  if (live.opening.has(sessionId)) return false;
  live.opening.set(sessionId, []);
  return true;
}

/** The loads and resumes that waited for the session go on, in order. */
function releaseAttaches(live: Live, sessionId: string): void {
  const waiting = live.opening.get(sessionId) ?? [];
  live.opening.delete(sessionId);
  for (const next of waiting) next();
}

/** The session was closed or deleted: the loads and resumes of it under way answer that. */
function interruptAttaches(live: Live, sessionId: string, how: 'closed' | 'deleted'): void {
  for (const job of live.attaching.get(sessionId) ?? []) job.interrupted ??= how;
}

/** What a load or resume that a close or delete interrupted answers. */
function interruption(sessionId: string, how: 'load' | 'resume', interrupted: 'closed' | 'deleted'): RpcError {
  return interrupted === 'deleted'
    ? RpcError.resourceNotFound(`session ${sessionId} (deleted while it was being ${how === 'load' ? 'loaded' : 'resumed'})`, { sessionId, reason: 'session_deleted' })
    : RpcError.internalError(`session ${sessionId} was closed while it was being ${how === 'load' ? 'loaded' : 'resumed'}; session/${how} opens it again`, { sessionId, reason: 'session_closed' });
}

/**
 * `attach`, after a load's replay: answers for a running session, else opens it on its agent,
 * as the journal has it now (a close or delete may have come during the replay).
 */
function reattach(live: Live, request: AgentRequestEvent, how: 'load' | 'resume', job: AttachJob, adopted: Adopted | undefined): void {
  const sessionId = request.params.sessionId as string;
  const answer = (output: AgentHandlerOutput) => {
    emit(live, output);
    endAttach(live, job);
  };
  if (job.interrupted) return answer({ type: 'acp.error', requestId: request.requestId, error: interruption(sessionId, how, job.interrupted).toErrorObject() });
  const running = live.sessions.get(sessionId);
  if (running) {
    record(live, sessionId, { kind: 'attached', how });
    return answer({ type: 'acp.respond', requestId: request.requestId, result: currentSetup(running) });
  }
  let journaled: JournalSession | undefined;
  try {
    journaled = live.input.journal.getSession(sessionId);
  } catch (error) {
    failedWrite(live, sessionId, error);
    releaseOwnership(live, sessionId);
    return answer({ type: 'acp.error', requestId: request.requestId, error: journalFailure(error, sessionId) });
  }
  if (!journaled) {
    releaseOwnership(live, sessionId);
    return answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }).toErrorObject() });
  }
  let inner: InnerAgent;
  try {
    inner = innerAgent(live, journaled.agent);
  } catch (error) {
    releaseOwnership(live, sessionId);
    unadopt(live, sessionId, adopted);
    return answer({ type: 'acp.error', requestId: request.requestId, error: RpcError.internalError(`session ${sessionId} needs agent ${journaled.agent}: ${(error as Error).message}`, { sessionId, agent: journaled.agent }).toErrorObject() });
  }
  // What the agent advertised (its initialize answer), not what its definition assumed.
  const caps = inner.capabilities;
  const method = caps.sessionCapabilities?.resume || !caps.loadSession ? 'session/resume' : 'session/load';
  const meta = { ...(request.params._meta as Record<string, unknown> | undefined), [RESUME_META_KEY]: journaled.resume ?? null };
  const session = openSession(live, sessionId, journaled.agent, journaled.restarts, { chosen: journaledChoices(live, sessionId), resume: journaled.resume });
  session.replaying = method === 'session/load';
  live.pending.set(request.requestId, { kind: 'attach', agent: journaled.agent, sessionId, how, adopted, job, context: request.context });
  sendTo(inner, {
    type: method === 'session/resume' ? 'session.resume' : 'session.load',
    requestId: request.requestId,
    method,
    params: { sessionId, cwd: request.params.cwd ?? journaled.cwd, mcpServers: request.params.mcpServers ?? [], _meta: meta },
    context: request.context,
  });
}

/** A live session's modes and config options, as its agent last reported them: what load and resume of it answer. */
function currentSetup(session: HostSession): { modes?: SessionModeState; configOptions?: SessionConfigOption[] } {
  return setupOf(stateOf(session));
}

/** The session's state, as its chart holds it. */
function stateOf(session: HostSession): SessionState {
  return (session.machine.getSnapshot().context as SessionMachineContext).state;
}

/** What a session setup answer (new, load, resume, fork) says about modes and config options, for the session's chart. */
function reportSetup(session: HostSession | undefined, result: unknown): void {
  const { modes, configOptions } = (result ?? {}) as { modes?: SessionModeState | null; configOptions?: SessionConfigOption[] | null };
  session?.machine.send({ type: 'setup.reported', ...(modes !== undefined ? { modes } : {}), ...(configOptions !== undefined ? { configOptions } : {}) });
}

/**
 * `session/fork` (unstable) of a live session: forwarded to its agent when the agent forks
 * (else `-32601`, and the host does not advertise it for that agent), then journaled as a
 * session of its own whose history starts with a copy of the source's conversation (so that
 * `session/load` of the fork replays it), listed like any other.
 */
function fork(live: Live, request: AgentRequestEvent): void {
  const from = request.params.sessionId as string;
  const session = live.sessions.get(from);
  if (!session) {
    fail(live, request.requestId, RpcError.resourceNotFound(`session ${from}`, { sessionId: from }));
    return;
  }
  const inner = innerAgent(live, session.agent);
  if (!advertisesFork(inner.capabilities)) {
    const refusal = RpcError.methodNotFound('session/fork');
    fail(live, request.requestId, { ...refusal.toErrorObject(), message: `${refusal.message}: agent ${session.agent} cannot fork sessions` });
    return;
  }
  live.pending.set(request.requestId, { kind: 'fork', agent: session.agent, from, cwd: request.params.cwd as string, context: request.context });
  sendTo(inner, request);
}

/**
 * `session/delete`: the session leaves the journal (record and entries: no host lists or loads
 * it again) and this host (what its agent still says is dropped). A live session is deleted
 * on its agent first when the agent can (else closed there when it can); an agent's refusal
 * is the answer and the journal keeps the session. A session known only to the journal is
 * just forgotten, unless another warden that still runs has it live (refused, naming it); an
 * unknown id is answered `{}` too (deleting is idempotent).
 */
function deleteSession(live: Live, request: AgentRequestEvent): void {
  const sessionId = request.params.sessionId as string;
  const session = live.sessions.get(sessionId);
  // Another warden that still runs it live keeps it: refused, naming the owner.
  if (!session && live.input.journal.getSession(sessionId) && !claimed(live, request.requestId, sessionId)) return;
  const inner = session ? innerAgent(live, session.agent) : undefined;
  const caps = inner?.capabilities.sessionCapabilities;
  if (!inner || !(caps?.delete || caps?.close)) {
    forget(live, request.requestId, sessionId);
    return;
  }
  live.pending.set(request.requestId, { kind: 'delete', sessionId, holds: holdAttaches(live, sessionId) });
  sendTo(inner, caps.delete ? request : { ...request, type: 'session.close', method: 'session/close', params: { sessionId } });
}

/**
 * A deleted session: out of the journal and of this host; answers the delete request, with
 * `-32603` when the journal could not forget it (its history is still there: nothing lost).
 */
function forget(live: Live, requestId: string, sessionId: string): void {
  endHere(live, sessionId, 'deleted');
  live.failed.delete(sessionId);
  live.listed.delete(sessionId);
  const refused = writeOrError(live, sessionId, () => live.input.journal.deleteSession(sessionId));
  releaseOwnership(live, sessionId);
  live.input.onEvent?.({ type: 'session.closed', sessionId });
  if (refused) {
    fail(live, requestId, journalFailure(refused, sessionId, 'its history stays in the journal'));
    return;
  }
  emit(live, { type: 'acp.respond', requestId, result: {} });
}

/**
 * Takes the session for this host (the journal's owners); `false`, having answered the
 * request, when another warden that still runs has it live.
 */
function claimed(live: Live, requestId: string, sessionId: string): boolean {
  try {
    live.input.journal.claim?.(sessionId);
    return true;
  } catch (error) {
    if (!(error instanceof SessionOwnedError)) throw error;
    fail(live, requestId, RpcError.internalError(error.message, { sessionId, reason: 'session_owned', owner: error.owner }));
    return false;
  }
}

/** Gives the session back to the journal's owners (closed, failed, stopped); a failure only counts. */
function releaseOwnership(live: Live, sessionId: string): void {
  if (live.input.journal.release) safely(live, sessionId, () => live.input.journal.release?.(sessionId));
}

/**
 * A session the journal does not know but an agent keeps (its `session/list` listed it, or
 * the request's `_meta` names the agent and the resume state): journaled now (on that agent,
 * in the request's cwd, with that resume state), so that attaching resumes it there. An id
 * unknown to both is `-32002`. Answers the request itself when it returns `undefined`.
 */
function adopt(live: Live, request: AgentRequestEvent): JournalSession | undefined {
  const sessionId = request.params.sessionId as string;
  const meta = request.params._meta as Record<string, unknown> | undefined;
  const named = typeof meta?.[AGENT_META_KEY] === 'string' && isResumeState(meta[RESUME_META_KEY]) ? { agent: meta[AGENT_META_KEY] as string, resume: meta[RESUME_META_KEY] } : undefined;
  const origin = named ?? live.listed.get(sessionId);
  if (!origin) {
    fail(live, request.requestId, RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }));
    return undefined;
  }
  try {
    innerAgent(live, origin.agent);
  } catch (error) {
    fail(live, request.requestId, RpcError.invalidParams(`session ${sessionId} is kept by agent ${origin.agent}: ${(error as Error).message}`, { sessionId, agent: origin.agent }));
    return undefined;
  }
  const refused = writeOrError(live, sessionId, () => {
    live.input.journal.createSession({ sessionId, agent: origin.agent, cwd: request.params.cwd as string });
    live.input.journal.setResume(sessionId, origin.resume);
  });
  if (refused) {
    fail(live, request.requestId, journalFailure(refused, sessionId));
    return undefined;
  }
  live.listed.delete(sessionId);
  return live.input.journal.getSession(sessionId);
}

/**
 * An adopted session its agent refused (a resume state that fails its check, a session it
 * does not have): out of the journal again, so that `session/list` never shows what was never
 * accepted; one the agent listed goes back to the listing's map. A journal that cannot
 * forget it only counts (an error event).
 */
function unadopt(live: Live, sessionId: string, adopted: Adopted | undefined): void {
  if (!adopted) return;
  safely(live, sessionId, () => live.input.journal.deleteSession(sessionId));
  if (adopted.listed) live.listed.set(sessionId, adopted.listed);
}

const isResumeState = (value: unknown) => typeof value === 'object' && value !== null;

// ---------------------------------------------------------------------------------------
// session/list: the journal, then the agents that list their own sessions

/**
 * `session/list`: the journal's sessions (newest first, a page at a time), then, once the
 * journal has no more, each listing agent's own sessions (by agent name, each agent's pages
 * in its order), leaving out those the journal already maps (a journaled session of that
 * agent with the same resume state, or the same id). The cursor is ours and opaque: it says
 * which phase goes on and carries the journal's or that agent's cursor. An agent that
 * cannot list (not found, its CLI failed) is skipped and named in `_meta`.
 */
function listSessions(live: Live, request: AgentRequestEvent): void {
  const { params } = request;
  const raw = typeof params.cursor === 'string' ? params.cursor : undefined;
  // A cursor we did not wrap is the journal's own (or garbage, which the journal refuses).
  const cursor: ListCursor = raw === undefined ? { journal: undefined } : decodeListCursor(raw) ?? { journal: raw };
  const { agents, skipped } = listingAgents(live);
  const job: ListJob = { requestId: request.requestId, context: request.context, cwd: typeof params.cwd === 'string' ? params.cwd : undefined, agents, sessions: [], skipped };
  if ('agent' in cursor) {
    const index = agents.indexOf(cursor.agent);
    if (index < 0) {
      job.skipped.push({ agent: cursor.agent, reason: 'it is no longer available to list' });
      finishList(live, job, undefined);
      return;
    }
    askAgent(live, job, index, cursor.cursor);
    return;
  }
  let page;
  try {
    page = live.input.journal.listSessions({
      ...(job.cwd !== undefined ? { cwd: job.cwd } : {}),
      ...(cursor.journal !== undefined ? { cursor: cursor.journal } : {}),
      ...(live.input.listPageSize ? { limit: live.input.listPageSize } : {}),
    });
  } catch (error) {
    if (error instanceof InvalidCursorError) return fail(live, request.requestId, RpcError.invalidParams(error.message));
    failedWrite(live, undefined, error);
    fail(live, request.requestId, journalFailure(error, undefined));
    return;
  }
  for (const session of page.sessions) {
    job.sessions.push({ sessionId: session.sessionId, cwd: session.cwd, title: session.title ?? null, updatedAt: session.updatedAt, _meta: { [AGENT_META_KEY]: session.agent, 'acp-warden/state': session.state, 'acp-warden/restarts': session.restarts } });
  }
  if (page.nextCursor) {
    finishList(live, job, encodeListCursor({ journal: page.nextCursor }));
    return;
  }
  askAgent(live, job, 0, undefined);
}

/**
 * The agents whose own sessions are listed: the default agent, the agents in use, and
 * `listAgents`, by name, when they advertise `sessionCapabilities.list`. One that cannot be
 * resolved (its CLI is not installed) is skipped, and said so.
 */
function listingAgents(live: Live): { agents: string[]; skipped: Array<{ agent: string; reason: string }> } {
  const names = new Set([live.input.defaultAgent, ...live.inner.keys(), ...(live.input.listAgents ?? [])]);
  const agents: string[] = [];
  const skipped: Array<{ agent: string; reason: string }> = [];
  for (const name of [...names].sort()) {
    let agent: NativeAgent;
    try {
      agent = live.inner.get(name)?.agent ?? (name === live.input.defaultAgent ? live.input.base : live.input.resolve(name));
    } catch (error) {
      skipped.push({ agent: name, reason: (error as Error).message });
      continue;
    }
    if (agent.capabilities?.sessionCapabilities?.list) agents.push(name);
  }
  return { agents, skipped };
}

/** Asks the `index`-th listing agent for a page (`cursor`: its own); past the last agent, answers. */
function askAgent(live: Live, job: ListJob, index: number, cursor: string | undefined): void {
  const name = job.agents[index];
  if (name === undefined) {
    finishList(live, job, undefined);
    return;
  }
  let inner: InnerAgent;
  try {
    inner = innerAgent(live, name);
  } catch (error) {
    job.skipped.push({ agent: name, reason: (error as Error).message });
    askAgent(live, job, index + 1, undefined);
    return;
  }
  const key = `h${live.nextKey++}`;
  live.pending.set(key, { kind: 'list', job, index });
  sendTo(inner, {
    type: 'session.list',
    requestId: key,
    method: 'session/list',
    params: { ...(job.cwd !== undefined ? { cwd: job.cwd } : {}), ...(cursor !== undefined ? { cursor } : {}) },
    context: job.context,
  });
}

/** An agent's page: what the journal does not map joins the answer; its next page, or the next agent, follows. */
function listed(live: Live, job: ListJob, index: number, result: unknown, error: ErrorObject | undefined): void {
  const name = job.agents[index] as string;
  if (error) {
    job.skipped.push({ agent: name, reason: error.message });
    askAgent(live, job, index + 1, undefined);
    return;
  }
  const page = (result ?? {}) as { sessions?: SessionInfo[]; nextCursor?: string | null };
  let mapped: Set<string>;
  try {
    mapped = journaledResumes(live, name);
  } catch (journalError) {
    failedWrite(live, undefined, journalError);
    fail(live, job.requestId, journalFailure(journalError, undefined));
    return;
  }
  for (const info of page.sessions ?? []) {
    const resume = (info._meta ?? {})[RESUME_META_KEY];
    if (live.input.journal.getSession(info.sessionId) || (resume !== undefined && mapped.has(canonical(resume)))) continue;
    live.listed.set(info.sessionId, { agent: name, resume });
    job.sessions.push({ ...info, _meta: { ...info._meta, [AGENT_META_KEY]: name } });
  }
  if (typeof page.nextCursor === 'string' && page.nextCursor.length > 0) {
    finishList(live, job, encodeListCursor({ agent: name, cursor: page.nextCursor }));
    return;
  }
  askAgent(live, job, index + 1, undefined);
}

function finishList(live: Live, job: ListJob, nextCursor: string | undefined): void {
  emit(live, {
    type: 'acp.respond',
    requestId: job.requestId,
    result: {
      sessions: job.sessions,
      ...(nextCursor ? { nextCursor } : {}),
      ...(job.skipped.length > 0 ? { _meta: { [SKIPPED_META_KEY]: job.skipped } } : {}),
    },
  });
}

/** The resume states the journal holds for `agent`'s sessions, canonical JSON (every page of the journal). */
function journaledResumes(live: Live, agent: string): Set<string> {
  const found = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = live.input.journal.listSessions({ limit: 500, ...(cursor ? { cursor } : {}) });
    for (const session of page.sessions) if (session.agent === agent && session.resume != null) found.add(canonical(session.resume));
    cursor = page.nextCursor;
  } while (cursor);
  return found;
}

/**
 * Sends the journaled conversation as `session/update`s (the user's prompts and what the
 * agent said, each with its journal seq), then calls `then`: the editor's cursor on the
 * session goes back to 0 and reads the journal a page at a time, only while the editor keeps
 * up, so memory stays flat whatever the history's size. Updates the session's agent sends
 * meanwhile are journaled and reach the editor through the same read, in journal order.
 */
function replay(live: Live, sessionId: string, requestId: string, then: () => void, failed: () => void): void {
  live.subscriber.replay(sessionId, {
    done: then,
    failed: (error) => {
      if (!live.sessions.has(sessionId)) releaseOwnership(live, sessionId);
      failedWrite(live, sessionId, error);
      fail(live, requestId, journalFailure(error, sessionId));
      failed();
    },
  });
}

function openSession(live: Live, sessionId: string, agent: string, restarts: number, journaled?: { readonly chosen: ChosenSettings; readonly resume: unknown }): HostSession {
  const input = { sessionId, agent, restarts, ...(journaled ? { chosen: journaled.chosen, resume: journaled.resume } : {}) };
  const machine = createActor(sessionMachine, { parent: live.scope.self, id: `session:${sessionId}`, input });
  const onEvent = live.input.onEvent;
  if (onEvent) {
    let last: unknown;
    machine.subscribe((snapshot) => {
      if (snapshot.value === last) return;
      last = snapshot.value;
      onEvent({ type: 'session.state', sessionId, state: String(snapshot.value) });
    });
  }
  machine.start();
  const session: HostSession = { sessionId, agent, machine, replaying: false, held: [], afterReapply: [] };
  live.sessions.set(sessionId, session);
  live.closed.delete(sessionId);
  return session;
}

function closed(live: Live, sessionId: string): void {
  record(live, sessionId, { kind: 'closed' });
  safely(live, sessionId, () => live.input.journal.setState(sessionId, 'closed'));
  releaseOwnership(live, sessionId);
  endHere(live, sessionId, 'closed');
  live.input.onEvent?.({ type: 'session.closed', sessionId });
}

/**
 * The session was closed or deleted: its chart closes, this host no longer holds it, what its
 * agent still says of it is dropped, and the loads and resumes of it under way answer that.
 */
function endHere(live: Live, sessionId: string, how: 'closed' | 'deleted'): void {
  dropSession(live, sessionId, { type: 'close' });
  live.closed.add(sessionId);
  interruptAttaches(live, sessionId, how);
}

/** The session leaves this host: its chart gets `last`, its last event. */
function dropSession(live: Live, sessionId: string, last: SessionMachineEvent): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  session.machine.send(last);
  live.sessions.delete(sessionId);
  // Held prompts never reached the agent: closing cancels them, a failure fails them.
  answerHeld(live, session, last.type === 'close' ? 'cancelled' : (last as { reason?: string }).reason ?? 'the session ended');
  for (const next of session.afterReapply.splice(0)) next();
}

// ---------------------------------------------------------------------------------------
// The session's state: what the user chose, journaled, and given again to a new agent process

/** Sends a prompt to the session's agent (it was journaled when it came). */
function sendPrompt(live: Live, session: HostSession, request: AgentRequestEvent): void {
  session.machine.send({ type: 'prompt' });
  live.pending.set(request.requestId, { kind: 'prompt', sessionId: session.sessionId });
  sendTo(innerAgent(live, session.agent), request);
}

/**
 * Whether a prompt must wait: the user's choices are being given to a new agent process, or
 * the agent is restarting and there are choices to give the new process once it is up.
 */
function holdsPrompts(session: HostSession): boolean {
  const snapshot = session.machine.getSnapshot();
  if (snapshot.value === 'reapplying') return true;
  return snapshot.value === 'recovering' && hasChoices((snapshot.context as SessionMachineContext).state.chosen);
}

/** The held prompts go to the agent, in order (the re-apply is over, or there was nothing to re-apply). */
function releaseHeldPrompts(live: Live, session: HostSession): void {
  for (const request of session.held.splice(0)) {
    if (live.sessions.get(session.sessionId) !== session) return;
    sendPrompt(live, session, request);
  }
}

/** The held prompts end without reaching the agent: `cancelled`, or failed with `why`. */
function answerHeld(live: Live, session: HostSession, why: string): void {
  for (const request of session.held.splice(0)) {
    if (why === 'cancelled') {
      record(live, session.sessionId, { kind: 'stop', stopReason: 'cancelled' });
      emit(live, { type: 'acp.respond', requestId: request.requestId, result: { stopReason: 'cancelled' } });
      continue;
    }
    const error = RpcError.internalError(`session ${session.sessionId} failed (${why}) before its agent got the prompt; session/load or session/resume starts it again in a new agent process`, { sessionId: session.sessionId, reason: 'session_failed' }).toErrorObject();
    record(live, session.sessionId, { kind: 'error', error });
    emit(live, { type: 'acp.error', requestId: request.requestId, error });
  }
}

/** The agent accepted the user's set_mode or set_config_option: the session's state, journaled. */
function settingAnswered(live: Live, session: HostSession, modeId: string | undefined, config: { readonly configId: string; readonly value: ConfigValue } | undefined, result: unknown): void {
  if (modeId !== undefined) changeState(live, session, { type: 'mode.changed', currentModeId: modeId });
  if (config) changeState(live, session, { type: 'config.set', configId: config.configId, value: config.value });
  const configOptions = (result as { configOptions?: SessionConfigOption[] } | undefined)?.configOptions;
  if (Array.isArray(configOptions)) changeState(live, session, { type: 'config.changed', configOptions });
}

/**
 * An update of the agent's that says something about the session's state (mode, config,
 * title, commands, tool calls). A mode or config reported while the agent process is being
 * (re)started is where the new process starts, not a choice: it changes what the agent
 * reported, and the re-apply that follows puts the user's choice back.
 */
function reportUpdate(live: Live, session: HostSession, update: SessionUpdate): void {
  const starting = () => ['recovering', 'starting'].includes(String(session.machine.getSnapshot().value));
  if (update.sessionUpdate === 'current_mode_update') {
    const { modes } = stateOf(session);
    if (!starting()) changeState(live, session, { type: 'mode.changed', currentModeId: update.currentModeId });
    else if (modes) session.machine.send({ type: 'setup.reported', modes: { ...modes, currentModeId: update.currentModeId } });
  } else if (update.sessionUpdate === 'config_option_update') {
    if (starting()) session.machine.send({ type: 'setup.reported', configOptions: update.configOptions });
    else changeState(live, session, { type: 'config.changed', configOptions: update.configOptions });
  } else if (stateUpdateKinds.has(update.sessionUpdate) && !(update.sessionUpdate === 'tool_call_update' && update.status !== 'completed' && update.status !== 'failed')) {
    // A tool call's progress changes nothing kept here (only its start and its end do): no event per streamed delta.
    session.machine.send({ type: 'update.reported', update });
  }
}

/**
 * Feeds the session's chart a fact, and journals what it changed of what the user chose (a
 * `mode` or `config` entry) or of the resume handle (a `resume` entry): the same value again
 * (an agent confirming a re-apply) is no change.
 */
function changeState(live: Live, session: HostSession, fact: SessionStateFact): void {
  const before = stateOf(session);
  session.machine.send(fact);
  const after = stateOf(session);
  if (after.chosen.modeId !== undefined && after.chosen.modeId !== before.chosen.modeId) record(live, session.sessionId, { kind: 'mode', modeId: after.chosen.modeId });
  for (const [configId, value] of Object.entries(after.chosen.config)) {
    if (before.chosen.config[configId] !== value) record(live, session.sessionId, { kind: 'config', configId, value });
  }
  if (fact.type === 'resume.changed' && (before.resume === undefined || canonical(before.resume) !== canonical(after.resume))) {
    record(live, session.sessionId, { kind: 'resume', resume: after.resume ?? null });
  }
}

/** A fork takes its source's choices: journaled for it, kept in its chart (what its agent reported stays as reported). */
function inheritChoices(live: Live, session: HostSession, chosen: ChosenSettings): void {
  const { modes, configOptions } = stateOf(session);
  if (chosen.modeId !== undefined) changeState(live, session, { type: 'mode.changed', currentModeId: chosen.modeId });
  for (const [configId, value] of Object.entries(chosen.config)) changeState(live, session, { type: 'config.set', configId, value });
  session.machine.send({ type: 'setup.reported', modes: modes ?? null, configOptions: configOptions ?? null });
}

/**
 * Gives a new agent process the user's choices (at least one request): the chart is
 * `reapplying` (prompts wait) until each is answered.
 */
function startReapply(live: Live, session: HostSession, requests: readonly ReapplyRequest[], context: AgentEventContext): void {
  session.machine.send({ type: 'reapply.started', requests: requests.length });
  const { reapplyRound: round } = session.machine.getSnapshot().context as SessionMachineContext;
  const inner = innerAgent(live, session.agent);
  for (const request of requests) {
    const requestId = `h${live.nextKey++}`;
    live.pending.set(requestId, { kind: 'reapply', sessionId: session.sessionId, round, request });
    sendTo(inner, { type: request.type, requestId, method: request.method, params: { ...request.params }, context });
  }
}

/**
 * A re-apply request answered. Accepted: the session's state shows it. Refused: a notice says
 * which choice the agent did not take (the session goes on with the agent's value; the choice
 * stays journaled). Once the last is answered, what waited goes on (a load's answer, the held prompts).
 */
function reapplyAnswered(live: Live, pending: Extract<Pending, { kind: 'reapply' }>, result: unknown, error: ErrorObject | undefined): void {
  const session = live.sessions.get(pending.sessionId);
  if (!session) return;
  // Sent to a process that died since: the next process gets its own round.
  if ((session.machine.getSnapshot().context as SessionMachineContext).reapplyRound !== pending.round) return;
  const { request } = pending;
  if (error) {
    notify(live, session.sessionId, 'warning', `${session.agent} did not take ${request.what} again`, `The new agent process refused ${request.method} (${error.message}); the session goes on with the agent's own setting. set_mode or set_config_option chooses again.`);
  } else if (request.method === 'session/set_mode') {
    session.machine.send({ type: 'mode.changed', currentModeId: request.params.modeId });
  } else {
    settingAnswered(live, session, undefined, { configId: request.params.configId, value: request.params.value }, result);
  }
  session.machine.send({ type: 'reapply.answered', round: pending.round });
  if (session.machine.getSnapshot().value === 'reapplying') return;
  for (const next of session.afterReapply.splice(0)) next();
  releaseHeldPrompts(live, session);
}

/** What the journal says the user chose for a session; a journal that cannot say counts a failure and chose nothing. */
function journaledChoices(live: Live, sessionId: string): ChosenSettings {
  const journal = live.input.journal;
  try {
    return chosenFromEntries(journal.stateEntries ? journal.stateEntries(sessionId) : journal.entries(sessionId).filter((record) => stateEntryKinds.has(record.entry.kind)));
  } catch (error) {
    failedWrite(live, sessionId, error);
    return chosenFromEntries([]);
  }
}

// ---------------------------------------------------------------------------------------
// From the real agents

function onInnerOutput(live: Live, agent: string, output: AgentHandlerOutput): void {
  switch (output.type) {
    case 'acp.respond':
      settle(live, output.requestId, output.result, undefined);
      return;
    case 'acp.error':
      settle(live, output.requestId, undefined, output.error);
      return;
    case 'acp.update': {
      const session = live.sessions.get(output.sessionId);
      if (session?.replaying) return;
      // A closed session's agent may still be winding down its turn: the editor closed it, and
      // the journal (closed) would not have these. (Found by the chaos walk.)
      if (!session && live.closed.has(output.sessionId)) return;
      if (!session && settingUp(live, agent)) {
        live.held.set(agent, [...(live.held.get(agent) ?? []), output]);
        return;
      }
      if (output.update.sessionUpdate === 'notice') {
        // An agent's own notice (Claude or Codex started a new conversation) is a notice too, not conversation.
        const { severity, title, description } = output.update as unknown as { severity: 'info' | 'warning' | 'error'; title: string; description?: string | null };
        notify(live, output.sessionId, severity, title, description ?? undefined, session !== undefined);
        return;
      }
      if (session) reportUpdate(live, session, output.update);
      journalUpdate(live, output.sessionId, output.update, session !== undefined);
      return;
    }
    case 'acp.clientRequest': {
      const key = `${agent}${keySeparator}${output.key}`;
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      const call: ClientCall = { agent, key: output.key, sessionId: typeof sessionId === 'string' ? sessionId : undefined, method: output.method, params: output.params };
      live.clientCalls.set(key, call);
      if (call.method === 'session/request_permission' && call.sessionId) live.sessions.get(call.sessionId)?.machine.send({ type: 'permission.asked' });
      emit(live, { ...output, key });
      return;
    }
    case 'acp.notify':
      emit(live, output);
      return;
    case 'agent.lineDropped':
      live.input.onEvent?.({ ...output, agent });
      return;
    case 'session.resumeState': {
      safely(live, output.sessionId, () => live.input.journal.setResume(output.sessionId, output.state));
      const session = live.sessions.get(output.sessionId);
      if (session) changeState(live, session, { type: 'resume.changed', resume: output.state });
      return;
    }
    case 'session.restarting':
    case 'session.recovered':
    case 'session.failed':
      // A session the editor closed is over: what its agent still reports of it is not news.
      if (!live.sessions.has(output.sessionId) && live.closed.has(output.sessionId)) return;
      lifecycle(live, agent, output);
      return;
  }
}

/** A session's agent process restarting, recovered, or given up: journaled, charted, told. */
function lifecycle(live: Live, agent: string, output: Extract<AgentHandlerOutput, { type: 'session.restarting' | 'session.recovered' | 'session.failed' }>): void {
  switch (output.type) {
    case 'session.restarting': {
      const exit = describeExit(output.exit.reason);
      const restarts = output.restarts + 1;
      record(live, output.sessionId, { kind: 'restart', restarts, exit: output.exit.reason });
      live.sessions.get(output.sessionId)?.machine.send({ type: 'agent.restarting', restarts });
      live.input.onEvent?.({ type: 'session.restarting', sessionId: output.sessionId, restarts, exit });
      notify(live, output.sessionId, 'warning', `${agent} restarted`, `The agent process ended (${exit}). acp-warden is restarting it (restart ${restarts}) and resuming the conversation.`);
      return;
    }
    case 'session.recovered': {
      record(live, output.sessionId, { kind: 'recovered', restarts: output.restarts });
      const session = live.sessions.get(output.sessionId);
      // The new process starts from its defaults: it gets every choice of the user again, before any prompt.
      const requests = session && live.context ? reapplyRequests(output.sessionId, stateOf(session), { onlyDifferences: false }) : [];
      if (session && requests.length === 0) session.machine.send({ type: 'agent.recovered', restarts: output.restarts });
      live.input.onEvent?.({ type: 'session.recovered', sessionId: output.sessionId, restarts: output.restarts });
      notify(live, output.sessionId, 'info', `${agent} is back`, `The conversation was resumed after restart ${output.restarts}; the next prompt continues it.`);
      if (session && requests.length > 0 && live.context) startReapply(live, session, requests, live.context);
      else if (session) releaseHeldPrompts(live, session);
      return;
    }
    case 'session.failed': {
      record(live, output.sessionId, { kind: 'failed', reason: output.reason });
      // Every agent's failure reaches the editor the same way, journaled like the other notices.
      notify(live, output.sessionId, 'error', `${agent} stopped`, `The agent kept failing after ${output.restarts} restarts; the session is over (${output.reason}). session/load or session/resume starts it again in a new agent process.`);
      safely(live, output.sessionId, () => live.input.journal.setState(output.sessionId, 'failed'));
      releaseOwnership(live, output.sessionId);
      dropSession(live, output.sessionId, { type: 'agent.failed', reason: output.reason });
      live.failed.set(output.sessionId, output.reason);
      live.input.onEvent?.({ type: 'session.failed', sessionId: output.sessionId, reason: output.reason });
      return;
    }
  }
}

/** An answer from a real agent: journal what it means, then pass it on. */
function settle(live: Live, requestId: string, result: unknown, error: ErrorObject | undefined): void {
  const pending = live.pending.get(requestId);
  const editorRequestId = pending?.kind === 'list' ? pending.job.requestId : requestId;
  const sessionId = pending && 'sessionId' in pending ? pending.sessionId : undefined;
  journalFailureAnswers(live, editorRequestId, sessionId, () => settlePending(live, requestId, pending, result, error));
  if (pending?.kind === 'new' || pending?.kind === 'fork') releaseHeld(live, pending.agent);
}

/** Whether `agent` has a `session/new` or `session/fork` unanswered. */
function settingUp(live: Live, agent: string): boolean {
  for (const pending of live.pending.values()) if ((pending.kind === 'new' || pending.kind === 'fork') && pending.agent === agent) return true;
  return false;
}

/** The updates held while `agent` set a session up, taken again now that it was answered (a failed one's are dropped: it is closed). */
function releaseHeld(live: Live, agent: string): void {
  const held = live.held.get(agent);
  if (!held) return;
  live.held.delete(agent);
  for (const output of held) onInnerOutput(live, agent, output);
}

function settlePending(live: Live, requestId: string, pending: Pending | undefined, result: unknown, error: ErrorObject | undefined): void {
  live.pending.delete(requestId);
  if (!pending) {
    if (error) fail(live, requestId, error);
    else emit(live, { type: 'acp.respond', requestId, result });
    return;
  }
  switch (pending.kind) {
    case 'initialize': {
      const advertised = (result as { agentCapabilities?: AgentCapabilities } | undefined)?.agentCapabilities;
      const inner = live.inner.get(pending.agent);
      if (inner && !error && advertised) inner.capabilities = advertised;
      if (!pending.editor) {
        const waiting = inner?.waiting ?? [];
        if (inner) inner.waiting = undefined;
        if (inner && live.context) inner.ref.send({ type: 'initialized', context: live.context });
        for (const event of waiting) inner?.ref.send(event);
        return;
      }
      if (error) return fail(live, requestId, error);
      const found = (result ?? {}) as { agentCapabilities?: AgentCapabilities };
      emit(live, { type: 'acp.respond', requestId, result: { ...(result as object), agentCapabilities: withHostCapabilities(found.agentCapabilities ?? {}) } });
      return;
    }
    case 'new':
    case 'fork': {
      if (error) return fail(live, requestId, error);
      const sessionId = (result as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof sessionId !== 'string') return emit(live, { type: 'acp.respond', requestId, result });
      const { agent, cwd } = pending;
      const journal = live.input.journal;
      const refusal = journalNewSession(live, pending, sessionId, () =>
        pending.kind === 'fork' ? journal.forkSession({ sessionId, agent, cwd, from: pending.from }) : journal.createSession({ sessionId, agent, cwd }),
      );
      if (refusal) return fail(live, requestId, refusal);
      const session = openSession(live, sessionId, agent, 0);
      reportSetup(session, result);
      // A fork goes on as its source was set: the source's choices are the fork's (journaled for it, as its copy has none).
      const source = pending.kind === 'fork' ? live.sessions.get(pending.from) : undefined;
      if (source) inheritChoices(live, session, stateOf(source).chosen);
      session.machine.send({ type: 'ready' });
      live.input.onEvent?.({ type: 'session.opened', sessionId, agent, how: pending.kind });
      emit(live, { type: 'acp.respond', requestId, result });
      return;
    }
    case 'delete':
      if (error) fail(live, requestId, error);
      else forget(live, requestId, pending.sessionId);
      if (pending.holds) releaseAttaches(live, pending.sessionId);
      return;
    case 'abandon':
      return;
    case 'setting': {
      if (error) return fail(live, requestId, error);
      const session = live.sessions.get(pending.sessionId);
      // Answered: the user's choice is the session's now, journaled to be put back on every new agent process.
      if (session) settingAnswered(live, session, pending.modeId, pending.config, result);
      emit(live, { type: 'acp.respond', requestId, result });
      return;
    }
    case 'reapply':
      reapplyAnswered(live, pending, result, error);
      return;
    case 'attach': {
      const session = live.sessions.get(pending.sessionId);
      if (session) session.replaying = false;
      const { interrupted } = pending.job;
      if (error || interrupted) {
        dropSession(live, pending.sessionId, { type: 'agent.failed', reason: error?.message ?? `session ${interrupted}` });
        // Closed or deleted while its agent opened it: closed there again (the editor was not told it opened).
        if (!error && interrupted) abandon(live, pending.agent, pending.sessionId, pending.context);
        releaseOwnership(live, pending.sessionId);
        if (error) unadopt(live, pending.sessionId, pending.adopted);
        fail(live, requestId, error ?? interruption(pending.sessionId, pending.how, interrupted as 'closed' | 'deleted'));
        return endAttach(live, pending.job);
      }
      reportSetup(session, result);
      // The agent answered with its defaults: the user's journaled choices go back first, then the answer shows them.
      const requests = session ? reapplyRequests(pending.sessionId, stateOf(session), { onlyDifferences: true }) : [];
      if (session && requests.length > 0) {
        session.afterReapply.push(() => attached(live, requestId, pending, { ...(result as object | undefined), ...currentSetup(session) }));
        startReapply(live, session, requests, pending.context);
        return;
      }
      attached(live, requestId, pending, result ?? {});
      return;
    }
    case 'prompt': {
      const session = live.sessions.get(pending.sessionId);
      if (error) {
        record(live, pending.sessionId, { kind: 'error', error });
        session?.machine.send({ type: 'prompt.settled', outcome: 'error' });
        return fail(live, requestId, error);
      }
      const stopReason = (result as { stopReason?: StopReason } | undefined)?.stopReason;
      if (stopReason) record(live, pending.sessionId, { kind: 'stop', stopReason });
      session?.machine.send({ type: 'prompt.settled', outcome: stopReason ?? 'unknown' });
      emit(live, { type: 'acp.respond', requestId, result });
      return;
    }
    case 'list':
      listed(live, pending.job, pending.index, result, error);
      return;
    case 'close':
      closed(live, pending.sessionId);
      if (error) fail(live, requestId, error);
      else emit(live, { type: 'acp.respond', requestId, result: result ?? {} });
      if (pending.holds) releaseAttaches(live, pending.sessionId);
      return;
    case 'other':
      if (error) return fail(live, requestId, error);
      emit(live, { type: 'acp.respond', requestId, result });
  }
}

/**
 * A load or resume its agent accepted (and, when the user had chosen a mode or config the
 * agent did not show, that re-applied): journaled and answered, unless a close or delete of
 * the session came meanwhile, or the session failed, which is answered instead.
 */
function attached(live: Live, requestId: string, pending: Extract<Pending, { kind: 'attach' }>, result: unknown): void {
  const { sessionId, job } = pending;
  const session = live.sessions.get(sessionId);
  if (!session || job.interrupted) {
    dropSession(live, sessionId, { type: 'agent.failed', reason: `session ${job.interrupted ?? 'failed'}` });
    if (job.interrupted) abandon(live, pending.agent, sessionId, pending.context);
    releaseOwnership(live, sessionId);
    const why = live.failed.get(sessionId);
    fail(live, requestId, job.interrupted
      ? interruption(sessionId, pending.how, job.interrupted)
      : RpcError.internalError(`session ${sessionId} failed while it was being opened (${why ?? 'its agent stopped'}); session/${pending.how} starts it again`, { sessionId, reason: 'session_failed' }));
    endAttach(live, job);
    return;
  }
  record(live, sessionId, { kind: 'attached', how: pending.how });
  safely(live, sessionId, () => live.input.journal.setState(sessionId, 'open'));
  session.machine.send({ type: 'ready' });
  live.input.onEvent?.({ type: 'session.opened', sessionId, agent: pending.agent, how: pending.how });
  emit(live, { type: 'acp.respond', requestId, result });
  endAttach(live, job);
}

/**
 * Journals a session its agent just opened (`create`: new or fork) and takes it for this host.
 * When that fails, the editor is told the session failed, so it must not go on: it is closed
 * on its agent again (else a CLI process per attempt), what the agent still says of it is
 * dropped, and a row already written is deleted (the journal keeps no session the editor never
 * got). Returns the refusal to answer, or `undefined` when the session is journaled and ours.
 */
function journalNewSession(live: Live, pending: Extract<Pending, { kind: 'new' | 'fork' }>, sessionId: string, create: () => void): ErrorObject | undefined {
  const journal = live.input.journal;
  let created = false;
  const failure = writeOrError(live, sessionId, () => {
    create();
    created = true;
    journal.claim?.(sessionId);
  });
  if (failure === undefined) return undefined;
  abandon(live, pending.agent, sessionId, pending.context);
  if (created) safely(live, sessionId, () => journal.deleteSession(sessionId));
  // An agent that numbers its sessions from 1 in every process reuses ids across runs.
  const taken = created ? undefined : peekSession(live, sessionId);
  if (taken) {
    return RpcError.internalError(`${pending.agent} handed out session id ${sessionId}, which the journal already holds for an earlier session (${taken.createdAt}); an agent must not reuse session ids, or use another --store`, { sessionId }).toErrorObject();
  }
  return journalFailure(failure, sessionId);
}

/** The journal's record of a session, or `undefined` when there is none or the journal cannot say. */
function peekSession(live: Live, sessionId: string): JournalSession | undefined {
  try {
    return live.input.journal.getSession(sessionId);
  } catch {
    return undefined;
  }
}

/**
 * Closes, on its agent, a session the editor was told failed (delete when the agent can, else
 * close); its answer goes nowhere, and what the agent still says of the session is dropped.
 */
function abandon(live: Live, agent: string, sessionId: string, context: AgentEventContext): void {
  live.closed.add(sessionId);
  // An agent handing out the id of a session this host runs: that one is not ours to close.
  if (live.sessions.has(sessionId)) return;
  const inner = live.inner.get(agent);
  const caps = inner?.capabilities.sessionCapabilities;
  if (!inner || !(caps?.delete || caps?.close)) return;
  const requestId = `h${live.nextKey++}`;
  live.pending.set(requestId, { kind: 'abandon' });
  const method = caps.delete ? 'session/delete' : 'session/close';
  sendTo(inner, { type: caps.delete ? 'session.delete' : 'session.close', requestId, method, params: { sessionId }, context });
}

/**
 * A notice to the editor: journaled as a `notice` entry (not an update: never part of the
 * conversation a replay or an agent sees), then sent as a `notice` update, which the agent
 * server renders as a signed text for clients without `session.notices`.
 */
function notify(live: Live, sessionId: string, severity: 'info' | 'warning' | 'error', title: string, description: string | undefined, journaled = true): void {
  const update = noticeUpdate(severity, title, description);
  const seq = journaled ? recordSeq(live, sessionId, { kind: 'notice', severity, title, description }) : undefined;
  // On record: it goes out in the journal's order (a cursor behind reads it from there).
  if (seq !== undefined) deliver(live, { type: 'acp.update', sessionId, update, seq }, seq);
  else emit(live, { type: 'acp.update', sessionId, update });
}

/**
 * Journals an update and shows it to the editor. With a journal that groups commits, the
 * updates of one event-loop turn go into one transaction, committed at the end of the turn
 * (or before anything else is journaled or emitted, which keeps the order), and reach the
 * editor only then: never shown before they are on disk. One transaction per update cost
 * about 50 µs on disk; a streamed turn is hundreds of updates.
 */
function journalUpdate(live: Live, sessionId: string, update: SessionUpdate, journaled: boolean): void {
  const journal = live.input.journal;
  const alone = () => {
    // One append at a time: an update the journal did not take is shown now all the same (not lost), without a seq.
    const seq = journaled ? recordSeq(live, sessionId, { kind: 'update', update }) : undefined;
    if (seq === undefined) emit(live, { type: 'acp.update', sessionId, update });
    else deliver(live, { type: 'acp.update', sessionId, update, seq }, seq);
  };
  if (!journal.begin || !journal.commit) return alone();
  if (!live.group) {
    try {
      journal.begin();
    } catch {
      // No group today: one append at a time, as a journal without groups.
      return alone();
    }
    live.group = { outbox: [], sessions: new Set() };
    queueMicrotask(() => commitGroup(live));
  }
  let seq: number | undefined;
  if (journaled) {
    try {
      seq = journal.append(sessionId, { kind: 'update', update });
      live.group.sessions.add(sessionId);
    } catch (error) {
      failedWrite(live, sessionId, error);
    }
  }
  live.group.outbox.push(seq === undefined ? { type: 'acp.update', sessionId, update } : { type: 'acp.update', sessionId, update, seq });
}

/**
 * Commits the open group of updates and shows them, in order; a failed commit is a journal
 * error, the updates are still shown (without their seq: the journal does not hold them).
 */
function commitGroup(live: Live): void {
  const group = live.group;
  if (!group) return;
  live.group = undefined;
  let lost = false;
  try {
    live.input.journal.commit?.();
  } catch (error) {
    lost = true;
    for (const sessionId of group.sessions) failedWrite(live, sessionId, error);
  }
  for (const output of group.outbox) {
    if (!lost || output.seq === undefined) deliver(live, output, output.seq);
    else deliver(live, { type: 'acp.update', sessionId: output.sessionId, update: output.update }, undefined);
  }
}

/** Appends to the journal; `false` (and a count, and an event) when the journal failed. */
function record(live: Live, sessionId: string, entry: JournalEntry): boolean {
  return recordSeq(live, sessionId, entry) !== undefined;
}

/**
 * Appends to the journal; the entry's `seq`, or `undefined` (and a count, and an event) when
 * the journal failed. The editor's cursor learns of it: what is answered after it goes out after it.
 */
function recordSeq(live: Live, sessionId: string, entry: JournalEntry): number | undefined {
  let seq: number | undefined;
  const failed = writeOrError(live, sessionId, () => {
    seq = live.input.journal.append(sessionId, entry);
  });
  if (failed !== undefined || seq === undefined) return undefined;
  // What ends a turn (or starts one, shown in a replay) pins what is answered after it; other
  // facts (closed, attached, restarts, state) are not the editor's to wait for: a close answered
  // during a replay goes out at once.
  if (entry.kind === 'prompt' || entry.kind === 'stop' || entry.kind === 'error') live.subscriber.journaled(sessionId, seq);
  return seq;
}

function safely(live: Live, sessionId: string, write: () => unknown): boolean {
  return writeOrError(live, sessionId, write) === undefined;
}

/** Appends to the journal; what the journal threw (counted, and an event) when it failed. */
function recordOrError(live: Live, sessionId: string, entry: JournalEntry): unknown {
  return writeOrError(live, sessionId, () => live.input.journal.append(sessionId, entry));
}

function writeOrError(live: Live, sessionId: string, write: () => unknown): unknown {
  // Whatever was grouped before is committed (and shown) first: the journal's order is the editor's.
  commitGroup(live);
  try {
    write();
    return undefined;
  } catch (error) {
    failedWrite(live, sessionId, error);
    return error ?? new Error('the journal failed');
  }
}

/**
 * Runs the work of one editor request; a {@link JournalError} it meets answers that request
 * with -32603 (naming the store file and the fix) and is counted, instead of stopping the
 * host agent, which serves everything else on. Any other exception is a bug and escapes.
 */
function journalFailureAnswers(live: Live, requestId: string, sessionId: string | undefined, work: () => void): void {
  try {
    work();
  } catch (error) {
    if (!(error instanceof JournalError)) throw error;
    failedWrite(live, sessionId, error);
    fail(live, requestId, journalFailure(error, sessionId));
  }
}

/**
 * The one answer to a request the journal failed (whatever it was doing): -32603 with the
 * journal's message (for a {@link JournalError}: naming the store file and the fix), the
 * session when there is one, and the store and its error code; `consequence` says what did
 * not happen because of it.
 */
function journalFailure(error: unknown, sessionId: string | undefined, consequence?: string): ErrorObject {
  const message = error instanceof JournalError ? error.message : `the journal failed: ${(error as Error | undefined)?.message ?? String(error)}`;
  const data = { ...(sessionId !== undefined ? { sessionId } : {}), ...(error instanceof JournalError ? { store: error.path, code: error.code } : {}) };
  return RpcError.internalError(consequence ? `${message}; ${consequence}` : message, data).toErrorObject();
}

function failedWrite(live: Live, sessionId: string | undefined, error: unknown): void {
  live.journalErrors++;
  live.input.onEvent?.({ type: 'journal.error', ...(sessionId ? { sessionId } : {}), message: (error as Error).message });
}

function describeExit(reason: unknown): string {
  if (typeof reason === 'object' && reason !== null && 'kind' in reason) {
    try {
      return describePortExit(reason as PortExitReason);
    } catch {
      // not a port exit
    }
  }
  return typeof reason === 'string' ? reason : JSON.stringify(reason);
}

export type { SessionMachineEvent };
