/**
 * Hosts of a cluster for tests (issue 17): `warden serve` processes on one PostgreSQL, each
 * advertising its own address, and the database's view of who owns a session.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { WebSocket } from 'ws';
import { freePort } from './free-port.js';
import { queryRows, requirePostgres, startPostgres, type TestPostgres } from './postgres.js';
import { waitUntil } from './processes.js';
import { startServe, type ServeDaemon } from './serve-daemon.js';
import { killGroups } from './warden-process.js';

/** What a cluster spec's hooks set up: one PostgreSQL for the suite, a database and a state directory per test. */
export interface ClusterFixture {
  /** The suite's server. */
  readonly server: TestPostgres;
  /** The test's database (`postgres://…`). */
  readonly url: string;
  /** The test's directory (hosts' state). */
  readonly state: string;
  /** Processes the test started: their groups and descendants are killed after it. */
  readonly launched: ChildProcess[];
  /** Sockets the test opened: terminated after it. */
  readonly sockets: WebSocket[];
}

/**
 * Registers the mocha hooks of a cluster suite (skipped without PostgreSQL binaries) and
 * returns what they set up, read inside tests. `name` prefixes the databases and directories.
 */
export function clusterFixture(name: string): ClusterFixture {
  let server: TestPostgres | undefined;
  let databases = 0;
  let url = '';
  let state = '';
  const launched: ChildProcess[] = [];
  const sockets: WebSocket[] = [];
  before(async function () {
    requirePostgres(this);
    server = await startPostgres();
  });
  after(async () => server?.stop());
  beforeEach(async () => {
    url = await (server as TestPostgres).createDatabase(`${name}_${process.pid}_${++databases}`);
    state = realpathSync(mkdtempSync(join(tmpdir(), `warden-${name}-`)));
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });
  return {
    get server() {
      return server as TestPostgres;
    },
    get url() {
      return url;
    },
    get state() {
      return state;
    },
    launched,
    sockets,
  };
}

/** A `warden serve` of the cluster and the address it advertises. */
export type ClusterHost = ServeDaemon & { readonly advertise: string };

/** Options of {@link startClusterHost}. */
export interface ClusterHostOptions {
  /** The database (`postgres://…`). */
  readonly store: string;
  /** The lease in seconds. */
  readonly lease: number;
  /** More `warden serve` arguments (`--env DEMO_WORD_DELAY_MS=…`; a later `--agent` replaces the demo agent). */
  readonly args?: readonly string[];
  /** More variables of the host's environment (a PATH leading to fake CLIs). */
  readonly env?: Record<string, string>;
}

/** Starts `warden serve --agent demo` advertising its own address, its state (token file) in `state`; pushed on `launched`. */
export async function startClusterHost(state: string, launched: ChildProcess[], { store, lease, args = [], env }: ClusterHostOptions): Promise<ClusterHost> {
  const port = await freePort();
  const advertise = `ws://127.0.0.1:${port}/acp`;
  const daemon = await startServe(state, ['--listen', `127.0.0.1:${port}`, '--advertise', advertise, '--lease', String(lease), '--agent', 'demo', '--store', store, ...args], launched, env ? { env } : {});
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

/**
 * Resolves once the database at `url` holds no renewal of `host`'s lease for more than `leases`
 * leases of `leaseSeconds` (polled, never a guessed sleep). A host frozen (SIGSTOP) until then has
 * gone that long without renewing by its own clock too: it counts from when it sent its last
 * renewal, which is no later than the database's stamp of it.
 */
export async function untilUnrenewedFor(url: string, host: ClusterHost, leaseSeconds: number, leases: number): Promise<void> {
  const sql = 'SELECT max(heartbeat_at) < now() - make_interval(secs => $3) AS past FROM hosts WHERE advertise = $1 AND pid = $2';
  await waitUntil(async () => (await queryRows<{ past: boolean | null }>(url, sql, [host.advertise, host.process.pid, leases * leaseSeconds]))[0]?.past === true, `${leases} leases without a renewal of ${host.advertise}'s lease`, 60_000, 100);
}
