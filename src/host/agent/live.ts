/**
 * The host agent's live record: what it keeps per connection and per session (never in a snapshot), and the vocabulary its parts share.
 */
import type { AgentCapabilities, SessionInfo } from '@agentclientprotocol/sdk';
import type { ActorScope, ActorSystem, AnyActorRef, Snapshot, Subscription } from 'xstate';
import type { AgentEventContext, AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent, SessionRoute } from '../../protocol/native-agent.js';
import type { SessionPrompts } from '../../session/session-prompts.js';
import { Subscriber } from '../../session/subscriber.js';
import type { HostJournal, HostStore } from '../../journal/host-journal.js';
import type { FencedAppendError } from '../../journal/async-journal.js';
import type { LeaseStanding } from '../../journal/lease.js';
import type { JournalQueue } from './journal-queue.js';
import type { ErrorObject } from '../../jsonrpc/rpc-error.js';
import type { ConfigValue } from '../../session/session-state.js';
import type { ReapplyRequest } from '../../session/reapply.js';

/**
 * The `_meta` key that names a session's agent: in `session/new` (which agent to run it on),
 * in each `session/list` entry (which agent keeps it), and in `session/load` /
 * `session/resume` of a session the journal does not know (with the resume state under
 * `RESUME_META_KEY`: which agent to resume it on, and how).
 */
export const AGENT_META_KEY = 'acp-warden/agent';

/**
 * The `_meta` key of a `session/resume` the host's own cluster sends when it takes over a session
 * whose host was lost (`{ previousOwner }`): the turns that host left open end `host_lost`, and
 * a notice says what happened. The host's claim says the same by itself (whoever asked), so the
 * mark only matters when that claim cannot tell (retried after its answer was lost).
 */
export const TAKEOVER_META_KEY = 'acp-warden/takeover';

/** The `_meta` key of a `session/list` answer that names the agents whose sessions could not be listed, and why. */
export const SKIPPED_META_KEY = 'acp-warden/skipped';

/** What a host agent runs on. */
export interface HostAgentOptions {
  /** The agent a `session/new` without `_meta["acp-warden/agent"]` gets. */
  readonly defaultAgent: string;
  /** The native agent for a name; throws (with how to install it) when there is none. */
  readonly resolve: (name: string) => NativeAgent;
  /** The store: a synchronous {@link Journal} (SQLite) or an {@link AsyncJournal} (PostgreSQL). */
  readonly journal: HostStore;
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
  /**
   * A journal that answers with promises (PostgreSQL): the most bytes of entries the host holds
   * unacknowledged before it stops reading its agents (their output waits in their pipes) until
   * the journal caught up to half of it. Default 8 MiB.
   */
  readonly maxPendingWriteBytes?: number;
  /** Sessions per journal page of `session/list` (default: the journal's, 50 for SQLite). */
  readonly listPageSize?: number;
}

/** What the host tells an embedding program about its sessions. */
export type HostSessionEvent =
  /** An agent was started (on first use): its supervisors exist from now on. */
  | { readonly type: 'agent.started'; readonly agent: string }
  /** An agent serving nothing was stopped on request (the hub's idle timeout); it starts again on next use. */
  | { readonly type: 'agent.released'; readonly agent: string }
  | { readonly type: 'session.opened'; readonly sessionId: string; readonly agent: string; readonly how: 'new' | 'load' | 'resume' | 'fork' }
  | { readonly type: 'session.state'; readonly sessionId: string; readonly state: string }
  /** `exit` in words; `exitKind` the port's exit reason (`signaled`, `exited`, `hung`, `memory_exceeded`, ...: see `PortExitReason`), `unknown` for an agent that gave none. */
  | { readonly type: 'session.restarting'; readonly sessionId: string; readonly restarts: number; readonly exit: string; readonly exitKind?: string }
  | { readonly type: 'session.recovered'; readonly sessionId: string; readonly restarts: number }
  | { readonly type: 'session.failed'; readonly sessionId: string; readonly reason: string }
  | { readonly type: 'session.closed'; readonly sessionId: string }
  /** Another host of a shared store took the session (this host's lease ran out): its agent here was stopped. `owner`: that host's id, `epoch`: the session's now (each `undefined` when the store did not say). */
  | { readonly type: 'session.moved'; readonly sessionId: string; readonly owner: string | undefined; readonly epoch: number | undefined }
  /** An agent process printed a line over the line limit (`--max-line-mib`): skipped unread, the process goes on. */
  | { readonly type: 'agent.lineDropped'; readonly agent: string; readonly sessionId?: string; readonly bytes: number; readonly limit: number; readonly what: string }
  /** The journal failed; `sessionId` is absent when the write or read was for no one session (`session/list`). */
  | { readonly type: 'journal.error'; readonly sessionId?: string; readonly message: string };

export interface HostInput extends HostAgentOptions {
  readonly base: NativeAgent;
}

export interface InnerAgent {
  readonly name: string;
  readonly agent: NativeAgent;
  readonly ref: AnyActorRef;
  readonly subscription: Subscription;
  /** Requests held until its own `initialize` (a delegating agent that is not the default) is answered. */
  waiting: AgentHandlerEvent[] | undefined;
  /** What it advertises: its own, or (when it delegates initialize) what its initialize answered. */
  capabilities: AgentCapabilities;
}

export interface HostSession {
  readonly sessionId: string;
  readonly agent: string;
  readonly machine: AnyActorRef;
  /** Its prompts, kept with its machine (session-prompts.ts): what the host routes to the session goes there. */
  readonly prompts: SessionPrompts<AgentRequestEvent>;
  /** Its prompts sent with an idempotency key and not answered yet, by key (idempotent-prompts.ts). */
  readonly keyed: Map<string, HeldKeyedPrompt>;
  /** Updates of an agent-side `session/load` are not news: the host replayed its journal. */
  replaying: boolean;
  /** What waits for the re-apply under way (a load or resume's answer), run when it ends or the session does. */
  readonly afterReapply: Array<() => void>;
  /** The direct line to the session's actor inside its agent (`NativeAgent.routeSession`), made on first use; `null`: the agent has none. */
  route: SessionRoute | null | undefined;
  /** The host's own listener on the session's updates, where its agent hands them out (`SessionRoute.watchUpdates`). */
  updates: { unwatch(): void } | undefined;
}

export type Pending =
  | { readonly kind: 'initialize'; readonly agent: string; readonly editor: boolean }
  | { readonly kind: 'new'; readonly agent: string; readonly cwd: string; readonly context: AgentEventContext }
  /** `adopted`: journaled by this request (an agent's session the journal did not know), forgotten again if the agent refuses it. */
  | { readonly kind: 'attach'; readonly agent: string; readonly sessionId: string; readonly how: 'load' | 'resume'; readonly adopted: Adopted | undefined; readonly job: AttachJob; readonly context: AgentEventContext }
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
export interface ListJob {
  readonly requestId: string;
  readonly context: AgentEventContext;
  readonly cwd: string | undefined;
  /** The agents asked, in order (sorted by name, so that a cursor names a stable place). */
  readonly agents: readonly string[];
  readonly sessions: SessionInfo[];
  readonly skipped: Array<{ readonly agent: string; readonly reason: string }>;
}

/** A session an agent listed: which agent keeps it, and the resume state that continues it. */
export interface ListedSession {
  readonly agent: string;
  readonly resume: unknown;
}

/**
 * One `session/load` or `session/resume` under way, from its request to its answer: a
 * `session/close` or `session/delete` of the session meanwhile (during the replay, or while its
 * agent opens it) interrupts it, and it answers that instead of opening the session.
 */
export interface AttachJob {
  readonly sessionId: string;
  /** It opens a session not running here: later loads and resumes of it wait for its answer. */
  readonly opens: boolean;
  interrupted: 'closed' | 'deleted' | undefined;
}

/** A session journaled by the load or resume that attaches it; `listed`: what an agent's listing said of it, if it came from there. */
export interface Adopted {
  readonly listed: ListedSession | undefined;
}

export interface ClientCall {
  readonly agent: string;
  readonly key: string;
  readonly sessionId: string | undefined;
  readonly method: string;
  readonly params: unknown;
}

export interface Live {
  readonly scope: Scope;
  readonly input: HostInput;
  readonly inner: Map<string, InnerAgent>;
  readonly sessions: Map<string, HostSession>;
  readonly pending: Map<string, Pending>;
  readonly clientCalls: Map<string, ClientCall>;
  /** Sessions whose agent gave up, with why: a prompt is refused naming it, load/resume starts them again. */
  readonly failed: Map<string, string>;
  /** This host's lease on a shared store, as its own clock sees it, and the sessions whose ownership is being checked (lease-fencing.ts). */
  readonly lease: { standing: LeaseStanding; readonly checking: Set<string> };
  /** Sessions another host took from this one (moved-away.ts), with what their prompts are answered here. */
  readonly moved: Map<string, ErrorObject>;
  /** Sessions agents listed that the journal does not know: what `session/load` / `session/resume` of one needs. */
  readonly listed: Map<string, ListedSession>;
  context: AgentEventContext | undefined;
  initialized: boolean;
  nextKey: number;
  journalErrors: number;
  /** A write of a session refused as fenced: another host owns it now (set by the host agent: moved-away.ts). */
  readonly sessionLost: (sessionId: string, error: FencedAppendError) => void;
  /** Sessions closed by the editor (while not opened again): what their agents still say is dropped. */
  readonly closed: Set<string>;
  /** Sessions whose updates the journal refused (not shown) since it last took one: the editor was told once (journal-writes.ts). */
  readonly unshown: Set<string>;
  /** The journal, as the host calls it (answers at once, or promises). */
  readonly journal: HostJournal;
  /** Each session's journal calls in order, and the outputs that wait for them (group commit included). */
  readonly writes: JournalQueue<Delivery>;
  /** The editor's connection, reading each session from a cursor: what the host tells the editor goes through it. */
  readonly subscriber: Subscriber;
  /** The session each unanswered editor request is about (not a prompt: its session's machine knows it): its answer goes out in that session's order. */
  readonly requestSessions: Map<string, string>;
  /**
   * Updates, by agent, for sessions the host does not know, sent while that agent's
   * `session/new` or `session/fork` is unanswered (a passthrough may deliver them before the
   * answer): held until it settles, then journaled and shown, or dropped if that setup failed.
   */
  readonly held: Map<string, AgentHandlerOutput[]>;
  /** Subagent child sessions announced by a `subagent_update` of a session open here: child id to parent id (subagents.ts). */
  readonly subagents: Map<string, string>;
  /** Loads and resumes under way, by session. */
  readonly attaching: Map<string, Set<AttachJob>>;
  /**
   * Sessions a load or resume is opening, or that their agent is closing or deleting, with the
   * loads and resumes of them that came since: run, in order, once that is answered (a load
   * after a close opens the session again; after a delete it finds none).
   */
  readonly opening: Map<string, Array<() => void>>;
  /** Agents released (see `releaseAgent`) whose supervisors are still shutting down: stopped when done, or with the host. */
  readonly releasing: Set<AnyActorRef>;
}

/** An output for the editor's subscriber, in its session's order (`seq`: the journal entry it stands for). */
export interface Delivery {
  readonly sessionId: string | undefined;
  readonly output: AgentHandlerOutput;
  readonly seq: number | undefined;
}

/** Plain facts about the host agent. */
export interface HostAgentContext {
  readonly agents: readonly string[];
  readonly sessions: number;
  readonly journalErrors: number;
}

export type HostSnapshot = Snapshot<undefined> & { readonly context: HostAgentContext };

export type InnerOutput = { readonly type: 'host.inner'; readonly agent: string; readonly output: AgentHandlerOutput };

export type CatchUp = { readonly type: 'host.catchUp'; readonly sessionId: string };

/** Runs a continuation in the host agent's turn: the answer of a journal call that came as a promise (continuation.ts). */
export type Continue = { readonly type: 'host.continue'; readonly run: () => void };

/** Stop the named agent if it serves nothing now (no session open on it, no request waiting for it); started again on next use. */
export type ReleaseAgent = { readonly type: 'host.releaseAgent'; readonly agent: string } | { readonly type: 'host.releasedDown'; readonly ref: AnyActorRef };

/** What the host agent actor receives (not the program's `HostEvent` of host-event.ts). */
/** How this host's lease stands now, by its own clock (a shared store: lease-fencing.ts). */
export type LeaseEvent = { readonly type: 'host.lease'; readonly standing: LeaseStanding };

export type HostAgentEvent = AgentHandlerEvent | InnerOutput | CatchUp | ReleaseAgent | Continue | LeaseEvent | { readonly type: `xstate.${string}` };

export type Scope = ActorScope<HostSnapshot, HostAgentEvent, ActorSystem<any>, AgentHandlerOutput>;

export const lives = new WeakMap<AnyActorRef, Live>();

export const keySeparator = '\u0000';

/** A keyed prompt the session holds (idempotent-prompts.ts) (being looked up, queued, or running): its retries join it. */
export interface HeldKeyedPrompt {
  readonly requestId: string;
  readonly promptDigest: string;
  /** The retries that joined it, answered with its outcome. */
  readonly retries: string[];
  /** Its prompt entry's seq, once journaled. */
  seq: number | undefined;
}
