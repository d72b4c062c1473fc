/**
 * Failover on the shared PostgreSQL (docs/cluster.md, "Failover"): a host of the cluster looks
 * for the open sessions of hosts that were lost (a cluster member, one that advertised an
 * address, whose lease ran out while the database has been up for a whole lease) or that
 * handed them over (a rolling restart: `draining`, its lease ended on purpose) and hands each
 * to `take`, which claims and resumes it (the hub sends its host agent a `session/resume`
 * marked as a takeover). Several hosts may see the same session: the claim is a conditional
 * UPDATE, one wins, the others are refused (`session_owned`) and forget it.
 *
 * It looks when something can be taken rather than on a fixed tick: each look also reads when
 * the soonest lease of another member owning open sessions runs out, and the next look comes
 * just after it (look-schedule.ts), at the latest `lease / 2` after the last; a host handing
 * its sessions over wakes every loop at once through PostgreSQL (`NOTIFY`, wake-ups.ts).
 *
 * Sessions of a host that closed (released, or `gone`) and of hosts that never advertised (a
 * `warden acp` whose editor went with it) are not taken: nobody waits for them on this cluster,
 * and their next load or resume takes them.
 */
import type pg from 'pg';
import { nextLookIn } from './look-schedule.js';
import { storeOf, type PostgresStore } from '../journal/postgres-store.js';

/** An open session whose owner host was lost. */
export interface OrphanedSession {
  readonly sessionId: string;
  /** The lost owner's host id. */
  readonly previousOwner: string;
  /** The owner was not lost but handed its sessions over (a rolling restart: it was `draining`). */
  readonly handedOver: boolean;
}

/** What one look read from the database, in one round trip. */
export interface ClusterLook {
  /** The open sessions of lost members, most recently updated first, at most the limit. */
  readonly orphans: OrphanedSession[];
  /** Ms until the soonest lease of another advertised, not-gone host owning open sessions runs out (the database's clock); `undefined`: no such lease still running. */
  readonly leaseEndsIn: number | undefined;
  /** Ms until the database has been up for a whole lease (≤ 0: it has). */
  readonly databaseSettlesIn: number;
}

/** Options of {@link startTakeover}. */
export interface TakeoverOptions {
  /** This host's id (its own sessions are never orphans). */
  readonly hostId: string;
  /** The lease in ms: the outage guards wait a whole lease, and a look comes at least every `lease / 2`. */
  readonly lease: number;
  /** Claims and resumes one orphaned session (its outcome is the caller's). */
  readonly take: (orphan: OrphanedSession) => void;
  /** Most sessions taken per look (default 16): a host does not take a whole dead host's load at once. */
  readonly perLook?: number;
  /** The longest time between two looks, in ms (default `lease / 2`, at least 50); tests set it long to see the scheduled looks alone. */
  readonly interval?: number;
  /** Listen for wake-ups (`NOTIFY`, default `true`). */
  readonly wakeUps?: boolean;
  /** Told after each look what it took and when the next one comes (for tests and traces; an exception it throws is rethrown in a later macrotask). */
  readonly looked?: (look: LookOutcome) => void;
}

/** What one look of the loop did, for {@link TakeoverOptions.looked}. */
export interface LookOutcome {
  /** What it handed to `take` (nothing when it failed, or within a lease of the database's last absence). */
  readonly taken: readonly OrphanedSession[];
  /** The database did not answer. */
  readonly failed: boolean;
  /** Ms until the next look (0: a wake-up came during this one). */
  readonly nextIn: number;
}

/** A running takeover loop. */
export interface Takeover {
  /** Looks now (also done when a lease can have run out, on a wake-up, and at least every `lease / 2`); resolves with what was handed to `take` (nothing within a lease of the database's last absence, see {@link startTakeover}). */
  look(): Promise<OrphanedSession[]>;
  /** Stops looking and listening, and closes its connections. */
  close(): Promise<void>;
}

/** `application_name` of the loop's connections (`pg_stat_activity`). */
export const takeoverApplicationName = 'warden takeover';

/**
 * One look: the open sessions of lost cluster members, most recently updated first, at most
 * `limit`, and when the next lease can run out. "Lost": the owner advertised (a cluster member),
 * is not `gone`, and its lease ran out while the database has been up for at least a lease (a
 * restart of the database loses no host).
 */
export async function lookForOrphans(queryable: Pick<pg.Pool, 'query'>, options: { readonly hostId: string; readonly lease: number; readonly limit: number }): Promise<ClusterLook> {
  const { rows } = await queryable.query<{ orphans: Array<{ session_id: string; owner_host: string; handed_over: boolean }>; lease_ends_in: number | null; settles_in: number }>(
    `SELECT
       COALESCE((SELECT json_agg(o ORDER BY o.updated_at DESC) FROM (
         SELECT s.session_id, s.owner_host, h.state = 'draining' AS handed_over, s.updated_at FROM sessions s JOIN hosts h ON h.host_id = s.owner_host
          WHERE s.state = 'open' AND s.owner_host <> $1 AND h.advertise IS NOT NULL AND h.state <> 'gone'
            AND h.lease_until < now() AND pg_postmaster_start_time() < now() - make_interval(secs => $2 / 1000.0)
          ORDER BY s.updated_at DESC LIMIT $3) o), '[]') AS orphans,
       (SELECT extract(epoch FROM min(h.lease_until) - now()) * 1000 FROM hosts h
         WHERE h.host_id <> $1 AND h.advertise IS NOT NULL AND h.state <> 'gone' AND h.lease_until >= now()
           AND EXISTS (SELECT 1 FROM sessions s WHERE s.owner_host = h.host_id AND s.state = 'open'))::float8 AS lease_ends_in,
       (extract(epoch FROM pg_postmaster_start_time() + make_interval(secs => $2 / 1000.0) - now()) * 1000)::float8 AS settles_in`,
    [options.hostId, options.lease, options.limit],
  );
  const row = rows[0];
  return {
    orphans: (row?.orphans ?? []).map((orphan) => ({ sessionId: orphan.session_id, previousOwner: orphan.owner_host, handedOver: orphan.handed_over })),
    leaseEndsIn: row?.lease_ends_in ?? undefined,
    databaseSettlesIn: row?.settles_in ?? 0,
  };
}

/**
 * Starts looking for lost hosts' sessions on the database at `url` (a URL, or a store whose pool and
 * listening connection it then uses; see the module's comment).
 *
 * The database's clock says whose lease ran out, not why: while the database cannot be reached
 * (a network or proxy outage, a server frozen, not restarted) every host's lease runs out in it,
 * the live ones' too, and once it is back the first look would race their next renewal. So the
 * loop keeps its own view: a look that failed, or hung past `lease / 2`, means the database was
 * away; orphans are taken only by a look that starts a whole lease after the first answer since
 * (the owners had that long to renew; a new host also waits its first lease).
 *
 * One look at a time and one timer: the first look at once, each next one scheduled when the
 * last ends ({@link nextLookIn}); a wake-up during a look makes another right after it.
 */
export function startTakeover(url: string | PostgresStore, options: TakeoverOptions): Takeover {
  // A URL: a store of its own (one connection for the looks, one that listens); a store: its pool (a connection lost is made again at the next look).
  const { store, owned } = storeOf(url, { connections: 1, applicationName: takeoverApplicationName });
  const interval = options.interval ?? Math.max(50, Math.floor(options.lease / 2));
  let looking: Promise<OrphanedSession[]> | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** A wake-up came during a look (which may have read before it): look again once it ends. */
  let again = false;
  let closed = false;
  /** Since when (performance.now()) every look has been answered in time; undefined: the last one was not. */
  let reachableSince: number | undefined;
  const schedule = (ms: number) => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (closed) return;
    timer = setTimeout(() => void look(), ms);
    timer.unref();
  };
  /** Hands one orphan to `take`: a `take` that throws loses that orphan this time (the next look sees it again), never the loop. */
  const takeOne = (orphan: OrphanedSession) => {
    try {
      options.take(orphan);
    } catch (error) {
      process.emitWarning(`the takeover of session ${orphan.sessionId} failed to start: ${error instanceof Error ? error.message : String(error)}`, 'AcpWardenTakeoverWarning');
    }
  };
  const look = (): Promise<OrphanedSession[]> => {
    if (looking || closed) return looking ?? Promise.resolve([]);
    if (timer) clearTimeout(timer);
    timer = undefined;
    const started = performance.now();
    let next = interval;
    let taken: OrphanedSession[] = [];
    let failed = false;
    // One look at a time: a slow database does not pile them up.
    looking = lookForOrphans(store.pool, { hostId: options.hostId, lease: options.lease, limit: options.perLook ?? 16 })
      .then((seen) => {
        const answered = performance.now();
        if (answered - started > options.lease / 2) reachableSince = undefined;
        reachableSince ??= answered;
        taken = started - reachableSince >= options.lease ? seen.orphans : [];
        if (!closed) for (const orphan of taken) takeOne(orphan);
        const elapsed = performance.now() - answered;
        next = nextLookIn({
          interval,
          ...(seen.leaseEndsIn === undefined ? {} : { leaseEndsIn: seen.leaseEndsIn - elapsed }),
          databaseSettlesIn: seen.databaseSettlesIn - elapsed,
          reachableIn: reachableSince + options.lease - performance.now(),
        });
        return taken;
      }, () => {
        reachableSince = undefined;
        failed = true;
        return taken;
      })
      .finally(() => {
        looking = undefined;
        const nextIn = again ? 0 : next;
        again = false;
        schedule(nextIn);
        if (closed || !options.looked) return;
        try {
          options.looked({ taken, failed, nextIn });
        } catch (error) {
          // An observer's failure is reported, not swallowed, and cannot stop the loop.
          setTimeout(() => {
            throw error;
          });
        }
      });
    return looking;
  };
  const wake = () => {
    if (looking) again = true;
    else void look();
  };
  const wakeUps = options.wakeUps === false ? undefined : store.listen({ wake, applicationName: takeoverApplicationName });
  schedule(0);
  return {
    look,
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await wakeUps?.close();
      await looking;
      if (owned) await store.end();
    },
  };
}
