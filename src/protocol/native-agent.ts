/**
 * The native agent handler contract: the TypeScript counterpart of ex_mcp's
 * `ExMCP.ACP.Agent.Handler`, as events instead of callbacks and returns.
 *
 * A native agent is any actor logic (usually a state machine). The ACP agent server sends
 * it one event per request or notification from the client, and it answers by emitting
 * events (`emit(...)` in a machine): a response now or later, any number of session updates
 * before it, requests to the client (permission, files, terminals) whose answers come back
 * as events. It never sees JSON-RPC ids, capability checks or the wire.
 */
import type {
  AgentCapabilities,
  AuthMethod,
  ClientCapabilities,
  ContentBlock,
  Implementation,
  SessionUpdate,
  StopReason,
} from '@agentclientprotocol/sdk';
import type { AnyActorLogic, AnyActorRef } from 'xstate';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';
import { AGENT_METHODS, UNSTABLE_AGENT_METHODS } from './methods.js';
import { V2_AGENT_METHODS } from './methods-v2.js';

/** What the server knows about the client, given with every event. */
export interface AgentEventContext {
  readonly protocolVersion: number;
  readonly clientCapabilities: ClientCapabilities;
  readonly clientInfo: Implementation | undefined;
}

/** The event type of each ACP request an agent serves. */
export const handlerEventTypes = {
  /** Only with `delegateInitialize`: the handler answers what to advertise. */
  [AGENT_METHODS.initialize]: 'initialize',
  [AGENT_METHODS.authenticate]: 'authenticate',
  [AGENT_METHODS.logout]: 'logout',
  [AGENT_METHODS.session_new]: 'session.new',
  [AGENT_METHODS.session_load]: 'session.load',
  [AGENT_METHODS.session_resume]: 'session.resume',
  [AGENT_METHODS.session_list]: 'session.list',
  [AGENT_METHODS.session_close]: 'session.close',
  [AGENT_METHODS.session_delete]: 'session.delete',
  [AGENT_METHODS.session_set_mode]: 'session.setMode',
  [AGENT_METHODS.session_set_config_option]: 'session.setConfigOption',
  [AGENT_METHODS.session_prompt]: 'session.prompt',
  /** Unstable: only when the agent advertises `sessionCapabilities.fork`. */
  [UNSTABLE_AGENT_METHODS.session_fork]: 'session.fork',
  /** ACP v2 only (no v1 name): cancel one tool call, or stop one terminal's process, of a session. */
  [V2_AGENT_METHODS.tool_call_cancel]: 'toolCall.cancel',
  [V2_AGENT_METHODS.terminal_cancel]: 'terminal.cancel',
} as const;

/** An ACP request for the handler: answer it with `acp.respond` or `acp.error` carrying `requestId`. */
export interface AgentRequestEvent {
  readonly type: (typeof handlerEventTypes)[keyof typeof handlerEventTypes] | 'ext.request';
  /** The server's key for this request; echo it in the answer. */
  readonly requestId: string;
  /** The ACP method (for `ext.request`, the `_`-prefixed extension method). */
  readonly method: string;
  /** Validated params. */
  readonly params: Record<string, unknown>;
  readonly context: AgentEventContext;
}

/** Events a native agent receives. */
export type AgentHandlerEvent =
  | AgentRequestEvent
  /** The client initialized the connection (the server answered `initialize`). */
  | { readonly type: 'initialized'; readonly context: AgentEventContext }
  /**
   * `session/cancel` (or `$/cancel_request` for a prompt): finish the prompt with `cancelled`.
   * `requestId`: the prompt in progress; for a handler that owns its turns (`ownsTurns`), the
   * prompt a `$/cancel_request` named, or `''` for `session/cancel` (every prompt of the session).
   */
  | { readonly type: 'session.cancel'; readonly sessionId: string; readonly requestId: string; readonly context: AgentEventContext }
  /** An extension notification the agent declared. */
  | { readonly type: 'ext.notification'; readonly method: string; readonly params: unknown }
  /** The answer to one of the agent's requests to the client. */
  | { readonly type: 'client.response'; readonly key: string; readonly result: unknown }
  /** The client refused or failed one of the agent's requests (or it was not allowed). */
  | { readonly type: 'client.error'; readonly key: string; readonly error: ErrorObject };

/** One update of one session, as an `acp.updates` output carries it. */
export interface SessionUpdateOf {
  readonly sessionId: string;
  readonly update: SessionUpdate;
}

/** Events a native agent emits. */
export type AgentHandlerOutput =
  | { readonly type: 'acp.respond'; readonly requestId: string; readonly result: unknown }
  | { readonly type: 'acp.error'; readonly requestId: string; readonly error: ErrorObject }
  /** `seq`: the journal entry it stands for (the host's updates); the server sends it as `_meta["acp-warden/seq"]`. */
  | { readonly type: 'acp.update'; readonly sessionId: string; readonly update: SessionUpdate; readonly seq?: number }
  /**
   * Several updates in order, as one output: what `acp.update` one by one would say. An agent
   * that streams (the ACP passthrough, per turn of the event loop) emits them so, because one
   * emitted event per streamed update was most of what relaying it cost.
   */
  | { readonly type: 'acp.updates'; readonly updates: readonly SessionUpdateOf[] }
  /** A request to the client (`session/request_permission`, `fs/*`, `terminal/*`, `elicitation/create`); the answer comes back as `client.response` / `client.error` with `key`. */
  | { readonly type: 'acp.clientRequest'; readonly key: string; readonly method: string; readonly params: unknown }
  /** A notification to the client (`elicitation/complete`, an extension). */
  | { readonly type: 'acp.notify'; readonly method: string; readonly params: unknown }
  /**
   * A replay the client asked for (`session/load`, or a re-attach from the last entry it saw)
   * delivered the whole history it covers, up to journal entry `seq` (updates journaled while it
   * ran included): what came before on the session is history, what comes after is not. Told
   * once per replay, after its last update and before the answer of `requestId`; never for a
   * replay cut short. The server tells its client (ACP v2: a `replay_complete` update; v1:
   * `_meta["acp-warden/replayComplete"]` on that answer).
   */
  | { readonly type: 'acp.replayComplete'; readonly requestId: string; readonly sessionId: string; readonly seq: number }
  | SessionLifecycleOutput;

/**
 * Facts about a session's agent process, for the host (journal, notices, the session state
 * chart). Not ACP messages: the agent server ignores them; the host's agent turns them into
 * journal entries and what the editor is told.
 */
export type SessionLifecycleOutput =
  /** The session's agent process ended and will be restarted (`restarts` so far, before this one). */
  | { readonly type: 'session.restarting'; readonly sessionId: string; readonly restarts: number; readonly exit: { readonly reason: unknown; readonly stderrTail?: string } }
  /** The restarted process is ready again and the conversation was resumed. */
  | { readonly type: 'session.recovered'; readonly sessionId: string; readonly restarts: number }
  /**
   * The session's supervisor gave up (restart intensity exceeded): the session is over.
   * `error`: what the agent answered the requests it still owed; a router that sent the
   * session's prompts down its line (`routeSession`) answers those it sent with it.
   */
  | { readonly type: 'session.failed'; readonly sessionId: string; readonly restarts: number; readonly reason: string; readonly error?: ErrorObject }
  /**
   * What it takes to resume this conversation in a new agent process (Claude's session id,
   * Codex's thread id): the host journals it and gives it back in `session/resume`'s
   * `_meta["acp-warden/resume"]` after a restart of the host itself.
   */
  | { readonly type: 'session.resumeState'; readonly sessionId: string; readonly state: unknown }
  /**
   * The agent process printed a line over its line limit: skipped unread (the process goes
   * on). `sessionId` when the process serves one session; `what` says what the line was,
   * from its first bytes (`session/update`, a Claude `user` line, ...).
   */
  | { readonly type: 'agent.lineDropped'; readonly sessionId?: string; readonly bytes: number; readonly limit: number; readonly what: string }
  /**
   * A turn's own journal entry (the host's): its prompt when the turn started, its stop reason or
   * error when it ended, with the entry's `seq` and the prompt's request key. A hub that serves
   * several connections shows the prompt and the turn's end to the connections that did not
   * send it (`observed`: each connection's server renders it in its own protocol version); the
   * prompt's own server acknowledges it there (ACP v2) or ignores it (v1).
   */
  | { readonly type: 'session.turnJournaled'; readonly sessionId: string; readonly requestId: string; readonly seq: number; readonly entry: TurnEntry; readonly observed?: boolean }
  /**
   * A retry of a keyed prompt (`_meta["acp-warden/idempotencyKey"]`) joined that prompt, inserted
   * at journal entry `seq`: its answer still comes at the turn's end (v1's); an ACP v2 edge
   * acknowledges it now with the prompt's `messageId` (src/acp/v2-retries.ts).
   */
  | { readonly type: 'session.promptJoined'; readonly sessionId: string; readonly requestId: string; readonly seq: number };

/** A turn's journal entry, as `session.turnJournaled` carries it (the journal's `prompt`, `stop` and `error` entries). */
export type TurnEntry =
  | { readonly kind: 'prompt'; readonly prompt: readonly ContentBlock[]; readonly requestId?: string }
  | { readonly kind: 'stop'; readonly stopReason: StopReason; readonly requestId?: string }
  | { readonly kind: 'error'; readonly error: ErrorObject; readonly requestId?: string };

/**
 * The `_meta` key naming the subagent child session an update belongs to, in the parent
 * session's journal and on its way to the editor edge (docs/acp.md, "Subagent sessions"): the
 * host journals a child's updates under the parent that announced it (`subagent_update`), and
 * the edge sends them with the child's `sessionId`, without this key.
 */
export const SUBAGENT_META_KEY = 'acp-warden/subagent';

/**
 * The `_meta` key of a `session/list` entry naming the session a subagent child belongs to
 * (the one that announced it): ACP's `SessionInfo` has no field for it yet (SDK 2.4.0, v1 and v2).
 */
export const PARENT_SESSION_META_KEY = 'acp-warden/parentSessionId';

/** The `_meta` key under which the host hands a journaled resume state to `session/resume` / `session/load`. */
export const RESUME_META_KEY = 'acp-warden/resume';

/**
 * The `_meta` key of a `session/prompt`'s idempotency key (ACP v1; a v2 edge puts v2's
 * `idempotencyKey` there too): the host inserts a prompt at most once per key in its session
 * (src/host/agent/idempotent-prompts.ts).
 */
export const IDEMPOTENCY_KEY_META = 'acp-warden/idempotencyKey';

/** The `_meta` key of a keyed prompt's answer that carries its prompt entry's journal seq (a v2 edge's `messageId` is derived from it). */
export const PROMPT_SEQ_META = 'acp-warden/promptSeq';

/** A native agent: its handler logic and what the server advertises for it. */
export interface NativeAgent<TLogic extends AnyActorLogic = AnyActorLogic> {
  /** The handler. */
  readonly logic: TLogic;
  readonly input?: unknown;
  readonly agentInfo: Implementation;
  /** Advertised as `agentCapabilities`; they gate the optional methods. */
  readonly capabilities?: AgentCapabilities;
  readonly authMethods?: AuthMethod[];
  /**
   * Protocol versions spoken to the editor, newest last. Default `[1]`: every `initialize` is
   * answered 1. With 2 the server negotiates as the SDK's router (docs/acp.md, "ACP v2 toward
   * editors") and renders for a v2 editor; that needs a handler that owns its turns and reports
   * a prompt's insertion (`session.turnJournaled`), as the host's agent does.
   */
  readonly protocolVersions?: readonly number[];
  /** `_`-prefixed extension methods the handler serves; others get -32601 (requests) or are ignored. */
  readonly extensions?: { readonly requests?: readonly string[]; readonly notifications?: readonly string[] };
  /**
   * Let the handler answer `initialize` (an `initialize` request event): its result's
   * `agentCapabilities`, `authMethods` and `agentInfo` replace the ones above, so that a
   * proxy can advertise what the agent behind it supports. The server still negotiates the
   * version and gates everything after.
   */
  readonly delegateInitialize?: boolean;
  /**
   * After `session/cancel`, how long the handler has to finish the prompt before the server
   * answers `cancelled` itself (nothing hangs). Default `defaultCancelGraceMs`, 5000 ms
   * (src/supervision/cancel-grace.ts).
   */
  readonly cancelGraceMs?: number;
  /**
   * The handler delivers its updates from a journal (the host agent: a subscriber with a
   * cursor per session): while the editor's output is backed up, the server closes the
   * connection's delivery gate (`deliveryGateOf`) and the handler reads what the editor
   * missed from the journal later; the agents go on. Without it the server closes the read
   * gate instead (`readGateOf`): every port stops reading its agent until the editor drained.
   */
  readonly deliversFromJournal?: boolean;
  /**
   * The handler decides its sessions' turns itself (the host agent: one session machine per
   * session): every prompt reaches it at once, and it queues them, answers a cancelled one
   * `cancelled` and keeps the cancel grace; the server forwards cancels and keeps only
   * protocol gating, capability checks and the request ids. Without it the server gives each
   * session the same session machine the host's sessions have, to decide its turns (FIFO, the
   * cancel grace `cancelGraceMs`): src/acp/bare-turns.ts.
   */
  readonly ownsTurns?: boolean;
  /**
   * The supervisors this agent runs its processes under (its `sessions` dynamic supervisor,
   * a passthrough's agent supervisor), given its running actor: the host shows them in
   * `host.tree()` and shuts them down gracefully (each port's stop sequence) on `host.stop()`.
   */
  readonly supervisors?: (agent: AnyActorRef) => readonly AnyActorRef[];
  /**
   * A direct line to one of its sessions' actors, given its running actor and the session id
   * (an adapter agent: the session adapter). A host that routes a session's events itself
   * (prompts, cancels, set_mode / set_config_option, answers to the session's client requests)
   * sends them down this line, so that the agent's own actor, a switchboard for its sessions,
   * is not on every prompt's path. Answers still come out of the agent as usual.
   */
  readonly routeSession?: (agent: AnyActorRef, sessionId: string) => SessionRoute;
  /**
   * The handler serves ACP v2's `tool_call/cancel` and `terminal/cancel` (`toolCall.cancel`,
   * `terminal.cancel`), answering -32602 for work it cannot cancel (a passthrough: it asks its
   * agent, src/acp/agent-client-cancel.ts). Without it the host answers them -32602 itself.
   */
  readonly cancelsWork?: boolean;
  /**
   * The handler stands for a hub's shared sessions (a `warden serve` connection): a peer host's
   * link that asks for it in its `initialize` (`_meta["acp-warden/relay"]`, src/acp/relay-link.ts)
   * gets the core's own output instead of v1's rendering, to render it for an ACP v2 client of
   * its own (docs/cluster.md, "Routing").
   */
  readonly servesPeerLinks?: boolean;
}

/** A direct line to one session's actor inside an agent (see `NativeAgent.routeSession`). */
export interface SessionRoute {
  /**
   * Hands a session-scoped event (`session.prompt`, `session.setMode`, `session.setConfigOption`,
   * `session.cancel`, `client.response`, `client.error` of that session) straight to the session's
   * actor; `false` when the session has no actor now (starting, closing, gone): send it to the
   * agent instead, which answers as it always does.
   */
  send(event: AgentHandlerEvent): boolean;
  /**
   * Hands the session's updates (`acp.update`) to the host straight from the actor that makes
   * them, so that the agent's own actor is off each update's path too: `onActor` gets that actor
   * now and again whenever it changes (a restart makes a new one), and the agent stops relaying
   * the session's updates itself until `unwatch()`; `onActor(undefined)`: none for now (the agent
   * restarts, or hides a replay), its updates come out of the agent again until the next actor.
   * The actor may make other sessions' updates too: take only this session's (`sessionId`). Its
   * other outputs (answers, client requests, lifecycle facts) still come out of the agent.
   * Absent, or `undefined` returned: its updates come out of the agent as usual.
   */
  watchUpdates?(onActor: (actor: AnyActorRef | undefined) => void): { unwatch(): void } | undefined;
  /**
   * An update the watched actor made for `sessionId` as its session carries it: a subagent
   * child's (docs/acp.md, "Subagent sessions") under its top parent's id, tagged with the
   * child's (`SUBAGENT_META_KEY`); any other as it is. Absent: every update is its own session's.
   */
  carried?(sessionId: string, update: SessionUpdate): { readonly sessionId: string; readonly update: SessionUpdate };
}
