import type { ChildSpec } from './child-spec.js';
import { normalizeFlags } from './supervisor-flags.js';
import { SupervisorSpecError } from './spec-error.js';
import { supervisorLogic, type SupervisorLogic } from './supervisor.js';

/**
 * Options of {@link createDynamicSupervisor}: Elixir's `DynamicSupervisor` (and OTP's
 * `simple_one_for_one`). The strategy is always `one_for_one`.
 */
export interface DynamicSupervisorOptions<TArgs = unknown> {
  /** A name for logs and introspection, and the prefix of generated child ids. */
  readonly name?: string;
  /** Default 3, as Elixir's `max_restarts`. */
  readonly intensity?: number;
  /** Milliseconds, default 5000. */
  readonly period?: number;
  /** At most this many children (running or waiting to restart). Default unlimited. */
  readonly maxChildren?: number;
  /**
   * The `simple_one_for_one` shape: builds a child spec from the arguments given to
   * `startTemplateChild`. Without an `id` in the result, one is generated.
   */
  readonly template?: (args: TArgs) => Omit<ChildSpec, 'id'> & { readonly id?: string };
  /** Random numbers in [0, 1) for backoff jitter. */
  readonly random?: () => number;
}

/**
 * Creates a dynamic supervisor: it starts with no children; children are added with
 * `startChild` (or `startTemplateChild`) and removed with `terminateChild`. A child that
 * exits and is not restarted is removed. On shutdown, children are stopped concurrently,
 * each within its own `shutdown`.
 *
 * @example
 * ```ts
 * const sessions = createActor(createDynamicSupervisor({ intensity: 5, period: 10_000 })).start();
 * const started = await startChild(sessions, { id: 'session-1', start: { logic: sessionLogic }, restart: 'transient' });
 * if (started.ok) console.error(whichChildren(sessions).map((child) => child.id));
 * await terminateChild(sessions, 'session-1');
 * ```
 *
 * @throws SupervisorSpecError when an option is invalid.
 */
export function createDynamicSupervisor<TArgs = unknown>(options: DynamicSupervisorOptions<TArgs> = {}): SupervisorLogic<unknown> {
  const flags = normalizeFlags({
    strategy: 'one_for_one',
    ...(options.intensity === undefined ? {} : { intensity: options.intensity }),
    ...(options.period === undefined ? {} : { period: options.period }),
  });
  const maxChildren = options.maxChildren ?? Infinity;
  if (maxChildren !== Infinity && (!Number.isInteger(maxChildren) || maxChildren < 0)) {
    throw new SupervisorSpecError({ field: 'maxChildren', value: maxChildren, expected: 'a non-negative integer or Infinity' });
  }
  if (options.template !== undefined && typeof options.template !== 'function') {
    throw new SupervisorSpecError({ field: 'template', value: options.template, expected: 'a function from arguments to a child spec' });
  }
  const template = options.template;
  return supervisorLogic<unknown>({
    name: options.name ?? 'dynamic-supervisor',
    flags,
    dynamic: true,
    maxChildren,
    children: () => [],
    template: template ? (args: unknown) => template(args as TArgs) as ChildSpec : undefined,
    random: options.random ?? Math.random,
  });
}
