/**
 * The supervisor: OTP's `supervisor` behaviour as XState v5 actor logic.
 *
 * This module is the single home of the supervision policy, whole as in OTP's
 * `supervisor.erl`: starting children in order, deciding restarts, applying the strategy,
 * counting intensity, shutting down with auto-shutdown and backoff, and the commands
 * (`startChild`, `terminateChild`, ...). The decisions themselves are the pure functions of
 * `restart-policy.ts`, `restart-intensity.ts` and `backoff.ts`; this module applies them.
 * Its mechanics live beside it: the live state (`supervisor-state.ts`), the actor-logic
 * plumbing and snapshot (`supervisor-logic.ts`), spec validation (`child-spec-list.ts`),
 * starting one child (`child-start.ts`) and stopping children in order with their shutdown
 * policy (`child-stop.ts`).
 *
 * Why custom logic and not a machine with `spawnChild`: XState copies a machine's
 * `children` object on every spawn and stop (O(n) each), stops children in start order and
 * cannot wait for a child to finish. A supervisor must do all three differently, so its
 * children live in an ordered `Map` kept beside the actor (never in the snapshot, as
 * XState keeps live resources in WeakMaps), and the snapshot is a small summary.
 */
import { normalizeChildSpec, type ChildSpec, type NormalizedChildSpec } from './child-spec.js';
import { checkChildSpecs } from './child-spec-list.js';
import { backoffAttempt, backoffDelay, delayWithinIntensity } from './backoff.js';
import { addRestart } from './restart-intensity.js';
import { autoShutdownTriggered, restartGroup, shouldRestart } from './restart-policy.js';
import { normalizeFlags, type SupervisorFlags } from './supervisor-flags.js';
import { errorExit, killedExit, shutdownExit, type ExitReason } from './exit-reason.js';
import {
  SHUTDOWN_EVENT,
  type ExitAction,
  type SupervisorCommand,
  type SupervisorEvent,
  type SupervisorInternalEvent,
} from './events.js';
import { SupervisorSpecError } from './spec-error.js';
import { SupervisorStartError } from './start-error.js';
import { isFailedInit, startEntry } from './child-start.js';
import {
  advanceTermination,
  cancelRestartTimer,
  finishTermination,
  killEntry,
  releaseEntry,
  runningInReverse,
  runningInStopOrder,
} from './child-stop.js';
import { supervisorActorLogic } from './supervisor-logic.js';
import {
  emit,
  failDeferred,
  newEntry,
  replyStopped,
  type ChildEntry,
  type Continuation,
  type Live,
  type SupervisorConfig,
  type SupervisorLogic,
  type Termination,
} from './supervisor-state.js';

export type { ChildStatus, SupervisorContext, SupervisorLogic, SupervisorPhase, SupervisorSnapshot } from './supervisor-state.js';

/** Options of {@link createSupervisor}: flags plus the child specs, in start order. */
export interface SupervisorOptions<TInput = unknown> extends SupervisorFlags {
  /** A name for logs and introspection; the actor id is used in paths. Default `supervisor`. */
  readonly name?: string;
  /** The children, in start order, or a function of the actor's input that returns them. */
  readonly children: readonly ChildSpec[] | ((input: TInput) => readonly ChildSpec[]);
  /** Random numbers in [0, 1) for backoff jitter; injectable for deterministic tests. */
  readonly random?: () => number;
}

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
    checkChildSpecs(children, flags);
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

/** Builds the actor logic for a configuration (static or dynamic), with this module's policy. */
export function supervisorLogic<TInput>(config: SupervisorConfig<TInput>): SupervisorLogic<TInput> {
  return supervisorActorLogic(config, { start: startInitialChildren, handle });
}

/** Starts the initial children in order; the first that fails to start fails the supervisor. */
function startInitialChildren(live: Live): void {
  for (const spec of live.initSpecs) {
    const entry = newEntry(spec);
    live.table.set(spec.id, entry);
    const started = startEntry(live, entry);
    if (!started.ok) {
      // OTP: a child failing to start at init fails the supervisor; the children
      // already started are stopped first (asynchronously, with their shutdown policy).
      live.table.delete(spec.id);
      live.scope.self.send({ type: 'supervisor.init.failed', id: spec.id, cause: started.error });
      return;
    }
  }
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
  entry.uncountedRestart = spec.uncounted?.(reason) === true;

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
    const allowed = entry.uncountedRestart || admitRestart(live);
    entry.uncountedRestart = false;
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
  const entry = live.table.get(id);
  const uncounted = entry?.uncountedRestart === true;
  if (entry) entry.uncountedRestart = false;
  if (uncounted || admitRestart(live)) performRestart(live, id);
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
// Shutting down and the work that follows a stopped batch

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
  const then = advanceTermination(live);
  if (then) runContinuation(live, then);
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
