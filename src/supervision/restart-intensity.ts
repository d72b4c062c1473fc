/**
 * OTP's restart intensity as a pure sliding window (`add_restart/1` in supervisor.erl).
 *
 * The window holds the times of the restarts done within the last `period`. A new restart
 * is allowed while the window, with it added, holds at most `intensity` entries; the entry
 * that would make it `intensity + 1` is refused and the supervisor must give up.
 */
export interface IntensityVerdict {
  /** `true` when the restart may go ahead. */
  readonly allowed: boolean;
  /** The window to keep (times in ms, newest last), the new restart included. */
  readonly window: readonly number[];
}

/**
 * Records a restart at `now` and says whether it is within intensity. Entries older than
 * `now - period` leave the window; an entry exactly `period` old still counts, as in OTP.
 */
export function addRestart(window: readonly number[], now: number, intensity: number, period: number): IntensityVerdict {
  const threshold = now - period;
  let first = 0;
  while (first < window.length && (window[first] as number) < threshold) first++;
  const next = window.slice(first);
  next.push(now);
  return { allowed: next.length <= intensity, window: next };
}

/** The restarts of `window` that still count at `now`. */
export function restartsInWindow(window: readonly number[], now: number, period: number): number {
  const threshold = now - period;
  return window.filter((time) => time >= threshold).length;
}
