/**
 * Membership on a real PostgreSQL (spec/support/postgres.ts; skipped, saying why, without one):
 * journals opened on one database are live hosts with their loads; a host that stops renewing
 * is not live once its lease ran out; `gone` after close; `warden cluster status` as a real
 * subprocess lists them (and --json parses); a SIGKILLed process's row expires, and a SIGKILLed
 * `warden serve` shows `expired` in the table and in --json alike (issue 28, defect 4).
 */
import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startClusterHosts } from '../support/cluster.js';
import { openMembership, type ClusterHost, type Membership } from '../../src/cluster/membership.js';
import { openPostgresJournal, type PostgresJournal } from '../../src/journal/postgres-journal.js';
import { requirePostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { killGroups, wardenMain } from '../support/warden-process.js';

const lease = 1_000;

/** Polls `check` until it holds (a lease to run out: never a fixed sleep), failing after `within` ms. */
async function eventually(check: () => Promise<boolean>, within = 30_000): Promise<void> {
  const deadline = Date.now() + within;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function warden(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [wardenMain, ...args], { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('cluster/membership on a real PostgreSQL', function () {
  this.timeout(120_000);
  let server: TestPostgres;
  let databases = 0;
  let url: string;
  const opened: Array<{ close(): Promise<void> }> = [];

  before(async function () {
    requirePostgres(this);
    server = await startPostgres();
  });
  after(async () => server?.stop());
  beforeEach(async () => {
    const name = `membership_${process.pid}_${++databases}`;
    const admin = new pg.Client(server.url);
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    url = server.url.replace(/\/postgres$/u, `/${name}`);
  });
  afterEach(async () => {
    for (const one of opened.splice(0).reverse()) await one.close().catch(() => undefined);
  });

  /** A host: a journal (no heartbeat of its own) and its membership, with a fixed load. */
  async function host(load: number, options: { readonly renew?: boolean } = {}): Promise<{ journal: PostgresJournal; membership: Membership }> {
    const journal = await openPostgresJournal(url, { lease, renew: false, advertise: `ws://127.0.0.1:${7000 + load}/acp` });
    const membership = await openMembership(url, { hostId: journal.hostId, lease, load: () => load, renew: options.renew });
    opened.push(journal, membership);
    await membership.heartbeat();
    return { journal, membership };
  }
  const byId = (hosts: readonly ClusterHost[]) => new Map(hosts.map((one) => [one.hostId, one]));

  it('three hosts on one database are live with their loads; one that stops renewing is not live after its lease; gone after close', async () => {
    const a = await host(3);
    const b = await host(5);
    const c = await host(8, { renew: false });
    const live = byId(await a.membership.liveHosts());
    expect([...live.keys()].sort()).to.deep.equal([a.journal.hostId, b.journal.hostId, c.journal.hostId].sort());
    expect(live.get(b.journal.hostId)).to.include({ load: 5, state: 'live', live: true, pid: process.pid, advertise: 'ws://127.0.0.1:7005/acp' });
    expect(live.get(c.journal.hostId)?.load).to.equal(8);
    // c stops renewing: after its lease it is no longer live; a and b renew on their own timers.
    await eventually(async () => !byId(await a.membership.liveHosts()).has(c.journal.hostId));
    expect([...byId(await b.membership.liveHosts()).keys()].sort()).to.deep.equal([a.journal.hostId, b.journal.hostId].sort());
    // b closes: gone at once (not after a lease).
    await b.membership.close();
    await b.journal.close();
    const status = JSON.parse((await warden(['cluster', 'status', '--store', url, '--json'])).stdout) as { hosts: ClusterHost[] };
    const rows = byId(status.hosts);
    expect(rows.get(b.journal.hostId)).to.include({ state: 'gone', live: false });
    expect(rows.get(c.journal.hostId)).to.include({ state: 'expired', live: false });
    expect(rows.get(a.journal.hostId)).to.include({ state: 'live', live: true, load: 3 });
    expect(byId(await a.membership.liveHosts()).has(b.journal.hostId)).to.equal(false);
  });

  it('draining hosts are not live; session counts are the sessions each owns', async () => {
    const a = await host(1);
    const b = await host(2);
    await a.journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    await a.journal.createSession({ sessionId: 's2', agent: 'demo', cwd: '/w' });
    await b.journal.createSession({ sessionId: 's3', agent: 'demo', cwd: '/w' });
    await b.membership.drain();
    const live = byId(await a.membership.liveHosts());
    expect([...live.keys()]).to.deep.equal([a.journal.hostId]);
    expect(live.get(a.journal.hostId)?.sessions).to.equal(2);
    const { stdout, code } = await warden(['cluster', 'status', '--store', url]);
    expect(code).to.equal(0);
    const lineOf = (id: string) => stdout.split('\n').find((line) => line.startsWith(id)) ?? '';
    expect(stdout.split('\n')[0]).to.match(/^HOST\s+NAME\s+PID\s+ADVERTISE\s+STATE\s+HEARTBEAT\s+LEASE LEFT\s+SESSIONS$/u);
    expect(lineOf(a.journal.hostId)).to.match(/ws:\/\/127\.0\.0\.1:7001\/acp\s+live\s+\d+\.\ds ago\s+\d+\.\ds\s+2$/u);
    expect(lineOf(b.journal.hostId)).to.match(/\sdraining\s.*\s1$/u);
  });

  it('the lease view (simulated monotonic clock): held after a successful heartbeat, suspended then stopped without one, a failed heartbeat renews nothing', async () => {
    let now = 10_000;
    const journal = await openPostgresJournal(url, { lease, renew: false });
    const membership = await openMembership(url, { hostId: journal.hostId, lease, load: () => 0, renew: false, monotonic: () => now });
    opened.push(journal, membership);
    expect(membership.standing()).to.equal('held');
    now += lease;
    expect(membership.leaseHeld()).to.equal(false);
    expect(membership.standing()).to.equal('suspended');
    await membership.heartbeat();
    expect(membership.standing()).to.equal('held');
    now += 2 * lease;
    expect(membership.standing()).to.equal('stopped');
    // The row is gone (the journal closed): the heartbeat fails and the lease stays lost.
    await journal.close();
    const refused = await membership.heartbeat().then(() => undefined, (error: Error) => error);
    expect(refused?.message).to.include('not registered (or gone)');
    expect(membership.standing()).to.equal('stopped');
  });

  it('SIGKILL of a process holding a journal: its row stays live until its lease runs out, then is not live', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', `
        const { openPostgresJournal } = await import(${JSON.stringify(new URL('../../src/journal/postgres-journal.ts', import.meta.url).href)});
        const journal = await openPostgresJournal(${JSON.stringify(url)}, { lease: ${lease} });
        process.stdout.write(journal.hostId + '\\n');
        setInterval(() => undefined, 1000);
      `],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const hostId = await new Promise<string>((resolve, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
        child.once('exit', (code) => reject(new Error(`the journal process exited (${code})`)));
      });
      const watcher = await host(0);
      expect(byId(await watcher.membership.liveHosts()).get(hostId)).to.include({ pid: child.pid, live: true });
      child.kill('SIGKILL');
      await eventually(async () => !byId(await watcher.membership.liveHosts()).has(hostId));
      const status = JSON.parse((await warden(['cluster', 'status', '--store', url, '--json'])).stdout) as { hosts: ClusterHost[] };
      const row = byId(status.hosts).get(hostId);
      expect(row).to.include({ state: 'expired', live: false });
      expect(row?.leaseLeft).to.be.below(0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('warden cluster status: a SIGKILLed warden serve is expired in the table and in --json alike (issue 28, defect 4)', async () => {
    const state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-membership-')));
    const launched: ChildProcess[] = [];
    try {
      const [killed, alive] = await startClusterHosts(state, ['killed', 'alive'], launched, { store: url, lease: 3 });
      const killedPid = killed?.process.pid as number;
      const alivePid = alive?.process.pid as number;
      killed?.process.kill('SIGKILL');
      await killed?.exited;
      /** Each host's state by pid: from --json, and from the table's STATE column. */
      const jsonStates = async () => {
        const { stdout } = await warden(['cluster', 'status', '--store', url, '--json']);
        return new Map((JSON.parse(stdout) as { hosts: ClusterHost[] }).hosts.map((one) => [one.pid, one]));
      };
      const tableStates = async () => {
        const [header, ...lines] = (await warden(['cluster', 'status', '--store', url])).stdout.trimEnd().split('\n');
        expect(header).to.match(/\sPID\s+ADVERTISE\s+STATE\s/u);
        return new Map(lines.map((line) => line.split(/\s+/u)).map((cells) => [Number(cells[2]), cells[4]]));
      };
      await eventually(async () => (await jsonStates()).get(killedPid)?.live === false);
      const json = await jsonStates();
      const table = await tableStates();
      expect(json.get(killedPid)).to.include({ state: 'expired', live: false });
      expect(table.get(killedPid)).to.equal('expired');
      expect(json.get(alivePid)).to.include({ state: 'live', live: true });
      expect(table.get(alivePid)).to.equal('live');
    } finally {
      await killGroups(launched, { descendants: true });
      rmSync(state, { recursive: true, force: true });
    }
  });

  it('warden cluster status: an unreachable database is named without its password; a non-postgres store names the fix', async () => {
    const down = await warden(['cluster', 'status', '--store', 'postgres://warden:s3cret@127.0.0.1:1/none']);
    expect(down.code).to.equal(1);
    expect(down.stderr).to.include('postgres://warden:***@127.0.0.1:1/none').and.include('ECONNREFUSED').and.not.include('s3cret');
    const sqlite = await warden(['cluster', 'status', '--store', '/tmp/journal.sqlite']);
    expect(sqlite.code).to.equal(2);
    expect(sqlite.stderr).to.include('only a PostgreSQL store');
    const empty = await warden(['cluster', 'status', '--store', url]);
    expect(empty.code).to.equal(1);
    expect(empty.stderr).to.include('has no warden cluster');
  });
});
