import { SupervisorSpecError } from './spec-error.js';

/**
 * Which children restart when one of them must (OTP's strategies):
 * - `one_for_one`: only that child;
 * - `one_for_all`: every child: the others are stopped in reverse start order, then all
 *   start again in order;
 * - `rest_for_one`: that child and the children started after it.
 */
export type Strategy = 'one_for_one' | 'one_for_all' | 'rest_for_one';

/**
 * When the exit of a `significant` child shuts the supervisor down (OTP 24's
 * `auto_shutdown`): `never`, `any_significant` (the first one that exits and is not
 * restarted) or `all_significant` (when the last active one has exited).
 */
export type AutoShutdown = 'never' | 'any_significant' | 'all_significant';

/** Supervisor flags: the strategy and its restart intensity. */
export interface SupervisorFlags {
  /** Default `one_for_one`. */
  readonly strategy?: Strategy;
  /**
   * At most this many restarts in any `period` (counted across all children, one group
   * restart counting once). One more and the supervisor stops its children and exits with
   * reason `shutdown`. Default 3 (Elixir's default; Erlang's is 1).
   */
  readonly intensity?: number;
  /** The window of `intensity`, in milliseconds. Default 5000. */
  readonly period?: number;
  /** Default `never`. */
  readonly autoShutdown?: AutoShutdown;
}

/** Supervisor flags with defaults filled in. */
export interface NormalizedFlags {
  readonly strategy: Strategy;
  readonly intensity: number;
  readonly period: number;
  readonly autoShutdown: AutoShutdown;
}

/** Defaults declared once. */
export const defaultFlags: NormalizedFlags = Object.freeze({
  strategy: 'one_for_one',
  intensity: 3,
  period: 5000,
  autoShutdown: 'never',
});

const strategies: readonly string[] = ['one_for_one', 'one_for_all', 'rest_for_one'];
const autoShutdowns: readonly string[] = ['never', 'any_significant', 'all_significant'];

/** Checks supervisor flags and fills in defaults; throws {@link SupervisorSpecError}. */
export function normalizeFlags(flags: SupervisorFlags): NormalizedFlags {
  const strategy = flags.strategy ?? defaultFlags.strategy;
  if (!strategies.includes(strategy)) {
    throw new SupervisorSpecError({ field: 'strategy', value: strategy, expected: "'one_for_one', 'one_for_all' or 'rest_for_one'" });
  }
  const intensity = flags.intensity ?? defaultFlags.intensity;
  if (!Number.isInteger(intensity) || intensity < 0) {
    throw new SupervisorSpecError({ field: 'intensity', value: intensity, expected: 'a non-negative integer' });
  }
  const period = flags.period ?? defaultFlags.period;
  if (typeof period !== 'number' || !Number.isFinite(period) || period <= 0) {
    throw new SupervisorSpecError({ field: 'period', value: period, expected: 'a positive number of milliseconds' });
  }
  const autoShutdown = flags.autoShutdown ?? defaultFlags.autoShutdown;
  if (!autoShutdowns.includes(autoShutdown)) {
    throw new SupervisorSpecError({ field: 'autoShutdown', value: autoShutdown, expected: "'never', 'any_significant' or 'all_significant'" });
  }
  return { strategy, intensity, period, autoShutdown };
}
