/**
 * The supervisor: OTP's `supervisor` behaviour as XState v5 actor logic.
 *
 * This module is the single home of the supervision semantics: starting children in order,
 * deciding restarts, applying the strategy, counting intensity, stopping in reverse order
 * with each child's shutdown policy, auto-shutdown and backoff. The decisions themselves
 * are the pure functions of `restart-policy.ts`, `restart-intensity.ts` and `backoff.ts`;
 * this module applies them and performs the effects.
 *
 * Why custom logic and not a machine with `spawnChild`: XState copies a machine's
 * `children` object on every spawn and stop (O(n) each), stops children in start order and
 * cannot wait for a child to finish. A supervisor must do all three differently, so its
 * children live in an ordered `Map` kept beside the actor (never in the snapshot, as
 * XState keeps live resources in WeakMaps), and the snapshot is a small summary.
 */
import { createActor, type ActorLogic, type ActorScope, type AnyActorLogic, type AnyActorRef, type ActorSystem, type Snapshot, type Subscription } from 'xstate';

type AnyActorSystem = ActorSystem<any>;
import {
  isSupervisorLogic,
  normalizeChildSpec,
  supervisorLogicMarker,
  type ChildSpec,
  type NormalizedChildSpec,
} from './child-spec.js';
import { backoffAttempt, backoffDelay, delayWithinIntensity } from './backoff.js';
import { addRestart, restartsInWindow } from './restart-intensity.js';
import { autoShutdownTriggered, restartGroup, shouldRestart } from './restart-policy.js';
import { normalizeFlags, type NormalizedFlags, type SupervisorFlags } from './supervisor-flags.js';
import {
  errorExit,
  exitFromOutput,
  isExitReason,
  killedExit,
  shutdownExit,
  type ExitReason,
} from './exit-reason.js';
import {
  SHUTDOWN_EVENT,
  notRunning,
  type ExitAction,
  type SupervisionEvent,
  type SupervisorCommand,
  type SupervisorEvent,
  type SupervisorInternalEvent,
} from './events.js';
import { SupervisorSpecError } from './spec-error.js';
import { SupervisorStartError } from './start-error.js';
import { PendingReplies } from './pending-replies.js';
import { resolveNow } from './clock.js';
import { acceptsGracefulShutdown } from './graceful-shutdown.js';

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

/** Actor logic of a supervisor; create it with {@link createSupervisor} or `createDynamicSupervisor`. */
export type SupervisorLogic<TInput = unknown> = ActorLogic<SupervisorSnapshot, SupervisorEvent, TInput, AnyActorSystem, SupervisionEvent> & {
  readonly [supervisorLogicMarker]: true;
  readonly id: string;
};

/** Options of {@link createSupervisor}: flags plus the child specs, in start order. */
export interface SupervisorOptions<TInput = unknown> extends SupervisorFlags {
  /** A name for logs and introspection; the actor id is used in paths. Default `supervisor`. */
  readonly name?: string;
  /** The children, in start order, or a function of the actor's input that returns them. */
  readonly children: readonly ChildSpec[] | ((input: TInput) => readonly ChildSpec[]);
  /** Random numbers in [0, 1) for backoff jitter; injectable for deterministic tests. */
  readonly random?: () => number;
}

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
type ChildStatus = 'running' | 'restarting' | 'terminating' | 'terminated';

interface ChildEntry {
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
}

type Continuation =
  | { readonly kind: 'restart'; readonly failedId: string; readonly group: readonly string[] }
  | { readonly kind: 'exit'; readonly reason: ExitReason }
  | { readonly kind: 'delay'; readonly id: string; readonly delay: number; readonly attempt: number; readonly group: readonly string[] }
  | { readonly kind: 'terminateOne'; readonly id: string; readonly reply: ((result: { ok: true }) => void) | undefined };

/** A batch of children being stopped; the supervisor is busy until it is empty. */
interface Termination {
  queue: string[];
  readonly concurrent: boolean;
  readonly current: Set<string>;
  then: Continuation;
}

interface Live {
  readonly scope: ActorScope<SupervisorSnapshot, SupervisorEvent, AnyActorSystem, SupervisionEvent>;
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

/** Replies owed to `startChild`, `terminateChild`, ... callers; settled `not_running` when the supervisor ends. */
export const pendingCalls = new PendingReplies<typeof notRunning>();

/** Every child started here is also indexed by its ref, for introspection. */
const childEntries = new WeakMap<AnyActorRef, ChildEntry>();

/**
 * Creates a supervisor: actor logic that starts `children` in order and keeps them running
 * under OTP's rules. Use it like any logic: `createActor(sup).start()`, `spawnChild(sup)`,
 * `invoke: { src: sup }`, or as a child of another supervisor.
 *
 * The actor ends (status `done`) when it shuts down, with its exit reason as output:
 * `shutdown` with detail `reached_max_restart_intensity` when restarts exceed intensity,
 * `{ failedToStartChild, cause }` when a child cannot start at init, or the reason of the
 * {@link SHUTDOWN_EVENT} that stopped it.
 *
 * @example
 * ```ts
 * import { createSupervisor } from 'acp-warden';
 * import { portLogic } from 'acp-warden/port';
 * import { connectionLogic } from 'acp-warden/jsonrpc';
 *
 * const sup = createSupervisor({
 *   strategy: 'rest_for_one',
 *   children: [
 *     { id: 'port', start: { logic: portLogic, input: { command: 'claude' } } },
 *     { id: 'connection', start: { logic: connectionLogic } },
 *   ],
 * });
 * const actor = createActor(sup);
 * actor.on('*', (event) => console.error(event.type, event));
 * actor.start();
 * ```
 *
 * @throws SupervisorSpecError when a flag or a static child spec is invalid.
 */
export function createSupervisor<TInput = unknown>(options: SupervisorOptions<TInput>): SupervisorLogic<TInput> {
  const flags = normalizeFlags(options);
  const children = options.children;
  if (typeof children !== 'function') {
    if (!Array.isArray(children)) {
      throw new SupervisorSpecError({ field: 'children', value: children, expected: 'an array of child specs or a function of the input' });
    }
    checkSpecs(children, flags);
  }
  return supervisorLogic<TInput>({
    name: options.name ?? 'supervisor',
    flags,
    dynamic: false,
    maxChildren: Infinity,
    children: typeof children === 'function' ? children : () => children,
    template: undefined,
    random: options.random ?? Math.random,
  });
}

/** Validates specs and their ids' uniqueness; returns them normalised. */
function checkSpecs(specs: readonly ChildSpec[], flags: NormalizedFlags): NormalizedChildSpec[] {
  const seen = new Set<string>();
  return specs.map((spec) => {
    const normalized = normalizeChildSpec(spec, flags.autoShutdown);
    if (seen.has(normalized.id)) {
      throw new SupervisorSpecError({ field: 'id', value: normalized.id, expected: 'unique among the children', childId: normalized.id });
    }
    seen.add(normalized.id);
    return normalized;
  });
}

/** Builds the actor logic for a configuration (static or dynamic). */
export function supervisorLogic<TInput>(config: SupervisorConfig<TInput>): SupervisorLogic<TInput> {
  const logic = {
    [supervisorLogicMarker]: true as const,
    id: config.name,
    config,
    getInitialSnapshot(scope: Live['scope'], input: TInput): SupervisorSnapshot {
      const initSpecs = config.dynamic ? [] : checkSpecs(config.children(input), config.flags);
      const live: Live = {
        scope,
        config,
        path: pathOf(scope.self),
        now: resolveNow(scope.self),
        table: new Map(),
        window: [],
        countedAt: 0,
        phase: 'running',
        busy: undefined,
        deferred: [],
        totalRestarts: 0,
        active: 0,
        nextChildNumber: 1,
        exit: undefined,
        initSpecs,
      };
      liveStates.set(scope.self, live);
      return summarize(live, 'active');
    },
    start(_snapshot: SupervisorSnapshot, scope: Live['scope']): void {
      const live = liveOf(scope.self);
      for (const spec of live.initSpecs) {
        const entry = newEntry(spec);
        live.table.set(spec.id, entry);
        const started = startEntry(live, entry);
        if (!started.ok) {
          // OTP: a child failing to start at init fails the supervisor; the children
          // already started are stopped first (asynchronously, with their shutdown policy).
          live.table.delete(spec.id);
          scope.self.send({ type: 'supervisor.init.failed', id: spec.id, cause: started.error });
          return;
        }
      }
    },
    transition(snapshot: SupervisorSnapshot, event: SupervisorEvent, scope: Live['scope']): SupervisorSnapshot {
      if (snapshot.status !== 'active') return snapshot;
      const live = liveOf(scope.self);
      if (event.type === 'xstate.stop') {
        stopAllNow(live);
        live.phase = 'stopped';
        pendingCalls.settleAll(scope.self, notRunning);
        return summarize(live, 'stopped');
      }
      try {
        handle(live, event);
      } catch (error) {
        // A bug here must not orphan the children (XState does not stop a custom logic's
        // children when it fails), nor leave a caller waiting for a reply.
        stopAllNow(live);
        replyStopped(event);
        pendingCalls.settleAll(scope.self, notRunning);
        throw error;
      }
      if (live.phase === 'stopped') {
        pendingCalls.settleAll(scope.self, notRunning);
        return summarize(live, 'done');
      }
      return summarize(live, 'active');
    },
    getPersistedSnapshot(snapshot: SupervisorSnapshot): SupervisorSnapshot {
      return snapshot;
    },
    restoreSnapshot(): SupervisorSnapshot {
      // Live children cannot be persisted, and a restored actor gets no input to rebuild
      // its specs from: say so instead of coming back half alive.
      throw new Error('A supervisor cannot be restored from a persisted snapshot; create a new actor from its logic instead.');
    },
  };
  return logic as unknown as SupervisorLogic<TInput>;
}

function liveOf(self: AnyActorRef): Live {
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

/** The supervision record of a child ref started by a supervisor (restarts, status). */
export function childEntryOf(ref: AnyActorRef): Readonly<ChildEntry> | undefined {
  return childEntries.get(ref);
}

export type { ChildEntry, ChildStatus };

function pathOf(self: AnyActorRef): string {
  const ids: string[] = [];
  let ref: AnyActorRef | undefined = self;
  while (ref) {
    ids.unshift(ref.id);
    ref = (ref as { _parent?: AnyActorRef })._parent;
  }
  return ids.join('/');
}

function summarize(live: Live, status: 'active' | 'done' | 'stopped'): SupervisorSnapshot {
  const context: SupervisorContext = {
    name: live.config.name,
    strategy: live.config.flags.strategy,
    dynamic: live.config.dynamic,
    specs: live.table.size,
    active: live.active,
    restarts: live.totalRestarts,
    restartsInWindow: restartsInWindow(live.window, live.now(), live.config.flags.period),
  };
  if (status === 'done') {
    return { status: 'done', output: live.exit ?? shutdownExit(), error: undefined, value: 'stopped', context };
  }
  return { status, output: undefined, error: undefined, value: live.phase, context } as SupervisorSnapshot;
}

function newEntry(spec: NormalizedChildSpec): ChildEntry {
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
  };
}

function emit(live: Live, event: DistributiveOmit<SupervisionEvent, 'supervisor' | 'at'>): void {
  live.scope.emit({ ...event, supervisor: live.path, at: live.now() } as SupervisionEvent);
}

type DistributiveOmit<T, K extends keyof any> = T extends unknown ? Omit<T, K> : never;

// ---------------------------------------------------------------------------------------
// Starting a child

type StartOutcome = { readonly ok: true; readonly ref: AnyActorRef } | { readonly ok: false; readonly error: unknown };

/**
 * Starts one incarnation of a child: creates the actor as a child of the supervisor,
 * starts it and watches it. A child that is in `error` right after start, or a supervisor
 * child that gave up during its own init, failed to start.
 */
function startEntry(live: Live, entry: ChildEntry): StartOutcome {
  const { spec } = entry;
  const self = live.scope.self;
  let ref: AnyActorRef;
  let relay: Subscription | undefined;
  try {
    const input = spec.start.inputFor
      ? spec.start.inputFor({ id: spec.id, restarts: entry.restarts, lastExit: entry.lastExit })
      : spec.start.input;
    ref = createActor(spec.start.logic as AnyActorLogic, {
      parent: self,
      id: spec.id,
      ...(spec.systemId === undefined ? {} : { systemId: spec.systemId }),
      input,
    });
    // Relay a nested supervisor's events so that the root sees the whole tree, its own
    // init included (hence before start).
    if (isSupervisorLogic(spec.start.logic)) relay = ref.on('*', (event: SupervisionEvent) => live.scope.emit(event));
    ref.start();
  } catch (error) {
    relay?.unsubscribe();
    return startFailed(live, entry, error);
  }
  const snapshot = ref.getSnapshot() as Snapshot<unknown>;
  if (snapshot.status === 'error' || (snapshot.status === 'done' && isFailedInit(snapshot.output))) {
    relay?.unsubscribe();
    return startFailed(live, entry, snapshot.status === 'error' ? snapshot.error : snapshot.output);
  }

  entry.incarnation += 1;
  const incarnation = entry.incarnation;
  entry.ref = ref;
  live.active += 1;
  entry.status = 'running';
  entry.startedAt = live.now();
  entry.restartTimer = undefined;
  childEntries.set(ref, entry);
  const notify = (reason: ExitReason): void => {
    self.send({ type: 'supervisor.child.exit', id: spec.id, incarnation, reason });
  };
  entry.subscription = ref.subscribe({
    error: (error) => notify(errorExit(error)),
    complete: () => {
      const final = ref.getSnapshot() as Snapshot<unknown>;
      // `complete` also follows a stop by the supervisor; only `done` is an exit to report.
      if (final.status === 'done') notify(exitFromOutput(final.output));
    },
  });
  entry.relay = relay;
  emit(live, {
    type: 'child.started',
    childId: spec.id,
    incarnation,
    restarts: entry.restarts,
    pid: pidOf(ref),
  });
  return { ok: true, ref };
}

function startFailed(live: Live, entry: ChildEntry, error: unknown): StartOutcome {
  entry.ref = undefined;
  emit(live, { type: 'child.startFailed', childId: entry.spec.id, error });
  return { ok: false, error };
}

function isFailedInit(output: unknown): boolean {
  return isExitReason(output) && output.kind === 'shutdown' &&
    typeof output.detail === 'object' && output.detail !== null && 'failedToStartChild' in output.detail;
}

/** The OS pid of a child that exposes one in its snapshot (ports do). */
export function pidOf(ref: AnyActorRef): number | undefined {
  const snapshot = ref.getSnapshot() as { pid?: unknown; context?: { pid?: unknown } } | undefined;
  const pid = snapshot?.pid ?? snapshot?.context?.pid;
  return typeof pid === 'number' ? pid : undefined;
}

// ---------------------------------------------------------------------------------------
// Event handling

function handle(live: Live, event: SupervisorEvent): void {
  if (live.phase === 'stopped') {
    replyStopped(event);
    return;
  }
  if (live.busy && deferWhileBusy(live, event)) return;
  switch (event.type) {
    case 'supervisor.child.exit':
      onChildExit(live, event);
      break;
    case 'supervisor.child.restart':
      onRestartDue(live, event.id);
      break;
    case 'supervisor.child.shutdownTimeout':
      // Only meaningful while busy (handled in deferWhileBusy); a late timer is dropped.
      break;
    case 'supervisor.init.failed':
      beginExit(live, shutdownExit({ failedToStartChild: event.id, cause: event.cause }));
      break;
    case SHUTDOWN_EVENT:
      beginExit(live, event.reason ?? shutdownExit());
      break;
    case 'supervisor.startChild':
      onStartChild(live, event);
      break;
    case 'supervisor.terminateChild':
      onTerminateChild(live, event);
      break;
    case 'supervisor.restartChild':
      onRestartChild(live, event);
      break;
    case 'supervisor.deleteChild':
      onDeleteChild(live, event);
      break;
    default:
      // XState's `xstate.error.actor.*` / `xstate.done.actor.*` duplicates of what the
      // subscriptions report, and anything else: ignored.
      break;
  }
  drainDeferred(live);
}

/** While children are being stopped, decide what an event means now or later. */
function deferWhileBusy(live: Live, event: SupervisorEvent): boolean {
  const busy = live.busy as Termination;
  switch (event.type) {
    case 'supervisor.child.exit': {
      const entry = live.table.get(event.id);
      if (!entry || entry.incarnation !== event.incarnation || !entry.ref) return true; // stale
      if (busy.current.has(event.id)) {
        finishTermination(live, entry, event.reason);
        advance(live);
        return true;
      }
      const queued = busy.queue.indexOf(event.id);
      if (queued >= 0) {
        // It died on its own before its turn: nothing left to stop.
        busy.queue.splice(queued, 1);
        finishTermination(live, entry, event.reason);
        return true;
      }
      live.deferred.push(event);
      return true;
    }
    case 'supervisor.child.shutdownTimeout': {
      const entry = live.table.get(event.id);
      if (entry && entry.incarnation === event.incarnation && entry.ref && busy.current.has(event.id)) {
        killEntry(live, entry);
        finishTermination(live, entry, killedExit);
        advance(live);
      }
      return true;
    }
    case SHUTDOWN_EVENT:
    case 'supervisor.init.failed': {
      if (busy.then.kind === 'exit') return true; // already shutting down
      beginExit(live, event.type === SHUTDOWN_EVENT
        ? event.reason ?? shutdownExit()
        : shutdownExit({ failedToStartChild: event.id, cause: event.cause }));
      return true;
    }
    default:
      live.deferred.push(event);
      return true;
  }
}

function drainDeferred(live: Live): void {
  while (!live.busy && live.phase !== 'stopped' && live.deferred.length > 0) {
    const next = live.deferred.shift() as SupervisorEvent;
    handle(live, next);
  }
}

function replyStopped(event: SupervisorEvent): void {
  if ('reply' in event && typeof event.reply === 'function') {
    (event.reply as (result: typeof notRunning) => void)(notRunning);
  }
}

// ---------------------------------------------------------------------------------------
// Exits and restarts

function onChildExit(live: Live, event: Extract<SupervisorInternalEvent, { type: 'supervisor.child.exit' }>): void {
  const entry = live.table.get(event.id);
  // A late exit from an incarnation that was already replaced or stopped.
  if (!entry || entry.incarnation !== event.incarnation || !entry.ref) return;
  const { spec } = entry;
  // A nested supervisor that gave up during its own init never came up: in OTP its
  // start_link fails. It surfaces here when its children stopped asynchronously; it is an
  // abnormal exit, never the normal `shutdown` it looks like.
  const reason = isFailedInit(event.reason) ? errorExit(new SupervisorStartError(spec.id, event.reason)) : event.reason;
  const uptime = live.now() - entry.startedAt;
  releaseEntry(live, entry);
  entry.lastExit = reason;

  if (shouldRestart(spec.restart, reason)) {
    if (spec.backoff) {
      const attempt = backoffAttempt(spec.backoff, entry.pendingAttempt, uptime);
      const delay = restartDelay(live, backoffDelay(spec.backoff, attempt, live.config.random()));
      entry.pendingAttempt = attempt + 1;
      emit(live, { type: 'child.exited', childId: spec.id, reason, action: 'restart_delayed', uptime });
      entry.status = 'restarting';
      // The strategy's other victims stop now, not after the delay: under rest_for_one
      // the followers depend on the child that is down.
      const others = groupOf(live, spec.id).filter((other) => other !== spec.id);
      beginTermination(live, runningInStopOrder(live, others), false, { kind: 'delay', id: spec.id, delay, attempt, group: others });
      return;
    }
    // Decide intensity first, so that a refused restart is never reported as one.
    const allowed = admitRestart(live);
    emit(live, { type: 'child.exited', childId: spec.id, reason, action: allowed ? 'restart' : 'give_up', uptime });
    entry.status = 'restarting';
    if (allowed) performRestart(live, spec.id);
    else refuseRestart(live, spec.id);
    return;
  }

  const remove = spec.restart === 'temporary' || live.config.dynamic;
  emit(live, { type: 'child.exited', childId: spec.id, reason, action: remove ? 'remove' : 'keep', uptime });
  if (remove) live.table.delete(spec.id);
  else entry.status = 'terminated';
  if (spec.significant) checkAutoShutdown(live);
}

function checkAutoShutdown(live: Live): void {
  let othersActive = 0;
  for (const entry of live.table.values()) {
    if (entry.spec.significant && entry.status !== 'terminated') othersActive++;
  }
  if (autoShutdownTriggered(live.config.flags.autoShutdown, othersActive)) {
    beginExit(live, shutdownExit());
  }
}

/** A backoff delay, capped so that a crash loop still reaches this supervisor's intensity. */
function restartDelay(live: Live, delay: number): number {
  return delayWithinIntensity(delay, live.config.flags.intensity, live.config.flags.period);
}

/** Puts a child in `restarting` and restarts it after `delay` ms of the supervisor's clock. */
function scheduleRestart(live: Live, entry: ChildEntry, delay: number, attempt: number): void {
  entry.status = 'restarting';
  entry.ref = undefined;
  const timerId = `restart:${entry.spec.id}:${entry.incarnation}:${attempt}`;
  entry.restartTimer = timerId;
  emit(live, { type: 'child.restarting', childId: entry.spec.id, delay, attempt });
  const self = live.scope.self;
  const due: SupervisorInternalEvent = { type: 'supervisor.child.restart', id: entry.spec.id };
  live.scope.system.scheduler.schedule(self, self, due, delay, timerId);
}

function onRestartDue(live: Live, id: string): void {
  const entry = live.table.get(id);
  if (!entry || entry.status !== 'restarting') return;
  entry.restartTimer = undefined;
  restart(live, id);
}

/**
 * Restarts child `id` under the strategy, after counting the restart against intensity
 * (once, however many children the strategy restarts). Over intensity: shut down.
 */
function restart(live: Live, id: string): void {
  if (admitRestart(live)) performRestart(live, id);
  else refuseRestart(live, id);
}

/** Counts a restart in the intensity window (OTP's `add_restart/1`); `false` when it is one too many. */
function admitRestart(live: Live): boolean {
  const { intensity, period } = live.config.flags;
  live.countedAt = live.now();
  const verdict = addRestart(live.window, live.countedAt, intensity, period);
  live.window = verdict.window;
  return verdict.allowed;
}

function refuseRestart(live: Live, id: string): void {
  const { intensity, period } = live.config.flags;
  emit(live, { type: 'intensity.exceeded', intensity, period, childId: id });
  const entry = live.table.get(id);
  if (entry && !entry.ref) entry.status = 'terminated';
  beginExit(live, shutdownExit('reached_max_restart_intensity'));
}

function performRestart(live: Live, id: string): void {
  live.totalRestarts += 1;
  const group = groupOf(live, id);
  const others = group.filter((other) => other !== id);
  live.phase = 'restarting';
  beginTermination(live, runningInStopOrder(live, others), false, { kind: 'restart', failedId: id, group });
}

/** Those of `ids` (in start order) that are running, in the order they are stopped: reversed. */
function runningInStopOrder(live: Live, ids: readonly string[]): string[] {
  return ids.filter((id) => live.table.get(id)?.ref).reverse();
}

/** The children restarted with `id` under the supervisor's strategy, in start order. */
function groupOf(live: Live, id: string): string[] {
  const { strategy } = live.config.flags;
  return strategy === 'one_for_one' ? [id] : restartGroup(strategy, [...live.table.keys()], id);
}

/** Starts the group of a restart in order; a child that fails is retried (and counts again). */
function startGroup(live: Live, failedId: string, group: readonly string[]): void {
  for (let index = 0; index < group.length; index++) {
    const id = group[index] as string;
    const entry = live.table.get(id);
    if (!entry) continue;
    if (id !== failedId && entry.spec.restart === 'temporary') {
      // OTP: a temporary bystander is removed, not restarted.
      live.table.delete(id);
      continue;
    }
    if (entry.ref) continue;
    if (entry.restartTimer) cancelRestartTimer(live, entry);
    entry.restarts += 1;
    const outcome = startEntry(live, entry);
    if (outcome.ok) {
      emit(live, { type: 'child.restarted', childId: id, restarts: entry.restarts, countedAt: live.countedAt });
      continue;
    }
    // OTP's try_again_restart: mark it (and the rest of the group) restarting and try
    // again through the mailbox, so that other events are served in between.
    entry.status = 'restarting';
    for (const rest of group.slice(index + 1)) {
      const other = live.table.get(rest);
      if (other && !other.ref) other.status = 'restarting';
    }
    const delay = entry.spec.backoff
      ? restartDelay(live, backoffDelay(entry.spec.backoff, entry.pendingAttempt++, live.config.random()))
      : 0;
    if (delay > 0) scheduleRestart(live, entry, delay, entry.pendingAttempt - 1);
    else live.scope.self.send({ type: 'supervisor.child.restart', id });
    return;
  }
}

// ---------------------------------------------------------------------------------------
// Stopping children

/** Ids of the children with a live actor, in reverse start order. */
function runningInReverse(live: Live): string[] {
  const ids: string[] = [];
  for (const [id, entry] of live.table) if (entry.ref) ids.push(id);
  return ids.reverse();
}

function beginExit(live: Live, reason: ExitReason): void {
  live.phase = 'shuttingDown';
  for (const entry of live.table.values()) {
    if (entry.restartTimer) cancelRestartTimer(live, entry);
    if (!entry.ref) entry.status = 'terminated';
  }
  live.exit = reason;
  // A shutdown can arrive while children are being stopped for a restart or a
  // terminateChild: those keep going (with their own timers), the rest join them, and the
  // interrupted work is dropped.
  const inFlight = live.busy;
  if (inFlight) abandonContinuation(inFlight.then);
  const current = inFlight?.current ?? new Set<string>();
  live.busy = {
    queue: runningInReverse(live).filter((id) => !current.has(id)),
    // A dynamic supervisor stops its children concurrently (OTP's simple_one_for_one and
    // Elixir's DynamicSupervisor); a static one one by one in reverse start order.
    concurrent: live.config.dynamic,
    current,
    then: { kind: 'exit', reason },
  };
  advance(live);
}

function beginTermination(live: Live, ids: string[], concurrent: boolean, then: Continuation): void {
  live.busy = { queue: ids, concurrent, current: new Set(), then };
  advance(live);
}

/** Moves the current termination on; runs its continuation when every child is stopped. */
function advance(live: Live): void {
  const busy = live.busy;
  if (!busy) return;
  while (busy.queue.length > 0 && (busy.concurrent || busy.current.size === 0)) {
    const id = busy.queue.shift() as string;
    const entry = live.table.get(id);
    if (!entry?.ref) continue;
    if (requestTermination(live, entry)) busy.current.add(id);
  }
  if (busy.queue.length > 0 || busy.current.size > 0) return;
  live.busy = undefined;
  runContinuation(live, busy.then);
}

/**
 * Stops one child with its shutdown policy. Returns `true` when the child was asked to
 * shut down and the supervisor must wait for its exit (or its timeout).
 */
function requestTermination(live: Live, entry: ChildEntry): boolean {
  const ref = entry.ref as AnyActorRef;
  const { shutdown } = entry.spec;
  if (shutdown === 'brutal_kill' || !acceptsGracefulShutdown(ref, entry.spec)) {
    killEntry(live, entry);
    finishTermination(live, entry, shutdown === 'brutal_kill' ? killedExit : shutdownExit());
    return false;
  }
  entry.status = 'terminating';
  if (typeof shutdown === 'number') {
    const self = live.scope.self;
    const timeout: SupervisorInternalEvent = { type: 'supervisor.child.shutdownTimeout', id: entry.spec.id, incarnation: entry.incarnation };
    live.scope.system.scheduler.schedule(
      self,
      self,
      timeout,
      shutdown,
      `shutdown:${entry.spec.id}:${entry.incarnation}`,
    );
  }
  ref.send({ type: SHUTDOWN_EVENT });
  return true;
}

/** Records that a child being stopped is gone (on its own, asked, or killed). */
function finishTermination(live: Live, entry: ChildEntry, reason: ExitReason): void {
  const uptime = live.now() - entry.startedAt;
  live.scope.system.scheduler.cancel(live.scope.self, `shutdown:${entry.spec.id}:${entry.incarnation}`);
  if (entry.ref) releaseEntry(live, entry);
  const then = live.busy?.then;
  live.busy?.current.delete(entry.spec.id);
  entry.lastExit = reason;
  // A sibling stopped for a group restart is waiting for it, not done.
  const waits = (then?.kind === 'restart' || then?.kind === 'delay') && entry.spec.restart !== 'temporary';
  entry.status = waits ? 'restarting' : 'terminated';
  emit(live, { type: 'child.exited', childId: entry.spec.id, reason, action: 'terminated', uptime });
}

/** Stops a child's actor at once (XState `stopChild`); its cleanup runs synchronously. */
function killEntry(live: Live, entry: ChildEntry): void {
  const ref = entry.ref;
  if (!ref) return;
  releaseEntry(live, entry);
  live.scope.stopChild(ref);
}

function releaseEntry(live: Live, entry: ChildEntry): void {
  if (entry.ref) live.active -= 1;
  entry.subscription?.unsubscribe();
  entry.relay?.unsubscribe();
  entry.subscription = undefined;
  entry.relay = undefined;
  entry.ref = undefined;
}

function cancelRestartTimer(live: Live, entry: ChildEntry): void {
  if (entry.restartTimer) live.scope.system.scheduler.cancel(live.scope.self, entry.restartTimer);
  entry.restartTimer = undefined;
}

/** Synchronous stop of everything (XState `stop()` or an internal failure): reverse order, no waiting. */
function stopAllNow(live: Live): void {
  for (const id of runningInReverse(live)) {
    const entry = live.table.get(id) as ChildEntry;
    killEntry(live, entry);
    entry.status = 'terminated';
  }
  for (const entry of live.table.values()) cancelRestartTimer(live, entry);
  live.busy = undefined;
  failDeferred(live);
}

function runContinuation(live: Live, then: Continuation): void {
  switch (then.kind) {
    case 'restart':
      live.phase = 'running';
      startGroup(live, then.failedId, then.group);
      break;
    case 'delay': {
      live.phase = 'running';
      const entry = live.table.get(then.id);
      if (!entry || entry.ref) break;
      for (const other of then.group) {
        const sibling = live.table.get(other);
        if (sibling && !sibling.ref && sibling.spec.restart !== 'temporary') sibling.status = 'restarting';
      }
      scheduleRestart(live, entry, then.delay, then.attempt);
      break;
    }
    case 'terminateOne': {
      const entry = live.table.get(then.id);
      if (entry && (live.config.dynamic || entry.spec.restart === 'temporary')) live.table.delete(then.id);
      live.phase = 'running';
      then.reply?.({ ok: true });
      break;
    }
    case 'exit':
      for (const [id, entry] of live.table) {
        if (entry.spec.restart === 'temporary' || live.config.dynamic) live.table.delete(id);
        else entry.status = 'terminated';
      }
      live.phase = 'stopped';
      failDeferred(live);
      emit(live, { type: 'supervisor.shutdown', reason: then.reason });
      break;
  }
}

function abandonContinuation(then: Continuation): void {
  if (then.kind === 'terminateOne') then.reply?.({ ok: true });
}

function failDeferred(live: Live): void {
  const pending = live.deferred;
  live.deferred = [];
  for (const event of pending) replyStopped(event);
}

// ---------------------------------------------------------------------------------------
// Commands (OTP's start_child, terminate_child, restart_child, delete_child)

function onStartChild(live: Live, event: Extract<SupervisorCommand, { type: 'supervisor.startChild' }>): void {
  const reply = event.reply ?? (() => {});
  let spec: ChildSpec | undefined = event.spec;
  if (!spec) {
    if (!live.config.template) {
      reply({ ok: false, reason: 'no_template' });
      return;
    }
    try {
      spec = live.config.template(event.args);
    } catch (error) {
      reply({ ok: false, reason: { templateFailed: error } });
      return;
    }
  }
  if (live.config.dynamic && typeof spec === 'object' && spec !== null && (spec as { id?: unknown }).id === undefined) {
    spec = { ...spec, id: `${live.config.name}-${live.nextChildNumber++}` };
  }
  let normalized: NormalizedChildSpec;
  try {
    normalized = normalizeChildSpec(spec, live.config.flags.autoShutdown);
  } catch (error) {
    if (error instanceof SupervisorSpecError) {
      reply({ ok: false, reason: { invalidSpec: error } });
      return;
    }
    throw error;
  }
  const existing = live.table.get(normalized.id);
  if (existing) {
    reply({ ok: false, reason: existing.ref ? 'already_started' : 'already_present' });
    return;
  }
  // Restarting children count too, so that a crash never lets more than maxChildren run
  // (the quirk reported in elixir-lang/elixir#7655).
  if (live.table.size >= live.config.maxChildren) {
    reply({ ok: false, reason: 'max_children' });
    return;
  }
  const entry = newEntry(normalized);
  live.table.set(normalized.id, entry);
  const outcome = startEntry(live, entry);
  if (!outcome.ok) {
    live.table.delete(normalized.id);
    reply({ ok: false, reason: { startFailed: outcome.error } });
    return;
  }
  reply({ ok: true, id: normalized.id, ref: outcome.ref });
}

function onTerminateChild(live: Live, event: Extract<SupervisorCommand, { type: 'supervisor.terminateChild' }>): void {
  const entry = live.table.get(event.id);
  if (!entry) {
    event.reply?.({ ok: false, reason: 'not_found' });
    return;
  }
  cancelRestartTimer(live, entry);
  if (!entry.ref) {
    if (live.config.dynamic || entry.spec.restart === 'temporary') live.table.delete(event.id);
    else entry.status = 'terminated';
    event.reply?.({ ok: true });
    return;
  }
  beginTermination(live, [event.id], false, { kind: 'terminateOne', id: event.id, reply: event.reply });
}

function onRestartChild(live: Live, event: Extract<SupervisorCommand, { type: 'supervisor.restartChild' }>): void {
  const reply = event.reply ?? (() => {});
  if (live.config.dynamic) return reply({ ok: false, reason: 'dynamic' });
  const entry = live.table.get(event.id);
  if (!entry) return reply({ ok: false, reason: 'not_found' });
  if (entry.ref) return reply({ ok: false, reason: 'running' });
  if (entry.status === 'restarting') return reply({ ok: false, reason: 'restarting' });
  const outcome = startEntry(live, entry);
  if (!outcome.ok) return reply({ ok: false, reason: { startFailed: outcome.error } });
  reply({ ok: true, ref: outcome.ref });
}

function onDeleteChild(live: Live, event: Extract<SupervisorCommand, { type: 'supervisor.deleteChild' }>): void {
  const reply = event.reply ?? (() => {});
  if (live.config.dynamic) return reply({ ok: false, reason: 'dynamic' });
  const entry = live.table.get(event.id);
  if (!entry) return reply({ ok: false, reason: 'not_found' });
  if (entry.ref) return reply({ ok: false, reason: 'running' });
  if (entry.status === 'restarting') return reply({ ok: false, reason: 'restarting' });
  live.table.delete(event.id);
  reply({ ok: true });
}

/** The action a supervisor takes on exit, exported for documentation tables and tests. */
export type { ExitAction };
