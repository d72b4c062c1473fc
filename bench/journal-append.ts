/**
 * What a journal write costs on PostgreSQL against SQLite, in the same run (issue 17): the
 * host's two kinds of write through {@link AsyncJournal}, each awaited before the next as the
 * host's per-session write queue issues them.
 *
 * - `append`: one entry, one transaction (a prompt, a stop, a permission answer).
 * - `appendGroup` of 64 updates: one transaction for the updates of one event-loop turn (the
 *   host's group commit), per update.
 *
 * SQLite: a file in the temporary directory (WAL, `synchronous = NORMAL`, as `warden acp`
 * opens it) adapted by `asyncJournalOf`. PostgreSQL: a real server started here (the test
 * support's `startPostgres`: Debian's binaries or `WARDEN_POSTGRES_BIN`, on 127.0.0.1, fsync
 * on), `openPostgresJournal` with its fenced `warden_append`. Without PostgreSQL binaries the
 * bench says so and measures nothing. The cases are interleaved round by round, so a change in
 * the machine's load touches both alike; the ratio is the figure, not the microseconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AsyncJournal, JournalUpdateEntry } from '../src/journal/async-journal.js';
import { asyncJournalOf } from '../src/journal/async-journal-of.js';
import { openPostgresJournal } from '../src/journal/postgres-journal.js';
import { sqliteJournal } from '../src/journal/sqlite-journal.js';
import { postgresAvailable, startPostgres } from '../spec/support/postgres.js';
import { formatRatio, formatStats, measureInterleaved, table } from './support/measure.js';

const plan = { warmup: 2, repetitions: 9 };
/** Appends awaited one after the other per repetition. */
const appends = 500;
/** Groups per repetition, and updates per group. */
const groups = 50;
const groupSize = 64;

/** A streamed chunk the size a model sends (a few words). */
const update: JournalUpdateEntry = { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a few words of the answer, ' } } };

/** The two repetitions of one journal, each returning ns per entry. */
async function casesOf(journal: AsyncJournal, sessionId: string) {
  await journal.createSession({ sessionId, agent: 'bench', cwd: '/bench' });
  const group = Array.from({ length: groupSize }, () => update);
  return {
    append: async (): Promise<number> => {
      const started = process.hrtime.bigint();
      for (let index = 0; index < appends; index++) await journal.append(sessionId, { kind: 'prompt', prompt: [{ type: 'text', text: `prompt ${index}` }] });
      return Number(process.hrtime.bigint() - started) / appends;
    },
    group: async (): Promise<number> => {
      const started = process.hrtime.bigint();
      for (let index = 0; index < groups; index++) await journal.appendGroup(sessionId, group);
      return Number(process.hrtime.bigint() - started) / (groups * groupSize);
    },
  };
}

export async function journalAppend(): Promise<void> {
  console.log('\n## Journal writes: PostgreSQL (openPostgresJournal) against SQLite (asyncJournalOf(sqliteJournal)), same run');
  const binaries = postgresAvailable();
  if (!binaries.available) {
    console.log(`skipped: ${binaries.why}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-journal-'));
  const server = await startPostgres();
  const sqlite = asyncJournalOf(sqliteJournal(join(dir, 'bench.sqlite')));
  const postgres = await openPostgresJournal(server.url);
  try {
    const lite = await casesOf(sqlite, 'bench-sqlite');
    const pg = await casesOf(postgres, 'bench-postgres');
    const stats = await measureInterleaved(plan, { sqliteAppend: lite.append, postgresAppend: pg.append, sqliteGroup: lite.group, postgresGroup: pg.group });
    console.log(`${binaries.version} on 127.0.0.1 (fsync on), SQLite on ${tmpdir()}; ${plan.repetitions} repetitions after ${plan.warmup} warm-up, interleaved: ${appends} appends, ${groups} groups of ${groupSize}; per entry`);
    console.log(table(['write', 'SQLite', 'PostgreSQL', 'PostgreSQL / SQLite'], [
      ['append (one transaction each)', formatStats(stats.sqliteAppend), formatStats(stats.postgresAppend), formatRatio(stats.postgresAppend.median / stats.sqliteAppend.median)],
      [`appendGroup of ${groupSize}, per update`, formatStats(stats.sqliteGroup), formatStats(stats.postgresGroup), formatRatio(stats.postgresGroup.median / stats.sqliteGroup.median)],
      ['PostgreSQL: append / per update in a group', '', formatRatio(stats.postgresAppend.median / stats.postgresGroup.median), ''],
    ]));
  } finally {
    await postgres.close();
    await sqlite.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
