import type { AnyActorRef } from 'xstate';
import type { ChildSpec } from './child-spec.js';
import type { ExitReason } from './exit-reason.js';
import type { SupervisorSpecError } from './spec-error.js';

/**
 * The event a supervisor sends a child it wants to stop gracefully, and that a user (or a
 * parent) sends a supervisor to shut it down: children in reverse start order, each within
 * its `shutdown`, then the supervisor exits with `reason` (default `shutdown`).
 *
 * A child logic opts in to graceful shutdown by handling this event (a machine with a
 * transition for it, or a logic marked with `gracefulShutdown`); others are stopped at
 * once, as an OTP process that does not trap exits dies on `exit(Pid, shutdown)`.
 */
export const SHUTDOWN_EVENT = 'supervisor.shutdown';

/** The shutdown request; see {@link SHUTDOWN_EVENT}. */
export interface ShutdownEvent {
  readonly type: typeof SHUTDOWN_EVENT;
  readonly reason?: ExitReason;
}

/** Results are tagged values, never bare booleans (OTP's `{ok, Pid} | {error, Reason}`). */
export type StartChildResult =
  | { readonly ok: true; readonly id: string; readonly ref: AnyActorRef }
  | {
      readonly ok: false;
      readonly reason:
        | 'already_present'
        | 'already_started'
        | 'max_children'
        | 'not_running'
        | 'no_template'
        | { readonly invalidSpec: SupervisorSpecError }
        | { readonly templateFailed: unknown }
        | { readonly startFailed: unknown };
    };

/** The answer of every command a supervisor cannot take because it has ended (or is ending). */
export const notRunning = Object.freeze({ ok: false as const, reason: 'not_running' as const });

/** Result of `terminateChild`. */
export type TerminateChildResult = { readonly ok: true } | { readonly ok: false; readonly reason: 'not_found' | 'not_running' };

/** Result of `restartChild` (static supervisors only). */
export type RestartChildResult =
  | { readonly ok: true; readonly ref: AnyActorRef }
  | {
      readonly ok: false;
      readonly reason: 'not_found' | 'running' | 'restarting' | 'dynamic' | 'not_running' | { readonly startFailed: unknown };
    };

/** Result of `deleteChild` (static supervisors only). */
export type DeleteChildResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: 'not_found' | 'running' | 'restarting' | 'dynamic' | 'not_running' };

/** Commands a supervisor accepts; build them with the functions in `commands.ts`. */
export type SupervisorCommand =
  | ShutdownEvent
  | { readonly type: 'supervisor.startChild'; readonly spec?: ChildSpec; readonly args?: unknown; readonly reply?: (result: StartChildResult) => void }
  | { readonly type: 'supervisor.terminateChild'; readonly id: string; readonly reply?: (result: TerminateChildResult) => void }
  | { readonly type: 'supervisor.restartChild'; readonly id: string; readonly reply?: (result: RestartChildResult) => void }
  | { readonly type: 'supervisor.deleteChild'; readonly id: string; readonly reply?: (result: DeleteChildResult) => void };

/** Events a supervisor sends itself (exits seen by its observers, timers, retries). */
export type SupervisorInternalEvent =
  | { readonly type: 'supervisor.child.exit'; readonly id: string; readonly incarnation: number; readonly reason: ExitReason }
  | { readonly type: 'supervisor.child.restart'; readonly id: string }
  | { readonly type: 'supervisor.child.shutdownTimeout'; readonly id: string; readonly incarnation: number }
  | { readonly type: 'supervisor.init.failed'; readonly id: string; readonly cause: unknown };

/** Everything a supervisor actor receives. XState's own `xstate.*` events are ignored. */
export type SupervisorEvent = SupervisorCommand | SupervisorInternalEvent | { readonly type: `xstate.${string}` };

/** Fields every supervision event carries. */
export interface SupervisionEventBase {
  /** Path of the supervisor that reports, from the root: `host/sessions/s1`. */
  readonly supervisor: string;
  /** The supervisor's clock, in ms (the injected clock's `now()` when it has one). */
  readonly at: number;
}

/** What the supervisor does after a child exited. */
export type ExitAction = 'restart' | 'restart_delayed' | 'give_up' | 'keep' | 'remove' | 'terminated';

/**
 * The supervision event stream, emitted by every supervisor and relayed up the tree, so
 * that `root.on('*', ...)` sees the whole hierarchy. Consumed by the inspector and logs.
 */
export type SupervisionEvent =
  | (SupervisionEventBase & {
      readonly type: 'child.started';
      readonly childId: string;
      readonly incarnation: number;
      readonly restarts: number;
      readonly pid: number | undefined;
    })
  | (SupervisionEventBase & {
      readonly type: 'child.exited';
      readonly childId: string;
      readonly reason: ExitReason;
      /**
       * `restart`, `restart_delayed` (backoff), `give_up` (a restart refused by intensity:
       * `intensity.exceeded` follows and the supervisor shuts down; a delayed restart refused
       * when its delay ends reports `intensity.exceeded` alone), `keep` (spec kept, not
       * running), `remove`, `terminated` (stopped by the supervisor).
       */
      readonly action: ExitAction;
      readonly uptime: number;
    })
  | (SupervisionEventBase & { readonly type: 'child.restarting'; readonly childId: string; readonly delay: number; readonly attempt: number })
  | (SupervisionEventBase & {
      readonly type: 'child.restarted';
      readonly childId: string;
      readonly restarts: number;
      /** When this restart was counted against intensity (the supervisor's clock); `at` comes after the child started. */
      readonly countedAt: number;
    })
  | (SupervisionEventBase & { readonly type: 'child.startFailed'; readonly childId: string; readonly error: unknown })
  | (SupervisionEventBase & {
      readonly type: 'intensity.exceeded';
      readonly intensity: number;
      readonly period: number;
      readonly childId: string;
    })
  | (SupervisionEventBase & { readonly type: 'supervisor.shutdown'; readonly reason: ExitReason });

/** The `type` of every supervision event. */
export type SupervisionEventType = SupervisionEvent['type'];
