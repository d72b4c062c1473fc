/**
 * Self-fencing on a shared store (docs/cluster.md): the host's own view of its lease
 * (journal/lease.ts, from the PostgreSQL journal's `standing()`) comes in as `host.lease`.
 * Once the lease may have run out (`suspended`: a lease without a successful renewal; a host
 * woken from SIGSTOP sees it at its first look), every session it runs is checked with a claim,
 * behind the session's writes: still its own, the claim keeps the epoch and nothing changes;
 * another host's, the session moved (its agent stopped here). After two leases (`stopped`), a
 * session whose check has not come back (the database is out of reach) has its agent stopped:
 * no agent runs on two hosts for longer than a lease. Pure bookkeeping here; the timer is the
 * host's (host.ts), the claim the journal's.
 */
import type { LeaseStanding } from '../../journal/lease.js';
import { SessionOwnedError } from '../../journal/journal.js';
import type { SessionMachineContext } from '../../session/session-machine.js';
import type { Live } from './live.js';
import { journalCall } from './journal-writes.js';
import { leaseLost, movedAway } from './moved-away.js';

/** Acts on the lease's new standing (see the module's comment). */
export function leaseChanged(live: Live, standing: LeaseStanding): void {
  const before = live.lease.standing;
  live.lease.standing = standing;
  if (standing === 'held') return;
  if (before === 'held') for (const sessionId of live.sessions.keys()) checkOwnership(live, sessionId);
  if (standing === 'stopped') for (const sessionId of [...live.lease.checking]) leaseLost(live, sessionId);
}

/** Claims the session again, behind its writes: still ours (epoch kept), or moved away. */
function checkOwnership(live: Live, sessionId: string): void {
  if (live.lease.checking.has(sessionId)) return;
  live.lease.checking.add(sessionId);
  journalCall(live, sessionId, (journal) => journal.claim(sessionId), (result) => {
    live.lease.checking.delete(sessionId);
    if (result.ok) return claimedAgain(live, sessionId, result.value.epoch);
    if (!(result.error instanceof SessionOwnedError)) return;
    const { owner } = result.error;
    movedAway(live, sessionId, {
      owner: owner.hostId,
      ownerName: owner.host,
      epoch: owner.epoch,
      stale: `this host's lease ran out (it was frozen or cut off) and another host claimed the session since ${owner.acquiredAt}`,
    });
  });
}

/** Still this host's: a claim that had to take it again (nobody held it meanwhile) holds it at a new epoch, which its chart learns. */
function claimedAgain(live: Live, sessionId: string, epoch: number | undefined): void {
  const machine = live.sessions.get(sessionId)?.machine;
  const owner = (machine?.getSnapshot().context as SessionMachineContext | undefined)?.owner;
  if (!machine || !owner || epoch === undefined || owner.epoch === epoch) return;
  machine.send({ type: 'owner.changed', owner: { ...owner, epoch, here: true } });
}
