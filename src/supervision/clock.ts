import type { AnyActorRef } from 'xstate';

/**
 * The current time for intensity windows and backoff, from the actor system's clock.
 *
 * XState's clock only schedules (`setTimeout` / `clearTimeout`); its `SimulatedClock` also
 * has `now()`. When the system clock has `now()`, supervisors read time from it, so that
 * intensity and backoff are tested with `SimulatedClock.increment(ms)` and no real waiting.
 * Otherwise they use the monotonic `performance.now()`: wall-clock jumps must not reset or
 * fill a restart window.
 */
export function resolveNow(self: AnyActorRef): () => number {
  const clock = (self as { clock?: { now?: () => number } }).clock;
  if (clock && typeof clock.now === 'function') return () => (clock.now as () => number).call(clock);
  return () => performance.now();
}
