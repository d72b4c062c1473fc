/**
 * The PostgreSQL journal's rows as journal values (sessions, records) and its page cursors: a
 * stored JSON that does not parse is a damaged store, as in the SQLite journal.
 */
import { DAMAGED_ENTRY_CODE, InvalidCursorError, type JournalEntry, type JournalRecord, type JournalSession, type JournalSessionState } from './journal.js';
import { PostgresJournalError } from './postgres-journal-error.js';

/** A row of `sessions`, with its owner host's name. */
export interface SessionRow {
  key: string;
  session_id: string;
  agent: string;
  cwd: string;
  title: string | null;
  created_at: Date;
  updated_at: Date;
  state: JournalSessionState;
  resume: string | null;
  restarts: number;
  owner_host: string | null;
  epoch: string;
  /** The owner host's name (joined from `hosts`). */
  owner_name: string | null;
  /** The session that announced it as a subagent child (absent before schema version 4 is read). */
  parent_session_id?: string | null;
}

/** A row of `entries`. */
export interface EntryRow {
  seq: string;
  at: Date;
  entry: string;
}

/** A session row as a journal session. */
export function sessionOf(row: SessionRow, where: string): JournalSession {
  return {
    sessionId: row.session_id,
    agent: row.agent,
    cwd: row.cwd,
    title: row.title ?? undefined,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    state: row.state,
    resume: row.resume === null ? undefined : parseStored(row.resume, `the resume state of session ${row.session_id}`, where),
    restarts: row.restarts,
    ...(row.parent_session_id ? { parentSessionId: row.parent_session_id } : {}),
    ...(row.owner_host === null ? {} : { owner: { hostId: row.owner_host, epoch: Number(row.epoch), ...(row.owner_name === null ? {} : { hostName: row.owner_name }) } }),
  };
}

/** An entry row as a journal record. */
export function recordOf(sessionId: string, row: EntryRow, where: string): JournalRecord {
  return { seq: Number(row.seq), sessionId, at: row.at.toISOString(), entry: parseStored(row.entry, `entry ${row.seq} of session ${sessionId}`, where) as JournalEntry };
}

/** A stored JSON value; text that does not parse (an edit by hand, a fault) is a damaged store, a {@link PostgresJournalError} (as in the SQLite journal). */
function parseStored(text: string, what: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PostgresJournalError(where, DAMAGED_ENTRY_CODE, new Error(`${what} is not JSON (${(error as Error).message})`, { cause: error }));
  }
}

/** Cursors are opaque to clients: the last row's sort key, base64url-encoded (the SQLite journal's format). */
export function encodeCursor(session: JournalSession): string {
  return Buffer.from(JSON.stringify([session.updatedAt, session.sessionId])).toString('base64url');
}

/** A cursor read back; one that is not this journal's is an {@link InvalidCursorError}. */
export function decodeCursor(cursor: string): { updatedAt: string; sessionId: string } {
  try {
    const [updatedAt, sessionId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof updatedAt === 'string' && typeof sessionId === 'string' && !Number.isNaN(Date.parse(updatedAt))) return { updatedAt, sessionId };
  } catch {
    // fall through
  }
  throw new InvalidCursorError(cursor);
}
