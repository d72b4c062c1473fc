/**
 * Database faults under the PostgreSQL journal, on a real PostgreSQL (spec/support/postgres.ts;
 * skipped, saying why, without one), issue 17: the server restarted (immediate stop, then start)
 * or down for a while. Calls in flight are retried and resolve once it is back; no acknowledged
 * entry is lost or written twice, even when a COMMIT's answer is lost (a proxy cuts the
 * connection after the server committed); a server down for longer than `retryFor` gives a
 * PostgresJournalError naming the database; a blink takes no session from its owner, and a
 * fenced owner stays fenced.
 */
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { FencedAppendError, type JournalUpdateEntry } from '../../src/journal/async-journal.js';
import { SessionOwnedError, type JournalEntry } from '../../src/journal/journal.js';
import { openPostgresJournal, PostgresJournalError, type PostgresJournal, type PostgresJournalOptions } from '../../src/journal/postgres-journal.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { requirePostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { rejection, until } from '../support/settle.js';

const update = (text: string): JournalUpdateEntry => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });
const prompt = (text: string): JournalEntry => ({ kind: 'prompt', prompt: [{ type: 'text', text }] });

describe('PostgreSQL journal: database faults (issue 17)', function () {
  this.timeout(120_000);
  let server: TestPostgres;
  let databases = 0;
  /** This test's database, straight (not through a proxy). */
  let url: string;
  const opened: PostgresJournal[] = [];
  const proxies: FaultProxy[] = [];

  before(async function () {
    requirePostgres(this);
    server = await startPostgres();
  });
  after(async () => server?.stop());
  beforeEach(async () => {
    url = await server.createDatabase(`faults_${process.pid}_${++databases}`);
  });
  afterEach(async () => {
    for (const journal of opened.splice(0)) await journal.close().catch(() => undefined);
    for (const proxy of proxies.splice(0)) await proxy.close();
  });

  const open = async (options: PostgresJournalOptions = {}, at = url) => {
    const journal = await openPostgresJournal(at, options);
    opened.push(journal);
    return journal;
  };
  /** Runs `sql` on this test's database on a connection of its own. */
  const direct = async <R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<R[]> => {
    const client = new pg.Client(url);
    await client.connect();
    try {
      return (await client.query<R>(sql, values)).rows;
    } finally {
      await client.end();
    }
  };

  it('an immediate restart during a stream of appends and groups: the writes in flight resolve after it, and every acknowledged entry is there once, in order', async () => {
    const journal = await open();
    const sessions = ['s0', 's1', 's2', 's3'];
    for (const sessionId of sessions) await journal.createSession({ sessionId, agent: 'demo', cwd: '/w' });
    /** What each session's writes resolved: seqs and entries, in the order they were acknowledged. */
    const acknowledged = new Map(sessions.map((sessionId) => [sessionId, { seqs: [] as number[], entries: [] as JournalEntry[] }]));
    let pending = 0;
    let stop = false;
    // One writer per session, one write at a time (as the host's write queue issues them).
    const writers = sessions.map(async (sessionId) => {
      const done = acknowledged.get(sessionId) as { seqs: number[]; entries: JournalEntry[] };
      for (let index = 0; !stop; index++) {
        const entries = index % 2 ? [update(`${sessionId}#${index}a`), update(`${sessionId}#${index}b`), update(`${sessionId}#${index}c`)] : [prompt(`${sessionId}#${index}`)];
        pending++;
        const seqs = index % 2 ? await journal.appendGroup(sessionId, entries as JournalUpdateEntry[]) : [await journal.append(sessionId, entries[0] as JournalEntry)];
        pending--;
        done.seqs.push(...seqs);
        done.entries.push(...entries);
      }
    });
    // Reads go on beside them, retried as well.
    const reader = (async () => {
      let reads = 0;
      for (; !stop; reads++) await journal.readEntries('s0', { limit: 50 });
      return reads;
    })();
    const written = () => Math.min(...[...acknowledged.values()].map((done) => done.seqs.length));
    await until(async () => written() >= 10);
    // Writes in flight while no server runs: each of them resolves only by a retry.
    let inFlightWhileDown = 0;
    await server.restart({ immediate: true, whileDown: async () => void (inFlightWhileDown = pending) });
    const before = written();
    await until(async () => written() >= before + 10);
    stop = true;
    await Promise.all([...writers, reader]);

    // Writes were in flight across the restart, and they resolved (none failed: Promise.all above).
    expect(inFlightWhileDown).to.be.greaterThan(0);
    for (const [sessionId, done] of acknowledged) {
      const records = await journal.entries(sessionId);
      expect(records.map((record) => record.seq)).to.deep.equal(done.seqs);
      expect(records.map((record) => record.entry)).to.deep.equal(done.entries);
    }
  });

  it('a write whose COMMIT went through but whose answer was lost is retried under its write id: its seqs come back, nothing is written twice', async () => {
    const proxy = await startFaultProxy(server.port);
    proxies.push(proxy);
    const journal = await open({}, url.replace(`:${server.port}/`, `:${proxy.port}/`));
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const first = await journal.append('s1', prompt('first'));
    const texts = async () => (await direct<{ seq: string; entry: string }>("SELECT e.seq, e.entry FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = 's1' ORDER BY e.seq")).map((row) => [Number(row.seq), row.entry] as const);

    const lost = proxy.loseAnswerTo('warden_append');
    const single = journal.append('s1', update('once'));
    await lost;
    // The server committed it; the journal never heard.
    const committed = await texts();
    expect(committed.map(([, entry]) => entry)).to.deep.equal([JSON.stringify(prompt('first')), JSON.stringify(update('once'))]);
    proxy.accept();
    expect(await single).to.equal(committed[1]?.[0]);

    const group = [update('g1'), update('g2'), update('g3')];
    const lostGroup = proxy.loseAnswerTo('warden_append');
    const grouped = journal.appendGroup('s1', group);
    await lostGroup;
    expect(await texts()).to.have.length(5);
    proxy.accept();
    const seqs = await grouped;
    const records = await journal.entries('s1');
    expect(records.map((record) => record.seq)).to.deep.equal([first, await single, ...seqs]);
    expect(records.map((record) => record.entry)).to.deep.equal([prompt('first'), update('once'), ...group]);

    // A session created with its COMMIT's answer lost: the retry finds it made, and it is this journal's.
    const lostCreate = proxy.loseAnswerTo('COMMIT');
    const created = journal.createSession({ sessionId: 's2', agent: 'demo', cwd: '/w' });
    await lostCreate;
    expect(await direct("SELECT 1 FROM sessions WHERE session_id = 's2'")).to.have.length(1);
    proxy.accept();
    expect(await created).to.include({ sessionId: 's2', state: 'open' });
    expect(journal.epochOf('s2')).to.equal(1);
    await journal.append('s2', prompt('mine'));
  });

  it('a write id replayed: warden_append returns the seqs written then and writes nothing, even for a host that lost the session since', async () => {
    const journal = await open();
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const call = "SELECT warden_append('s1', $1, 1, 'w-1', ARRAY[now(), now()], ARRAY['update', 'update'], ARRAY['{\"kind\":\"update\",\"n\":1}', '{\"kind\":\"update\",\"n\":2}'], NULL, 0) AS seqs";
    const [written] = await direct<{ seqs: string[] }>(call, [journal.hostId]);
    await direct("UPDATE sessions SET owner_host = 'someone-else', epoch = 2 WHERE session_id = 's1'");
    const [again] = await direct<{ seqs: string[] }>(call, [journal.hostId]);
    expect(again?.seqs).to.deep.equal(written?.seqs);
    expect((await journal.entries('s1')).map((record) => String(record.seq))).to.deep.equal(written?.seqs);
    // Another write id of the stale owner is fenced.
    expect(await rejection(direct(call.replace("'w-1'", "'w-2'"), [journal.hostId]))).to.have.property('code', 'WF001');
  });

  it('migration 2 on a version-1 store: its entries are kept, their write ids empty, and appends made after it are idempotent', async () => {
    const journal = await open();
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const old = await journal.append('s1', prompt('written at version 1'));
    await journal.close();
    // Back to version 1, as a store made before migration 2 (the 8-argument warden_append stays).
    await direct(`DROP FUNCTION warden_append(text, text, bigint, text, timestamptz[], text[], text[], text, integer);
      DROP INDEX entries_by_prompt_key; ALTER TABLE entries DROP COLUMN write_id;
      DROP INDEX sessions_by_parent; ALTER TABLE sessions DROP COLUMN parent_session_id; DELETE FROM warden_schema WHERE version >= 2`);
    const reopened = await open();
    expect((await direct<{ version: number }>('SELECT version FROM warden_schema ORDER BY version')).map((row) => row.version)).to.deep.equal([1, 2, 3, 4]);
    await reopened.claim('s1');
    const seq = await reopened.append('s1', update('written at version 2'));
    expect(await direct<{ seq: string; mine: boolean }>('SELECT seq, write_id LIKE $1 AS mine FROM entries ORDER BY seq', [`${reopened.hostId}:%`])).to.deep.equal([
      { seq: String(old), mine: null },
      { seq: String(seq), mine: true },
    ]);
  });

  it('migration 4 on a version-3 store: its sessions read as sessions of their own, and children are recorded after it, owned by nobody', async () => {
    const journal = await open();
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const old = await journal.append('s1', prompt('written at version 3'));
    await journal.close();
    await direct('DROP INDEX sessions_by_parent; ALTER TABLE sessions DROP COLUMN parent_session_id; DELETE FROM warden_schema WHERE version >= 4');
    const reopened = await open();
    expect((await direct<{ version: number }>('SELECT version FROM warden_schema ORDER BY version')).map((row) => row.version)).to.deep.equal([1, 2, 3, 4]);
    expect(await reopened.getSession('s1')).to.include({ sessionId: 's1', agent: 'demo' }).and.not.have.property('parentSessionId');
    expect((await reopened.entries('s1')).map((record) => record.seq)).to.deep.equal([old]);
    await reopened.recordChild({ sessionId: 's1-child', parentSessionId: 's1', agent: 'demo', cwd: '/w' });
    expect(await direct('SELECT parent_session_id, owner_host FROM sessions WHERE session_id = $1', ['s1-child'])).to.deep.equal([{ parent_session_id: 's1', owner_host: null }]);
  });

  it('the server down for longer than retryFor: the call rejects with a PostgresJournalError naming the database without its password; the journal goes on once it is back', async () => {
    const secret = url.replace('//warden@', '//warden:s3cret@');
    const journal = await open({ retryFor: 1_000 }, secret);
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    let failures: Error[] = [];
    await server.restart({
      immediate: true,
      whileDown: async () => {
        failures = await Promise.all([rejection(journal.append('s1', prompt('lost'))), rejection(journal.getSession('s1'))]);
      },
    });
    for (const error of failures) {
      expect(error).to.be.instanceOf(PostgresJournalError);
      expect(error.message).to.include(`the journal ${secret.replace('s3cret', '***')} cannot be reached`).and.include('gave up after retrying for');
      expect(error.message).not.to.include('s3cret');
      expect((error as PostgresJournalError).retriedFor).to.be.at.least(1_000);
    }
    const seq = await journal.append('s1', prompt('back'));
    expect((await journal.entries('s1')).map((record) => record.seq)).to.deep.equal([seq]);
  });

  it('a blink shorter than the lease takes no session: the owner keeps its epoch, its write in flight resolves, its renewals resume, and another host cannot claim', async () => {
    const lease = 4_000;
    const owner = await open({ lease });
    const other = await open({ lease });
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    let inFlight: Promise<number> | undefined;
    await server.restart({
      immediate: true,
      whileDown: async () => {
        inFlight = owner.append('s1', prompt('during the blink'));
        // Down for a while (not an assertion: the blink's length).
        await sleep(1_500);
      },
    });
    const seq = await (inFlight as Promise<number>);
    // Once the database has been up for a whole lease, only the owner's renewals keep the session its own.
    await until(async () => (await direct<{ up: boolean }>('SELECT now() - pg_postmaster_start_time() > make_interval(secs => $1 / 1000.0) AS up', [lease]))[0]?.up === true);
    expect(await rejection(other.claim('s1'))).to.be.instanceOf(SessionOwnedError);
    expect(owner.epochOf('s1')).to.equal(1);
    expect(await direct('SELECT owner_host, epoch FROM sessions')).to.deep.equal([{ owner_host: owner.hostId, epoch: '1' }]);
    const after = await owner.append('s1', prompt('after'));
    expect((await owner.entries('s1')).map((record) => record.seq)).to.deep.equal([seq, after]);
  });

  it('an outage that was not a restart: back for less than a lease, a journal takes no session from a host that has not closed (its lease ran out meanwhile); a lease later it may', async () => {
    // The owner renews nothing: its lease runs out while the other journal cannot reach the database.
    const owner = await open({ lease: 1000, renew: false });
    await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const proxy = await startFaultProxy(server.port);
    proxies.push(proxy);
    const other = await open({ lease: 1000 }, url.replace(`:${server.port}/`, `:${proxy.port}/`));
    proxy.cutAll();
    const meanwhile = other.lastSeq('s1');
    // Away until the owner's lease has run out in the database (read directly, not through the proxy).
    await until(async () => (await direct('SELECT 1 FROM hosts WHERE host_id = $1 AND lease_until < now()', [owner.hostId])).length === 1);
    proxy.accept();
    await meanwhile;
    // The owner's lease ran out in the database, but this journal was away: it may be the one that could not renew.
    expect(await rejection(other.claim('s1'))).to.be.instanceOf(SessionOwnedError);
    // A lease after its last connection error it may (polled: a refused claim changes nothing).
    await until(async () => (await other.claim('s1').catch(() => undefined))?.epoch === 2);
  });

  it('a fenced owner is still fenced after a restart: its write retried across the restart is refused, and nothing is written', async () => {
    const stale = await open({ lease: 1_000, renew: false });
    const next = await open({ lease: 1_000 });
    await stale.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const first = await stale.append('s1', prompt('before'));
    await until(async () => (await next.claim('s1').catch(() => undefined))?.epoch === 2);
    let inFlight: Promise<Error> | undefined;
    await server.restart({
      immediate: true,
      whileDown: async () => {
        inFlight = rejection(stale.appendGroup('s1', [update('late a'), update('late b')]));
      },
    });
    expect(await inFlight).to.be.instanceOf(FencedAppendError).with.nested.property('owner.epoch', 2);
    expect(await rejection(stale.append('s1', prompt('later')))).to.be.instanceOf(FencedAppendError);
    expect((await next.entries('s1')).map((record) => record.seq)).to.deep.equal([first]);
  });

  it('a pool full of writes waiting on a lock does not hold the lease up: the renewal has a connection of its own', async () => {
    const journal = await open({ connections: 1, renew: false });
    const session = await journal.createSession({ sessionId: 'busy', agent: 'demo', cwd: '/tmp' });
    expect(session.sessionId).to.equal('busy');
    // Another client holds the session's row: the append (warden_append takes that lock) waits, holding the pool's only connection.
    const locker = new pg.Client(url);
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query("SELECT 1 FROM sessions WHERE session_id = 'busy' FOR UPDATE");
      let appended = false;
      const append = journal.append('busy', update('waits')).then(() => (appended = true));
      await until(async () => (await direct<{ waiting: number }>("SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock'"))[0]?.waiting === 1);
      const before = (await direct<{ heartbeat_at: Date }>('SELECT heartbeat_at FROM hosts WHERE host_id = $1', [journal.hostId]))[0]!.heartbeat_at;
      await journal.renewLease();
      const after = (await direct<{ heartbeat_at: Date }>('SELECT heartbeat_at FROM hosts WHERE host_id = $1', [journal.hostId]))[0]!.heartbeat_at;
      expect(after.getTime(), 'renewed while the append waits').to.be.greaterThan(before.getTime());
      expect(appended, 'the append still waits on the lock').to.equal(false);
      await locker.query('COMMIT');
      await append;
      expect(appended).to.equal(true);
    } finally {
      await locker.end();
    }
  });

  it('close while calls wait to retry: they reject (closed, or their last connection error) while the server is still down, instead of retrying on', async () => {
    const journal = await open({ retryFor: 600_000 });
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    await server.restart({
      immediate: true,
      whileDown: async () => {
        const calls = [rejection(journal.append('s1', prompt('never'))), rejection(journal.entries('s1'))];
        await journal.close();
        for (const error of await Promise.all(calls)) expect(error.message).to.match(/^the journal postgresql:\/\/\S+ (is closed|cannot be reached)/u);
      },
    });
  });

  it('retryFor is validated: a negative or fractional value is refused naming the option', async () => {
    for (const retryFor of [-1, 1.5]) {
      expect(await rejection(openPostgresJournal(url, { retryFor }))).to.be.instanceOf(TypeError).with.property('message').that.includes('`retryFor` option');
    }
  });
});
