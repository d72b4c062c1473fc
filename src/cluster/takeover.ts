/**
 * Failover on the shared PostgreSQL (docs/cluster.md, "Failover"): a host of the cluster looks,
 * every `lease / 2`, for the open sessions of hosts that were lost (a cluster member, one that
 * advertised an address, whose lease ran out while the database has been up for a whole lease)
 * or that handed them over (a rolling restart: `draining`, its lease ended on purpose)
 * and hands each to `take`, which claims and resumes it (the hub sends its host agent a
 * `session/resume` marked as a takeover). Several hosts may see the same session: the claim is
 * a conditional UPDATE, one wins, the others are refused (`session_owned`) and forget it.
 *
 * Sessions of a host that closed (released, or `gone`) and of hosts that never advertised (a
 * `warden acp` whose editor went with it) are not taken: nobody waits for them on this cluster,
 * and their next load or resume takes them.
 */
import pg from 'pg';

/** An open session whose owner host was lost. */
export interface OrphanedSession {
  readonly sessionId: string;
  /** The lost owner's host id. */
  readonly previousOwner: string;
  /** The owner was not lost but handed its sessions over (a rolling restart: it was `draining`). */
  readonly handedOver: boolean;
}

/** Options of {@link startTakeover}. */
export interface TakeoverOptions {
  /** This host's id (its own sessions are never orphans). */
  readonly hostId: string;
  /** The lease in ms: a lost host's sessions are looked for every `lease / 2`. */
  readonly lease: number;
  /** Claims and resumes one orphaned session (its outcome is the caller's). */
  readonly take: (orphan: OrphanedSession) => void;
  /** Most sessions taken per look (default 16): a host does not take a whole dead host's load at once. */
  readonly perLook?: number;
}

/** A running takeover loop. */
export interface Takeover {
  /** Looks now (also done every `lease / 2`); resolves with what was handed to `take` (nothing within a lease of the database's last absence, see {@link startTakeover}). */
  look(): Promise<OrphanedSession[]>;
  /** Stops looking and closes its connection. */
  close(): Promise<void>;
}

/**
 * The open sessions of lost cluster members, most recently updated first, at most `limit`.
 * "Lost": the owner advertised (a cluster member), is not `gone`, and its lease ran out while
 * the database has been up for at least a lease (a restart of the database loses no host).
 */
export async function orphanedSessions(queryable: Pick<pg.Pool, 'query'>, options: { readonly hostId: string; readonly lease: number; readonly limit: number }): Promise<OrphanedSession[]> {
  const { rows } = await queryable.query<{ session_id: string; owner_host: string; handed_over: boolean }>(
    `SELECT s.session_id, s.owner_host, h.state = 'draining' AS handed_over FROM sessions s JOIN hosts h ON h.host_id = s.owner_host
      WHERE s.state = 'open' AND s.owner_host <> $1 AND h.advertise IS NOT NULL AND h.state <> 'gone'
        AND h.lease_until < now() AND pg_postmaster_start_time() < now() - make_interval(secs => $2 / 1000.0)
      ORDER BY s.updated_at DESC LIMIT $3`,
    [options.hostId, options.lease, options.limit],
  );
  return rows.map((row) => ({ sessionId: row.session_id, previousOwner: row.owner_host, handedOver: row.handed_over }));
}

/**
 * Starts looking for lost hosts' sessions on the database at `url` (see the module's comment).
 *
 * The database's clock says whose lease ran out, not why: while the database cannot be reached
 * (a network or proxy outage, a server frozen, not restarted) every host's lease runs out in it,
 * the live ones' too, and once it is back the first look would race their next renewal. So the
 * loop keeps its own view: a look that failed, or hung past `lease / 2`, means the database was
 * away; orphans are taken only by a look that starts a whole lease after the first answer since
 * (the owners had that long to renew; a new host also waits its first lease).
 */
export function startTakeover(url: string, options: TakeoverOptions): Takeover {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  // A connection lost with the database (a restart) is dropped by the pool; the next look reconnects.
  pool.on('error', () => undefined);
  let looking: Promise<OrphanedSession[]> | undefined;
  let closed = false;
  /** Since when (performance.now()) every look has been answered in time; undefined: the last one was not. */
  let reachableSince: number | undefined;
  const look = (): Promise<OrphanedSession[]> => {
    const started = performance.now();
    // One look at a time: a slow database does not pile them up.
    looking ??= orphanedSessions(pool, { hostId: options.hostId, lease: options.lease, limit: options.perLook ?? 16 })
      .then((orphans) => {
        const answered = performance.now();
        if (answered - started > options.lease / 2) reachableSince = undefined;
        reachableSince ??= answered;
        const taken = started - reachableSince >= options.lease ? orphans : [];
        if (!closed) for (const orphan of taken) options.take(orphan);
        return taken;
      }, () => {
        reachableSince = undefined;
        return [] as OrphanedSession[];
      })
      .finally(() => (looking = undefined));
    return looking;
  };
  const timer = setInterval(() => void look(), Math.max(50, Math.floor(options.lease / 2)));
  timer.unref();
  return {
    look,
    async close() {
      closed = true;
      clearInterval(timer);
      await looking;
      await pool.end().catch(() => undefined);
    },
  };
}
