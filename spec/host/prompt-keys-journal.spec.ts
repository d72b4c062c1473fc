/**
 * Prompts found by idempotency key in both journal engines (issue 30): the key and the prompt's
 * digest are journaled with the prompt, `promptByKey` finds them by (session, key) through an
 * index, with the turn's end once it is journaled, after the store was closed and opened again;
 * a store of the previous schema gets the index by its migration. PostgreSQL is real
 * (spec/support/postgres.ts; skipped, saying why, without one).
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { AsyncJournal } from '../../src/journal/async-journal.js';
import { asyncJournalOf } from '../../src/journal/async-journal-of.js';
import type { JournalEntry } from '../../src/journal/journal.js';
import { openPostgresJournal } from '../../src/journal/postgres-journal.js';
import { promptKeyExpression } from '../../src/journal/postgres-journal-schema.js';
import { canonicalJson } from '../../src/journal/canonical-json.js';
import { promptDigestOf } from '../../src/journal/prompt-digest.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { requirePostgres, startPostgres, type TestPostgres } from '../support/postgres.js';

const blocks = (text: string) => [{ type: 'text' as const, text }];
const keyed = (text: string, idempotencyKey: string, requestId: string): JournalEntry => ({ kind: 'prompt', idempotencyKey, promptDigest: promptDigestOf(blocks(text)), prompt: blocks(text), requestId });
const said = (text: string): JournalEntry => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });

/** The contract on one engine: `open` opens the same store again each time. */
async function keysAreFound(open: () => Promise<AsyncJournal>): Promise<void> {
  const journal = await open();
  await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
  await journal.createSession({ sessionId: 's2', agent: 'demo', cwd: '/w' });
  await journal.append('s1', { kind: 'prompt', prompt: blocks('no key'), requestId: 'r0' });
  await journal.append('s1', { kind: 'stop', stopReason: 'end_turn', requestId: 'r0' });
  const seq = await journal.append('s1', keyed('hello', 'K-1', 'r1'));
  // A request id with U+0000 in it (warden serve's are so) and a key that JSON escapes.
  const odd = await journal.append('s2', keyed('odd', 'K "quoted" \\ \u00e9', 'c1\u0000r9'));
  await journal.append('s1', said('hi'));
  expect(await journal.promptByKey('s1', 'K-1')).to.deep.equal({ seq, promptDigest: promptDigestOf(blocks('hello')), requestId: 'r1', end: undefined });
  const end = await journal.append('s1', { kind: 'stop', stopReason: 'end_turn', requestId: 'r1' });
  await journal.append('s1', keyed('later', 'K-2', 'r2'));
  await journal.append('s1', { kind: 'error', error: { code: -32603, message: 'cut' }, requestId: 'r2' });
  await journal.close();

  const reopened = await open();
  try {
    const found = await reopened.promptByKey('s1', 'K-1');
    expect(found).to.include({ seq, requestId: 'r1', promptDigest: promptDigestOf(blocks('hello')) });
    expect(found?.end).to.include({ seq: end, sessionId: 's1' });
    expect(found?.end?.entry).to.deep.equal({ kind: 'stop', stopReason: 'end_turn', requestId: 'r1' });
    expect((await reopened.promptByKey('s1', 'K-2'))?.end?.entry).to.deep.equal({ kind: 'error', error: { code: -32603, message: 'cut' }, requestId: 'r2' });
    // Keys are case-sensitive, scoped to their session; an unknown session has none.
    expect(await reopened.promptByKey('s1', 'k-1')).to.equal(undefined);
    expect(await reopened.promptByKey('s2', 'K-1')).to.equal(undefined);
    expect(await reopened.promptByKey('s2', 'K "quoted" \\ \u00e9')).to.include({ seq: odd, requestId: 'c1\u0000r9' });
    expect(await reopened.promptByKey('nope', 'K-1')).to.equal(undefined);
  } finally {
    await reopened.close();
  }
}

describe('journal: prompts found by idempotency key (issue 30)', () => {
  it('the digest is SHA-256 of the canonical JSON of the content blocks: key order does not count, values do', () => {
    expect(canonicalJson([{ type: 'text', text: 'a', _meta: { b: 1, a: [2, { d: 1, c: 2 }] } }])).to.equal('[{"_meta":{"a":[2,{"c":2,"d":1}],"b":1},"text":"a","type":"text"}]');
    expect(promptDigestOf([{ text: 'a', type: 'text' }])).to.equal(promptDigestOf([{ type: 'text', text: 'a' }]));
    expect(promptDigestOf([{ type: 'text', text: 'a' }])).to.not.equal(promptDigestOf([{ type: 'text', text: 'b' }]));
    expect(promptDigestOf([{ type: 'text', text: 'a' }])).to.match(/^[0-9a-f]{64}$/u);
  });

  describe('SQLite', () => {
    let dir: string;
    let path: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'warden-keys-'));
      path = join(dir, 'journal.sqlite');
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('a keyed prompt is found by (session, key) with its digest, and its turn end once journaled, after the store is opened again', async () => {
      await keysAreFound(async () => asyncJournalOf(sqliteJournal(path)));
    });

    it('the lookup reads the index entries_by_prompt_key', () => {
      sqliteJournal(path).close();
      const db = new Database(path, { readonly: true });
      try {
        const plan = db
          .prepare("EXPLAIN QUERY PLAN SELECT entries.seq FROM entries WHERE session_key = 1 AND substr(entry, 1, 16) = '{\"kind\":\"prompt\"' AND json_extract(entry, '$.idempotencyKey') = 'K'")
          .all() as Array<{ detail: string }>;
        expect(plan.map((row) => row.detail).join('\n')).to.include('entries_by_prompt_key');
      } finally {
        db.close();
      }
    });

    it('a store of schema version 1 (before keys) is migrated to 2 and on: its prompts kept, keyed prompts found afterwards', async () => {
      const old = sqliteJournal(path);
      old.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const before = old.append('s1', { kind: 'prompt', prompt: blocks('old'), requestId: 'r0' });
      old.close();
      const db = new Database(path);
      // Back to version 1: the steps after it undone (version 3's parent column too).
      db.exec('DROP INDEX entries_by_prompt_key; DROP INDEX sessions_by_parent; ALTER TABLE sessions DROP COLUMN parent_session_id');
      db.pragma('user_version = 1');
      db.close();

      const journal = sqliteJournal(path);
      try {
        const seq = journal.append('s1', keyed('new', 'K', 'r1'));
        expect(journal.entries('s1').map((record) => record.seq)).to.deep.equal([before, seq]);
        expect(journal.promptByKey?.('s1', 'K')).to.include({ seq });
      } finally {
        journal.close();
      }
      const check = new Database(path, { readonly: true });
      try {
        expect(check.pragma('user_version', { simple: true })).to.equal(3);
        expect(check.prepare("SELECT name FROM sqlite_schema WHERE name = 'entries_by_prompt_key'").get()).to.deep.equal({ name: 'entries_by_prompt_key' });
      } finally {
        check.close();
      }
    });
  });

  describe('PostgreSQL', function () {
    this.timeout(120_000);
    let server: TestPostgres;
    let databases = 0;
    before(async function () {
      requirePostgres(this);
      server = await startPostgres();
    });
    after(async () => server?.stop());
    const direct = async <R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> => {
      const client = new pg.Client(url);
      await client.connect();
      try {
        const results = (await client.query<R>(sql)) as pg.QueryResult<R> | Array<pg.QueryResult<R>>;
        // Several statements: the last one's rows.
        return (Array.isArray(results) ? results.at(-1)! : results).rows;
      } finally {
        await client.end();
      }
    };

    it('a keyed prompt is found by (session, key) with its digest, and its turn end once journaled, from another host of the store', async () => {
      const url = await server.createDatabase(`keys_${process.pid}_${++databases}`);
      let first = true;
      await keysAreFound(async () => {
        const journal = await openPostgresJournal(url);
        // The second host reads what the first wrote (it left the sessions when it closed).
        if (!first) for (const sessionId of ['s1', 's2']) await journal.claim(sessionId);
        first = false;
        return journal;
      });
    });

    it('a store of schema version 2 (before keys) is migrated to 3 and on, and the lookup reads the index', async () => {
      const url = await server.createDatabase(`keys_${process.pid}_${++databases}`);
      const old = await openPostgresJournal(url);
      await old.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const before = await old.append('s1', { kind: 'prompt', prompt: blocks('old'), requestId: 'r0' });
      await old.close();
      await direct(url, 'DROP INDEX entries_by_prompt_key; DROP INDEX sessions_by_parent; ALTER TABLE sessions DROP COLUMN parent_session_id; DELETE FROM warden_schema WHERE version >= 3');

      const journal = await openPostgresJournal(url);
      try {
        await journal.claim('s1');
        const seq = await journal.append('s1', keyed('new', 'K', 'r1'));
        expect((await journal.entries('s1')).map((record) => record.seq)).to.deep.equal([before, seq]);
        expect(await journal.promptByKey('s1', 'K')).to.include({ seq });
        expect((await direct<{ version: number }>(url, 'SELECT version FROM warden_schema ORDER BY version')).map((row) => row.version)).to.deep.equal([1, 2, 3, 4]);
        // A sequential scan is the cheaper plan for a table this small: forbidden, the index is the other way.
        const plan = await direct<{ 'QUERY PLAN': string }>(
          url,
          `SET enable_seqscan = off; EXPLAIN SELECT seq FROM entries e WHERE e.session_key = 1 AND e.kind = 'prompt' AND ${promptKeyExpression} = '"K"'`,
        );
        expect(JSON.stringify(plan)).to.include('entries_by_prompt_key');
      } finally {
        await journal.close();
      }
    });
  });
});
