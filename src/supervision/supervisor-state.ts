/**
 * The live state of one supervisor actor: its child table, its intensity window, the batch
 * of children being stopped and the events held meanwhile. Kept beside the actor in a
 * `WeakMap` keyed by its ref, never in the snapshot, as XState keeps its creators' live
 * resources; the snapshot is a small summary of it (`supervisor-logic.ts`).
 *
 * Only the shape and its accessors live here; what is done with it is the policy of
 * `supervisor.ts` and the mechanics of `child-start.ts` and `child-stop.ts`.
 */
import type { ActorLogic, ActorScope, ActorSystem, AnyActorRef, Snapshot, Subscription } from 'xstate';
import { supervisorLogicMarker, type ChildSpec, type NormalizedChildSpec } from './child-spec.js';
import type { NormalizedFlags } from './supervisor-flags.js';
import type { ExitReason } from './exit-reason.js';
import { notRunning, type SupervisionEvent, type SupervisorEvent } from './events.js';

type AnyActorSystem = ActorSystem<any>;

/** The phase of a supervisor, its snapshot `value`. */
export type SupervisorPhase = 'running' | 'restarting' | 'shuttingDown' | 'stopped';

/** A small, serialisable summary; the children themselves are read with `whichChildren`. */
export interface SupervisorContext {
  readonly name: string;
  readonly strategy: NormalizedFlags['strategy'];
  readonly dynamic: boolean;
  /** Child specs held (running or not). */
  readonly specs: number;
  /** Children running now. */
  readonly active: number;
  /** Restarts done since start. */
  readonly restarts: number;
  /** Restarts that count against intensity at the time of the snapshot. */
  readonly restartsInWindow: number;
}

/** The snapshot of a supervisor actor. Its output is the supervisor's exit reason. */
export type SupervisorSnapshot = Snapshot<ExitReason> & {
  readonly value: SupervisorPhase;
  readonly context: SupervisorContext;
};

/** Actor logic of a supervisor; create it with `createSupervisor` or `createDynamicSupervisor`. */
export type SupervisorLogic<TInput = unknown> = ActorLogic<SupervisorSnapshot, SupervisorEvent, TInput, AnyActorSystem, SupervisionEvent> & {
  readonly [supervisorLogicMarker]: true;
  readonly id: string;
};

/** Internal configuration shared by static and dynamic supervisors. */
export interface SupervisorConfig<TInput> {
  readonly name: string;
  readonly flags: NormalizedFlags;
  readonly dynamic: boolean;
  readonly maxChildren: number;
  readonly children: (input: TInput) => readonly ChildSpec[];
  readonly template: ((args: unknown) => ChildSpec) | undefined;
  readonly random: () => number;
}

/**
 * Where a child stands: `running` (a live actor), `restarting` (waiting for its restart:
 * backoff delay, a retry after a failed start, or its group restart), `terminating` (asked
 * to shut down, not finished yet), `terminated` (not running; its spec is kept).
 */
export type ChildStatus = 'running' | 'restarting' | 'terminating' | 'terminated';

/** The supervision record of one child, kept across its incarnations. */
export interface ChildEntry {
  readonly spec: NormalizedChildSpec;
  status: ChildStatus;
  ref: AnyActorRef | undefined;
  /** Increases on every start; exit events carry it so that a late one is recognised. */
  incarnation: number;
  restarts: number;
  startedAt: number;
  pendingAttempt: number;
  lastExit: ExitReason | undefined;
  subscription: Subscription | undefined;
  relay: Subscription | undefined;
  restartTimer: string | undefined;
  /** The restart under way follows an exit its spec's `uncounted` names: it adds nothing to the intensity window. */
  uncountedRestart: boolean;
}

/** What the supervisor does once a batch of children is stopped. */
export type Continuation =
  | { readonly kind: 'restart'; readonly failedId: string; readonly group: readonly string[] }
  | { readonly kind: 'exit'; readonly reason: ExitReason }
  | { readonly kind: 'delay'; readonly id: string; readonly delay: number; readonly attempt: number; readonly group: readonly string[] }
  | { readonly kind: 'terminateOne'; readonly id: string; readonly reply: ((result: { ok: true }) => void) | undefined };

/** A batch of children being stopped; the supervisor is busy until it is empty. */
export interface Termination {
  queue: string[];
  readonly concurrent: boolean;
  readonly current: Set<string>;
  then: Continuation;
}

/** The actor scope a supervisor's logic runs in. */
export type SupervisorScope = ActorScope<SupervisorSnapshot, SupervisorEvent, AnyActorSystem, SupervisionEvent>;

/** The live state of one supervisor actor. */
export interface Live {
  readonly scope: SupervisorScope;
  readonly config: SupervisorConfig<any>;
  readonly path: string;
  readonly now: () => number;
  readonly table: Map<string, ChildEntry>;
  window: readonly number[];
  /** When the last restart was counted against intensity (reported with `child.restarted`). */
  countedAt: number;
  phase: SupervisorPhase;
  busy: Termination | undefined;
  deferred: SupervisorEvent[];
  totalRestarts: number;
  /** Children with a live actor; kept as a count so that a snapshot costs O(1). */
  active: number;
  nextChildNumber: number;
  exit: ExitReason | undefined;
  initSpecs: readonly NormalizedChildSpec[];
}

/** Live state per supervisor actor, kept out of the snapshot (as XState's own creators do). */
const liveStates = new WeakMap<AnyActorRef, Live>();

/** Keeps `live` as the live state of its actor. */
export function keepLive(live: Live): void {
  liveStates.set(live.scope.self, live);
}

/** The live state of a supervisor actor; throws for an actor that is not one. */
export function liveOf(self: AnyActorRef): Live {
  const live = liveStates.get(self);
  if (!live) throw new Error(`Actor "${self.id}" is not a supervisor created by acp-warden.`);
  return live;
}

/** Live state of a supervisor actor, or `undefined` when the ref is not one. */
export function supervisorState(ref: AnyActorRef): {
  readonly config: SupervisorConfig<unknown>;
  readonly phase: SupervisorPhase;
  readonly path: string;
  readonly totalRestarts: number;
  readonly children: ReadonlyMap<string, Readonly<ChildEntry>>;
} | undefined {
  const live = liveStates.get(ref);
  if (!live) return undefined;
  return { config: live.config, phase: live.phase, path: live.path, totalRestarts: live.totalRestarts, children: live.table };
}

/** A fresh record for a child that has not started yet. */
export function newEntry(spec: NormalizedChildSpec): ChildEntry {
  return {
    spec,
    status: 'terminated',
    ref: undefined,
    incarnation: 0,
    restarts: 0,
    startedAt: 0,
    pendingAttempt: 0,
    lastExit: undefined,
    subscription: undefined,
    relay: undefined,
    restartTimer: undefined,
    uncountedRestart: false,
  };
}

/** Emits a supervision event stamped with the supervisor's path and clock. */
export function emit(live: Live, event: DistributiveOmit<SupervisionEvent, 'supervisor' | 'at'>): void {
  live.scope.emit({ ...event, supervisor: live.path, at: live.now() } as SupervisionEvent);
}

type DistributiveOmit<T, K extends keyof any> = T extends unknown ? Omit<T, K> : never;

/** Answers a command that carries a reply with `not_running`. */
export function replyStopped(event: SupervisorEvent): void {
  if ('reply' in event && typeof event.reply === 'function') {
    (event.reply as (result: typeof notRunning) => void)(notRunning);
  }
}

/** Answers every event held while children were being stopped with `not_running`. */
export function failDeferred(live: Live): void {
  const pending = live.deferred;
  live.deferred = [];
  for (const event of pending) replyStopped(event);
}
