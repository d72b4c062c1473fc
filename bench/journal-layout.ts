/**
 * What the SQLite journal's row layout costs a relayed update (issue 28, defect 7): CPU per
 * update of the host's group commit as `warden acp` makes it (`begin()`, one `append` per
 * update of an event-loop turn, `commit()`; a file in WAL mode, `synchronous = NORMAL`),
 * against `JSON.stringify` of the entry (what any journal of JSON text pays), and against a
 * prototype layout that is NOT warden's: the same table and indexes, one row per group holding
 * the group's entries as one JSON array (raw better-sqlite3, nothing read back). The prototype
 * bounds what a layout change could save on the relay's hot path; reading such rows (pages,
 * forks, the prompt-key index) is not modelled. Groups are the size the relay bench makes
 * (about 220 updates an event-loop turn for 2,000 updates written at once). Interleaved round
 * by round; the figure is CPU (user + system, this process), not wall time.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JournalEntry } from '../src/journal/journal.js';
import { sqliteJournal } from '../src/journal/sqlite-journal.js';
import { chunkUpdate } from './support/chunk-update.js';
import { formatRatio, formatStats, measureInterleaved, table } from './support/measure.js';

const plan = { warmup: 2, repetitions: 11 };
const groupSize = 220;
const groups = 100;

/** Update `index` as the relay bench's flood agent sends it, as the host journals it. */
function entryOf(index: number): JournalEntry {
  return { kind: 'update', update: chunkUpdate(index) } as JournalEntry;
}

/** CPU ns per update of `run` (which writes `groups` groups). */
function cpuPerUpdate(run: () => void): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / (groups * groupSize);
}

/** The prototype: warden's schema (tables and indexes), one row per group. */
function groupRowStore(path: string) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE entries (seq INTEGER PRIMARY KEY, session_key INTEGER NOT NULL, at TEXT NOT NULL, entry TEXT NOT NULL);
    CREATE INDEX entries_by_session ON entries (session_key, seq);
    CREATE INDEX entries_by_prompt_key ON entries (session_key, json_extract(entry, '$.idempotencyKey')) WHERE substr(entry, 1, 16) = '{"kind":"prompt"';
  `);
  const insert = db.prepare('INSERT INTO entries (seq, session_key, at, entry) VALUES (?, 1, ?, ?)');
  let seq = 0;
  return {
    group(entries: readonly JournalEntry[]): void {
      db.exec('BEGIN IMMEDIATE');
      const texts = entries.map((entry) => JSON.stringify(entry));
      seq += entries.length;
      insert.run(seq, new Date().toISOString(), `[${texts.join(',')}]`);
      db.exec('COMMIT');
    },
    close: () => db.close(),
  };
}

export async function journalLayout(): Promise<void> {
  console.log('\n## The SQLite journal row layout on the relay path: CPU per update of a group commit');
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-layout-'));
  const entries = Array.from({ length: groupSize }, (_, index) => entryOf(index));
  const file = sqliteJournal(join(dir, 'warden.sqlite'));
  const memory = sqliteJournal(':memory:');
  for (const journal of [file, memory]) journal.createSession({ sessionId: 'bench', agent: 'bench', cwd: '/bench' });
  const prototype = groupRowStore(join(dir, 'prototype.sqlite'));
  const grouped = (journal: typeof file) => () =>
    cpuPerUpdate(() => {
      for (let index = 0; index < groups; index++) {
        journal.begin?.();
        for (const entry of entries) journal.append('bench', entry);
        journal.commit?.();
      }
    });
  try {
    const stats = await measureInterleaved(plan, {
      stringify: () =>
        cpuPerUpdate(() => {
          for (let index = 0; index < groups; index++) for (const entry of entries) JSON.stringify(entry);
        }),
      file: grouped(file),
      memory: grouped(memory),
      prototype: () =>
        cpuPerUpdate(() => {
          for (let index = 0; index < groups; index++) prototype.group(entries);
        }),
    });
    const base = stats.stringify.median;
    console.log(`${groups} groups of ${groupSize} updates a repetition, ${plan.repetitions} repetitions after ${plan.warmup} warm-up, interleaved; CPU per update, median (min–max)`);
    console.log(table(['case', 'CPU per update', '/ JSON.stringify'], [
      ['JSON.stringify of the entry (baseline)', formatStats(stats.stringify), '1.00×'],
      ["warden's journal, a file (WAL; the default): a row per update", formatStats(stats.file), formatRatio(stats.file.median / base)],
      ["warden's journal, :memory:", formatStats(stats.memory), formatRatio(stats.memory.median / base)],
      ['prototype (not warden): a row per group, a file (WAL)', formatStats(stats.prototype), formatRatio(stats.prototype.median / base)],
    ]));
    console.log(`A row per group would save ${((stats.file.median - stats.prototype.median) / 1000).toFixed(2)} µs of CPU an update on the file journal.`);
  } finally {
    file.close();
    memory.close();
    prototype.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
