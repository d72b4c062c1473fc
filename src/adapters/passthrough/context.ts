/**
 * The passthrough machine's vocabulary: its context, the events it takes (the editor's
 * requests through the agent server, the agent process's reports, the answers of the
 * requests it forwards) and the watchdog hint derived from its snapshot.
 */
import type { InitializeResponse, SessionUpdate } from '@agentclientprotocol/sdk';
import type { AgentEventContext, AgentHandlerEvent, AgentRequestEvent } from '../../protocol/native-agent.js';
import type { CrashChoice, CutPrompt } from '../crash-policy.js';
import type { ErrorObject } from '../../jsonrpc/rpc-error.js';
import { CLIENT_METHODS } from '../../protocol/methods.js';
import { watchdogHint, type TurnActivity, type WatchdogHint } from '../turn-activity.js';

/** An open session, as it is re-attached after a restart (its MCP servers are in the handles). */
export interface OpenSession {
  readonly cwd: string;
  readonly additionalDirectories?: readonly string[];
}

/** The passthrough machine's context. */
export interface PassthroughContext {
  /** The agent's name (`gemini`), for messages. */
  readonly name: string;
  /** What the editor said in `initialize`: the client capabilities the agent is initialized with. */
  readonly editor: AgentEventContext | undefined;
  /** The editor's `initialize`, while the agent answers it. */
  readonly initializeRequest: string | undefined;
  /** The agent's answer to the first `initialize` (again after a fresh start): what the editor was told. */
  readonly downstream: InitializeResponse | undefined;
  /** The sessions open for the editor: re-attached after a restart. */
  readonly sessions: Readonly<Record<string, OpenSession>>;
  /** Requests that arrived while the agent (re)starts: served, in order, once it is ready. */
  readonly waiting: readonly AgentHandlerEvent[];
  /** How many forwarded requests the agent owes an answer to. */
  readonly inFlight: number;
  /** The agent's requests to the editor not answered yet: key → method. */
  readonly relays: Readonly<Record<string, string>>;
  /** The sessions whose turn the editor cancelled and the agent has not answered yet: their tools are interrupted. */
  readonly cancelledTurns: Readonly<Record<string, true>>;
  /** The sessions still to re-attach after the restart under way, in order. */
  readonly reattachQueue: readonly string[];
  /** The session being re-attached: its replay is not the editor's news. */
  readonly reattaching: string | undefined;
  /** How many times the agent process was restarted (by the current supervisor). */
  readonly restarts: number;
  /** Why the agent was given up (a sentence naming it), while it is. */
  readonly failure: string | undefined;
  /** What the restarted agent answered to `initialize`, while its sessions are re-attached. */
  readonly restartedAgent: InitializeResponse | undefined;
  /** A fresh start after giving up is under way: what waits for it gets one attempt. */
  readonly restartAttempted: boolean;
  /** What becomes of a prompt the agent process died under, as given (options `crash`); unset parts by what the agent advertises (cut-prompts.ts). */
  readonly crash: CrashChoice;
  /** The prompts in flight, by request id: what a continuation sends again. */
  readonly prompts: Readonly<Record<string, PromptInFlight>>;
  /** Prompts the agent's death cut, by session: continued once the session is re-attached. */
  readonly cut: Readonly<Record<string, CutPrompt & { readonly error: ErrorObject }>>;
}

/** A prompt in flight: its request, how many times a crash continued it, whether the editor cancelled it. */
export interface PromptInFlight {
  readonly sessionId: string;
  readonly request: AgentRequestEvent;
  readonly continuations: number;
  readonly cancelled: boolean;
  /** How many times a rate limit sent it again (rate-limited-prompts.ts). */
  readonly rateLimitRetries?: number;
}

/** How the agent process last ended, as `session.restarting` tells it. */
export interface ExitReport {
  readonly reason: unknown;
  readonly stderrTail?: string;
}

/** A session update from the agent. */
export interface AgentUpdate {
  readonly sessionId: string;
  readonly update: SessionUpdate;
}

/** What the agent process (src/adapters/passthrough/agent-process.ts) reports. */
export type AgentProcessReport =
  /** The supervisor started the agent and its client: it can be initialized. */
  | { readonly type: 'agent.booted' }
  /** The agent could not be started at all. */
  | { readonly type: 'agent.bootFailed'; readonly message: string }
  /** The agent process ended and will be restarted (`restarts` so far). */
  | { readonly type: 'agent.exited'; readonly restarts: number; readonly exit: ExitReport }
  /** The ACP client of the agent process ended (the process is gone): its relays died with it. */
  | { readonly type: 'agent.clientGone' }
  /** The supervisor restarted the agent: a new process with a new client, to initialize again. */
  | { readonly type: 'agent.restarted'; readonly restarts: number }
  /** The supervisor gave up (restart intensity exceeded). */
  | { readonly type: 'agent.gaveUp' }
  /**
   * Session updates from the agent, in order: those that came in one turn of the event loop
   * (one read of its output), so that a flood of them is one transition, not one each.
   */
  | { readonly type: 'agent.updates'; readonly updates: readonly AgentUpdate[] }
  /** A request of the agent to the editor (permission, files, terminals). */
  | { readonly type: 'agent.relay'; readonly key: string; readonly method: string; readonly params: unknown }
  /** The agent printed a line over its limit: skipped. */
  | { readonly type: 'agent.lineDropped'; readonly bytes: number; readonly limit: number; readonly what: string };

/** A session the agent opened (`session/new`, `load`, `resume`, `fork`), to re-attach after a restart. */
export interface OpenedSession extends OpenSession {
  readonly sessionId: string;
  readonly mcpServers: unknown[];
}

/** The end of a forwarded request. */
export interface RequestSettled {
  readonly type: 'request.settled';
  readonly requestId: string;
  readonly method: string;
  readonly sessionId?: string;
  readonly answer: { readonly result: unknown } | { readonly error: ErrorObject };
  readonly opened?: OpenedSession;
  readonly deleted?: string;
}

/** A prompt the host's line to its session (session-route.ts) wrote to the agent itself: in flight from now on. */
export interface PromptForwarded {
  readonly type: 'prompt.forwarded';
  readonly sessionId: string;
  readonly request: AgentRequestEvent;
}

/** Every event the passthrough machine takes. */
/** The wait after a rate limit is over: session `sessionId`'s prompt is sent again (rate-limited-prompts.ts). */
export interface RateLimitRetry {
  readonly type: 'rateLimit.retry';
  readonly sessionId: string;
}

/**
 * Raised by the machine itself when the adapter answered with its inner CLI's death: its process
 * is being killed, so nothing more goes to it (what comes waits for the restart).
 */
export interface InnerCliDying {
  readonly type: 'agent.innerCliDying';
}

export type PassthroughEvent = AgentHandlerEvent | AgentProcessReport | RequestSettled | PromptForwarded | RateLimitRetry | InnerCliDying;

/** The permission request method, whose wait is the user's, not the agent's. */
const PERMISSION_METHOD: string = CLIENT_METHODS.session_request_permission;

/**
 * The watchdog hint in a state: busy while the agent owes an answer (`owesAnswer`: a request
 * in flight, or a state tagged `agentOwes`, initializing or re-attaching) and no relay
 * waits for the editor; `toolRunning` while a tool call of a turn not cancelled runs and no
 * permission is asked.
 */
export function watchdogHintOf(context: PassthroughContext, owesAnswer: boolean, tools: ReadonlyMap<string, TurnActivity>): WatchdogHint {
  const relays = Object.values(context.relays);
  return watchdogHint({ owes: owesAnswer || context.inFlight > 0, awaitsEditor: relays.length > 0, awaitsUser: relays.includes(PERMISSION_METHOD), activities: [...tools].filter(([sessionId]) => context.cancelledTurns[sessionId] !== true).map(([, activity]) => activity) });
}
