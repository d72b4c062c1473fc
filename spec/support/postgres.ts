/**
 * A real PostgreSQL for tests: `initdb` into a temporary directory, `postgres` on 127.0.0.1 on
 * a free port, in its own process group, stopped and removed by `stop()`. Never a mock of the
 * database. The binaries are Debian's `postgresql` (`.ci/run` installs it as root) or any
 * PostgreSQL named by `WARDEN_POSTGRES_BIN`; without one, `postgresAvailable()` says why and the
 * specs skip saying so. PostgreSQL refuses to run as root: as root, the server runs as the
 * `postgres` user (the Debian package makes it), else as `nobody`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';

/** Where the PostgreSQL binaries are, or why there are none. */
export type PostgresBinaries = { readonly available: true; readonly bin: string; readonly version: string } | { readonly available: false; readonly why: string };

/** A PostgreSQL server started for a test. */
export interface TestPostgres {
  /** `postgresql://warden@127.0.0.1:PORT/postgres`: trust authentication, on the loopback only. */
  readonly url: string;
  readonly port: number;
  /** The server's data directory (removed by `stop`). */
  readonly dataDir: string;
  /** The postmaster's pid (also its process group). */
  pid(): number;
  /**
   * Stops the server (`immediate`: SIGQUIT, as a crash: no checkpoint, recovery at the next
   * start; else SIGINT, a fast shutdown) and starts it again on the same port and data, after
   * `whileDown` settled when given (the server is down while it runs; it is started again even
   * when `whileDown` rejects, then the rejection is thrown).
   */
  restart(options?: { readonly immediate?: boolean; readonly whileDown?: () => Promise<unknown> }): Promise<void>;
  /** Creates an empty database `name` on the server and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (fast shutdown, then SIGKILL of its group after 10 s) and removes its directory. */
  stop(): Promise<void>;
}

const readyWithin = 60_000;

/** Servers still running, with their directories: a test process that exits without `stop()` (a failed hook, a ^C) leaves none behind. */
const running = new Map<ChildProcess, string>();
process.once('exit', () => {
  for (const [child, dir] of running) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

let found: PostgresBinaries | undefined;

/** The PostgreSQL binaries this machine has (cached): `WARDEN_POSTGRES_BIN`, the newest `/usr/lib/postgresql/N/bin`, or `PATH`. */
export function postgresAvailable(): PostgresBinaries {
  found ??= findBinaries();
  return found;
}

function findBinaries(): PostgresBinaries {
  const candidates: string[] = [];
  if (process.env.WARDEN_POSTGRES_BIN) candidates.push(process.env.WARDEN_POSTGRES_BIN);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((name) => /^\d+$/u.test(name)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => join(debian, version, 'bin')));
  }
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir) candidates.push(dir);
  for (const bin of candidates) {
    if (!existsSync(join(bin, 'initdb')) || !existsSync(join(bin, 'postgres'))) continue;
    try {
      const version = execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
      return { available: true, bin, version };
    } catch {
      // not runnable: try the next
    }
  }
  return {
    available: false,
    why: 'no PostgreSQL server binaries (initdb, postgres) found: apt-get install postgresql (.ci/run does it as root), or set WARDEN_POSTGRES_BIN to their directory',
  };
}

/**
 * Skips the calling mocha suite (in `before`) when there is no PostgreSQL, printing why.
 * Returns the binaries otherwise.
 */
export function requirePostgres(context: Mocha.Context): string {
  const binaries = postgresAvailable();
  if (!binaries.available) {
    console.log(`      skipped: ${binaries.why}`);
    context.skip();
  }
  return (binaries as { bin: string }).bin;
}

/** The user the server runs as: ourselves, or (as root) `postgres`, else `nobody`. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      if (uid > 0) return { uid, gid };
    } catch {
      // no such user
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as (it refuses root)');
}

/** Starts a PostgreSQL for a test; throws (with the server's log) when it does not come up. */
export async function startPostgres(): Promise<TestPostgres> {
  const binaries = postgresAvailable();
  if (!binaries.available) throw new Error(binaries.why);
  const { bin } = binaries;
  const user = serverUser();
  const dataDir = mkdtempSync(join(tmpdir(), 'warden-pg-'));
  try {
    if (user) chownSync(dataDir, user.uid, user.gid);
    const asUser = user ? { uid: user.uid, gid: user.gid } : {};
    execFileSync(join(bin, 'initdb'), ['-D', join(dataDir, 'data'), '-U', 'warden', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
      ...asUser,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LC_ALL: 'C' },
    });
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? (error as Error).message}`, { cause: error });
  }
  let port = 0;
  let child: ChildProcess | undefined;
  const log = join(dataDir, 'server.log');
  const launch = async (): Promise<void> => {
    const args = ['-D', join(dataDir, 'data'), '-p', String(port), '-h', '127.0.0.1', '-k', dataDir, '-c', 'fsync=on', '-c', `log_directory=${dataDir}`, '-c', 'logging_collector=off', '-c', 'max_connections=50'];
    // The log goes to a file (stderr of the child): a spec's output stays the spec's.
    const out = openSync(log, 'a');
    if (user) chownSync(log, user.uid, user.gid);
    child = spawn(join(bin, 'postgres'), args, { detached: true, stdio: ['ignore', out, out], ...(user ? { uid: user.uid, gid: user.gid } : {}), env: { ...process.env, LC_ALL: 'C' } });
    closeSync(out);
    running.set(child, dataDir);
    child.once('exit', () => running.delete(child as ChildProcess));
    await untilReady(child, port, log);
  };
  // A port taken between freePort() and the server's bind: another port.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (error) {
      await stopChild(child, 'SIGINT');
      if (attempt >= 3 || !/could not (bind|create listen)/u.test(tail(log))) {
        rmSync(dataDir, { recursive: true, force: true });
        throw error;
      }
    }
  }
  const url = `postgresql://warden@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    dataDir,
    pid: () => child?.pid as number,
    async restart(options = {}) {
      await stopChild(child, options.immediate ? 'SIGQUIT' : 'SIGINT');
      try {
        await options.whileDown?.();
      } finally {
        await launch();
      }
    },
    async createDatabase(name) {
      const admin = new pg.Client(url);
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return url.replace(/\/postgres$/u, `/${name}`);
    },
    async stop() {
      try {
        await stopChild(child, 'SIGINT');
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** Waits until the server takes a connection; throws with the log's end when it exits or the deadline passes. */
async function untilReady(child: ChildProcess, port: number, log: string): Promise<void> {
  const deadline = Date.now() + readyWithin;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  for (;;) {
    if (exited || child.exitCode !== null) throw new Error(`postgres exited before it was ready:\n${tail(log)}`);
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'warden', database: 'postgres', connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`postgres was not ready within ${readyWithin} ms (${(error as Error).message}):\n${tail(log)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

/** Signals the server's process group and waits for its exit (SIGKILL of the group after 10 s). */
async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // gone
    }
  };
  group(signal);
  const timer = setTimeout(() => group('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
  // Backends it forked exit with it; any straggler of the group goes too.
  group('SIGKILL');
}

function tail(log: string): string {
  try {
    return readFileSync(log, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '(no server log)';
  }
}

/** The rows of one query on the database at `url`, on a connection of its own (closed after). */
export async function queryRows<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}
