/**
 * Hosts of a cluster for tests (issue 17): `warden serve` processes on one PostgreSQL, each
 * advertising its own address, and the database's view of who owns a session.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
import { startServe, type ServeDaemon } from './serve-daemon.js';

/** A `warden serve` of the cluster and the address it advertises. */
export type ClusterHost = ServeDaemon & { readonly advertise: string };

/** Options of {@link startClusterHost}. */
export interface ClusterHostOptions {
  /** The database (`postgres://…`). */
  readonly store: string;
  /** The lease in seconds. */
  readonly lease: number;
  /** More `warden serve` arguments (`--env DEMO_WORD_DELAY_MS=…`). */
  readonly args?: readonly string[];
}

/** Starts `warden serve --agent demo` advertising its own address, its state (token file) in `state`; pushed on `launched`. */
export async function startClusterHost(state: string, launched: ChildProcess[], { store, lease, args = [] }: ClusterHostOptions): Promise<ClusterHost> {
  const port = await freePort();
  const advertise = `ws://127.0.0.1:${port}/acp`;
  const daemon = await startServe(state, ['--listen', `127.0.0.1:${port}`, '--advertise', advertise, '--lease', String(lease), '--agent', 'demo', '--store', store, ...args], launched);
  return { ...daemon, advertise };
}

/** Starts one {@link startClusterHost} per name, each in `join(state, name)`. */
export async function startClusterHosts(state: string, names: readonly string[], launched: ChildProcess[], options: ClusterHostOptions): Promise<ClusterHost[]> {
  const hosts: ClusterHost[] = [];
  for (const name of names) hosts.push(await startClusterHost(join(state, name), launched, options));
  return hosts;
}

/** A session's owner as the database has it: its host's advertised address (null: nobody) and the epoch. */
export interface SessionOwner {
  readonly advertise: string | null;
  readonly epoch: number;
}

/** The owner of `sessionId` in the database at `url` (one connection, closed after). */
export async function ownerOf(url: string, sessionId: string): Promise<SessionOwner> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return await ownerWith(client, sessionId);
  } finally {
    await client.end();
  }
}

/** The owner of `sessionId`, read on an open connection. */
export async function ownerWith(client: Pick<pg.Client, 'query'>, sessionId: string): Promise<SessionOwner> {
  const { rows } = await client.query<{ advertise: string | null; epoch: string }>('SELECT h.advertise, s.epoch FROM sessions s LEFT JOIN hosts h ON h.host_id = s.owner_host WHERE s.session_id = $1', [sessionId]);
  return { advertise: rows[0]?.advertise ?? null, epoch: Number(rows[0]?.epoch ?? 0) };
}
