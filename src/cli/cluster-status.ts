/**
 * `warden cluster status --store postgres://… [--json]`: the hosts of a cluster on one
 * PostgreSQL (docs/cluster.md): id, name, pid, advertise, state, heartbeat age, lease left,
 * sessions owned. Reads the `hosts` and `sessions` tables; registers nothing.
 */
import pg from 'pg';
import { clusterHosts, type ClusterHost } from '../cluster/membership.js';
import { postgresCodeOf, postgresProblem } from '../journal/postgres-problem.js';
import { isPostgresUrl, redactedUrl } from '../journal/store-url.js';
import { ArgumentError } from './arguments.js';
import { helpRow, optionRows, parseFlags, type FlagTable } from './flag-table.js';

/** The flags of `warden cluster status` as its table fills them. */
interface ClusterFlagValues {
  store: string | undefined;
  json: boolean;
}

/** The flags of `warden cluster status`. */
export const clusterFlags: FlagTable<ClusterFlagValues> = {
  '--store': { field: 'store', value: 'URL', help: 'the cluster\'s PostgreSQL (the --store of its warden serve hosts)' },
  '--json': { field: 'json', help: 'print {"hosts": [...]} as JSON (the same state as the table)' },
};

/** `warden cluster --help`. */
export const clusterUsage = `Usage: warden cluster status --store postgres://USER@HOST:PORT/DB [--json]

The hosts of the cluster that shares the PostgreSQL database: id, machine name, pid, the
address it advertises, state (live, draining, gone; "expired" when its lease ran out), how long
ago its last heartbeat was, how much of its lease is left, and the sessions it owns.

Options:
${optionRows(clusterFlags, 14, { extra: [helpRow()] })}`;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** The table `warden cluster status` prints. */
export function formatHosts(hosts: readonly ClusterHost[]): string {
  if (hosts.length === 0) return 'no hosts have joined this cluster yet\n';
  const header = ['HOST', 'NAME', 'PID', 'ADVERTISE', 'STATE', 'HEARTBEAT', 'LEASE LEFT', 'SESSIONS'];
  const rows = hosts.map((host) => [
    host.hostId,
    host.name,
    String(host.pid),
    host.advertise ?? '-',
    host.state,
    `${seconds(host.heartbeatAge)} ago`,
    host.leaseLeft > 0 ? seconds(host.leaseLeft) : '-',
    String(host.sessions),
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] as string).length)));
  return [header, ...rows].map((row) => row.map((cell, column) => cell.padEnd(widths[column] as number)).join('  ').trimEnd()).join('\n') + '\n';
}

/** A client of `store`, not connected yet; a URL pg cannot parse (a password with / or @ as typed) is the user's to fix. */
function clientOf(store: string): pg.Client {
  let client: pg.Client;
  try {
    client = new pg.Client({ connectionString: store, connectionTimeoutMillis: 10_000 });
  } catch (error) {
    throw new ArgumentError(`--store ${redactedUrl(store)} ${postgresProblem(postgresCodeOf(error) ?? 'ERR_INVALID_URL', (error as Error).message)}.`);
  }
  client.on('error', () => undefined);
  return client;
}

/** Runs `warden cluster …`; resolves with the exit status. */
export async function runCluster(args: readonly string[], write: (text: string) => void, problem: (text: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'status') {
    problem(sub === undefined ? `warden cluster: which? The only subcommand is status.\n${clusterUsage}\n` : `warden cluster: unknown subcommand ${sub}; the only one is status (see warden cluster --help)\n`);
    return 2;
  }
  let store: string | undefined;
  let json = false;
  let client: pg.Client;
  try {
    const parsed = parseFlags(clusterFlags, rest, 'See warden cluster --help.');
    if (parsed === 'help') {
      problem(`${clusterUsage}\n`);
      return 0;
    }
    ({ store, json } = parsed);
    if (store === undefined) throw new ArgumentError('--store postgres://… is required: the PostgreSQL database the hosts share. See warden cluster --help.');
    if (!isPostgresUrl(store)) throw new ArgumentError(`--store ${JSON.stringify(store)} is not a cluster: only a PostgreSQL store (--store postgres://USER@HOST:PORT/DB) is shared by several hosts; a SQLite file has one host, see warden sessions for it.`);
    client = clientOf(store);
  } catch (error) {
    if (!(error instanceof ArgumentError)) throw error;
    problem(`warden cluster status: ${error.message}\n`);
    return 2;
  }
  const where = redactedUrl(store);
  let hosts: ClusterHost[];
  try {
    await client.connect();
    const known = await client.query<{ hosts: string | null }>("SELECT to_regclass('hosts')::text AS hosts");
    if (!known.rows[0]?.hosts) {
      problem(`warden cluster status: the database ${where} has no warden cluster (no hosts table): start a warden serve --store on it first\n`);
      return 1;
    }
    hosts = await clusterHosts(client);
  } catch (error) {
    const code = postgresCodeOf(error);
    problem(`warden cluster status: cannot read the cluster at ${where}: ${code ? `it ${postgresProblem(code, (error as Error).message)}` : `${(error as Error).message}; check that PostgreSQL runs there and the URL`}\n`);
    return 1;
  } finally {
    await client.end().catch(() => undefined);
  }
  write(json ? `${JSON.stringify({ hosts })}\n` : formatHosts(hosts));
  return 0;
}
