/**
 * Wake-ups through PostgreSQL (docs/cluster.md, "Rolling restart"): membership lives in the
 * database, and so do the signals between members. A host that hands its sessions over sends
 * `NOTIFY warden_cluster` in the statement that ends its lease (delivered at its commit, so a
 * look it wakes sees the lease ended); each takeover loop LISTENs on a connection of its own
 * and looks at once. Wake-ups only hasten a look: a notification lost (the listener
 * reconnecting after a database restart) is caught by the loop's next scheduled look.
 */
import pg from 'pg';
import { postgresConnectionConfig, postgresRetryBackoff } from './postgres-connection.js';

/** The channel of the cluster's wake-ups. */
export const clusterChannel = 'warden_cluster';

/** What happened to a host, as its notification says. */
export type ClusterEvent = 'handedOver';

/** A notification's payload (JSON on the wire). */
export interface ClusterWakeUp {
  /** The host it concerns (`hosts.host_id`). */
  readonly host: string;
  readonly event: ClusterEvent;
}

/**
 * The SQL expression that sends a wake-up for the host id in `hostColumn` (one per row of the
 * statement it is selected in): `pg_notify` is delivered when the transaction commits.
 */
export function notifyExpression(hostColumn: string, event: ClusterEvent): string {
  return `pg_notify('${clusterChannel}', json_build_object('host', ${hostColumn}, 'event', '${event}')::text)`;
}

/** A payload read back; `undefined` for one this version does not know (ignored, but it still wakes). */
export function parseWakeUp(payload: string | undefined): ClusterWakeUp | undefined {
  try {
    const parsed = JSON.parse(payload ?? '') as Partial<ClusterWakeUp>;
    return typeof parsed.host === 'string' && parsed.event === 'handedOver' ? { host: parsed.host, event: parsed.event } : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@link listenForWakeUps}. */
export interface WakeUpOptions {
  /** Called for each notification on the channel, and once after each reconnection (notifications may have been lost meanwhile). */
  readonly wake: (wakeUp: ClusterWakeUp | undefined) => void;
  /** Longest wait between two connection attempts, in ms (default 2,000); the first waits 100 ms, doubling. */
  readonly longestBackoff?: number;
  /** `application_name` of the connection (`pg_stat_activity`). */
  readonly applicationName?: string;
}

/** A listener started by {@link listenForWakeUps}. */
export interface WakeUpListener {
  /** Stops listening: closes the connection, cancels a reconnection waiting. */
  close(): Promise<void>;
}


/**
 * LISTENs on {@link clusterChannel} on a dedicated connection to `url`. A connection lost (the
 * database restarted, a proxy cut it) or refused is opened again after a backoff of 100 ms
 * doubling to `longestBackoff`; errors are swallowed (wake-ups are a hint, the takeover's
 * timer is the fallback).
 */
export function listenForWakeUps(url: string, options: WakeUpOptions): WakeUpListener {
  const longest = options.longestBackoff ?? postgresRetryBackoff.longestMs;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let backoff = postgresRetryBackoff.firstMs;
  /** A connection has listened before: the next one wakes the loop once it listens. */
  let listenedBefore = false;
  const connect = async (): Promise<void> => {
    retry = undefined;
    if (closed) return;
    // A connection attempt that times out (a server unreachable without refusing) is retried like a refusal.
    const connection = new pg.Client(postgresConnectionConfig(url, options.applicationName));
    client = connection;
    let lost = false;
    const lose = () => {
      if (lost) return;
      lost = true;
      if (client === connection) client = undefined;
      void connection.end().catch(() => undefined);
      if (closed) return;
      retry = setTimeout(() => void connect(), backoff);
      retry.unref();
      backoff = Math.min(backoff * 2, longest);
    };
    connection.on('error', lose);
    connection.on('end', lose);
    connection.on('notification', (message) => {
      if (!closed && message.channel === clusterChannel) options.wake(parseWakeUp(message.payload));
    });
    try {
      await connection.connect();
      await connection.query(`LISTEN ${clusterChannel}`);
    } catch {
      lose();
      return;
    }
    if (lost || closed) return;
    backoff = postgresRetryBackoff.firstMs;
    if (listenedBefore) options.wake(undefined);
    listenedBefore = true;
  };
  void connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      retry = undefined;
      const connection = client;
      client = undefined;
      await connection?.end().catch(() => undefined);
    },
  };
}
