/**
 * What the SQLite journal's row layout costs a relayed update (issue 28, defect 7): CPU per
 * update of the host's group commit as `warden acp` makes it (`begin()`, one `append` per
 * update of an event-loop turn, `commit()`; a file in WAL mode, `synchronous = NORMAL`),
 * against `JSON.stringify` of the entry (what any journal of JSON text pays), and against a
 * prototype layout that is NOT warden's: warden's own schema (a file `sqliteJournal` made), one
 * row per group holding the group's entries as one JSON array (raw better-sqlite3, nothing read back). The prototype
 * bounds what a layout change could save on the relay's hot path; reading such rows (pages,
 * forks, the prompt-key index) is not modelled. Groups are the size the relay bench makes
 * (about 220 updates an event-loop turn for 2,000 updates written at once). Interleaved round
 * by round; the figure is CPU (user + system, this process: bench/support/own-cpu.ts), not wall time.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JournalEntry } from '../src/journal/journal.js';
import { sqliteJournal } from '../src/journal/sqlite-journal.js';
import { chunkUpdate } from './support/chunk-update.js';
import { formatNs, formatRatio, measureInterleaved, now, since, table } from './support/measure.js';
import { cpuRecorder } from './support/own-cpu.js';

const plan = { warmup: 2, repetitions: 11 };
const groupSize = 220;
const groups = 100;

/** Update `index` as the relay bench's flood agent sends it, as the host journals it. */
function entryOf(index: number): JournalEntry {
  return { kind: 'update', update: chunkUpdate(index) } as JournalEntry;
}

/** Wall ns per update of `run` (which writes `groups` groups); its CPU is recorded around it. */
function perUpdate(run: () => void): number {
  const start = now();
  run();
  return since(start) / (groups * groupSize);
}

/** The prototype: one row per group, in a file whose schema (tables, indexes, WAL) warden's own journal made. */
function groupRowStore(path: string) {
  sqliteJournal(path).close();
  const db = new Database(path);
  db.pragma('synchronous = NORMAL');
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
  type Case = 'stringify' | 'file' | 'memory' | 'prototype';
  const cpu = cpuRecorder<Case>(groups * groupSize);
  const grouped = (journal: typeof file) => () =>
    perUpdate(() => {
      for (let index = 0; index < groups; index++) {
        journal.begin?.();
        for (const entry of entries) journal.append('bench', entry);
        journal.commit?.();
      }
    });
  try {
    await measureInterleaved(plan, {
      stringify: cpu.around('stringify', () =>
        perUpdate(() => {
          for (let index = 0; index < groups; index++) for (const entry of entries) JSON.stringify(entry);
        }),
      ),
      file: cpu.around('file', grouped(file)),
      memory: cpu.around('memory', grouped(memory)),
      prototype: cpu.around('prototype', () =>
        perUpdate(() => {
          for (let index = 0; index < groups; index++) prototype.group(entries);
        }),
      ),
    });
    const cpuOf = (name: Case) => cpu.median(name, plan.warmup).process as number;
    const base = cpuOf('stringify');
    const row = (label: string, name: Case) => [label, formatNs(cpuOf(name)), formatRatio(cpuOf(name) / base)];
    console.log(`${groups} groups of ${groupSize} updates a repetition, ${plan.repetitions} repetitions after ${plan.warmup} warm-up, interleaved; CPU per update, median`);
    console.log(table(['case', 'CPU per update', '/ JSON.stringify'], [
      row('JSON.stringify of the entry (baseline)', 'stringify'),
      row("warden's journal, a file (WAL; the default): a row per update", 'file'),
      row("warden's journal, :memory:", 'memory'),
      row('prototype (not warden): a row per group, a file (WAL)', 'prototype'),
    ]));
    console.log(`A row per group would save ${((cpuOf('file') - cpuOf('prototype')) / 1000).toFixed(2)} µs of CPU an update on the file journal.`);
  } finally {
    file.close();
    memory.close();
    prototype.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
