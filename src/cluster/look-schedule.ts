/**
 * When the takeover loop (takeover.ts) looks next for lost hosts' sessions: a pure function of
 * what its last look read, so the decision is tested as a matrix and the timer stays at the edge.
 *
 * A look finds a lost host's sessions once its lease ran out and the outage guards let it take
 * them; looking only every `lease / 2` added up to half a lease to every failover. So the next
 * look comes just after the first moment something can be taken: the soonest lease of another
 * member that owns open sessions, the database up for a whole lease (after a restart), or this
 * loop's own looks answered for a whole lease (after it started, or after an outage); never
 * later than the tick, the fallback that also catches what the database did not say (a lease
 * ended early by a hand-over whose notification was lost).
 */

/** The margin after an expected moment: the look lands after it (timers, the round trip, the database's clock). */
export const lookMargin = 25;

/** What {@link nextLookIn} decides from, in ms from the end of the last look. */
export interface LookSchedule {
  /** The fallback period (the takeover's `lease / 2`): the next look never comes later. */
  readonly interval: number;
  /** Added to each expected moment (default {@link lookMargin}). */
  readonly margin?: number;
  /** The soonest lease of another advertised, not-gone host owning open sessions that has not run out yet (in the database's clock); `undefined`: none. */
  readonly leaseEndsIn?: number;
  /** Until the database has been up for a whole lease (after a restart); `undefined` or ≤ 0: it has. */
  readonly databaseSettlesIn?: number;
  /** Until this loop's looks have found the database for a whole lease (its own outage guard); `undefined` or ≤ 0: they have, or the last look failed. */
  readonly reachableIn?: number;
}

/**
 * The ms until the next look: the first of the expected moments still ahead, plus the margin,
 * at most `interval`. A lease already run out is not a moment ahead (its sessions were taken,
 * or wait for a guard: those moments are ahead), so the loop never spins on it.
 */
export function nextLookIn(schedule: LookSchedule): number {
  const margin = schedule.margin ?? lookMargin;
  let next = schedule.interval;
  if (schedule.leaseEndsIn !== undefined && schedule.leaseEndsIn >= 0) next = Math.min(next, schedule.leaseEndsIn + margin);
  for (const until of [schedule.databaseSettlesIn, schedule.reachableIn]) if (until !== undefined && until > 0) next = Math.min(next, until + margin);
  return Math.max(0, next);
}
