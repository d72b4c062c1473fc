/**
 * Where a session is served, as the shared PostgreSQL says (docs/cluster.md, "Routing"): its
 * owner host (`sessions.owner_host`, `epoch`), whether that host is live (`state = 'live'` and
 * its lease not run out, in the database's clock) and the address it advertised
 * (`hosts.advertise`). A host that was refused a session (`session_owned`) asks here whether it
 * can forward the client to the owner; a host placing a new session asks here for the live hosts
 * it may place it on ({@link routableHosts}). This module is the edge: the queries, and the pure
 * decision {@link sessionLocationOf} on a session's row.
 */
import type pg from 'pg';
import { storeOf, type PostgresStore } from '../journal/postgres-store.js';
import type { PlacementCandidate } from './placement.js';

/** Where a session is served, for routing. */
export type SessionLocation =
  /** Owned by a live host that advertised where it is reached: forward there. */
  | { readonly kind: 'remote'; readonly hostId: string; readonly epoch: number; readonly url: string }
  /** Owned by a host that cannot be forwarded to: not live (lost, frozen, gone) or never advertised (a `warden acp`). */
  | { readonly kind: 'unroutable'; readonly hostId: string; readonly epoch: number; readonly why: 'not_live' | 'not_advertised' }
  /** Nobody owns it now (released, or its owner's lease ran out): the next claim takes it. */
  | { readonly kind: 'free' }
  /** The journal has no such session. */
  | { readonly kind: 'unknown' };

/** The row {@link locateSession} reads. */
export interface LocationRow {
  readonly owner_host: string | null;
  readonly epoch: string | number | null;
  readonly advertise: string | null;
  /** The owner's row says live now (null: no owner, or no row for it). */
  readonly live: boolean | null;
}

/** The location a session's row says (undefined row: no such session). */
export function sessionLocationOf(row: LocationRow | undefined): SessionLocation {
  if (!row) return { kind: 'unknown' };
  if (row.owner_host === null) return { kind: 'free' };
  const hostId = row.owner_host;
  const epoch = Number(row.epoch ?? 0);
  if (row.live !== true) return { kind: 'unroutable', hostId, epoch, why: 'not_live' };
  if (row.advertise === null) return { kind: 'unroutable', hostId, epoch, why: 'not_advertised' };
  return { kind: 'remote', hostId, epoch, url: row.advertise };
}

/** Reads where `sessionId` is served (one query; see {@link SessionLocation}). */
export async function locateSession(queryable: Pick<pg.Pool, 'query'>, sessionId: string): Promise<SessionLocation> {
  const { rows } = await queryable.query<LocationRow>(
    `SELECT s.owner_host, s.epoch, h.advertise, (h.state = 'live' AND h.lease_until > now()) AS live
       FROM sessions s LEFT JOIN hosts h ON h.host_id = s.owner_host
      WHERE s.session_id = $1`,
    [sessionId],
  );
  return sessionLocationOf(rows[0]);
}

/** A live host that advertised where it is reached: somewhere a new session may be placed (placement.ts). */
export interface RoutableHost extends PlacementCandidate {
  /** Its advertised address (`ws://HOST:PORT/acp`). */
  readonly url: string;
}

/** The live hosts other than `exceptHostId` that advertised an address, with the load of their last heartbeat (one query). */
export async function routableHosts(queryable: Pick<pg.Pool, 'query'>, exceptHostId: string): Promise<RoutableHost[]> {
  const { rows } = await queryable.query<{ host_id: string; load: number; advertise: string }>(
    `SELECT host_id, load, advertise FROM hosts
      WHERE state = 'live' AND lease_until > now() AND advertise IS NOT NULL AND host_id <> $1`,
    [exceptHostId],
  );
  return rows.map((row) => ({ hostId: row.host_id, load: row.load, url: row.advertise }));
}

/** The routing table of one host, on the cluster's database. */
export interface RoutingTable {
  /** Where `sessionId` is served now. */
  locate(sessionId: string): Promise<SessionLocation>;
  /** The live hosts other than `exceptHostId` a new session may be placed on. */
  routableHosts(exceptHostId: string): Promise<RoutableHost[]>;
  /** Closes its connection; later calls reject. */
  close(): Promise<void>;
}

/**
 * Opens the routing table on the database at `url` (a connection of its own, made at the first
 * look-up), or on the host's store (its pool; a connection lost is made again at the next look-up).
 */
export function openRoutingTable(url: string | PostgresStore): RoutingTable {
  const { store, owned } = storeOf(url, { connections: 1 });
  const { pool } = store;
  let closed = false;
  return {
    locate: (sessionId) => (closed ? Promise.reject(new Error('the routing table is closed')) : locateSession(pool, sessionId)),
    routableHosts: (exceptHostId) => (closed ? Promise.reject(new Error('the routing table is closed')) : routableHosts(pool, exceptHostId)),
    async close() {
      if (closed) return;
      closed = true;
      if (owned) await store.end();
    },
  };
}
