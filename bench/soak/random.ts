/**
 * The soak's randomness, seeded so that a run's schedule (prompt gaps, cancels, which session
 * and which fault) can be replayed with `--seed`. The agent's own timing still varies.
 */

/** A small seeded generator (mulberry32), the one `warden chaos` uses. */
export { seededRandom as seeded } from '../../src/journal/seeded-random.js';

/** An exponential gap of mean `meanMs`: gaps like these make a Poisson process. */
export function exponential(next: () => number, meanMs: number): number {
  return -Math.log(1 - next()) * meanMs;
}

/** One of `items`, uniformly. */
export function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

/**
 * A shuffled bag: every item once, in a seeded order, then a new shuffle. Used for fault
 * kinds so that even a short run injects each kind (independent draws could miss one).
 */
export function bag<T>(next: () => number, items: readonly T[]): () => T {
  let left: T[] = [];
  return () => {
    if (left.length === 0) {
      left = [...items];
      for (let index = left.length - 1; index > 0; index--) {
        const other = Math.floor(next() * (index + 1));
        [left[index], left[other]] = [left[other] as T, left[index] as T];
      }
    }
    return left.pop() as T;
  };
}
