/**
 * The default journal engine: one SQLite file (better-sqlite3, synchronous), in WAL mode so
 * that an appended entry survives a SIGKILL of the host the moment `append` returns (the
 * WAL is written before the call returns; only a power loss can take the last commits with
 * `synchronous = NORMAL`, and `durability: 'full'` closes that too).
 */
import { isPostgresUrl, redactedUrl } from './store-url.js';
import Database from 'better-sqlite3';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  DAMAGED_ENTRY_CODE,
  InvalidCursorError,
  isDamagedStore,
  JournalError,
  stateEntryKinds,
  titleOf,
  UnknownSessionError,
  type Journal,
  type JournalEntry,
  type JournalPageQuery,
  type JournalRecord,
  type JournalSession,
  type JournalSessionPage,
  type JournalSessionState,
} from './journal.js';
import { sessionOwners, type SessionOwners } from './session-owners.js';
import { ensureJournalSchema, noSessionKey, promptKey, promptPrefix } from './sqlite-journal-schema.js';
import { childrenOf } from './child-sessions.js';
import { entryText } from './entry-text.js';

/** Options of {@link sqliteJournal}. */
export interface SqliteJournalOptions {
  /** `normal` (default: survives a crash of the process) or `full` (survives a power loss too; slower). */
  readonly durability?: 'normal' | 'full';
  /** The clock, for tests. */
  readonly now?: () => Date;
}

interface SessionRow {
  key: number;
  session_id: string;
  agent: string;
  cwd: string;
  title: string | null;
  created_at: string;
  updated_at: string;
  state: JournalSessionState;
  resume: string | null;
  restarts: number;
  parent_session_id: string | null;
}

interface EntryRow {
  seq: number;
  session_id: string;
  at: string;
  entry: string;
}

/**
 * The wall clock as ISO strings, formatted once per millisecond: a stream of updates appends
 * many entries in the same millisecond, and a Date and its string each cost more than the check.
 */
function millisecondStamps(): () => string {
  let last = Number.NaN;
  let stamp = '';
  return () => {
    const ms = Date.now();
    if (ms !== last) {
      last = ms;
      stamp = new Date(ms).toISOString();
    }
    return stamp;
  };
}

/** The journal's file when none is given: `$XDG_STATE_HOME/acp-warden/journal.sqlite` (or `~/.local/state/…`). */
export function defaultJournalPath(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(state, 'acp-warden', 'journal.sqlite');
}

const maxPage = 200;

/** Rows of a group inserted by one statement (4 values a row, far under SQLite's limit of 32,766). */
const rowsPerInsert = 64;

/**
 * Opens (creating if needed) a SQLite journal at `path`; `:memory:` keeps it in memory (tests).
 * Throws with the path and the cause when the file cannot be opened.
 *
 * @example
 * ```ts
 * // A journal the program opens (and closes) itself, durable across a power loss.
 * const journal = sqliteJournal('/var/lib/my-app/agents.sqlite', { durability: 'full' });
 * const host = createHost({ store: journal });
 * const [latest] = journal.listSessions().sessions; // newest first
 * if (latest) await host.openSession(latest.sessionId, { how: 'resume' });
 * ```
 */
export function sqliteJournal(path: string, options: SqliteJournalOptions = {}): Journal {
  const now = options.now ?? (() => new Date());
  const stampOf = options.now ? () => now().toISOString() : millisecondStamps();
  // Not a file name: opened as one it would make a directory named after the URL, password included.
  if (isPostgresUrl(path)) throw new TypeError(`the store ${redactedUrl(path)} is a PostgreSQL URL, not a SQLite file: open it with openPostgresJournal, or give it to createHost as its store`);
  let db: Database.Database;
  let owners: SessionOwners;
  try {
    if (path !== ':memory:') createPrivately(path);
    db = new Database(path);
    // First: another warden opening or writing the store at the same time is waited for (5 s).
    db.pragma('busy_timeout = 5000');
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
    ensureJournalSchema(db, path);
    owners = sessionOwners(db, now);
  } catch (error) {
    const code = storeCodeOf(error);
    const damaged = code !== undefined && isDamagedStore(code) ? ` (${code}): move it aside or restore a backup, or choose` : '. Choose';
    throw new Error(`cannot open the journal at ${path}: ${(error as Error).message}${damaged} another file with --store PATH (or :memory:).`, { cause: error });
  }
  // A session's entries are found by its integer key: `keyOf` is the subquery from its id.
  const keyOf = '(SELECT key FROM sessions WHERE session_id = ?)';
  const entryColumns = 'entries.seq, sessions.session_id, entries.at, entries.entry FROM entries JOIN sessions ON sessions.key = entries.session_key WHERE sessions.session_id = ?';
  const statements = {
    insertSession: db.prepare('INSERT INTO sessions (session_id, agent, cwd, title, created_at, updated_at, state, resume, restarts) VALUES (?, ?, ?, NULL, ?, ?, \'open\', NULL, 0)'),
    insertChild: db.prepare(
      "INSERT INTO sessions (session_id, agent, cwd, title, created_at, updated_at, state, resume, restarts, parent_session_id) VALUES (?, ?, ?, ?, ?, ?, 'open', NULL, 0, ?) ON CONFLICT (session_id) DO NOTHING",
    ),
    // A session's children, theirs, and so on (a child's record only: its entries are its top parent's).
    deleteChildren: db.prepare(`DELETE FROM sessions WHERE session_id IN (${childrenOf('?')} SELECT id FROM child)`),
    childSessions: db.prepare(`${childrenOf('?')} SELECT id, parent FROM child`),
    getSession: db.prepare('SELECT * FROM sessions WHERE session_id = ?'),
    insertEntry: db.prepare('INSERT INTO entries (session_key, at, entry) VALUES (?, ?, ?)'),
    touch: db.prepare('UPDATE sessions SET updated_at = ? WHERE key = ?'),
    setTitle: db.prepare('UPDATE sessions SET title = ? WHERE key = ? AND title IS NULL'),
    countRestart: db.prepare('UPDATE sessions SET restarts = restarts + 1 WHERE key = ?'),
    setResume: db.prepare('UPDATE sessions SET resume = ? WHERE session_id = ?'),
    setState: db.prepare('UPDATE sessions SET state = ?, updated_at = ? WHERE session_id = ?'),
    entries: db.prepare(`SELECT ${entryColumns} AND entries.seq > ? ORDER BY entries.seq`),
    copyTitle: db.prepare('UPDATE sessions SET title = (SELECT title FROM sessions WHERE session_id = ?) WHERE session_id = ?'),
    copyConversation: db.prepare(`INSERT INTO entries (session_key, at, entry) SELECT ${keyOf}, at, entry FROM entries WHERE session_key = ${keyOf} AND json_extract(entry, '$.kind') IN ('prompt', 'update', 'notice') ORDER BY seq`),
    lastGiven: db.prepare('SELECT MAX(seq) AS seq FROM entries'),
    deleteEntries: db.prepare(`DELETE FROM entries WHERE session_key = ${keyOf} OR session_key = ${noSessionKey}`),
    keepGiven: db.prepare(`INSERT INTO entries (seq, session_key, at, entry) VALUES (?, ${noSessionKey}, '', '{}')`),
    deleteSession: db.prepare('DELETE FROM sessions WHERE session_id = ?'),
    entriesPage: db.prepare(`SELECT ${entryColumns} AND entries.seq > ? ORDER BY entries.seq LIMIT ?`),
    // The host writes `kind` first: a prefix test reads no entry as JSON but the few that match.
    stateEntries: db.prepare(`SELECT ${entryColumns} AND substr(entries.entry, 1, 16) IN ('{"kind":"mode","', '{"kind":"config"', '{"kind":"resume"') ORDER BY entries.seq`),
    lastSeq: db.prepare(`SELECT MAX(seq) AS seq FROM entries WHERE session_key = ${keyOf}`),
    // Through the partial index `entries_by_prompt_key` (its WHERE and expression, as written there).
    promptByKey: db.prepare(`SELECT ${entryColumns} AND ${promptPrefix} AND ${promptKey} = ? ORDER BY entries.seq LIMIT 1`),
    turnEnd: db.prepare(`SELECT ${entryColumns} AND entries.seq > ? AND substr(entries.entry, 1, 16) IN ('{"kind":"stop","', '{"kind":"error",') ORDER BY entries.seq LIMIT 1`),
  };

  const known = (sessionId: string): SessionRow => {
    const row = statements.getSession.get(sessionId) as SessionRow | undefined;
    if (!row) throw new UnknownSessionError(sessionId);
    return row;
  };
  /** The keys of sessions seen to exist (forgotten again by `deleteSession`): an append skips the lookup for them. */
  const seen = new Map<string, number>();

  /**
   * The open group (`begin()` … `commit()`): its updates' sessions, to touch once at the commit.
   * Only `update` entries join a group; any other write commits the group first, so that it is
   * durable when it returns, whoever shares this connection.
   */
  let grouped: Map<number, string> | undefined;
  /** Why the last group was lost (SQLite rolled it back, or its commit failed); told at the next `commit()`. */
  let groupLost: Error | undefined;
  /**
   * The group's rows not inserted yet, flat (seq, key, at, entry per row): inserted
   * {@link rowsPerInsert} at a time (one statement for many rows costs less a row than one
   * each), and before anything reads or writes the journal otherwise, so that nothing sees a
   * journal without them. Their seqs are given here: the group holds the write lock, so no
   * other process inserts meanwhile, and SQLite would give the same (the highest plus one).
   */
  let rows: Array<number | string> = [];
  let nextSeq = 0;

  const keyOfSession = (sessionId: string): number => {
    let key = seen.get(sessionId);
    if (key === undefined) {
      key = known(sessionId).key;
      seen.set(sessionId, key);
    }
    return key;
  };
  /** An update joining the open group: a row to insert with the next ones (see `rows`). */
  const appendGrouped = (sessionId: string, entry: JournalEntry, group: Map<number, string>): number => {
    const key = keyOfSession(sessionId);
    const at = stampOf();
    const seq = nextSeq++;
    rows.push(seq, key, at, entryText(entry));
    group.set(key, at);
    if (rows.length === rowsPerInsert * 4) {
      try {
        insertRows();
      } catch (error) {
        loseGroup(error);
        throw error;
      }
    }
    return seq;
  };
  const insertRows = (): void => {
    if (rows.length === 0) return;
    const pending = rows;
    rows = [];
    insertMany(pending);
  };
  const appendRow = (sessionId: string, entry: JournalEntry): number => {
    const key = keyOfSession(sessionId);
    const at = stampOf();
    const seq = Number(statements.insertEntry.run(key, at, entryText(entry)).lastInsertRowid);
    statements.touch.run(at, key);
    if (entry.kind === 'prompt') {
      const title = titleOf(entry.prompt);
      if (title) statements.setTitle.run(title, key);
    }
    if (entry.kind === 'restart') statements.countRestart.run(key);
    return seq;
  };
  // IMMEDIATE: a deferred transaction that reads first (the session lookup) and writes later
  // fails at once with SQLITE_BUSY when another process wrote in between, busy timeout or not.
  const appendAlone = db.transaction((sessionId: string, entry: JournalEntry) => appendRow(sessionId, entry)).immediate;
  /** `INSERT … VALUES` statements by row count: the full one, and the one for a group's last rows. */
  const insertsByRows = new Map<number, Database.Statement>();
  const insertMany = (flat: ReadonlyArray<number | string>): void => {
    const count = flat.length / 4;
    let statement = insertsByRows.get(count);
    if (!statement) {
      statement = db.prepare(`INSERT INTO entries (seq, session_key, at, entry) VALUES ${Array.from({ length: count }, () => '(?, ?, ?, ?)').join(', ')}`);
      // The full one and a few sizes of last rows are kept; any other size is made again.
      if (insertsByRows.size < 16 || count === rowsPerInsert) insertsByRows.set(count, statement);
    }
    statement.run(flat);
  };
  /** One transaction, one statement for the whole copy: a fork of a long session costs no appends. */
  const fork = db.transaction((sessionId: string, agent: string, cwd: string, from: string) => {
    known(from);
    const at = now().toISOString();
    statements.insertSession.run(sessionId, agent, cwd, at, at);
    statements.copyTitle.run(from, sessionId);
    statements.copyConversation.run(sessionId, from);
  }).immediate;
  /** Deletes a session and its entries; the highest seq given stays taken (see `noSessionKey`). */
  const forget = db.transaction((sessionId: string) => {
    const given = (statements.lastGiven.get() as { seq: number | null }).seq;
    statements.deleteEntries.run(sessionId);
    statements.deleteChildren.run(sessionId);
    statements.deleteSession.run(sessionId);
    const left = (statements.lastGiven.get() as { seq: number | null }).seq;
    if (given !== null && (left === null || left < given)) statements.keepGiven.run(given);
  }).immediate;

  /** Commits the open group now; a failure is kept for the group's own `commit()` to throw. */
  const settleGroup = (): void => {
    if (grouped === undefined) return;
    const touches = grouped;
    grouped = undefined;
    // Some errors (disk full, I/O) make SQLite roll the whole transaction back by itself.
    if (!db.inTransaction) {
      rows = [];
      groupLost = new Error('the journal lost a group of updates: SQLite rolled its transaction back after a failed write');
      return;
    }
    try {
      insertRows();
      for (const [key, at] of touches) statements.touch.run(at, key);
      db.exec('COMMIT');
    } catch (error) {
      loseGroup(error);
    }
  };
  /** The group cannot be written or committed: rolled back, and told at its `commit()`. */
  const loseGroup = (error: unknown): void => {
    grouped = undefined;
    rows = [];
    // COMMIT can fail and leave the transaction open (SQLITE_BUSY): never stay inside it.
    if (db.inTransaction) db.exec('ROLLBACK');
    groupLost = new Error(`the journal could not commit a group of updates: ${(error as Error).message}`, { cause: error });
  };
  /** Before a read: the group's rows are inserted (a failure loses the group, as a failed commit would). */
  const readable = (): void => {
    if (rows.length === 0) return;
    try {
      insertRows();
    } catch (error) {
      loseGroup(error);
    }
  };

  const append = (sessionId: string, entry: JournalEntry): number => {
    if (grouped !== undefined && entry.kind === 'update' && db.inTransaction) {
      // The transaction is open already: no savepoint per append (two statements more each).
      return appendGrouped(sessionId, entry, grouped);
    }
    settleGroup();
    return appendAlone(sessionId, entry);
  };

  return storeErrorsNamed(path, {
    createSession({ sessionId, agent, cwd }) {
      settleGroup();
      const at = now().toISOString();
      statements.insertSession.run(sessionId, agent, cwd, at, at);
      return sessionOf(known(sessionId));
    },
    recordChild({ sessionId, parentSessionId, agent, cwd, title }) {
      settleGroup();
      const at = now().toISOString();
      statements.insertChild.run(sessionId, agent, cwd, title ?? null, at, at, parentSessionId);
    },
    childSessions(sessionId) {
      return (statements.childSessions.all(sessionId) as Array<{ id: string; parent: string }>).map(({ id, parent }) => ({ sessionId: id, parentSessionId: parent }));
    },
    forkSession({ sessionId, agent, cwd, from }) {
      settleGroup();
      fork(sessionId, agent, cwd, from);
      return sessionOf(known(sessionId));
    },
    deleteSession(sessionId) {
      settleGroup();
      forget(sessionId);
      seen.delete(sessionId);
    },
    getSession(sessionId) {
      const row = statements.getSession.get(sessionId) as SessionRow | undefined;
      return row ? sessionOf(row) : undefined;
    },
    listSessions(query = {}) {
      const limit = Math.max(1, Math.min(maxPage, Math.floor(query.limit ?? 50)));
      const after = query.cursor ? decodeCursor(query.cursor) : undefined;
      const where: string[] = [];
      const args: unknown[] = [];
      if (query.cwd !== undefined) {
        where.push('cwd = ?');
        args.push(query.cwd);
      }
      if (after) {
        where.push('(updated_at < ? OR (updated_at = ? AND session_id < ?))');
        args.push(after.updatedAt, after.updatedAt, after.sessionId);
      }
      const sql = `SELECT * FROM sessions ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY updated_at DESC, session_id DESC LIMIT ?`;
      const rows = db.prepare(sql).all(...args, limit + 1) as SessionRow[];
      const page = rows.slice(0, limit).map(sessionOf);
      const last = page.at(-1);
      return { sessions: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : undefined } satisfies JournalSessionPage;
    },
    append(sessionId, entry) {
      return append(sessionId, entry);
    },
    entries(sessionId, afterSeq = 0) {
      readable();
      return (statements.entries.all(sessionId, afterSeq) as EntryRow[]).map(recordOf);
    },
    readEntries(sessionId, page) {
      readable();
      return readEntriesPage(statements.entriesPage, sessionId, page);
    },
    stateEntries(sessionId) {
      readable();
      return (statements.stateEntries.all(sessionId) as EntryRow[]).map(recordOf).filter((record) => stateEntryKinds.has(record.entry.kind));
    },
    lastSeq(sessionId) {
      readable();
      return (statements.lastSeq.get(sessionId) as { seq: number | null }).seq ?? 0;
    },
    promptByKey(sessionId, key) {
      readable();
      const row = statements.promptByKey.get(sessionId, key) as EntryRow | undefined;
      if (!row) return undefined;
      const { entry } = recordOf(row);
      const end = statements.turnEnd.get(sessionId, row.seq) as EntryRow | undefined;
      return {
        seq: row.seq,
        promptDigest: entry.kind === 'prompt' ? entry.promptDigest : undefined,
        requestId: entry.kind === 'prompt' ? entry.requestId : undefined,
        end: end ? recordOf(end) : undefined,
      };
    },
    setResume(sessionId, resume) {
      settleGroup();
      known(sessionId);
      statements.setResume.run(resume === undefined ? null : JSON.stringify(resume), sessionId);
    },
    setState(sessionId, state) {
      settleGroup();
      known(sessionId);
      statements.setState.run(state, now().toISOString(), sessionId);
    },
    begin() {
      if (grouped !== undefined || db.inTransaction) return;
      // IMMEDIATE: take the write lock now, so the group cannot fail to upgrade a read later.
      db.exec('BEGIN IMMEDIATE');
      try {
        nextSeq = ((statements.lastGiven.get() as { seq: number | null }).seq ?? 0) + 1;
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
      grouped = new Map();
    },
    claim(sessionId) {
      settleGroup();
      owners.claim(sessionId);
      // Another process may have deleted it since this one last wrote it: look its key up again.
      seen.delete(sessionId);
    },
    release(sessionId) {
      settleGroup();
      owners.release(sessionId);
      seen.delete(sessionId);
    },
    commit() {
      settleGroup();
      const lost = groupLost;
      groupLost = undefined;
      if (lost) throw lost;
    },
    close() {
      if (!db.open) return;
      try {
        // A group still open is committed: what was appended is kept.
        settleGroup();
        // A store that cannot be written keeps our rows: a dead owner's count as free anyway.
        try {
          owners.releaseAll();
        } catch {
          // closing anyway
        }
      } finally {
        db.close();
      }
    },
  });
}

/**
 * The journal holds prompts and answers: its directories (those we create) are 0700, and a
 * new file is created 0600 before SQLite opens it, whose -wal and -shm take the file's mode.
 * An existing file keeps the mode its owner gave it.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  closeSync(openSync(path, 'a', 0o600));
}

/**
 * Every method of `journal`, with SQLite's own errors (`SqliteError`, code `SQLITE_…`)
 * turned into a {@link JournalError} naming the file and the fix; the journal's own errors
 * (unknown session, bad cursor) pass through.
 */
function storeErrorsNamed(path: string, journal: Journal): Journal {
  const named = {} as Record<string, unknown>;
  for (const [name, method] of Object.entries(journal) as Array<[string, (...args: unknown[]) => unknown]>) {
    // `apply` with `arguments`, not a rest array and a spread: an append runs once per streamed update.
    named[name] = function (this: unknown) {
      try {
        // eslint-disable-next-line prefer-rest-params
        return method.apply(undefined, arguments as unknown as unknown[]);
      } catch (error) {
        const code = storeCodeOf(error);
        throw code ? new JournalError(path, code, { cause: error }) : error;
      }
    };
  }
  return named as unknown as Journal;
}

/** The store's code of an error: SQLite's (or its cause's: a lost group keeps the commit's error there), or a damaged entry's. */
function storeCodeOf(error: unknown): string | undefined {
  for (let at = error; at instanceof Error; at = at.cause) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('SQLITE_') || code === DAMAGED_ENTRY_CODE)) return code;
  }
  return undefined;
}

/** One page of a session's entries (the `entries_by_session` index makes it a range read). */
function readEntriesPage(statement: Database.Statement, sessionId: string, page: JournalPageQuery): JournalRecord[] {
  const limit = Math.floor(page.limit);
  if (!(limit >= 1)) throw new TypeError(`Expected the \`limit\` of a journal page to be a positive integer, got \`${String(page.limit)}\`.`);
  const maxBytes = page.maxBytes ?? Infinity;
  const records: JournalRecord[] = [];
  let bytes = 0;
  // Row by row, so that a page of big entries (screenshots) stops at maxBytes, not at limit.
  for (const row of statement.iterate(sessionId, page.afterSeq ?? 0, limit) as IterableIterator<EntryRow>) {
    records.push(recordOf(row));
    bytes += row.entry.length;
    if (bytes >= maxBytes) break;
  }
  return records;
}

function sessionOf(row: SessionRow): JournalSession {
  return {
    sessionId: row.session_id,
    agent: row.agent,
    cwd: row.cwd,
    title: row.title ?? undefined,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    state: row.state,
    resume: row.resume === null ? undefined : parseStored(row.resume, `the resume state of session ${row.session_id}`),
    restarts: row.restarts,
    ...(row.parent_session_id ? { parentSessionId: row.parent_session_id } : {}),
  };
}

function recordOf(row: EntryRow): JournalRecord {
  return { seq: row.seq, sessionId: row.session_id, at: row.at, entry: parseStored(row.entry, `entry ${row.seq} of session ${row.session_id}`) as JournalEntry };
}

/**
 * A stored JSON value. Text that does not parse (a disk fault SQLite did not see, an edit by
 * hand) is a damaged store, named like SQLite's own damage, not an error of the host.
 */
function parseStored(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw Object.assign(new Error(`${what} is not JSON (${(error as Error).message})`, { cause: error }), { code: DAMAGED_ENTRY_CODE });
  }
}

/** Cursors are opaque to clients: the last row's sort key, base64url-encoded. */
function encodeCursor(session: JournalSession): string {
  return Buffer.from(JSON.stringify([session.updatedAt, session.sessionId])).toString('base64url');
}

function decodeCursor(cursor: string): { updatedAt: string; sessionId: string } {
  try {
    const [updatedAt, sessionId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof updatedAt === 'string' && typeof sessionId === 'string') return { updatedAt, sessionId };
  } catch {
    // fall through
  }
  throw new InvalidCursorError(cursor);
}
