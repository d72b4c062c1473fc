import { describeExit, type ExitReason } from './exit-reason.js';

/**
 * A nested supervisor exited during its own init because one of its children could not
 * start (its exit reason is `{ shutdown, { failedToStartChild, cause } }`). Its parent
 * treats that as an abnormal exit of the child, as OTP treats a failed `start_link`.
 */
export class SupervisorStartError extends Error {
  override readonly name = 'SupervisorStartError';
  /** The child (a supervisor) that failed to come up. */
  readonly childId: string;
  /** Its exit reason, with the child of its own that could not start. */
  readonly exit: ExitReason;

  constructor(childId: string, exit: ExitReason) {
    super(`Supervisor "${childId}" failed to start: ${describeExit(exit)}`);
    this.childId = childId;
    this.exit = exit;
  }
}
