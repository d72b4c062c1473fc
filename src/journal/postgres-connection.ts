/**
 * The settings of every connection to a PostgreSQL store, pooled (postgres-store.ts) or
 * dedicated to the LISTEN of the cluster's wake-ups (wake-ups.ts), and the backoff between their
 * attempts (the journal's retried calls too): declared once, so that all give up on an
 * unreachable server after the same wait and try it again at the same pace.
 */
import type pg from 'pg';

/** How long one attempt waits for a connection (the server unreachable without refusing): then it is a connection error, 5 s. */
export const postgresConnectTimeoutMs = 5_000;

/**
 * How long to wait before trying the store again after a connection error (a call of the
 * journal, the LISTEN's connection): 100 ms, doubling up to 2 s.
 */
export const postgresRetryBackoff: { readonly firstMs: number; readonly longestMs: number } = Object.freeze({ firstMs: 100, longestMs: 2_000 });

/** The configuration of a connection to `url`, named `applicationName` in `pg_stat_activity` when given. */
export function postgresConnectionConfig(url: string, applicationName?: string): pg.ClientConfig {
  return { connectionString: url, connectionTimeoutMillis: postgresConnectTimeoutMs, keepAlive: true, ...(applicationName ? { application_name: applicationName } : {}) };
}
