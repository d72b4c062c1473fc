/**
 * A stale owner (issue 28): two `warden serve` hosts on one real PostgreSQL, lease 2 s, the demo
 * agent as a process streaming a long answer word by word. The owner is frozen (SIGSTOP) while
 * the turn streams; its agent process is not, and goes on writing into its pipe. Once another
 * host took the session, the owner is woken (SIGCONT): the journal refuses what it still has to
 * write (fenced), and what the journal refused never reaches its client (defect 1b). Every
 * `session_moved` refusal it gives names the owner as the database has it: host id, machine
 * name and epoch, on the fenced path and on its lease check's (defect 3).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { clusterFixture, ownerOf, startClusterHost, untilUnrenewedFor } from '../support/cluster.js';
import { queryRows } from '../support/postgres.js';
import { waitUntil } from '../support/processes.js';
import { demoAgentsOf, initializeParams, seqUpdatesOf, socketClient, type Frame, type SeqUpdate } from '../support/serve-daemon.js';

/** A prompt the demo agent answers for about 30 s at 100 ms a word (it says the prompt back). */
const longPrompt = Array.from({ length: 300 }, (_, index) => `word${index}`).join(' ');

describe('a stale owner: two warden serve hosts on one PostgreSQL, lease 2 s', function () {
  this.timeout(120_000);
  const fixture = clusterFixture('stale_owner');

  const host = (name: string) => startClusterHost(join(fixture.state, name), fixture.launched, { store: fixture.url, lease: 2, args: ['--env', 'DEMO_WORD_DELAY_MS=100'] });

  /** The session's owner as the database has it: host id, machine name, epoch. */
  async function databaseOwner(sessionId: string): Promise<{ owner: string; ownerName: string; epoch: number }> {
    const [row] = await queryRows<{ owner: string; name: string; epoch: string }>(fixture.url, 'SELECT s.owner_host AS owner, h.name, s.epoch FROM sessions s JOIN hosts h ON h.host_id = s.owner_host WHERE s.session_id = $1', [sessionId]);
    return { owner: row?.owner as string, ownerName: row?.name as string, epoch: Number(row?.epoch) };
  }

  /** What a `session_moved` refusal says of the owner. */
  const movedTo = (frame: Frame | undefined) => {
    const data = frame?.error?.data as { reason?: string; owner?: unknown; ownerName?: unknown; epoch?: unknown } | undefined;
    return { reason: data?.reason, owner: data?.owner, ownerName: data?.ownerName, epoch: data?.epoch };
  };

  /** The session's journal: each entry by its seq. */
  async function journalOf(sessionId: string): Promise<Map<number, { kind: string; update?: unknown }>> {
    const rows = await queryRows<{ seq: string; entry: string }>(fixture.url, 'SELECT e.seq, e.entry FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = $1 ORDER BY e.seq', [sessionId]);
    return new Map(rows.map((row) => [Number(row.seq), JSON.parse(row.entry) as { kind: string; update?: unknown }]));
  }

  /** Resolves once `count()` stayed the same for a second (generously bounded). */
  async function quiet(count: () => number): Promise<void> {
    let last = -1;
    let since = Date.now();
    await waitUntil(() => {
      const now = count();
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since >= 1000;
    }, 'the session\'s updates to stop coming', 30_000, 50);
  }

  /** A notice of warden's own (as a `notice`, or rendered as a signed agent message for a client without `session.notices`). */
  const isNotice = (update: SeqUpdate) => update.kind === 'notice' || (update.update as { _meta?: Record<string, unknown> })._meta?.['acp-warden/notice'] !== undefined;

  /** Without the cursor's `_meta` (the journal holds the update as the agent sent it). */
  const bare = (update: SeqUpdate) => {
    const { _meta: _ignored, ...rest } = update.update as { _meta?: unknown };
    return rest;
  };

  for (const frozen of ['until another host took the session (one lease)', 'past two leases'] as const) {
    it(`frozen while a turn streams, woken ${frozen}: every update its client got is the journal's, with its seq (only warden's own notices have none), and the turn is answered session_moved or lease_lost`, async () => {
      const a = await host('a');
      const b = await host('b');
      const client = await socketClient(a, fixture.sockets);
      await client.request(1, 'initialize', initializeParams('stale-owner-test'));
      const created = await client.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] });
      const sessionId = (created.result as { sessionId: string }).sessionId;
      client.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: longPrompt }] } });
      const chunks = () => seqUpdatesOf(client.frames, sessionId).filter((update) => update.kind === 'agent_message_chunk');
      await waitUntil(() => chunks().length >= 3, 'three chunks from the owner', 30_000);
      const agents = demoAgentsOf(a.process.pid);
      expect(agents).to.have.length(1);
      process.kill(a.process.pid as number, 'SIGSTOP');
      await waitUntil(async () => (await ownerOf(fixture.url, sessionId)).advertise === b.advertise, 'the other host to take the session', 30_000, 100);
      if (frozen === 'past two leases') await untilUnrenewedFor(fixture.url, a, 2, 2);
      const seenFrozen = chunks().length;
      process.kill(a.process.pid as number, 'SIGCONT');
      await waitUntil(() => client.frames.some((frame) => frame.id === 3), 'the turn on the woken host to be answered', 30_000);
      const answer = client.frames.find((frame) => frame.id === 3);
      expect(['session_moved', 'lease_lost'], JSON.stringify(answer)).to.include(answer?.error?.data?.reason);
      const owner = await databaseOwner(sessionId);
      if (answer?.error?.data?.reason === 'session_moved') expect(movedTo(answer)).to.deep.equal({ reason: 'session_moved', ...owner });
      // Its agent (which streamed on meanwhile) was told to close the session: once nothing more came for a second, all came.
      await quiet(() => seqUpdatesOf(client.frames, sessionId).length);

      const journal = await journalOf(sessionId);
      const updates = seqUpdatesOf(client.frames, sessionId);
      const unjournaled = updates.filter((update) => !isNotice(update) && (update.seq === undefined || journal.get(update.seq)?.kind !== 'update'));
      expect(unjournaled.map((update) => `${update.kind} seq ${String(update.seq)}: ${update.text}`), `updates its client got that the journal does not hold (${seenFrozen} chunks before the wake-up)`).to.deep.equal([]);
      for (const update of updates.filter((one) => one.seq !== undefined && !isNotice(one))) {
        expect(bare(update), `seq ${String(update.seq)} as the journal holds it`).to.deep.equal(journal.get(update.seq as number)?.update);
      }
    });
  }

  it('frozen idle, woken after another host took the session: its lease check finds the session moved; its prompts are refused session_moved naming the owner\'s host id, machine name and epoch as the database has them, and its log says that epoch', async () => {
    const a = await host('a');
    const b = await host('b');
    const client = await socketClient(a, fixture.sockets);
    await client.request(1, 'initialize', initializeParams('stale-owner-test'));
    const created = await client.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] });
    const sessionId = (created.result as { sessionId: string }).sessionId;
    expect((await client.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).result).to.deep.equal({ stopReason: 'end_turn' });
    process.kill(a.process.pid as number, 'SIGSTOP');
    await waitUntil(async () => (await ownerOf(fixture.url, sessionId)).advertise === b.advertise, 'the other host to take the session', 30_000, 100);
    process.kill(a.process.pid as number, 'SIGCONT');
    // Idle, it writes nothing: only its look at its own lease can find the session gone.
    await waitUntil(() => a.stderr().includes(`session ${sessionId} moved to`), 'the woken host to find the session moved', 30_000);
    const owner = await databaseOwner(sessionId);
    expect(owner.epoch).to.equal(2);
    const refused = await client.request(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still yours?' }] });
    expect(movedTo(refused), JSON.stringify(refused)).to.deep.equal({ reason: 'session_moved', ...owner });
    expect(refused.error?.message).to.contain(`host ${owner.owner} on ${owner.ownerName} owns it now (epoch 2)`);
    expect(a.stderr()).to.contain(`session ${sessionId} moved to host ${owner.owner} at epoch 2`);
  });
});
