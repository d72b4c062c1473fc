/**
 * The SQLite journal's schema and its versioned migrations (`PRAGMA user_version`, run by the
 * shared runner of migrations.ts).
 *
 * Version 1 keys a session's entries by the session's integer `key`, not its text id: the
 * `entries_by_session` index on two integers costs about a third of the text one per insert,
 * `seq` is a plain `INTEGER PRIMARY KEY` (no `sqlite_sequence` write per insert) and there is
 * no foreign key to check per insert (the journal deletes a session's entries with it). A
 * session's key is `AUTOINCREMENT` (one write per new session, not per entry), so that a key is
 * never given to a second session: a process that still knows a deleted session's key cannot
 * append to another.
 * Version 2 adds `entries_by_prompt_key`: the prompts journaled with an idempotency key, found
 * by (session, key) after a restart. A partial index on the prompt entries only (the host
 * writes `kind` first, so the test reads no entry as JSON), with the key read from the entry's
 * JSON: nothing is added to an insert of any other entry, and a store of version 1 only gets the index.
 * Version 3 adds `sessions.parent_session_id` (nullable): a subagent child session names the
 * session that announced it; every older session reads as one of its own (NULL).
 * Version 0 is the store made before versions existed (text `session_id` in `entries`,
 * `AUTOINCREMENT`, `REFERENCES sessions`).
 */
import type Database from 'better-sqlite3';
import { latestVersion, runMigrations, type Migration } from './migrations.js';

/**
 * `entries.session_key = 0` is no session (keys start at 1): the journal keeps one such row at
 * the highest `seq` it ever gave when the session that held it is deleted, so that SQLite's
 * next rowid (the highest + 1) is never one given before.
 */
export const noSessionKey = 0;

/** The partial index's condition: a prompt entry (the host writes `kind` first). */
export const promptPrefix = `substr(entry, 1, 16) = '{"kind":"prompt"'`;
/** The partial index's expression: a prompt entry's idempotency key. */
export const promptKey = `json_extract(entry, '$.idempotencyKey')`;

const version2 = `CREATE INDEX entries_by_prompt_key ON entries (session_key, ${promptKey}) WHERE ${promptPrefix};`;

const version3 = `
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT;
CREATE INDEX sessions_by_parent ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL;
`;

const version1 = `
CREATE TABLE sessions (
  key INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL UNIQUE,
  agent TEXT NOT NULL,
  cwd TEXT NOT NULL,
  title TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  state TEXT NOT NULL,
  resume TEXT,
  restarts INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, session_id DESC);
CREATE TABLE entries (
  seq INTEGER PRIMARY KEY,
  session_key INTEGER NOT NULL,
  at TEXT NOT NULL,
  entry TEXT NOT NULL
);
CREATE INDEX entries_by_session ON entries (session_key, seq);
`;

/** Version 0 → 1, in place: every session and entry kept, with the same seqs. */
function migrate0to1(db: Database.Database): void {
  const counted = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_sequence'").get() !== undefined;
  const given = counted ? (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'entries'").get() as { seq: number } | undefined) : undefined;
  db.exec(`
    DROP INDEX IF EXISTS entries_by_session;
    DROP INDEX IF EXISTS sessions_by_update;
    ALTER TABLE entries RENAME TO entries_v0;
    ALTER TABLE sessions RENAME TO sessions_v0;
    ${version1}
    INSERT INTO sessions (session_id, agent, cwd, title, created_at, updated_at, state, resume, restarts)
      SELECT session_id, agent, cwd, title, created_at, updated_at, state, resume, restarts FROM sessions_v0 ORDER BY rowid;
    INSERT INTO entries (seq, session_key, at, entry)
      SELECT e.seq, s.key, e.at, e.entry FROM entries_v0 e JOIN sessions s ON s.session_id = e.session_id ORDER BY e.seq;
    DROP TABLE entries_v0;
    DROP TABLE sessions_v0;
  `);
  // AUTOINCREMENT remembered seqs of deleted sessions: keep the highest as given.
  const kept = (db.prepare('SELECT MAX(seq) AS seq FROM entries').get() as { seq: number | null }).seq ?? 0;
  if (given && given.seq > kept) db.prepare("INSERT INTO entries (seq, session_key, at, entry) VALUES (?, ?, '', '{}')").run(given.seq, noSessionKey);
}

/**
 * The schema's steps, run by the shared runner (migrations.ts). Version 1 on an empty store is
 * the schema itself; on a store of version 0 with tables, the migration in place.
 */
const migrations: ReadonlyArray<Migration<Database.Database>> = [
  {
    version: 1,
    name: 'entries keyed by integer session keys',
    up: (db) => {
      const hasTables = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'entries'").get() !== undefined;
      if (hasTables) migrate0to1(db);
      else db.exec(version1);
    },
  },
  { version: 2, name: 'prompts found by idempotency key', up: (db) => db.exec(version2) },
  { version: 3, name: 'subagent children name their parent session', up: (db) => db.exec(version3) },
];

/** The schema version this code writes; a store with a higher one was made by a newer warden. */
const journalSchemaVersion = latestVersion(migrations);

/**
 * Brings `db` to {@link journalSchemaVersion}: creates an empty store, or migrates an older one
 * in place, in one `BEGIN IMMEDIATE` transaction: a second process opening the same store at
 * the same time waits for the lock (busy timeout) and then finds it migrated. A failed migration
 * leaves the store as it was; a newer store is refused ({@link SchemaTooNewError}), untouched.
 */
export function ensureJournalSchema(db: Database.Database, path: string): void {
  const versionOf = () => db.pragma('user_version', { simple: true }) as number;
  // The common case, without taking the write lock.
  if (versionOf() === journalSchemaVersion) return;
  db.transaction(() => {
    runMigrations(db, migrations, {
      where: path,
      version: versionOf,
      // Inside the transaction: a step and its version commit together.
      recordVersion: (store, step) => void store.pragma(`user_version = ${step.version}`),
    });
  }).immediate();
}
