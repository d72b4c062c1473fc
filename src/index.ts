/**
 * acp-warden's public API.
 *
 * Supervision: OTP supervisors as XState v5 actor logic. Create a supervisor with
 * {@link createSupervisor} (static children, one_for_one / one_for_all / rest_for_one) or
 * {@link createDynamicSupervisor} (children added at run time), run it with XState's
 * `createActor`, and manage it with the commands (`startChild`, `terminateChild`,
 * `shutdown`, ...) and introspection (`whichChildren`, `countChildren`, `supervisionTree`).
 * Every supervisor emits the {@link SupervisionEvent} stream; listen with `actor.on('*', ...)`.
 *
 * @packageDocumentation
 */
export {
  // exit reasons
  type ExitReason,
  normalExit,
  shutdownExit,
  errorExit,
  killedExit,
  isExitReason,
  isNormalExit,
  describeExit,
  exitFromOutput,
  serializeExit,
  serializeError,
  // specs and flags
  type ChildSpec,
  type ChildStart,
  type ChildStartContext,
  type ChildType,
  type RestartType,
  type Shutdown,
  type NormalizedChildSpec,
  childSpecDefaults,
  normalizeChildSpec,
  isSupervisorLogic,
  type SupervisorFlags,
  type NormalizedFlags,
  type Strategy,
  type AutoShutdown,
  defaultFlags,
  normalizeFlags,
  type BackoffOptions,
  type NormalizedBackoff,
  backoffDelay,
  backoffAttempt,
  normalizeBackoff,
  SupervisorSpecError,
  // policy
  shouldRestart,
  restartGroup,
  autoShutdownTriggered,
  addRestart,
  restartsInWindow,
  type IntensityVerdict,
  // supervisors
  createSupervisor,
  createDynamicSupervisor,
  type SupervisorOptions,
  type DynamicSupervisorOptions,
  type SupervisorLogic,
  type SupervisorSnapshot,
  type SupervisorContext,
  type SupervisorPhase,
  type ChildStatus,
  gracefulShutdown,
  SHUTDOWN_EVENT,
  type ShutdownEvent,
  // commands
  startChild,
  startTemplateChild,
  terminateChild,
  restartChild,
  deleteChild,
  shutdown,
  type StartChildResult,
  type TerminateChildResult,
  type RestartChildResult,
  type DeleteChildResult,
  type SupervisorCommand,
  type SupervisorEvent,
  // events and introspection
  type SupervisionEvent,
  type SupervisionEventType,
  type SupervisionEventBase,
  type ExitAction,
  whichChildren,
  countChildren,
  supervisionTree,
  type ChildInfo,
  type ChildCounts,
  type SupervisionTreeNode,
} from './supervision/index.js';
