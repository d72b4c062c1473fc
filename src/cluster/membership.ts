/**
 * A host's membership of the cluster on the shared PostgreSQL (docs/cluster.md): the row in
 * `hosts` that `openPostgresJournal` registered, kept alive by a heartbeat every `lease / 3`
 * carrying the host's load, marked `draining` (SIGTERM, later) and `gone` at close. The lease as
 * the host itself sees it (monotonic clock, from the send of the last successful renewal) is
 * lease.ts; this module is the edge: the timer and the queries.
 */
import type pg from 'pg';
import { storeOf, type PostgresStore } from '../journal/postgres-store.js';
import { leaseStanding, type LeaseStanding } from '../journal/lease.js';

/** The state a host row records (`hosts.state`). */
type RecordedState = 'live' | 'draining' | 'gone';

/**
 * A host's state as `warden cluster status` shows it, in its table and its JSON alike: the
 * recorded state, or `expired` for a `live` row whose lease ran out (a host killed, frozen or
 * cut off from the database, which nobody marked).
 */
export type HostState = RecordedState | 'expired';

/** A host row as the cluster sees it. */
export interface ClusterHost {
  readonly hostId: string;
  readonly name: string;
  readonly pid: number;
  readonly advertise: string | undefined;
  /** See {@link HostState}; decided once here by {@link hostState}. */
  readonly state: HostState;
  readonly load: number;
  readonly startedAt: string;
  /** Ms since its last heartbeat, in the database's clock. */
  readonly heartbeatAge: number;
  /** Ms of lease left, in the database's clock (negative: expired that long ago). */
  readonly leaseLeft: number;
  /** Sessions recorded as owned by it. */
  readonly sessions: number;
  /** `state = 'live'` and the lease not run out (the database's clock). */
  readonly live: boolean;
}

/** Options of {@link openMembership}. */
export interface MembershipOptions {
  /** The host's id (the journal's `hostId`: its row is already registered). */
  readonly hostId: string;
  /** The lease in ms (the journal's). */
  readonly lease: number;
  /** The load sent with each heartbeat (sessions live here). */
  readonly load: () => number;
  /** Heartbeat every `lease / 3` (default true; false: only {@link Membership.heartbeat}, for tests). */
  readonly renew?: boolean;
  /** The monotonic clock in ms (default `performance.now`), for tests. */
  readonly monotonic?: () => number;
}

/** One host's membership. */
export interface Membership {
  /** Renews the lease now with the current load; resolves once the database has it. */
  heartbeat(): Promise<void>;
  /** The lease by this host's own monotonic clock. */
  standing(): LeaseStanding;
  /** Whether the lease is held by this host's own clock. */
  leaseHeld(): boolean;
  /** Marks the host `draining`: live hosts no longer count it (placement), its lease still runs. */
  drain(): Promise<void>;
  /** The hosts that are `live` with a lease not run out, in the database's clock. */
  liveHosts(): Promise<ClusterHost[]>;
  /** Stops the heartbeat and marks the host `gone` (its lease ends now). */
  close(): Promise<void>;
}

const hostColumns = `h.host_id, h.name, h.pid, h.advertise, h.state, h.load, h.started_at,
  (extract(epoch FROM now() - h.heartbeat_at) * 1000)::float8 AS heartbeat_age,
  (extract(epoch FROM h.lease_until - now()) * 1000)::float8 AS lease_left,
  (SELECT count(*) FROM sessions s WHERE s.owner_host = h.host_id)::int AS sessions,
  (h.state = 'live' AND h.lease_until > now()) AS live`;

interface HostRow {
  host_id: string;
  name: string;
  pid: number;
  advertise: string | null;
  state: RecordedState;
  load: number;
  started_at: Date;
  heartbeat_age: number;
  lease_left: number;
  sessions: number;
  live: boolean;
}

/** The one decision of a row's shown state: `live` in the row but not live by the database's clock is `expired`. */
const hostState = (row: Pick<HostRow, 'state' | 'live'>): HostState => (row.state === 'live' && !row.live ? 'expired' : row.state);

const hostOf = (row: HostRow): ClusterHost => ({
  hostId: row.host_id,
  name: row.name,
  pid: row.pid,
  advertise: row.advertise ?? undefined,
  state: hostState(row),
  load: row.load,
  startedAt: row.started_at.toISOString(),
  heartbeatAge: Math.round(row.heartbeat_age),
  leaseLeft: Math.round(row.lease_left),
  sessions: row.sessions,
  live: row.live,
});

/** Every host row of the database behind `client` (newest start first), with its session count. */
export async function clusterHosts(client: Pick<pg.ClientBase, 'query'>, options: { readonly liveOnly?: boolean } = {}): Promise<ClusterHost[]> {
  const where = options.liveOnly ? "WHERE h.state = 'live' AND h.lease_until > now()" : '';
  const { rows } = await client.query<HostRow>(`SELECT ${hostColumns} FROM hosts h ${where} ORDER BY h.started_at DESC, h.host_id`);
  return rows.map(hostOf);
}

/**
 * Keeps the host `hostId` (registered by `openPostgresJournal` on `url`, a URL or a store) a member: heartbeats,
 * the self-fencing view, the live hosts. Open the journal with `renew: false` so that this is
 * the one heartbeat (it carries the load).
 */
export async function openMembership(url: string | PostgresStore, options: MembershipOptions): Promise<Membership> {
  const monotonic = options.monotonic ?? (() => performance.now());
  const { store, owned } = storeOf(url, { connections: 2 });
  const { pool } = store;
  const { hostId, lease } = options;
  // The journal registered the row just now: its lease counts from here.
  let sentAt = monotonic();
  let closed = false;
  const heartbeat = async (): Promise<void> => {
    const sent = monotonic();
    const { rowCount } = await pool.query(
      "UPDATE hosts SET heartbeat_at = now(), lease_until = now() + make_interval(secs => $2 / 1000.0), load = $3 WHERE host_id = $1 AND state <> 'gone'",
      [hostId, lease, options.load()],
    );
    if (!rowCount) throw new Error(`host ${hostId} is not registered (or gone) in the cluster's database`);
    // The database stamped the lease no earlier than the send: count from there.
    sentAt = Math.max(sentAt, sent);
  };
  let timer: NodeJS.Timeout | undefined;
  if (options.renew !== false) {
    // A failed heartbeat is not membership lost: the lease view (standing) says how long it has been.
    timer = setInterval(() => void heartbeat().catch(() => undefined), Math.max(1, Math.floor(lease / 3)));
    timer.unref();
  }
  return {
    heartbeat,
    standing: () => leaseStanding(sentAt, monotonic(), lease),
    leaseHeld: () => leaseStanding(sentAt, monotonic(), lease) === 'held',
    drain: async () => void (await pool.query("UPDATE hosts SET state = 'draining' WHERE host_id = $1 AND state = 'live'", [hostId])),
    liveHosts: () => clusterHosts(pool, { liveOnly: true }),
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      try {
        await pool.query("UPDATE hosts SET state = 'gone', lease_until = now() WHERE host_id = $1", [hostId]);
      } finally {
        if (owned) await store.end();
      }
    },
  };
}
