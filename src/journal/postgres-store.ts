/**
 * The one opener of a PostgreSQL store (issue 29, "one store opener per process"): every
 * connection a process makes to the cluster's database is made here. One pool serves the
 * journal's calls (postgres-journal.ts), the takeover's looks (cluster/takeover.ts), the routing
 * table's look-ups (cluster/routing-table.ts) and membership (cluster/membership.ts). Two
 * connections stay out of it, each opened once, on first use:
 * - the lease's: a renewal never waits behind the session writes that fill the pool (a slow
 *   database, a row lock held), or a host would let its lease lapse, and stop its agents,
 *   because it was busy rather than cut off;
 * - the LISTEN of the cluster's wake-ups (wake-ups.ts): a connection that listens is held for
 *   as long as it listens, which a pool cannot lend.
 */
import pg from 'pg';
import { postgresConnectionConfig } from './postgres-connection.js';
import { redactedUrl } from './store-url.js';
import { listenForWakeUps, type WakeUpListener, type WakeUpOptions } from './wake-ups.js';

/** Options of {@link openPostgresStore}. */
export interface PostgresStoreOptions {
  /** Connections in the shared pool (default 6: the journal's 4, a takeover look and a routing look-up at once). */
  readonly connections?: number;
  /** `application_name` of its connections (`pg_stat_activity`). */
  readonly applicationName?: string;
}

/** A PostgreSQL store opened by {@link openPostgresStore}: its pool and its two dedicated connections. */
export interface PostgresStore {
  /** The database's URL (with its password: for connections only, never for messages). */
  readonly url: string;
  /** The database as errors and logs name it (no password). */
  readonly where: string;
  /** The pool every call shares. */
  readonly pool: pg.Pool;
  /** The lease's own connection (a pool of one, so that a connection lost is made again at the next renewal). */
  lease(): pg.Pool;
  /** LISTENs for the cluster's wake-ups on the store's one listening connection; a second listener is refused. */
  listen(options: WakeUpOptions): WakeUpListener;
  /** Ends the pool and the dedicated connections (idempotent). */
  end(): Promise<void>;
}

/** Opens the store at `url` (`postgres://user@host:port/db`); nothing connects before the first call. */
export function openPostgresStore(url: string, options: PostgresStoreOptions = {}): PostgresStore {
  const poolOf = (max: number) => {
    const pool = new pg.Pool({ ...postgresConnectionConfig(url, options.applicationName), max });
    // An idle client that loses its connection (the server restarted) is dropped by the pool; without a listener it would crash the process.
    pool.on('error', () => undefined);
    return pool;
  };
  const pool = poolOf(options.connections ?? 6);
  let leasePool: pg.Pool | undefined;
  let listener: WakeUpListener | undefined;
  let ending: Promise<void> | undefined;
  return {
    url,
    where: redactedUrl(url),
    pool,
    lease: () => (leasePool ??= poolOf(1)),
    listen(listenOptions) {
      if (listener) throw new Error(`the store ${redactedUrl(url)} listens for wake-ups already`);
      const opened = listenForWakeUps(url, { ...(options.applicationName ? { applicationName: options.applicationName } : {}), ...listenOptions });
      listener = {
        async close() {
          await opened.close();
          listener = undefined;
        },
      };
      return listener;
    },
    end: () =>
      (ending ??= (async () => {
        await listener?.close();
        await leasePool?.end().catch(() => undefined);
        await pool.end().catch(() => undefined);
      })()),
  };
}

/**
 * The store `given` names: the one given (its owner ends it), or one opened on the URL for the
 * caller alone (`owned`: the caller ends it when it closes).
 */
export function storeOf(given: string | PostgresStore, options: PostgresStoreOptions = {}): { readonly store: PostgresStore; readonly owned: boolean } {
  return typeof given === 'string' ? { store: openPostgresStore(given, options), owned: true } : { store: given, owned: false };
}
