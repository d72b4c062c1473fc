/**
 * Failover time (issue 17, goal: lease + 1 s): three `warden serve --agent demo` hosts (built
 * from src/) on one real PostgreSQL, each advertising its own address. Per kill: a client on
 * one host streams a long turn; once 3 of its chunks arrived, and a random pause of up to a
 * lease more, that host (the owner) is SIGKILLed. Timed from the kill to
 *
 * - **owner in the database**: `sessions.owner_host` names another host (polled every 20 ms on
 *   one connection, so up to 20 ms late);
 * - **first update**: a client already connected to that host (initialized before the kill,
 *   as an editor that knows the cluster) sends `session/resume` with
 *   `_meta["acp-warden/after"]` = the last seq it saw, and gets its first update after that seq
 *   (the cut turn's end, unless the dead host journaled more before it died);
 * - **turn end**: the cut turn's end (`host_lost`) reaches that client.
 *
 * A replacement host is started after each kill, so three hosts are up for the next one (the
 * next kill waits until the hosts that may take its session are up for a lease: a host takes
 * nothing in its first lease); the taken session is left with nobody attached and closed by
 * `--idle-timeout 1`, so every kill moves exactly one session. Each lease runs on a database of its own. Figures are reported,
 * never asserted; the bench checks only that each kill did move the session (epoch + 1, the
 * turn ended `host_lost`). Without PostgreSQL binaries it says so and measures nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ownerWith } from '../spec/support/cluster.js';
import { freePort } from '../spec/support/free-port.js';
import { postgresAvailable, startPostgres } from '../spec/support/postgres.js';
import { buildWarden } from './support/build-warden.js';
import { check, formatNs, now, table, withDeadline } from './support/measure.js';
import { killGroup, serveClient, startServeDaemon, type ServeClient, type ServeFrame } from './support/warden-serve.js';

/** Leases measured (seconds), and kills per lease. */
const plan: ReadonlyArray<{ readonly lease: number; readonly kills: number }> = [
  { lease: 2, kills: 24 },
  { lease: 4, kills: 12 },
];
const wordDelayMs = 50;
/** A prompt the demo agent echoes word by word: about 30 s of answer, far longer than a failover. */
const longPrompt = Array.from({ length: 600 }, (_, n) => `w${n}`).join(' ');
const pollMs = 20;
const seqKey = 'acp-warden/seq';
const turnEndedKey = 'acp-warden/turnEnded';
const initialize = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'failover-bench', version: '1' } };

/** A host of the bench's cluster. */
interface Host {
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
  readonly advertise: string;
  /** When it listened (performance.now()). */
  readonly startedAt: number;
}

/** One kill's times from the SIGKILL, in ns. */
interface KillTimes {
  readonly owner: number;
  readonly firstUpdate: number;
  readonly turnEnd: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `test` every `pollMs` until true (a deadline fails the run). */
const until = (test: () => boolean | Promise<boolean>, what: string) =>
  withDeadline((async () => {
    while (!(await test())) await sleep(pollMs);
  })(), what);

const seqOf = (frame: ServeFrame): number | undefined => {
  const seq = frame.params?._meta?.[seqKey];
  return frame.method === 'session/update' && typeof seq === 'number' ? seq : undefined;
};

/** The n-th of sorted samples at quantile q (nearest rank). */
const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;

export async function clusterFailover(): Promise<void> {
  console.log('\n## Cluster failover: owner SIGKILLed mid-turn -> new owner in the database -> first update served by it (three warden serve hosts, one PostgreSQL)');
  const binaries = postgresAvailable();
  if (!binaries.available) {
    console.log(`skipped: ${binaries.why}`);
    return;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-failover-'));
  const launched: ChildProcess[] = [];
  const sockets: ServeClient[] = [];
  const server = await startPostgres();
  try {
    const main = buildWarden(join(scratch, 'build'));
    console.log(`${binaries.version} on 127.0.0.1 (fsync on); demo agent, ${wordDelayMs} ms per word; owner polled every ${pollMs} ms; --idle-timeout 1`);
    const rows: string[][] = [];
    for (const { lease, kills } of plan) {
      const loadBefore = loadavg()[0] as number;
      const times = await killsAt({ main, scratch, url: await server.createDatabase(`failover_bench_${lease}s`), lease, kills, launched, sockets });
      const loadAfter = loadavg()[0] as number;
      for (const [name, pick] of [['new owner in the database', (t: KillTimes) => t.owner], ['first update served by the new owner', (t: KillTimes) => t.firstUpdate], ['cut turn end (host_lost) at the client', (t: KillTimes) => t.turnEnd]] as const) {
        const sorted = times.map(pick).sort((x, y) => x - y);
        rows.push([`${lease} s`, name, String(sorted.length), formatNs(quantile(sorted, 0.5)), formatNs(quantile(sorted, 0.9)), formatNs(quantile(sorted, 0.99)), formatNs(sorted[0] as number), formatNs(sorted.at(-1) as number), `${loadBefore.toFixed(2)}–${loadAfter.toFixed(2)}`]);
      }
      console.log(`lease ${lease} s, every kill (ms from the SIGKILL: owner / first update / turn end): ${times.map((t) => `${(t.owner / 1e6).toFixed(0)}/${(t.firstUpdate / 1e6).toFixed(0)}/${(t.turnEnd / 1e6).toFixed(0)}`).join(' ')}`);
    }
    console.log(table(['lease', 'from the SIGKILL to', 'kills', 'p50', 'p90', 'p99', 'min', 'max', 'load (1 min)'], rows));
  } finally {
    for (const client of sockets) client.socket.terminate();
    for (const child of launched) killGroup(child);
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Runs `kills` failovers on a fresh cluster of three hosts with `lease`; returns their times. */
async function killsAt(options: { main: string; scratch: string; url: string; lease: number; kills: number; launched: ChildProcess[]; sockets: ServeClient[] }): Promise<KillTimes[]> {
  const { main, scratch, url, lease, launched, sockets } = options;
  let started = 0;
  const startHost = async (): Promise<Host> => {
    const state = join(scratch, `state-${lease}-${++started}`);
    const port = await freePort();
    const advertise = `ws://127.0.0.1:${port}/acp`;
    const env = { ...process.env, XDG_STATE_HOME: state, HOME: scratch };
    const { url: listening, child } = await startServeDaemon(main, env, ['--advertise', advertise, '--lease', String(lease), '--store', url, '--idle-timeout', '1', '--env', `DEMO_WORD_DELAY_MS=${wordDelayMs}`], `127.0.0.1:${port}`);
    launched.push(child);
    return { child, url: listening, token: readFileSync(join(state, 'acp-warden', 'token'), 'utf8').trim(), advertise, startedAt: performance.now() };
  };
  const open = async (host: Host): Promise<ServeClient> => {
    const client = await serveClient(host.url, host.token);
    sockets.push(client);
    await client.request('initialize', initialize);
    return client;
  };
  const db = new pg.Client(url);
  await db.connect();
  const hosts = [await startHost(), await startHost(), await startHost()];
  const times: KillTimes[] = [];
  try {
    for (let kill = 0; kill < options.kills; kill++) {
      // Every earlier session closed (idle): this kill moves one session.
      await until(async () => (await db.query("SELECT 1 FROM sessions WHERE state = 'open'")).rowCount === 0, 'the earlier sessions to be closed');
      // A steady cluster: the hosts that may take the session are past their first lease (a host takes nothing before).
      await until(() => hosts.every((host) => performance.now() - host.startedAt >= lease * 1000), 'the other hosts to be up for a lease');
      const victim = hosts.shift() as Host;
      const owner = await open(victim);
      const sessionId = (await owner.request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
      let cursor = 0;
      let chunks = 0;
      owner.listeners.add((frame) => {
        const seq = seqOf(frame);
        if (seq === undefined) return;
        cursor = Math.max(cursor, seq);
        if ((frame.params?.update as { sessionUpdate?: string } | undefined)?.sessionUpdate === 'agent_message_chunk') chunks++;
      });
      // The editor's connections to the other hosts, open before the kill.
      const standby = new Map<string, ServeClient>();
      for (const host of hosts) standby.set(host.advertise, await open(host));
      owner.send({ id: 1000, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: longPrompt }] } });
      await until(() => chunks >= 3, 'three chunks of the turn');
      // Killed at a random point of the hosts' renewal and look cycles (else each kill falls at the same phase of them).
      await sleep(Math.random() * lease * 1000);
      const seen = cursor;
      const exited = new Promise((resolve) => victim.child.once('exit', resolve));
      victim.child.kill('SIGKILL');
      const killed = now();
      let moved = await ownerWith(db, sessionId);
      await until(async () => (moved = await ownerWith(db, sessionId)).advertise !== victim.advertise && moved.advertise !== null, 'another host to own the session');
      const ownerAt = Number(now() - killed);
      check(moved.epoch === 2, `the session taken once (epoch ${moved.epoch})`);
      const resumed = standby.get(moved.advertise as string);
      check(resumed !== undefined, `the new owner ${String(moved.advertise)} is a host of the bench`);
      let firstAt: number | undefined;
      let endAt: number | undefined;
      let reason: unknown;
      resumed?.listeners.add((frame) => {
        const seq = seqOf(frame);
        if (seq === undefined || seq <= seen || frame.params?.sessionId !== sessionId) return;
        firstAt ??= Number(now() - killed);
        const ended = frame.params?.update?._meta?.[turnEndedKey] as { error?: { data?: { reason?: string } } } | undefined;
        if (ended !== undefined && endAt === undefined) {
          endAt = Number(now() - killed);
          reason = ended.error?.data?.reason;
        }
      });
      const answer = await resumed?.request('session/resume', { sessionId, cwd: scratch, mcpServers: [], _meta: { 'acp-warden/after': seen } });
      check(answer?.error === undefined, `session/resume on the new owner answered ${JSON.stringify(answer?.error)}`);
      await until(() => endAt !== undefined, 'the cut turn\'s end on the new owner');
      check(reason === 'host_lost', `the cut turn ended host_lost (got ${String(reason)})`);
      times.push({ owner: ownerAt, firstUpdate: firstAt as number, turnEnd: endAt as number });
      await withDeadline(exited, 'the killed host to exit');
      killGroup(victim.child);
      for (const client of [owner, ...standby.values()]) client.socket.terminate();
      hosts.push(await startHost());
    }
  } finally {
    await db.end();
  }
  return times;
}
