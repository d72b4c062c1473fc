/**
 * Starting one incarnation of a child: the actor is created as a child of the supervisor,
 * started and watched, so that its exit comes back to the supervisor as an event carrying
 * its incarnation number (OTP's `do_start_child` and the link that reports the exit).
 * Whether and when to start is the supervisor's policy (`supervisor.ts`).
 */
import { createActor, type AnyActorLogic, type AnyActorRef, type Snapshot, type Subscription } from 'xstate';
import { isSupervisorLogic } from './child-spec.js';
import { errorExit, exitFromOutput, isExitReason, type ExitReason } from './exit-reason.js';
import type { SupervisionEvent } from './events.js';
import { emit, type ChildEntry, type Live } from './supervisor-state.js';

/** The result of a start: the new child's ref, or why it did not come up. */
export type StartOutcome = { readonly ok: true; readonly ref: AnyActorRef } | { readonly ok: false; readonly error: unknown };

/**
 * Starts one incarnation of a child: creates the actor as a child of the supervisor,
 * starts it and watches it. A child that is in `error` right after start, or a supervisor
 * child that gave up during its own init, failed to start.
 */
export function startEntry(live: Live, entry: ChildEntry): StartOutcome {
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

/** Whether an exit is that of a nested supervisor that gave up during its own init. */
export function isFailedInit(output: unknown): boolean {
  return isExitReason(output) && output.kind === 'shutdown' &&
    typeof output.detail === 'object' && output.detail !== null && 'failedToStartChild' in output.detail;
}

/** The OS pid of a child that exposes one in its snapshot (ports do). */
export function pidOf(ref: AnyActorRef): number | undefined {
  const snapshot = ref.getSnapshot() as { pid?: unknown; context?: { pid?: unknown } } | undefined;
  const pid = snapshot?.pid ?? snapshot?.context?.pid;
  return typeof pid === 'number' ? pid : undefined;
}
