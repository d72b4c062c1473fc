import type { AnyActorLogic } from 'xstate';
import type { ExitReason } from './exit-reason.js';
import { SupervisorSpecError } from './spec-error.js';
import { normalizeBackoff, type BackoffOptions, type NormalizedBackoff } from './backoff.js';

/**
 * When a child is restarted after it exits (OTP's restart types):
 * - `permanent`: always;
 * - `transient`: only after an abnormal exit (not `normal`, `shutdown` or `{shutdown, _}`);
 * - `temporary`: never; the child is removed from the supervisor when it exits.
 */
export type RestartType = 'permanent' | 'transient' | 'temporary';

/**
 * How a child is stopped by its supervisor:
 * - `brutal_kill`: stopped at once, without asking;
 * - a number of milliseconds: asked to shut down, stopped at once if it has not finished
 *   in that time;
 * - `infinity`: asked to shut down and waited for, however long it takes (the default,
 *   and the only safe value, for supervisors).
 */
export type Shutdown = 'brutal_kill' | 'infinity' | number;

/** Whether a child is a plain worker or a supervisor of its own children. */
export type ChildType = 'worker' | 'supervisor';

/** What the supervisor knows when it (re)starts a child; passed to `start.inputFor`. */
export interface ChildStartContext {
  /** The child's id. */
  readonly id: string;
  /** How many times this child has been restarted so far (0 on the first start). */
  readonly restarts: number;
  /** Why the previous incarnation exited, on a restart. */
  readonly lastExit: ExitReason | undefined;
}

/** How to start a child: an XState actor logic and its input. */
export interface ChildStart<TLogic extends AnyActorLogic = AnyActorLogic> {
  /** The actor logic to run: a machine, `fromPromise`, `fromCallback`, a supervisor, ... */
  readonly logic: TLogic;
  /** The input given to every incarnation. */
  readonly input?: unknown;
  /**
   * Computes the input of each incarnation from the restart context, for children whose
   * restart differs from their first start (say, a CLI resumed with `--resume <id>`).
   * Takes precedence over `input`.
   */
  readonly inputFor?: (context: ChildStartContext) => unknown;
}

/**
 * A child specification, as in OTP's `child_spec()`: what to start, when to restart it and
 * how to stop it. Only `id` and `start` are required.
 */
export interface ChildSpec<TLogic extends AnyActorLogic = AnyActorLogic> {
  /** Unique among the supervisor's children; also the XState actor id of the child. */
  readonly id: string;
  /** The logic and input to start. */
  readonly start: ChildStart<TLogic>;
  /** Default `permanent`. */
  readonly restart?: RestartType;
  /** Default 5000 ms for workers, `infinity` for supervisors. */
  readonly shutdown?: Shutdown;
  /** Default `worker`; supervisors created with this package are detected automatically. */
  readonly type?: ChildType;
  /**
   * Whether the child's exit can shut its supervisor down, under the supervisor's
   * `autoShutdown`. Only for `transient` and `temporary` children. Default `false`.
   */
  readonly significant?: boolean;
  /** Delay restarts of this child with exponential backoff (beyond OTP). */
  readonly backoff?: BackoffOptions;
  /** Register every incarnation in the XState system under this id (`system.get`). */
  readonly systemId?: string;
  /** A name for the logic in introspection; defaults to the machine id. */
  readonly name?: string;
  /**
   * Exits whose restart is not counted towards the supervisor's intensity (beyond OTP): a
   * child that ended on purpose to be started afresh, a planned recycle, is restarted like
   * any other but, as OTP's `terminate_child` + `restart_child`, without adding to the window.
   * Default: every restart counts.
   */
  readonly uncounted?: (reason: ExitReason) => boolean;
}

/** A child spec with every default filled in; what the supervisor works with. */
export interface NormalizedChildSpec {
  readonly id: string;
  readonly start: ChildStart;
  readonly restart: RestartType;
  readonly shutdown: Shutdown;
  readonly type: ChildType;
  readonly significant: boolean;
  readonly backoff: NormalizedBackoff | undefined;
  readonly systemId: string | undefined;
  readonly name: string;
  readonly uncounted: ((reason: ExitReason) => boolean) | undefined;
}

/** Defaults declared once, as OTP does. */
export const childSpecDefaults = Object.freeze({
  restart: 'permanent' as RestartType,
  workerShutdown: 5000,
  supervisorShutdown: 'infinity' as Shutdown,
  type: 'worker' as ChildType,
  significant: false,
});

const restartTypes: readonly string[] = ['permanent', 'transient', 'temporary'];
const childTypes: readonly string[] = ['worker', 'supervisor'];

/** Marks actor logic created by this package's supervisor factories. */
export const supervisorLogicMarker: unique symbol = Symbol.for('acp-warden.supervisor');

/** Whether a logic is a supervisor created by this package. */
export function isSupervisorLogic(logic: unknown): boolean {
  return typeof logic === 'object' && logic !== null && supervisorLogicMarker in logic;
}

/**
 * Checks a child spec and fills in its defaults. Throws {@link SupervisorSpecError} naming
 * the field and the value, as OTP's `check_childspec` does.
 *
 * @param autoShutdown - the supervisor's `autoShutdown`, which decides whether
 *   `significant: true` is allowed.
 */
export function normalizeChildSpec(spec: ChildSpec, autoShutdown: string): NormalizedChildSpec {
  if (typeof spec !== 'object' || spec === null) {
    throw new SupervisorSpecError({ field: 'spec', value: spec, expected: 'an object with `id` and `start`' });
  }
  const id = spec.id;
  if (typeof id !== 'string' || id.length === 0) {
    throw new SupervisorSpecError({ field: 'id', value: id, expected: 'a non-empty string' });
  }
  const start = spec.start;
  const logic = (start as Partial<ChildStart> | undefined)?.logic as Partial<AnyActorLogic> | undefined;
  if (typeof logic?.transition !== 'function' || typeof logic.getInitialSnapshot !== 'function') {
    throw new SupervisorSpecError({
      field: 'start.logic',
      value: logic,
      expected: 'XState actor logic (a machine, fromPromise, fromCallback, a supervisor, ...)',
      childId: id,
    });
  }
  if (start.inputFor !== undefined && typeof start.inputFor !== 'function') {
    throw new SupervisorSpecError({ field: 'start.inputFor', value: start.inputFor, expected: 'a function', childId: id });
  }
  const restart = spec.restart ?? childSpecDefaults.restart;
  if (!restartTypes.includes(restart)) {
    throw new SupervisorSpecError({ field: 'restart', value: restart, expected: "'permanent', 'transient' or 'temporary'", childId: id });
  }
  const type = spec.type ?? (isSupervisorLogic(logic) ? 'supervisor' : childSpecDefaults.type);
  if (!childTypes.includes(type)) {
    throw new SupervisorSpecError({ field: 'type', value: type, expected: "'worker' or 'supervisor'", childId: id });
  }
  const shutdown = spec.shutdown ??
    (type === 'supervisor' ? childSpecDefaults.supervisorShutdown : childSpecDefaults.workerShutdown);
  if (!(shutdown === 'brutal_kill' || shutdown === 'infinity' || (Number.isInteger(shutdown) && shutdown >= 0))) {
    throw new SupervisorSpecError({
      field: 'shutdown',
      value: shutdown,
      expected: "'brutal_kill', 'infinity' or a non-negative integer of milliseconds",
      childId: id,
    });
  }
  const significant = spec.significant ?? childSpecDefaults.significant;
  if (typeof significant !== 'boolean') {
    throw new SupervisorSpecError({ field: 'significant', value: significant, expected: 'a boolean', childId: id });
  }
  if (significant && restart === 'permanent') {
    throw new SupervisorSpecError({
      field: 'significant',
      value: significant,
      expected: "`false` for a permanent child",
      childId: id,
      hint: "A permanent child always restarts, so its exit can never shut the supervisor down; use restart: 'transient' or 'temporary'.",
    });
  }
  if (significant && autoShutdown === 'never') {
    throw new SupervisorSpecError({
      field: 'significant',
      value: significant,
      expected: "`false` under autoShutdown: 'never'",
      childId: id,
      hint: "Set the supervisor's autoShutdown to 'any_significant' or 'all_significant'.",
    });
  }
  if (spec.systemId !== undefined && (typeof spec.systemId !== 'string' || spec.systemId.length === 0)) {
    throw new SupervisorSpecError({ field: 'systemId', value: spec.systemId, expected: 'a non-empty string', childId: id });
  }
  const backoff = spec.backoff === undefined ? undefined : normalizeBackoff(spec.backoff, id);
  if (spec.uncounted !== undefined && typeof spec.uncounted !== 'function') {
    throw new SupervisorSpecError({ field: 'uncounted', value: spec.uncounted, expected: 'a function of the exit reason', childId: id });
  }
  return {
    id,
    start,
    restart,
    shutdown,
    type,
    significant,
    backoff,
    systemId: spec.systemId,
    name: spec.name ?? logicName(logic),
    uncounted: spec.uncounted,
  };
}

/** A readable name for a logic: the machine id, a supervisor's name, or the creator's function name. */
export function logicName(logic: unknown): string {
  const candidate = logic as { id?: unknown; config?: { name?: unknown } | ((...args: never[]) => unknown) };
  if (typeof candidate.id === 'string' && candidate.id.length > 0) return candidate.id;
  const config = candidate.config;
  if (typeof config === 'function' && config.name) return config.name;
  if (config && typeof config === 'object' && typeof config.name === 'string') return config.name;
  return 'actor';
}
