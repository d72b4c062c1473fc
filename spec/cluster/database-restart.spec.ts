/**
 * The database blinks under a cluster (issue 17, docs/cluster.md "Database faults"): three
 * `warden serve` hosts on one real PostgreSQL, lease 6 s, each advertising itself; a client on
 * host A streams a long turn of the demo agent while PostgreSQL is restarted (an immediate
 * stop, as a crash), stopped for 3 s and started again, frozen (SIGSTOP) for longer than a lease
 * (6.5 s: every lease runs out in the database), or cut off (unreachable, not restarted) until
 * every lease has run out in the database (read there directly).
 * The lease is long against the blinks on purpose: a host stops its agents after two leases
 * without a renewal (self-fencing), and a blink plus a restart on a loaded machine must stay
 * well inside that, or the test would measure the machine's load. The turn ends `end_turn` on A, the session never changes hands (epoch 1: a
 * database that blinks loses no host), and what the
 * client got is the journal's: each seq once, in order, every one of them in the `entries`
 * table with the same update, and the answer journaled once, whole.
 */
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { JournalEntry } from '../../src/journal/journal.js';
import { updatesWithTurns } from '../../src/session/cursor.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { clusterFixture, ownerOf, startClusterHosts } from '../support/cluster.js';
import { queryRows } from '../support/postgres.js';
import { waitUntil } from '../support/processes.js';
import { agentText, initializeParams, seqUpdatesOf, socketClient } from '../support/serve-daemon.js';

/** The prompt's words: the demo agent echoes them one by one (60 ms apart: an 18 s turn, far longer than a restart). */
const words = Array.from({ length: 300 }, (_, n) => `w${n}`);
const wordDelayMs = 60;
/** The hosts' lease; a frozen database stays frozen "longer than a lease": {@link pastLeaseMs}. */
const leaseSeconds = 6;
const pastLeaseMs = 6500;

/** One row of the `entries` table of a session, parsed. */
interface JournaledEntry {
  readonly seq: number;
  readonly kind: string;
  readonly entry: JournalEntry;
}

describe('database restart under three warden serve hosts on one PostgreSQL, lease 6 s', function () {
  this.timeout(180_000);
  const fixture = clusterFixture('restart');

  /** A session's journal as the `entries` table holds it, in seq order. */
  async function journalOf(sessionId: string): Promise<JournaledEntry[]> {
    const client = new pg.Client(fixture.url);
    await client.connect();
    try {
      const { rows } = await client.query<{ seq: string; kind: string; entry: string }>('SELECT e.seq, e.kind, e.entry FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = $1 ORDER BY e.seq', [sessionId]);
      return rows.map((row) => ({ seq: Number(row.seq), kind: row.kind, entry: JSON.parse(row.entry) as JournaledEntry['entry'] }));
    } finally {
      await client.end();
    }
  }

  /**
   * Streams a long turn on host A, runs `blink` (the database away and back) once the turn
   * streams, and checks the turn, the owner and the journal against what the client got.
   */
  async function turnAcross(blink: () => Promise<void>, store = fixture.url): Promise<void> {
    const [a] = await startClusterHosts(fixture.state, ['a', 'b', 'c'], fixture.launched, { store, lease: leaseSeconds, args: ['--env', `DEMO_WORD_DELAY_MS=${wordDelayMs}`] });
    const client = await socketClient(a!, fixture.sockets);
    await client.request(1, 'initialize', initializeParams('database-restart-test'));
    const created = await client.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] });
    const sessionId = (created.result as { sessionId: string }).sessionId;
    const turn = client.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: words.join(' ') }] }, 150_000);
    const chunks = () => seqUpdatesOf(client.frames, sessionId).filter((update) => update.kind === 'agent_message_chunk');
    await waitUntil(() => chunks().length >= 3, 'three chunks of the turn', 60_000);
    const answeredBefore = client.frames.some((frame) => frame.id === 3 && frame.method === undefined);
    expect(answeredBefore, 'the turn still streams when the database goes away').to.equal(false);
    await blink();

    const answer = await turn;
    expect((answer.result as { stopReason?: string } | undefined)?.stopReason, JSON.stringify(answer)).to.equal('end_turn');
    // Nobody took the session: a restart of the database loses no host.
    expect(await ownerOf(fixture.url, sessionId)).to.deep.equal({ advertise: a!.advertise, epoch: 1 });

    const seen = seqUpdatesOf(client.frames, sessionId);
    const seqs = seen.map((update) => update.seq);
    expect(seqs.every((seq) => seq !== undefined), 'every update the client got carries its seq (none refused by the journal)').to.equal(true);
    expect(seqs, 'each seq once, in order').to.deep.equal([...new Set(seqs)].sort((x, y) => (x as number) - (y as number)));
    const journal = await journalOf(sessionId);
    const bySeq = new Map(journal.map((row) => [row.seq, row]));
    for (const update of seen) {
      const row = bySeq.get(update.seq as number);
      expect(row, `seq ${String(update.seq)} in the journal`).to.not.equal(undefined);
      expect(updatesWithTurns(row!.entry), `seq ${String(update.seq)} as the client got it`).to.deep.include(update.update);
    }
    // The answer, once and whole, in the journal and at the client (a write retried after its commit would repeat words).
    const journaledText = journal.filter((row) => row.entry.kind === 'update' && row.entry.update.sessionUpdate === 'agent_message_chunk').map((row) => (row.entry as { update: { content: { text: string } } }).update.content.text).join('');
    expect(journaledText).to.equal(`You said: ${words.join(' ')}. This is the acp-warden demo agent, answering word by word.`);
    expect(agentText(seen)).to.equal(journaledText);
    // Every update of the session the journal holds reached the client.
    expect(journal.filter((row) => row.kind === 'update').map((row) => row.seq), 'the journal\'s updates, all delivered').to.deep.equal(seqs.filter((seq) => bySeq.get(seq as number)?.kind === 'update'));
    const prompted = journal.find((row) => row.kind === 'prompt')?.entry as { requestId?: unknown } | undefined;
    expect(journal.filter((row) => row.kind === 'stop' || row.kind === 'error').map((row) => row.entry), 'one turn end, of the prompt').to.deep.equal([{ kind: 'stop', stopReason: 'end_turn', requestId: prompted?.requestId }]);
  }

  it('an immediate restart of PostgreSQL during a streaming turn: the turn ends on its host, the session keeps its owner, the client got the journal once and in order', async () => {
    await turnAcross(() => fixture.server.restart({ immediate: true }));
  });

  it('PostgreSQL down for 3 s during a streaming turn: the turn stalls, then ends on its host; same owner, the journal once and in order', async () => {
    await turnAcross(() => fixture.server.restart({ whileDown: () => sleep(3000) }));
  });

  it('PostgreSQL frozen (SIGSTOP) past a lease during a streaming turn, unreachable but not restarted: the session keeps its owner, the turn ends there', async () => {
    // Every host's lease runs out in the database while it is frozen; A's renewal, sent during
    // the freeze, runs at the thaw, before a claim by B or C could (their looks run then too).
    await turnAcross(async () => {
      process.kill(-fixture.server.pid(), 'SIGSTOP');
      try {
        await sleep(pastLeaseMs);
      } finally {
        process.kill(-fixture.server.pid(), 'SIGCONT');
      }
    });
  });

  it('PostgreSQL unreachable past a lease (every connection cut and refused, not restarted) during a streaming turn: the session keeps its owner, the turn ends there', async () => {
    const proxy = await startFaultProxy(fixture.server.port);
    try {
      await turnAcross(async () => {
        proxy.cutAll();
        // Away until every host's lease has run out in the database (read directly, not through the proxy).
        await waitUntil(async () => (await queryRows(fixture.url, "SELECT 1 FROM hosts WHERE state <> 'gone' AND lease_until > now()")).length === 0, 'every lease to run out in the database', 60_000, 200);
        proxy.accept();
      }, fixture.url.replace(`:${fixture.server.port}/`, `:${proxy.port}/`));
    } finally {
      await proxy.close();
    }
  });
});
