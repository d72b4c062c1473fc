/**
 * One contract, every journal engine: the SQLite journal (seen as an AsyncJournal) and the
 * PostgreSQL journal on a real PostgreSQL (spec/support/postgres.ts; skipped, saying why, when
 * the machine has none) assert the same behaviour: ordering, group commit, durability on
 * return, cursors and pages, lists, errors, owners; and, where the engine has epochs, a stale
 * owner's write fenced.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { asyncJournalOf } from '../../src/journal/async-journal-of.js';
import { FencedAppendError, type AsyncJournal, type JournalUpdateEntry } from '../../src/journal/async-journal.js';
import { InvalidCursorError, JournalError, SessionOwnedError, UnknownSessionError, type JournalEntry } from '../../src/journal/journal.js';
import { openPostgresJournal, type PostgresJournal } from '../../src/journal/postgres-journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres.js';
import { rejection } from '../support/settle.js';

/** How a test opens journals on one store (each `open` is another host, or another process's view). */
interface Store {
  open(options?: { readonly lease?: number; readonly renew?: boolean; readonly now?: () => Date }): Promise<AsyncJournal>;
  /** Overwrites the stored text of a session's entries with text that is not JSON (a fault, an edit by hand). */
  damageEntries(sessionId: string): Promise<void>;
  /** Crashes the store's server and brings it back (PostgreSQL: an immediate shutdown), when there is one. */
  readonly crash?: () => Promise<void>;
  dispose(): Promise<void>;
}

interface Engine {
  readonly name: string;
  /** Why the engine cannot run here (the suite skips, saying so). */
  readonly unavailable?: () => string | undefined;
  /** Whether owners have epochs and stale writes are fenced. */
  readonly fencing: boolean;
  before?(): Promise<void>;
  after?(): Promise<void>;
  store(): Promise<Store>;
}

const sqliteEngine: Engine = {
  name: 'SQLite (asyncJournalOf(sqliteJournal))',
  fencing: false,
  async store() {
    const dir = mkdtempSync(join(tmpdir(), 'warden-contract-'));
    const path = join(dir, 'journal.sqlite');
    return {
      open: async (options = {}) => asyncJournalOf(sqliteJournal(path, options.now ? { now: options.now } : {})),
      async damageEntries(sessionId) {
        const db = new Database(path);
        db.prepare("UPDATE entries SET entry = '{\"kind\": \"upd' WHERE session_key = (SELECT key FROM sessions WHERE session_id = ?)").run(sessionId);
        db.close();
      },
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

let server: TestPostgres | undefined;
let databases = 0;
const postgresEngine: Engine = {
  name: 'PostgreSQL (openPostgresJournal)',
  fencing: true,
  unavailable: () => {
    const binaries = postgresAvailable();
    return binaries.available ? undefined : binaries.why;
  },
  async before() {
    server = await startPostgres();
  },
  async after() {
    await server?.stop();
    server = undefined;
  },
  async store() {
    const running = server as TestPostgres;
    // A database per test: nothing one test wrote is seen by the next.
    const name = `contract_${process.pid}_${++databases}`;
    const admin = new pg.Client(running.url);
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = running.url.replace(/\/postgres$/u, `/${name}`);
    return {
      url,
      open: (options = {}) => openPostgresJournal(url, options),
      crash: () => running.restart({ immediate: true }),
      async damageEntries(sessionId) {
        const client = new pg.Client(url);
        await client.connect();
        await client.query(`UPDATE entries SET entry = '{"kind": "upd' WHERE session_key = (SELECT key FROM sessions WHERE session_id = $1)`, [sessionId]);
        await client.end();
      },
      async dispose() {
        const drop = new pg.Client(running.url);
        await drop.connect();
        await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await drop.end();
      },
    };
  },
};

const update = (text: string): JournalUpdateEntry => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });
const prompt = (text: string): JournalEntry => ({ kind: 'prompt', prompt: [{ type: 'text', text }] });

/** A clock that moves one second per call: stamps (and so the list order) never tie. */
function steppedClock(): () => Date {
  let tick = 0;
  return () => new Date(Date.UTC(2026, 10, 30, 12, 0, 0) + tick++ * 1000);
}

/** Retries `attempt` until it resolves (a lease to run out: polled, never a fixed sleep), or fails after `within` ms with the last error. */
async function eventually<T>(attempt: () => Promise<T>, within = 30_000): Promise<T> {
  const deadline = Date.now() + within;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

for (const engine of [sqliteEngine, postgresEngine]) {
  describe(`journal contract: ${engine.name}`, function () {
    this.timeout(60_000);
    let store: Store;
    const opened: AsyncJournal[] = [];
    const open = async (options?: Parameters<Store['open']>[0]) => {
      const journal = await store.open(options);
      opened.push(journal);
      return journal;
    };

    before(async function () {
      const why = engine.unavailable?.();
      if (why) {
        console.log(`      skipped: ${why}`);
        this.skip();
      }
      await engine.before?.();
    });
    after(async () => engine.after?.());
    beforeEach(async () => {
      store = await engine.store();
    });
    afterEach(async () => {
      for (const journal of opened.splice(0)) await journal.close().catch(() => undefined);
      await store.dispose();
    });

    it('records a session as open and owned, with no title, resume state or restarts; a second with the same id is refused', async () => {
      const journal = await open();
      const session = await journal.createSession({ sessionId: 's1', agent: 'claude', cwd: '/work' });
      expect(session).to.include({ sessionId: 's1', agent: 'claude', cwd: '/work', state: 'open', title: undefined, resume: undefined, restarts: 0 });
      expect(Date.parse(session.createdAt)).to.equal(Date.parse(session.updatedAt));
      expect(await journal.getSession('s1')).to.deep.equal(session);
      expect(await rejection(journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/x' }))).to.be.instanceOf(Error);
      expect((await journal.getSession('s1'))?.agent).to.equal('claude');
    });

    it('ordering: entries come back in append order with increasing seqs, after a given seq; the first prompt titles the session; restarts are counted', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const seqs = [
        await journal.append('s1', prompt('hello there\nsecond line')),
        await journal.append('s1', update('hi')),
        await journal.append('s1', { kind: 'restart', restarts: 1, exit: { kind: 'signaled', signal: 'SIGKILL' } }),
        await journal.append('s1', prompt('another')),
        await journal.append('s1', { kind: 'stop', stopReason: 'end_turn' }),
      ];
      expect([...seqs].sort((a, b) => a - b)).to.deep.equal(seqs);
      expect(new Set(seqs).size).to.equal(5);
      const records = await journal.entries('s1');
      expect(records.map((record) => record.seq)).to.deep.equal(seqs);
      expect(records.map((record) => record.entry.kind)).to.deep.equal(['prompt', 'update', 'restart', 'prompt', 'stop']);
      expect(records[1]?.entry).to.deep.equal(update('hi'));
      expect(records.every((record) => record.sessionId === 's1' && record.at === new Date(Date.parse(record.at)).toISOString())).to.equal(true);
      expect((await journal.entries('s1', seqs[2])).map((record) => record.seq)).to.deep.equal(seqs.slice(3));
      expect(await journal.getSession('s1')).to.include({ title: 'hello there', restarts: 1 });
      expect(await journal.lastSeq('s1')).to.equal(seqs[4]);
    });

    it('group commit: a group keeps every seq in order, after a seq given before and before one given after, and touches the session', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const before = await journal.append('s1', prompt('go'));
      const group = Array.from({ length: 150 }, (_, index) => update(`#${index}`));
      const seqs = await journal.appendGroup('s1', group);
      const touched = (await journal.getSession('s1'))?.updatedAt;
      expect(touched).to.equal((await journal.entries('s1', seqs.at(-2))).at(0)?.at);
      const after = await journal.append('s1', { kind: 'stop', stopReason: 'end_turn' });
      expect(seqs).to.have.length(150);
      expect([before, ...seqs, after]).to.deep.equal([before, ...seqs, after].sort((a, b) => a - b));
      expect(new Set([before, ...seqs, after]).size).to.equal(152);
      const records = await journal.entries('s1');
      expect(records.map((record) => record.seq)).to.deep.equal([before, ...seqs, after]);
      expect(records.slice(1, -1).map((record) => record.entry)).to.deep.equal(group);
      expect(await journal.appendGroup('s1', [])).to.deep.equal([]);
    });

    it('group commit: a group for an unknown session is refused whole, and nothing is written', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const last = await journal.append('s1', prompt('go'));
      expect(await rejection(journal.appendGroup('nope', [update('a'), update('b')]))).to.be.instanceOf(UnknownSessionError).with.property('sessionId', 'nope');
      expect(await journal.entries('nope')).to.deep.equal([]);
      expect(await journal.lastSeq('s1')).to.equal(last);
    });

    it('durability on return: what an append resolved is read by another journal opened on the store (after a crash of the server, where there is one)', async () => {
      const writer = await open();
      await writer.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const seq = await writer.append('s1', prompt('keep me'));
      const group = await writer.appendGroup('s1', [update('one'), update('two')]);
      await store.crash?.();
      const reader = await open();
      const records = await reader.entries('s1');
      expect(records.map((record) => record.seq)).to.deep.equal([seq, ...group]);
      expect(records.map((record) => record.entry)).to.deep.equal([prompt('keep me'), update('one'), update('two')]);
    });

    it('pages: a session read a page at a time, in order, after a seq, without other sessions, bounded in entries and in bytes; an empty page is the end', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 'a', agent: 'demo', cwd: '/w' });
      await journal.createSession({ sessionId: 'b', agent: 'demo', cwd: '/w' });
      const seqs: number[] = [];
      for (let index = 0; index < 7; index++) {
        seqs.push(await journal.append('a', update(`a${index}`)));
        await journal.append('b', update(`b${index}`));
      }
      const read: number[] = [];
      let afterSeq = 0;
      for (let pages = 0; pages < 10; pages++) {
        const page = await journal.readEntries('a', { afterSeq, limit: 3 });
        if (page.length === 0) break;
        expect(page.length).to.be.at.most(3);
        expect(page.every((record) => record.sessionId === 'a')).to.equal(true);
        read.push(...page.map((record) => record.seq));
        afterSeq = page.at(-1)?.seq as number;
      }
      expect(read).to.deep.equal(seqs);
      // A page stops at the entry that brings it to maxBytes, and always holds one.
      expect(await journal.readEntries('a', { limit: 100, maxBytes: 1 })).to.have.length(1);
      const size = JSON.stringify(update('a0')).length;
      expect(await journal.readEntries('a', { limit: 100, maxBytes: size })).to.have.length(1);
      expect(await journal.readEntries('a', { limit: 100, maxBytes: size + 1 })).to.have.length(2);
      expect(await journal.readEntries('a', { afterSeq: seqs.at(-1) as number, limit: 5 })).to.deep.equal([]);
      expect(await rejection(journal.readEntries('a', { limit: 0 }))).to.be.instanceOf(TypeError);
      expect(await journal.lastSeq('nobody')).to.equal(0);
    });

    it('state entries: only mode, config and resume, in order', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      await journal.append('s1', prompt('x'));
      const mode = await journal.append('s1', { kind: 'mode', modeId: 'plan' });
      await journal.append('s1', update('y'));
      const config = await journal.append('s1', { kind: 'config', configId: 'model', value: 'fast' });
      const resume = await journal.append('s1', { kind: 'resume', resume: { threadId: 't1' } });
      const records = await journal.stateEntries('s1');
      expect(records.map((record) => [record.seq, record.entry.kind])).to.deep.equal([[mode, 'mode'], [config, 'config'], [resume, 'resume']]);
      expect(records[2]?.entry).to.deep.equal({ kind: 'resume', resume: { threadId: 't1' } });
    });

    it('lists: most recently updated first, an exact cwd filter, pages through cursors; a cursor it did not make is refused', async () => {
      const journal = await open({ now: steppedClock() });
      for (let index = 0; index < 5; index++) await journal.createSession({ sessionId: `s${index}`, agent: 'demo', cwd: index % 2 ? '/odd' : '/even' });
      await journal.append('s1', { kind: 'closed' });
      const ids = (page: { sessions: ReadonlyArray<{ sessionId: string }> }) => page.sessions.map((session) => session.sessionId);
      expect(ids(await journal.listSessions())).to.deep.equal(['s1', 's4', 's3', 's2', 's0']);
      expect(ids(await journal.listSessions({ cwd: '/odd' }))).to.deep.equal(['s1', 's3']);
      expect(ids(await journal.listSessions({ cwd: '/od' }))).to.deep.equal([]);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await journal.listSessions({ limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...ids(page));
        cursor = page.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).to.deep.equal(['s1', 's4', 's3', 's2', 's0']);
      expect(pages).to.equal(3);
      expect(await rejection(journal.listSessions({ cursor: 'garbage' }))).to.be.instanceOf(InvalidCursorError);
    });

    it('errors: an unknown session is named; resume and state are kept; a closed journal refuses', async () => {
      const journal = await open();
      expect(await rejection(journal.append('nope', { kind: 'closed' }))).to.be.instanceOf(UnknownSessionError).with.property('message').that.includes('"nope"');
      expect(await rejection(journal.setResume('nope', {}))).to.be.instanceOf(UnknownSessionError);
      expect(await rejection(journal.setState('nope', 'closed'))).to.be.instanceOf(UnknownSessionError);
      expect(await rejection(journal.claim('nope'))).to.be.instanceOf(UnknownSessionError);
      expect(await journal.getSession('nope')).to.equal(undefined);
      expect(await journal.entries('nope')).to.deep.equal([]);
      await journal.createSession({ sessionId: 's1', agent: 'codex', cwd: '/w' });
      await journal.setResume('s1', { threadId: 'thr_1' });
      await journal.setState('s1', 'failed');
      expect(await journal.getSession('s1')).to.deep.include({ resume: { threadId: 'thr_1' }, state: 'failed' });
      await journal.close();
      expect(await rejection(journal.append('s1', { kind: 'closed' }))).to.be.instanceOf(Error);
    });

    it('errors: an entry stored as text that is not JSON is a JournalError (WARDEN_ENTRY_DAMAGED) naming the store and the entry, on every read', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const seq = await journal.append('s1', update('fine'));
      await store.damageEntries('s1');
      for (const read of [() => journal.entries('s1'), () => journal.readEntries('s1', { limit: 10 })]) {
        const error = await rejection(read());
        expect(error).to.be.instanceOf(JournalError).with.property('code', 'WARDEN_ENTRY_DAMAGED');
        expect(error.message).to.include('holds an entry that is not JSON');
        expect(String((error.cause as Error).message)).to.include(`entry ${seq} of session s1`);
      }
      expect(await journal.lastSeq('s1')).to.equal(seq);
    });

    it('fork and delete: a fork starts with its origin conversation; a deleted session is gone, and its seqs are never given again', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 'from', agent: 'demo', cwd: '/w' });
      await journal.append('from', prompt('the question'));
      await journal.append('from', { kind: 'mode', modeId: 'plan' });
      await journal.append('from', update('the answer'));
      const last = await journal.append('from', { kind: 'stop', stopReason: 'end_turn' });
      const fork = await journal.forkSession({ sessionId: 'fork', agent: 'demo', cwd: '/elsewhere', from: 'from' });
      expect(fork).to.include({ sessionId: 'fork', cwd: '/elsewhere', title: 'the question', state: 'open' });
      const copied = await journal.entries('fork');
      expect(copied.map((record) => record.entry)).to.deep.equal([prompt('the question'), update('the answer')]);
      expect(copied.every((record) => record.seq > last)).to.equal(true);
      expect(await rejection(journal.forkSession({ sessionId: 'other', agent: 'demo', cwd: '/w', from: 'nope' }))).to.be.instanceOf(UnknownSessionError);
      const highest = await journal.lastSeq('fork');
      await journal.deleteSession('fork');
      await journal.deleteSession('never-was');
      expect(await journal.getSession('fork')).to.equal(undefined);
      expect(await journal.entries('fork')).to.deep.equal([]);
      await journal.createSession({ sessionId: 'fork', agent: 'demo', cwd: '/w' });
      expect(await journal.append('fork', prompt('again'))).to.be.greaterThan(highest);
    });

    it('subagent children: recorded open and owned by nobody, naming their parent, listed with the sessions, found under their parent at any depth; a second record is a no-op; deleting the parent forgets its children and theirs', async () => {
      const journal = await open();
      await journal.createSession({ sessionId: 'parent', agent: 'claude', cwd: '/w' });
      await journal.recordChild({ sessionId: 'child', parentSessionId: 'parent', agent: 'claude', cwd: '/w/sub', title: 'Explore' });
      await journal.recordChild({ sessionId: 'child', parentSessionId: 'elsewhere', agent: 'other', cwd: '/x' });
      await journal.recordChild({ sessionId: 'grandchild', parentSessionId: 'child', agent: 'claude', cwd: '/w' });
      const child = await journal.getSession('child');
      expect(child).to.include({ sessionId: 'child', parentSessionId: 'parent', agent: 'claude', cwd: '/w/sub', title: 'Explore', state: 'open' });
      expect(child).to.not.have.property('owner');
      expect((await journal.getSession('parent'))?.parentSessionId).to.equal(undefined);
      const listed = (await journal.listSessions()).sessions.map((session) => [session.sessionId, session.parentSessionId ?? null]);
      expect(listed.sort()).to.deep.equal([['child', 'parent'], ['grandchild', 'child'], ['parent', null]]);
      const under = (await journal.childSessions('parent')).map((found) => [found.sessionId, found.parentSessionId]);
      expect(under.sort()).to.deep.equal([['child', 'parent'], ['grandchild', 'child']]);
      expect(await journal.childSessions('grandchild')).to.deep.equal([]);
      await journal.createSession({ sessionId: 'other', agent: 'claude', cwd: '/w' });
      await journal.deleteSession('parent');
      expect((await journal.listSessions()).sessions.map((session) => session.sessionId)).to.deep.equal(['other']);
    });

    it('owners: a session one journal holds is refused to another, naming the owner; once released, the other takes it', async () => {
      const first = await open();
      const second = await open();
      await first.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const refused = await rejection(second.claim('s1'));
      expect(refused).to.be.instanceOf(SessionOwnedError);
      expect((refused as SessionOwnedError).owner.pid).to.equal(process.pid);
      // Held already: still its own, taken from nobody.
      expect(await first.claim('s1')).to.deep.equal({ epoch: engine.fencing ? 1 : undefined });
      if (engine.fencing) expect(await rejection(second.deleteSession('s1'))).to.be.instanceOf(SessionOwnedError);
      expect(await first.getSession('s1')).to.not.equal(undefined);
      await first.release('s1');
      // Released: free, not taken from the first (its host is not lost).
      expect(await second.claim('s1')).to.deep.equal({ epoch: engine.fencing ? 2 : undefined });
      await second.append('s1', prompt('mine now'));
      expect((await second.entries('s1')).map((record) => record.entry.kind)).to.deep.equal(['prompt']);
    });

    it('fencing: after the owner lease runs out another journal claims the session at a higher epoch, and every write of the stale owner is refused and writes nothing', async function () {
      if (!engine.fencing) this.skip();
      const stale = await open({ lease: 1000, renew: false });
      await stale.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const first = await stale.append('s1', prompt('before'));
      const next = await open({ lease: 1000 });
      // Refused while the stale owner's lease runs; taken once it ran out (polled).
      const claimed = await eventually(() => next.claim('s1'));
      // The claim says whom it took the session from: the stale owner, lost (its lease ran out), at its epoch (issue 28).
      expect(claimed).to.deep.equal({ epoch: 2, from: { hostId: (stale as PostgresJournal).hostId, hostName: hostname(), epoch: 1, handedOver: false } });
      const fenced = await rejection(stale.append('s1', update('too late')));
      expect(fenced).to.be.instanceOf(FencedAppendError);
      expect(fenced).to.deep.include({ sessionId: 's1', heldEpoch: 1 });
      expect((fenced as FencedAppendError).owner.epoch).to.equal(2);
      expect(await rejection(stale.appendGroup('s1', [update('a'), update('b')]))).to.be.instanceOf(FencedAppendError);
      expect(await rejection(stale.setState('s1', 'closed'))).to.be.instanceOf(FencedAppendError);
      expect(await rejection(stale.setResume('s1', { threadId: 'x' }))).to.be.instanceOf(FencedAppendError);
      // The new owner renews: the stale one cannot take it back.
      expect(await rejection(stale.claim('s1'))).to.be.instanceOf(SessionOwnedError);
      const own = await next.append('s1', prompt('after'));
      const records = await next.entries('s1');
      expect(records.map((record) => record.seq)).to.deep.equal([first, own]);
      expect(await next.getSession('s1')).to.include({ state: 'open' });
    });

    it('schema: journals opening a new store at once all open it (one creates the schema, the others find it)', async () => {
      const journals = await Promise.all([open(), open(), open()]);
      await journals[0]?.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      for (const journal of journals) expect((await journal.getSession('s1'))?.agent).to.equal('demo');
    });

    it('schema: a store of a newer schema is refused naming the database, its version and the fix', async function () {
      if (!engine.fencing) this.skip();
      const journal = (await open()) as PostgresJournal;
      await journal.close();
      const url = (store as Store & { url: string }).url;
      const client = new pg.Client(url);
      await client.connect();
      await client.query("INSERT INTO warden_schema (version, name) VALUES (99, 'from the future')");
      await client.end();
      const error = await rejection(openPostgresJournal(url));
      expect(error.message).to.equal(`cannot open the journal at ${url}: the store has schema version 99, newer than this acp-warden knows (4): upgrade acp-warden to the version that wrote it`);
    });

    it('fencing: a takeover while the stale owner appends without pause: each append lands before the takeover or is refused, never after', async function () {
      if (!engine.fencing) this.skip();
      const stale = await open({ lease: 1000, renew: false });
      await stale.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const written: number[] = [];
      let refusal: Error | undefined;
      const appending = (async () => {
        for (let index = 0; !refusal; index++) {
          try {
            written.push(await stale.append('s1', update(`#${index}`)));
          } catch (error) {
            refusal = error as Error;
          }
        }
      })();
      const next = await open({ lease: 1000 });
      await eventually(() => next.claim('s1'));
      const own = await next.append('s1', prompt('after'));
      await appending;
      expect(refusal).to.be.instanceOf(FencedAppendError);
      expect(written.length).to.be.greaterThan(0);
      // Every append that resolved is there, in order, and before the new owner's first.
      expect((await next.entries('s1')).map((record) => record.seq)).to.deep.equal([...written, own]);
    });

    it('fencing: a restart of the database expires no lease: an owner whose lease ran out before the database came back keeps its sessions until the database has been up for a lease', async function () {
      if (!engine.fencing || !store.crash) this.skip();
      // Long enough that the restart, the second store's opening and its claim fit inside the
      // lease after the database came back on a loaded machine (3 s did not, once in a full run).
      const lease = 8000;
      const owner = (await open({ lease, renew: false })) as PostgresJournal;
      await owner.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const url = (store as Store & { url: string }).url;
      // The owner's lease has run out (by the database's clock)...
      await eventually(async () => {
        const client = new pg.Client(url);
        await client.connect();
        try {
          const { rows } = await client.query<{ expired: boolean }>('SELECT lease_until < now() AS expired FROM hosts WHERE host_id = $1', [owner.hostId]);
          if (!rows[0]?.expired) throw new Error('lease still running');
        } finally {
          await client.end();
        }
      });
      // ...but the database just came back: nobody takes the session yet.
      await store.crash();
      const other = await open({ lease });
      expect(await rejection(other.claim('s1'))).to.be.instanceOf(SessionOwnedError);
      // The owner reaches the database again and renews: it keeps the session.
      await eventually(() => owner.renewLease());
      await owner.append('s1', prompt('still mine'));
      expect(owner.epochOf('s1')).to.equal(1);
    });

    it('errors: writes in flight when the server crashes are retried and resolve once it is back, each written once (spec/host/postgres-journal-faults.spec.ts has more)', async function () {
      if (!store.crash) this.skip();
      const journal = await open();
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const inFlight = Promise.all(Array.from({ length: 50 }, (_, index) => journal.append('s1', update(`#${index}`))));
      await store.crash();
      const seqs = await inFlight;
      const seq = await journal.append('s1', prompt('back'));
      expect((await journal.entries('s1')).map((record) => record.seq)).to.deep.equal([...seqs, seq].sort((a, b) => a - b));
    });

    it('errors: an unreachable store names the database (never its password) and the fix', async function () {
      if (!engine.fencing) this.skip();
      const error = await rejection(openPostgresJournal('postgres://warden:s3cret@127.0.0.1:1/none'));
      expect(error.message).to.include('cannot open the journal at postgres://warden:***@127.0.0.1:1/none').and.include('ECONNREFUSED').and.include('check that PostgreSQL runs');
      expect(error.message).not.to.include('s3cret');
      expect((error as { cause?: unknown }).cause).to.be.instanceOf(Error);
    });
  });
}
