/** Damaged SQLite stores for the store-fault specs: a store of demo sessions, a page of it overwritten as a failing disk would. */
import Database from 'better-sqlite3';
import { closeSync, openSync, writeSync } from 'node:fs';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

/** A store with `sessions` demo sessions of 40 updates each; returns their ids. */
export function buildStore(path: string, cwd: string, sessions: number): string[] {
  const journal = sqliteJournal(path);
  const ids: string[] = [];
  for (let index = 0; index < sessions; index++) {
    const sessionId = `stored-${index}`;
    journal.createSession({ sessionId, agent: 'demo', cwd });
    journal.append(sessionId, { kind: 'prompt', prompt: [{ type: 'text', text: `question ${index}` }] });
    for (let word = 0; word < 40; word++) {
      journal.append(sessionId, { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `word ${word} `.padEnd(120, '.') } } });
    }
    journal.append(sessionId, { kind: 'stop', stopReason: 'end_turn' });
    ids.push(sessionId);
  }
  journal.close();
  return ids;
}

/** The root page of a table or index, and what kind of page it is (SQLite's own dbstat). */
export function rootPageOf(path: string, name: string): { page: number; type: string } {
  const db = new Database(path, { readonly: true });
  try {
    const { rootpage } = db.prepare('SELECT rootpage FROM sqlite_schema WHERE name = ?').get(name) as { rootpage: number };
    const { pagetype } = db.prepare('SELECT pagetype FROM dbstat WHERE name = ? AND pageno = ?').get(name, rootpage) as { pagetype: string };
    return { page: rootpage, type: pagetype };
  } finally {
    db.close();
  }
}

/** Overwrites a page from `from` to its end with garbage (the second half by default), as a disk that lost a run of sectors would. */
export function damagePage(path: string, page: number, from = 2048): void {
  const pageSize = 4096;
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.alloc(pageSize - from, 0xa5), 0, pageSize - from, (page - 1) * pageSize + from);
  } finally {
    closeSync(fd);
  }
}
