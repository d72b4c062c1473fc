/**
 * The self-fencing view of a host's lease (docs/cluster.md, "Self-fencing on the lease"): pure
 * functions of the monotonic clock, so the decision is tested with a simulated clock and the
 * timers and the database stay at the edge (membership.ts).
 */

/** How long a host's sessions stay its own after its last renewal, by default (`--lease`, `lease`): 12 s. */
export const defaultLeaseMs = 12_000;

/** What a host may do with its sessions, from the time since its last successful renewal. */
export type LeaseStanding =
  /** Renewed within the lease: run as usual. */
  | 'held'
  /** No successful renewal for a lease: send no more prompts to the agents (another host may take the sessions). */
  | 'suspended'
  /** No successful renewal for two leases: stop the agents, keep the sessions (no release). */
  | 'stopped';

/**
 * The standing of a lease. `sentAt` is the monotonic time (ms) at which the last renewal that
 * succeeded was sent (not answered: the database stamped the lease no earlier than that), `now`
 * the monotonic time now. A host frozen (SIGSTOP) sees the whole pause at its first look.
 */
export function leaseStanding(sentAt: number, now: number, lease: number): LeaseStanding {
  const since = now - sentAt;
  if (since < lease) return 'held';
  return since < 2 * lease ? 'suspended' : 'stopped';
}

/** Whether the host still holds its lease by its own clock ({@link leaseStanding} is `held`). */
export function leaseHeld(sentAt: number, now: number, lease: number): boolean {
  return leaseStanding(sentAt, now, lease) === 'held';
}

/** The ms left of the lease by the host's own clock (0 once it ran out). */
export function leaseLeft(sentAt: number, now: number, lease: number): number {
  return Math.max(0, sentAt + lease - now);
}
