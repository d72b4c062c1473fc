/**
 * Exact delivery through the hub (`warden serve`'s switchboard) while the journal's timing is
 * faulty (issue 28): a SQLite journal behind `delayedJournal`, every read and commit landing
 * at a seeded random moment, so replays race commits as they do on PostgreSQL. Per seed:
 * sessions made at once (each `session/new` replays the session from 0 while its first
 * updates commit), prompted, one client dropping mid-turn and another resuming from the last
 * seq it saw. Checked against the journal: each client got every journaled update after its
 * cursor exactly once, in seq order, and nothing the journal does not hold.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createHost, type Host } from '../../src/runtime/host.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { attachClient, type HubClient, type HubUpdate } from '../support/hub-client.js';
import { deliveryViolations } from '../support/delivery-check.js';

const baseSeed = Number(process.env.HUB_TIMING_SEED ?? 4_28_1);
const seeds = Number(process.env.HUB_TIMING_RUNS ?? 6);
const sessionsPerRun = 6;

/** What a client got of a session that the journal holds as `update` / `notice` entries (its prompts' echoes and turn ends aside). */
const seqsOf = (updates: readonly HubUpdate[], sessionId: string) =>
  updates
    .filter((update) => update.sessionId === sessionId && update.update.sessionUpdate !== 'user_message_chunk' && !(update.update.sessionUpdate === 'session_info_update' && (update.update._meta as Record<string, unknown> | undefined)?.['acp-warden/turnEnded'] !== undefined))
    .map((update) => update.seq);

/** The turn entries (prompt echoes, turn ends) a client got of a session: only another client's turns are news to it. */
const ownTurnsShownAsNews = (updates: readonly HubUpdate[], sessionId: string) =>
  updates
    .filter((update) => update.sessionId === sessionId && (update.update.sessionUpdate === 'user_message_chunk' || (update.update._meta as Record<string, unknown> | undefined)?.['acp-warden/turnEnded'] !== undefined))
    .map((update) => `${update.update.sessionUpdate} seq ${String(update.seq)}`);

describe('hub delivery under journal timing faults (delayed reads and commits, seeded)', function () {
  this.timeout(300_000);
  let dir: string;
  let host: Host | undefined;
  const clients: HubClient[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-hub-timing-'));
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await host?.stop();
    host = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  for (let run = 0; run < seeds; run++) {
    const seed = baseSeed + run;
    it(`seed ${seed}: ${sessionsPerRun} session/new at once, prompts, a drop mid-turn and a resume from the last seq: every update once, in order (replay with HUB_TIMING_SEED=${seed} HUB_TIMING_RUNS=1)`, async () => {
      const path = join(dir, 'journal.sqlite');
      host = createHost({ store: path, journalDelay: { seed, maxMs: 15 }, agents: { demo: demoAgent({ wordDelayMs: 1 }) } });
      const hub = host.hub();
      const a = await attachClient(hub, 'a');
      clients.push(a);
      const sessionIds = await Promise.all(Array.from({ length: sessionsPerRun }, async () => ((await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string }).sessionId));
      await Promise.all(sessionIds.map((sessionId) => a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'one two three four five' }] })));
      // A second turn on the first session; `a` drops once it saw part of it, `b` resumes from there.
      const [dropped] = sessionIds as [string];
      const before = seqsOf(a.updates, dropped).length;
      void a.request('session/prompt', { sessionId: dropped, prompt: [{ type: 'text', text: 'a longer answer with many more words in it to cut' }] }).catch(() => undefined);
      await a.until(() => seqsOf(a.updates, dropped).length >= before + 3, 'part of the second turn on a');
      const kept = sessionIds.slice(1);
      const journal = sqliteJournal(path);
      try {
        const journaledOf = (sessionId: string) => journal.entries(sessionId).filter((record) => record.entry.kind === 'update' || record.entry.kind === 'notice').map((record) => record.seq);
        const violations: string[] = [];
        for (const sessionId of kept) violations.push(...deliveryViolations(seqsOf(a.updates, sessionId), journaledOf(sessionId)).map((text) => `a, ${sessionId}: ${text}`));
        a.close();
        const seenByA = seqsOf(a.updates, dropped);
        const last = Math.max(0, ...seenByA.map((seq) => seq ?? 0));
        const b = await attachClient(hub, 'b');
        clients.push(b);
        await b.request('session/resume', { sessionId: dropped, cwd: dir, _meta: { 'acp-warden/after': last } });
        await b.until(() => b.updates.some((update) => (update.update._meta as Record<string, unknown> | undefined)?.['acp-warden/turnEnded'] !== undefined), 'the turn end on b');
        const journaled = journaledOf(dropped);
        violations.push(...deliveryViolations(seenByA, journaled.filter((seq) => seq <= last)).map((text) => `a before its drop: ${text}`));
        violations.push(...deliveryViolations(seqsOf(b.updates, dropped), journaled, last).map((text) => `b after resuming from ${last}: ${text}`));
        expect(violations, `seed ${seed}`).to.deep.equal([]);
        // Its own turns came to `a` as answers, never as news: no echo of a prompt it sent, no turn end of its own turn.
        for (const sessionId of sessionIds) expect(ownTurnsShownAsNews(a.updates, sessionId), `${sessionId}: a's own turns shown to it as another client's`).to.deep.equal([]);
        // Each new session's first update (its commands) reached the client that made it.
        for (const sessionId of sessionIds) expect(a.updates.some((update) => update.sessionId === sessionId && update.update.sessionUpdate === 'available_commands_update'), `${sessionId}'s commands`).to.equal(true);
      } finally {
        journal.close();
      }
    });
  }
});
