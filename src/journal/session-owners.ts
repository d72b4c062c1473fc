/**
 * Session ownership in the SQLite journal: one row per live session naming the process that
 * runs it (pid, host, start identity, and this journal's own token, so that two journals in
 * one process are two owners). Taking a session is one `BEGIN IMMEDIATE` transaction: read the
 * row, refuse when its owner still runs, else write ours. An owner that died leaves its rows,
 * which count as free (process-identity.ts checks pid and start time: a reused pid is not it).
 */
import type Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { SessionOwnedError } from './journal.js';
import { currentProcess, isRunning } from './process-identity.js';

const schema = `
CREATE TABLE IF NOT EXISTS owners (
  session_id TEXT PRIMARY KEY,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started TEXT,
  token TEXT NOT NULL,
  acquired_at TEXT NOT NULL
);
`;

interface OwnerRow {
  session_id: string;
  pid: number;
  host: string;
  started: string | null;
  token: string;
  acquired_at: string;
}

/** What the journal does with owners. */
export interface SessionOwners {
  claim(sessionId: string): void;
  release(sessionId: string): void;
  /** Every session this journal holds (it closes). */
  releaseAll(): void;
}

/** Owners of `db`'s sessions, for this process; creates the table when the store has none. */
export function sessionOwners(db: Database.Database, now: () => Date): SessionOwners {
  db.exec(schema);
  const me = currentProcess();
  const token = randomUUID();
  const statements = {
    get: db.prepare('SELECT * FROM owners WHERE session_id = ?'),
    take: db.prepare('INSERT OR REPLACE INTO owners (session_id, pid, host, started, token, acquired_at) VALUES (?, ?, ?, ?, ?, ?)'),
    release: db.prepare('DELETE FROM owners WHERE session_id = ? AND token = ?'),
    releaseAll: db.prepare('DELETE FROM owners WHERE token = ?'),
  };
  const claim = db.transaction((sessionId: string) => {
    const row = statements.get.get(sessionId) as OwnerRow | undefined;
    if (row?.token === token) return;
    if (row && isRunning({ pid: row.pid, host: row.host, started: row.started ?? undefined })) {
      throw new SessionOwnedError(sessionId, { pid: row.pid, host: row.host, acquiredAt: row.acquired_at });
    }
    statements.take.run(sessionId, me.pid, me.host, me.started ?? null, token, now().toISOString());
  }).immediate;
  return {
    claim,
    release: (sessionId) => void statements.release.run(sessionId, token),
    releaseAll: () => void statements.releaseAll.run(token),
  };
}
