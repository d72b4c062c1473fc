/**
 * How long the chaos walk runs: the quick profile in `npm test` (about a minute), the long
 * one with `npm run chaos -- --long` (thousands of faults), and the replay of a failure.
 * Set through the environment by spec/chaos/run.mjs.
 */
export interface ChaosProfile {
  readonly name: 'quick' | 'long';
  readonly numRuns: number;
  readonly maxCommands: number;
  readonly seed: number | undefined;
  readonly path: string | undefined;
  readonly replayPath: string | undefined;
  /** Shrink a failure to a smaller walk (slow with real processes; off unless asked). */
  readonly shrink: boolean;
  /** Stop starting new walks after this many ms (the quick profile in CI on a slow machine); none when walks were asked for. */
  readonly timeLimitMs: number | undefined;
}

function numberFrom(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed)) throw new Error(`expected an integer, got "${value}"`);
  return parsed;
}

export function chaosProfile(env: NodeJS.ProcessEnv = process.env): ChaosProfile {
  const long = env.CHAOS_PROFILE === 'long';
  return {
    name: long ? 'long' : 'quick',
    numRuns: numberFrom(env.CHAOS_RUNS) ?? (long ? 300 : 5),
    maxCommands: numberFrom(env.CHAOS_COMMANDS) ?? (long ? 60 : 16),
    seed: numberFrom(env.CHAOS_SEED),
    path: env.CHAOS_PATH || undefined,
    replayPath: env.CHAOS_REPLAY_PATH || undefined,
    shrink: env.CHAOS_SHRINK === '1',
    timeLimitMs: long || env.CHAOS_RUNS ? undefined : 150_000,
  };
}
