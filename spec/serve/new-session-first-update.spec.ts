/**
 * Defect 1 of issue 28, launched as a user would: `warden serve` as a process, its journal's
 * reads and commits delayed at seeded random moments (`WARDEN_FAULT_JOURNAL_DELAY`, what a
 * PostgreSQL store's round trips do), clients over WebSocket making sessions at once. Each
 * `session/new` replays its session from 0 while the agent's first update (its commands) is
 * being committed; every client must get that update, and every update of its sessions exactly
 * once, in seq order (checked against the journal file).
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { deliveryViolations } from '../support/delivery-check.js';
import { initializeParams, seqUpdatesOf, socketClient, startServe } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const seed = Number(process.env.NEW_SESSION_DELAY_SEED ?? 281);
const clients = 3;
const sessionsPerClient = Number(process.env.NEW_SESSION_PER_CLIENT ?? 15);

describe('warden serve with journal timing faults: session/new delivers its first update (issue 28, defect 1)', function () {
  this.timeout(180_000);
  let state: string;

  before(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-first-update-')));
  });
  after(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it(`${clients * sessionsPerClient} session/new from ${clients} clients at once (delay seed ${seed}, up to 20 ms a call): each gets its commands, every update once, in order`, async () => {
    const store = join(state, 'journal.sqlite');
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', store], launched, { env: { WARDEN_FAULT_JOURNAL_DELAY: `${seed}:20` } });
    const made = await Promise.all(
      Array.from({ length: clients }, async (_, index) => {
        const client = await socketClient(daemon, sockets);
        await client.request(1, 'initialize', initializeParams(`client-${index}`));
        const ids = await Promise.all(Array.from({ length: sessionsPerClient }, async (__, at) => (await client.request(10 + at, 'session/new', { cwd: state, mcpServers: [] })).result?.sessionId as string));
        return { client, ids };
      }),
    );
    // The demo's commands follow its answer at once: give the last ones time to commit, then look.
    const journal = sqliteJournal(store);
    try {
      const violations: string[] = [];
      const deadline = Date.now() + 30_000;
      for (;;) {
        violations.length = 0;
        for (const { client, ids } of made) {
          for (const sessionId of ids) {
            const got = seqUpdatesOf(client.frames, sessionId);
            const journaled = journal.entries(sessionId).filter(({ entry }) => entry.kind === 'update' || entry.kind === 'notice').map(({ seq }) => seq);
            if (!got.some((update) => update.kind === 'available_commands_update')) violations.push(`${sessionId}: no available_commands_update`);
            violations.push(...deliveryViolations(got.map((update) => update.seq), journaled).map((text) => `${sessionId}: ${text}`));
          }
        }
        if (violations.length === 0 || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(violations, `${violations.length} violations over ${clients * sessionsPerClient} sessions`).to.deep.equal([]);
    } finally {
      journal.close();
    }
  });
});
