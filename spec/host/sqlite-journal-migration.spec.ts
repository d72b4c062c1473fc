import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { UnknownSessionError, type JournalRecord, type JournalSession } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

/** The schema the journal wrote before versions (PRAGMA user_version 0), as it was. */
const schemaBeforeVersions = `
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  cwd TEXT NOT NULL,
  title TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  state TEXT NOT NULL,
  resume TEXT,
  restarts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sessions_by_update ON sessions (updated_at DESC, session_id DESC);
CREATE TABLE IF NOT EXISTS entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions (session_id),
  at TEXT NOT NULL,
  entry TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_session ON entries (session_id, seq);
`;

const said = (text: string) => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });

/**
 * A store as the code before versions made it: three sessions with interleaved entries (a
 * title, a resume state, a restart, a failed state), and a fourth whose entries held the highest
 * seqs and were deleted (AUTOINCREMENT remembers them). Returns the highest seq ever given.
 */
function buildOldStore(path: string, entriesPerSession: number): number {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(schemaBeforeVersions);
  const addSession = db.prepare("INSERT INTO sessions (session_id, agent, cwd, title, created_at, updated_at, state, resume, restarts) VALUES (?, 'demo', ?, ?, ?, ?, ?, ?, ?)");
  addSession.run('alpha', '/w/a', 'hello alpha', '2026-12-01T10:00:00.000Z', '2026-12-01T10:05:00.000Z', 'open', JSON.stringify({ claude: 'c-1' }), 2);
  addSession.run('beta', '/w/b', null, '2026-12-01T11:00:00.000Z', '2026-12-01T11:01:00.000Z', 'failed', null, 0);
  addSession.run('gamma', '/w/a', 'gamma title', '2026-12-01T09:00:00.000Z', '2026-12-01T12:00:00.000Z', 'closed', null, 1);
  addSession.run('gone', '/w/a', null, '2026-12-01T09:00:00.000Z', '2026-12-01T09:00:00.000Z', 'open', null, 0);
  const add = db.prepare('INSERT INTO entries (session_id, at, entry) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < entriesPerSession; i++) {
      for (const sessionId of ['alpha', 'beta', 'gamma']) add.run(sessionId, `2026-12-01T10:00:${String(i % 60).padStart(2, '0')}.000Z`, JSON.stringify(said(`${sessionId} ${i}`)));
    }
    add.run('alpha', '2026-12-01T10:06:00.000Z', JSON.stringify({ kind: 'mode', modeId: 'plan' }));
    for (let i = 0; i < 5; i++) add.run('gone', '2026-12-01T10:07:00.000Z', JSON.stringify(said(`gone ${i}`)));
  })();
  const highest = (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'entries'").get() as { seq: number }).seq;
  db.prepare("DELETE FROM entries WHERE session_id = 'gone'").run();
  db.prepare("DELETE FROM sessions WHERE session_id = 'gone'").run();
  db.close();
  return highest;
}

/** Everything a journal tells of its sessions, read through its interface. */
function contentsOf(path: string): { sessions: JournalSession[]; entries: Record<string, JournalRecord[]> } {
  const journal = sqliteJournal(path);
  try {
    const sessions = journal.listSessions({ limit: 200 }).sessions as JournalSession[];
    const entries: Record<string, JournalRecord[]> = {};
    for (const { sessionId } of sessions) entries[sessionId] = journal.entries(sessionId);
    return { sessions, entries };
  } finally {
    journal.close();
  }
}

/** What the old schema's rows say, read with SQL (the old code's view of the same store). */
function oldContentsOf(path: string): { sessions: JournalSession[]; entries: Record<string, JournalRecord[]> } {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db.prepare('SELECT * FROM sessions ORDER BY updated_at DESC, session_id DESC').all() as Array<Record<string, unknown>>;
    const sessions = rows.map((row) => ({
      sessionId: row.session_id,
      agent: row.agent,
      cwd: row.cwd,
      title: row.title ?? undefined,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      state: row.state,
      resume: row.resume === null ? undefined : JSON.parse(row.resume as string),
      restarts: row.restarts,
    })) as JournalSession[];
    const entries: Record<string, JournalRecord[]> = {};
    for (const { sessionId } of sessions) {
      entries[sessionId] = (db.prepare('SELECT * FROM entries WHERE session_id = ? ORDER BY seq').all(sessionId) as Array<{ seq: number; session_id: string; at: string; entry: string }>).map((row) => ({
        seq: row.seq,
        sessionId: row.session_id,
        at: row.at,
        entry: JSON.parse(row.entry),
      }));
    }
    return { sessions, entries };
  } finally {
    db.close();
  }
}

const versionOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
};

describe('sqliteJournal: versioned schema (PRAGMA user_version)', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-migration-'));
    path = join(dir, 'journal.sqlite');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a store made before versions opens, migrated in place: every session and entry kept with its seq, new seqs above every seq ever given', () => {
    const highest = buildOldStore(path, 300);
    const before = oldContentsOf(path);
    expect(before.sessions.map((session) => session.sessionId)).to.deep.equal(['gamma', 'beta', 'alpha']);

    const after = contentsOf(path);
    expect(versionOf(path)).to.equal(3);
    expect(after).to.deep.equal(before);

    const journal = sqliteJournal(path);
    try {
      // The deleted session's seqs were given once: none is given again, to no session.
      const next = journal.append('beta', said('after the migration') as never);
      expect(next).to.be.greaterThan(highest);
      journal.createSession({ sessionId: 'delta', agent: 'demo', cwd: '/w' });
      expect(journal.append('delta', said('new') as never)).to.equal(next + 1);
      expect(journal.lastSeq?.('alpha')).to.equal(before.entries.alpha!.at(-1)!.seq);
      expect(journal.stateEntries?.('alpha').map((record) => record.entry)).to.deep.equal([{ kind: 'mode', modeId: 'plan' }]);
      expect(journal.readEntries?.('gamma', { afterSeq: before.entries.gamma![99]!.seq, limit: 3 })).to.deep.equal(before.entries.gamma!.slice(100, 103));
    } finally {
      journal.close();
    }
  });

  it('two processes opening the same old store at once: one migrates, the other finds it migrated; both open and append, nothing is lost', async function () {
    this.timeout(60_000);
    buildOldStore(path, 2_000);
    const before = oldContentsOf(path);
    const script = (name: string) => `
      import { sqliteJournal } from ${JSON.stringify(new URL('../../src/journal/sqlite-journal.ts', import.meta.url).pathname)};
      process.stdout.write('ready\\n');
      await new Promise((resolve) => process.stdin.once('data', resolve));
      const journal = sqliteJournal(${JSON.stringify(path)});
      const seq = journal.append('alpha', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: ${JSON.stringify(name)} } } });
      journal.close();
      process.stdout.write(JSON.stringify({ seq }) + '\\n');
      process.stdin.destroy();
    `;
    const openers = ['p1', 'p2'].map((name) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(name)], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
      const ready = new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        if (out.includes('ready')) resolve();
      }));
      const done = new Promise<{ seq: number }>((resolve, reject) => child.once('exit', (code) => {
        if (code !== 0) return reject(new Error(`opener ${name} exited ${code}: ${err}`));
        resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as { seq: number });
      }));
      return { name, child, ready, done };
    });
    try {
      await Promise.all(openers.map((opener) => opener.ready));
      for (const opener of openers) opener.child.stdin.write('go\n');
      const seqs = (await Promise.all(openers.map((opener) => opener.done))).map((outcome) => outcome.seq);
      expect(new Set(seqs).size).to.equal(2);
      expect(versionOf(path)).to.equal(3);
      const after = contentsOf(path);
      const appended = after.entries.alpha!.slice(before.entries.alpha!.length);
      expect(appended.map((record) => record.seq).sort()).to.deep.equal([...seqs].sort());
      expect({ ...after, entries: { ...after.entries, alpha: after.entries.alpha!.slice(0, before.entries.alpha!.length) } }).to.deep.equal({
        sessions: after.sessions,
        entries: before.entries,
      });
      // Every session kept (alpha was touched by the appends: only its updatedAt moved).
      const described = (sessions: JournalSession[]) =>
        sessions.map(({ sessionId, agent, cwd, title, createdAt, state, resume, restarts }) => ({ sessionId, agent, cwd, title, createdAt, state, resume, restarts })).sort((a, b) => a.sessionId.localeCompare(b.sessionId));
      expect(described(after.sessions)).to.deep.equal(described(before.sessions));
    } finally {
      for (const { child } of openers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('a store of version 2 (before subagent children) is migrated to 3: its sessions read as sessions of their own, and children are recorded after it', () => {
    const old = sqliteJournal(path);
    old.createSession({ sessionId: 'kept', agent: 'demo', cwd: '/w' });
    const seq = old.append('kept', said('before') as never);
    old.close();
    const db = new Database(path);
    db.exec('DROP INDEX sessions_by_parent; ALTER TABLE sessions DROP COLUMN parent_session_id');
    db.pragma('user_version = 2');
    db.close();

    const journal = sqliteJournal(path);
    try {
      expect(versionOf(path)).to.equal(3);
      expect(journal.getSession('kept')).to.include({ sessionId: 'kept', agent: 'demo' }).and.not.have.property('parentSessionId');
      expect(journal.entries('kept').map((record) => record.seq)).to.deep.equal([seq]);
      journal.recordChild?.({ sessionId: 'kept-child', parentSessionId: 'kept', agent: 'demo', cwd: '/w' });
      expect(journal.getSession('kept-child')?.parentSessionId).to.equal('kept');
    } finally {
      journal.close();
    }
  });

  it('a store of a newer schema is refused naming the file, its version and the fix, and left as it was', () => {
    const journal = sqliteJournal(path);
    journal.createSession({ sessionId: 'kept', agent: 'demo', cwd: '/w' });
    journal.close();
    const db = new Database(path);
    db.pragma('user_version = 4');
    db.close();
    const bytes = readFileSync(path);

    expect(() => sqliteJournal(path)).to.throw(
      `cannot open the journal at ${path}: the store has schema version 4, newer than this acp-warden knows (3): upgrade acp-warden to the version that wrote it. Choose another file with --store PATH (or :memory:).`,
    );
    expect(versionOf(path)).to.equal(4);
    expect(readFileSync(path).equals(bytes)).to.equal(true);
  });

  it('the highest seq stays given when the session that held it is deleted: a later session never gets it again, also after reopening', () => {
    const journal = sqliteJournal(path);
    journal.createSession({ sessionId: 'a', agent: 'demo', cwd: '/w' });
    journal.createSession({ sessionId: 'b', agent: 'demo', cwd: '/w' });
    journal.append('a', said('a') as never);
    const lastOfB = [1, 2, 3].map(() => journal.append('b', said('b') as never)).at(-1)!;
    journal.deleteSession('b');
    journal.close();

    const reopened = sqliteJournal(path);
    try {
      reopened.createSession({ sessionId: 'b', agent: 'demo', cwd: '/w' });
      const first = reopened.append('b', said('b again') as never);
      expect(first).to.be.greaterThan(lastOfB);
      reopened.deleteSession('b');
      reopened.deleteSession('a');
      reopened.createSession({ sessionId: 'c', agent: 'demo', cwd: '/w' });
      expect(reopened.append('c', said('c') as never)).to.be.greaterThan(first);
      expect(reopened.entries('c').map((record) => record.entry)).to.deep.equal([said('c')]);
      expect(reopened.listSessions().sessions.map((session) => session.sessionId)).to.deep.equal(['c']);
    } finally {
      reopened.close();
    }
  });

  it('a session deleted by another process after this one released it: claiming it again and appending fails as for any unknown session, and writes no row', () => {
    const first = sqliteJournal(path);
    const second = sqliteJournal(path);
    try {
      first.createSession({ sessionId: 'shared', agent: 'demo', cwd: '/w' });
      first.claim?.('shared');
      first.append('shared', said('one') as never);
      first.release?.('shared');
      second.claim?.('shared');
      second.deleteSession('shared');
      second.release?.('shared');
      first.claim?.('shared');
      expect(() => first.append('shared', said('late') as never)).to.throw(UnknownSessionError);
    } finally {
      first.close();
      second.close();
    }
    const db = new Database(path, { readonly: true });
    try {
      expect((db.prepare('SELECT COUNT(*) AS n FROM entries WHERE session_key <> 0').get() as { n: number }).n).to.equal(0);
    } finally {
      db.close();
    }
  });
});
