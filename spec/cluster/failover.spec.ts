/**
 * Failover (issue 17): three `warden serve` hosts on one real PostgreSQL, each advertising
 * itself, with a 2 s lease and the demo agent as a process. The owner of a session is SIGKILLed
 * mid-turn: once its lease ran out another host takes the session by itself (no client asked),
 * resumes it from the journal and ends the turn the dead host left running with `host_lost`; a
 * client resuming on the new owner from the last seq it saw gets the rest once, in order, and
 * the next prompt runs there. The dead host's agent process is gone.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { clusterFixture, ownerOf as databaseOwnerOf, startClusterHost } from '../support/cluster.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { demoAgentsOf, initializeParams, lastSeqOf, seqUpdatesOf, socketClient, type ServeDaemon } from '../support/serve-daemon.js';

describe('failover: three warden serve hosts on one PostgreSQL, lease 2 s', function () {
  this.timeout(120_000);
  const fixture = clusterFixture('failover');

  /** Starts a host advertising its own address; its state (token file) in a directory of its own. */
  const host = (name: string) => startClusterHost(join(fixture.state, name), fixture.launched, { store: fixture.url, lease: 2, args: ['--env', 'DEMO_WORD_DELAY_MS=150'] });
  const ownerOf = (sessionId: string) => databaseOwnerOf(fixture.url, sessionId);

  it('SIGKILL of the owner mid-turn: another host takes the session by itself; resumed there from the cursor, the turn ends host_lost once and the next prompt runs', async () => {
    const hosts = [await host('a'), await host('b'), await host('c')];
    const [a] = hosts as [ServeDaemon & { advertise: string }];
    const client = await socketClient(a, fixture.sockets);
    await client.request(1, 'initialize', initializeParams('failover-test'));
    const created = await client.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] });
    const sessionId = (created.result as { sessionId: string }).sessionId;
    client.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'a long answer, please' }] } });
    await waitUntil(() => seqUpdatesOf(client.frames, sessionId).filter((update) => update.kind === 'agent_message_chunk').length >= 3, 'three chunks from the owner', 30_000);
    expect((await ownerOf(sessionId)).advertise).to.equal(a.advertise);
    const agents = demoAgentsOf(a.process.pid);
    expect(agents).to.have.length(1);
    const seen = seqUpdatesOf(client.frames, sessionId);
    const cursor = lastSeqOf(seen);
    a.process.kill('SIGKILL');
    const killedAt = Date.now();
    await a.exited;
    // The dead host's agent goes with it.
    await waitUntil(() => agents.every((pid) => !isAlive(pid)), 'the dead host\'s agent to end', 15_000);
    // Nobody asks: a live host takes the session once the lease ran out.
    let owner = await ownerOf(sessionId);
    await waitUntil(async () => (owner = await ownerOf(sessionId)).advertise !== a.advertise && owner.advertise !== null, 'another host to take the session', 30_000, 100);
    const tookMs = Date.now() - killedAt;
    expect(owner.epoch).to.equal(2);
    const taker = hosts.find((one) => one.advertise === owner.advertise) as ServeDaemon;
    const resumed = await socketClient(taker, fixture.sockets);
    await resumed.request(1, 'initialize', initializeParams('failover-test'));
    const answer = await resumed.request(2, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': cursor } });
    expect(answer.error, JSON.stringify(answer.error)).to.equal(undefined);
    const takenOver = (update: { update: unknown }) => JSON.stringify(update.update).includes('taken over');
    // The cut turn's end, then the notice of the takeover (journaled in that order).
    await waitUntil(() => seqUpdatesOf(resumed.frames, sessionId).some(takenOver), 'the takeover notice on the new owner', 30_000);
    const rest = seqUpdatesOf(resumed.frames, sessionId);
    const seqs = rest.map((update) => update.seq).filter((seq): seq is number => seq !== undefined);
    expect(seqs.every((seq) => seq > cursor), 'only what came after the cursor').to.equal(true);
    expect(seqs, 'in order, once').to.deep.equal([...new Set(seqs)].sort((x, y) => x - y));
    const ends = rest.filter((update) => update.turnEnded !== undefined);
    expect(ends).to.have.length(1);
    const ended = ends[0]!.turnEnded as { error?: { message: string; data?: { reason?: string; previousOwner?: string } } };
    expect(ended.error?.data?.reason).to.equal('host_lost');
    expect(rest.findIndex(takenOver), 'the notice after the turn end').to.be.greaterThan(rest.indexOf(ends[0]!));
    // The session goes on on its new owner.
    const next = await resumed.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] }, 60_000);
    expect((next.result as { stopReason?: string } | undefined)?.stopReason, JSON.stringify(next)).to.equal('end_turn');
    // Failover time is measured in bench/, not asserted here; the lease bounds it from below.
    expect(tookMs, `taken ${tookMs} ms after the kill`).to.be.greaterThan(1000);
  });
});
