import type { RestartType } from './child-spec.js';
import type { AutoShutdown, Strategy } from './supervisor-flags.js';
import { isNormalExit, type ExitReason } from './exit-reason.js';

/**
 * What a supervisor does with a child that exited (OTP's `do_restart/3`), as a total
 * function of the restart type and the exit reason:
 *
 * | restart   | normal / shutdown | error (abnormal) |
 * |-----------|-------------------|------------------|
 * | permanent | restart           | restart          |
 * | transient | remove*           | restart          |
 * | temporary | remove            | remove           |
 *
 * (*) a transient child that exits normally keeps its spec in a static supervisor, as in
 * OTP, so that `restartChild` can start it again; it is `terminated`, not running.
 * `killed` only happens when the supervisor itself stopped the child and never reaches here.
 */
export function shouldRestart(restart: RestartType, reason: ExitReason): boolean {
  switch (restart) {
    case 'permanent':
      return true;
    case 'transient':
      return !isNormalExit(reason);
    case 'temporary':
      return false;
  }
}

/**
 * The children a strategy restarts when `failedId` must restart, in start order. The ones
 * other than `failedId` are stopped first, in reverse of that order.
 *
 * @param order - ids of the supervisor's children in start order
 */
export function restartGroup(strategy: Strategy, order: readonly string[], failedId: string): string[] {
  switch (strategy) {
    case 'one_for_one':
      return [failedId];
    case 'one_for_all':
      return [...order];
    case 'rest_for_one': {
      const index = order.indexOf(failedId);
      return index < 0 ? [failedId] : order.slice(index);
    }
  }
}

/**
 * Whether a significant child's exit (one that is not restarted) shuts the supervisor
 * down. `othersActive` counts the significant children still running after this exit.
 */
export function autoShutdownTriggered(autoShutdown: AutoShutdown, othersActive: number): boolean {
  switch (autoShutdown) {
    case 'never':
      return false;
    case 'any_significant':
      return true;
    case 'all_significant':
      return othersActive === 0;
  }
}
