/**
 * A journal's entries read straight from the store, by SQL on a connection of the test's own
 * (never through warden, nor through a proxy in front of the database): what the delivery
 * invariant (delivery-invariant.ts) compares what clients received against.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import type { JournalEntry } from '../../src/journal/journal.js';
import type { JournalRow } from './delivery-invariant.js';

/** The entries of `sessionIds` (default: every session) in the PostgreSQL journal at `url`, each session's in seq order. */
export async function postgresJournal(url: string, sessionIds?: readonly string[]): Promise<Map<string, JournalRow[]>> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const where = sessionIds ? 'WHERE s.session_id = ANY($1)' : '';
    const { rows } = await client.query<{ session_id: string; seq: string; entry: string }>(
      `SELECT s.session_id, e.seq, e.entry FROM entries e JOIN sessions s ON s.key = e.session_key ${where} ORDER BY e.seq`,
      sessionIds ? [sessionIds] : [],
    );
    return grouped(rows.map((row) => ({ sessionId: row.session_id, seq: Number(row.seq), entry: row.entry })), sessionIds);
  } finally {
    await client.end();
  }
}

/** The same from a SQLite journal file (opened read-only: warden may still be writing it). */
export function sqliteJournal(path: string, sessionIds?: readonly string[]): Map<string, JournalRow[]> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT s.session_id AS sessionId, e.seq AS seq, e.entry AS entry FROM entries e JOIN sessions s ON s.key = e.session_key ORDER BY e.seq').all() as Array<{ sessionId: string; seq: number; entry: string }>;
    return grouped(sessionIds ? rows.filter((row) => sessionIds.includes(row.sessionId)) : rows, sessionIds);
  } finally {
    db.close();
  }
}

function grouped(rows: ReadonlyArray<{ sessionId: string; seq: number; entry: string }>, sessionIds: readonly string[] | undefined): Map<string, JournalRow[]> {
  const journals = new Map<string, JournalRow[]>((sessionIds ?? []).map((sessionId) => [sessionId, []]));
  for (const row of rows) {
    const list = journals.get(row.sessionId) ?? [];
    list.push({ seq: row.seq, entry: JSON.parse(row.entry) as JournalEntry });
    journals.set(row.sessionId, list);
  }
  return journals;
}

/** A session's turn entries (`prompt`, `stop`, `error`) in the PostgreSQL journal at `url`, in seq order, each with the idempotency key of a prompt (null otherwise). */
export async function postgresTurnEntries(url: string, sessionId: string): Promise<Array<{ kind: string; key: string | null }>> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ kind: string; key: string | null }>(
      `SELECT e.kind, substring(e.entry from '"idempotencyKey":"([^"]*)"') AS key FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = $1 AND e.kind IN ('prompt', 'stop', 'error') ORDER BY e.seq`,
      [sessionId],
    );
    return rows;
  } finally {
    await client.end();
  }
}
