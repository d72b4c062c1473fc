/**
 * An adapter agent's options and live record (adapter-agent.ts): its sessions, each with its
 * supervisor, adapter and port, what it still owes the editor, and how a session is stopped.
 */
import type { CrashChoice } from './crash-policy.js';
import { type ActorScope, type ActorSystem, type AnyActorLogic, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import { type AgentHandlerEvent, type AgentRequestEvent } from '../protocol/native-agent.js';
import type { PortExit } from '../port/port-exit.js';
import { whichChildren } from '../supervision/introspection.js';
import type { AdapterDefinition, CommandLine, SessionAdapterOutput } from './adapter.js';


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
  /**
   * `--on-crash` / `--max-continuations`: what becomes of a prompt its CLI died under, given to
   * each session adapter as its input `crash` (`fromCliSession`'s take it; default: `continue`
   * for a definition that resumes its conversation, `fail` for one that does not).
   */
  readonly crash?: CrashChoice;
}

export interface Session {
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
  /**
   * Requests routed to this session and not answered yet: request id → ACP method. Not the
   * prompts that came down a router's line (`routed`): the router keeps those.
   */
  readonly pending: Map<string, string>;
  /**
   * A router (a host that owns its turns) sends this session's events down its line
   * (`routeSession`): it keeps the prompts it sends, answers them when the session closes
   * or fails (`session.failed` says with what), and drops an answer it does not owe.
   */
  routed: boolean;
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

export interface Live {
  readonly scope: Scope;
  readonly options: AdapterAgentOptions;
  readonly sessions: Map<string, Session>;
  readonly sessionsSupervisor: AnyActorRef;
}

export type AgentSnapshot = Snapshot<undefined> & { readonly context: { readonly sessions: number } };

export type Scope = ActorScope<AgentSnapshot, AgentHandlerEvent, ActorSystem<any>, SessionAdapterOutput>;

export const lives = new WeakMap<AnyActorRef, Live>();

export const keySeparator = '\u0000';

export function refOf(session: Session, childId: string): AnyActorRef | undefined {
  return session.supervisor ? whichChildren(session.supervisor).find((row) => row.id === childId)?.ref : undefined;
}

/** Stops a session's supervisor, gracefully (the port closes the CLI's stdin, then signals its group). */
export function closeQuietly(live: Live, session: Session): void {
  if (session.closing) return;
  session.closing = true;
  live.sessionsSupervisor.send({ type: 'supervisor.terminateChild', id: session.id });
}

/** The requests an adapter agent's session is owed an answer for (request id → method). Read-only; for inspection and specs. */
export function owedRequestsOf(agent: AnyActorRef, sessionId: string): ReadonlyMap<string, string> {
  return new Map(lives.get(agent)?.sessions.get(sessionId)?.pending ?? []);
}
