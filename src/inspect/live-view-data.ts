/**
 * The live view's data: what the page gets from the model (JSON), the actor tree of each
 * source, the state machines with their charts, the pending requests and the timeline.
 */
import type { TakenTransition } from '../host/transitions-taken.js';
import type { LiveChartView } from './live-chart.js';

/** What an actor is, as far as the view can tell. */
export type LiveActorKind = 'supervisor' | 'port' | 'machine' | 'request' | 'actor';

/** XState's snapshot statuses. */
export type LiveActorStatus = 'active' | 'done' | 'error' | 'stopped';

/** One actor of the tree, as the page gets it. */
export interface LiveActorView {
  /** `<source>/<XState session id>`: unique across sources. */
  readonly key: string;
  /** The actor's XState session id (`x:12`). */
  readonly sessionId: string;
  /** Its id (`port`, `agent:demo`, `session demo-1`), or what its context calls it. */
  readonly label: string;
  readonly kind: LiveActorKind;
  readonly status: LiveActorStatus;
  /** The snapshot's state value: a supervisor's phase, a port's state, a machine's state. */
  readonly state?: string;
  /** A supervisor's name and strategy (`demo agent, rest_for_one`). */
  readonly detail?: string;
  /** The OS pid of a port's process. */
  readonly pid?: number;
  /** When it started (a port: its process), ms on the source's clock. */
  readonly startedAt: number;
  readonly endedAt?: number;
  /** Earlier incarnations of this child under the same parent. */
  readonly restarts: number;
  /** Why it ended (or why its previous incarnation did). */
  readonly exit?: string;
  readonly children: readonly LiveActorView[];
}

/** One source of events: this host, or one `warden acp --inspect` stream. */
export interface LiveSourceView {
  readonly id: string;
  readonly label: string;
  readonly connected: boolean;
  readonly since: number;
  /** Its actors without a parent in view, pending requests left out (see `pending`). */
  readonly roots: readonly LiveActorView[];
}

/** An actor with a chart (a state machine, a port or a supervisor on its declared chart), with where it stands. */
export interface LiveMachineView {
  readonly key: string;
  readonly source: string;
  readonly label: string;
  /** `machine`, `supervisor` or `port`. */
  readonly kind: LiveActorKind;
  /** Its chart in `charts`: the machine id, or `declared:port`, `declared:supervisor`. */
  readonly chart: string;
  readonly state: string;
  /** The leaf states it is in, as paths from the chart's root (several in parallel states). */
  readonly active: readonly string[];
  /** The last transition that changed its state: from the leaf it left, by which event, to the leaf it entered. */
  readonly last?: LiveLastTransition;
  readonly status: LiveActorStatus;
  /** A session machine's facts: its session id, agent, restarts, why it failed, who owns it. */
  readonly sessionId?: string;
  readonly agent?: string;
  readonly restarts?: number;
  readonly failure?: string;
  /** Its owner host and epoch, on a store several hosts share (PostgreSQL); absent on one without owners (SQLite). */
  readonly owner?: LiveOwnerView;
  readonly startedAt: number;
}

/**
 * Who owns a session, as its chart says (`context.owner`, acp-warden's session machine): on a
 * store several hosts share, the owner host and the epoch it holds the session at. A part the
 * host does not know is absent.
 */
export interface LiveOwnerView {
  /** The owner host's id (as `warden sessions` shows it). */
  readonly hostId?: string;
  /** The owner host's name (its machine's host name). */
  readonly hostName?: string;
  readonly epoch?: number;
  /** `false`: the session moved to another host (or to none), and the host that shows it runs it no more. */
  readonly here: boolean;
}

/** The transition a machine took last (its graph highlights it). */
export interface LiveLastTransition {
  /** The leaf it left (for a self-transition, the one it is in). */
  readonly from: string;
  readonly event: string;
  /** The leaf it entered. */
  readonly to: string;
  readonly at: number;
  /**
   * The transitions taken, when the stream tells them (acp-warden's own streams do: the
   * microsteps' transitions); without them the graph finds the edge by the event and the leaves.
   */
  readonly transitions?: readonly TakenTransition[];
}

/** A JSON-RPC request sent and not answered yet. */
export interface LivePendingView {
  readonly key: string;
  readonly source: string;
  readonly method: string;
  readonly requestId: string;
  readonly sentAt: number;
  /** The connection it went out on, by the labels of its owners (`agent:demo › client`). */
  readonly via: string;
}

/** A line of the timeline. */
export interface LiveTimelineEntry {
  readonly seq: number;
  readonly at: number;
  readonly source: string;
  readonly kind: 'start' | 'exit' | 'restart' | 'escalation' | 'session' | 'stream';
  readonly severity: 'info' | 'warn' | 'error';
  /** The actor's path of labels (`agent:demo › agent › port`). */
  readonly subject: string;
  readonly text: string;
}

/** Everything the page shows; JSON. */
export interface LiveViewState {
  /** The model's clock when this was made: the page ages things from it. */
  readonly now: number;
  readonly sources: readonly LiveSourceView[];
  /** Every actor with a chart: the state machines, then the supervisors and ports (with `declared` charts). */
  readonly machines: readonly LiveMachineView[];
  readonly charts: Readonly<Record<string, LiveChartView>>;
  readonly pending: readonly LivePendingView[];
  /** Oldest first (by time, then by arrival). */
  readonly timeline: readonly LiveTimelineEntry[];
  /** What was not kept: actors past `maxActors`, events that were not inspection events. */
  readonly dropped: { readonly actors: number; readonly events: number };
}
