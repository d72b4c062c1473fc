/**
 * Placement across hosts (issue 17): `warden serve` hosts on one real PostgreSQL, the demo agent
 * as a process. A host that owns `--load-limit` sessions makes a client's new session on the
 * least-loaded live host that is less loaded than itself: the client keeps its one connection,
 * the session is owned there (the database says so), its prompts stream through the client's
 * host with the journal's seqs; a host as busy is not used (no hop for nothing); a chosen host
 * that cannot be reached (killed, its lease not yet run out) leaves the session made locally.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import pg from 'pg';
import type { WebSocket } from 'ws';
import { clusterFixture, startClusterHost, type ClusterHost } from '../support/cluster.js';
import { queryRows } from '../support/postgres.js';
import { waitUntil } from '../support/processes.js';
import { demoAgentsOf, initializeParams, seqUpdatesOf, socketClient, type LineClient } from '../support/serve-daemon.js';

describe('placement: a new session on a host at its load limit', function () {
  this.timeout(120_000);
  const fixture = clusterFixture('placed');

  async function host(name: string, loadLimit?: number): Promise<ClusterHost> {
    return startClusterHost(join(fixture.state, name), fixture.launched, {
      store: fixture.url,
      lease: 2,
      args: ['--token-file', join(fixture.state, 'token'), ...(loadLimit === undefined ? [] : ['--load-limit', String(loadLimit)])],
    });
  }

  const query = <T extends pg.QueryResultRow>(text: string, values: unknown[]) => queryRows<T>(fixture.url, text, values);

  const hostIdOf = async (daemon: ClusterHost) => (await query<{ host_id: string }>('SELECT host_id FROM hosts WHERE pid = $1', [daemon.process.pid]))[0]!.host_id;
  const ownerOf = async (sessionId: string) => (await query<{ owner_host: string | null }>('SELECT owner_host FROM sessions WHERE session_id = $1', [sessionId]))[0]?.owner_host ?? null;
  /** Waits until the host's heartbeat reported `load` sessions (placement reads the others' loads from there). */
  const heartbeatLoad = (hostId: string, load: number) =>
    waitUntil(async () => (await query<{ load: number }>('SELECT load FROM hosts WHERE host_id = $1', [hostId]))[0]?.load === load, `host ${hostId}'s heartbeat to report load ${load}`, 30_000);

  async function client(daemon: ClusterHost, name: string): Promise<LineClient & { readonly socket: WebSocket }> {
    const opened = await socketClient(daemon, fixture.sockets);
    const init = await opened.request(1, 'initialize', initializeParams(name));
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
    return opened;
  }

  async function newSession(on: LineClient, id: number): Promise<string> {
    const created = await on.request(id, 'session/new', { cwd: fixture.state, mcpServers: [] });
    expect(created.error, JSON.stringify(created.error)).to.equal(undefined);
    return (created.result as { sessionId: string }).sessionId;
  }

  it('at its limit, the next session is made on the less-loaded host and served through the client\'s one connection', async () => {
    const [a, b] = [await host('a', 1), await host('b')];
    const [aId, bId] = [await hostIdOf(a), await hostIdOf(b)];
    const editor = await client(a, 'editor');

    const first = await newSession(editor, 2);
    expect(await ownerOf(first), 'below the limit: local').to.equal(aId);
    const second = await newSession(editor, 3);
    expect(await ownerOf(second), 'at the limit: the other host, less loaded').to.equal(bId);
    expect(demoAgentsOf(b.process.pid).length, 'its agent runs on that host').to.equal(1);
    expect(demoAgentsOf(a.process.pid).length, 'one agent here, the first session\'s').to.equal(1);

    // The placed session is relayed: a prompt streams through A with the journal's seqs, once and in order.
    const answer = await editor.request(4, 'session/prompt', { sessionId: second, prompt: [{ type: 'text', text: 'placed elsewhere' }] });
    expect((answer.result as { stopReason?: string }).stopReason, JSON.stringify(answer)).to.equal('end_turn');
    const updates = seqUpdatesOf(editor.frames, second);
    const seqs = updates.map((update) => update.seq).filter((seq): seq is number => seq !== undefined);
    expect(seqs.length).to.be.greaterThan(2);
    expect(seqs, 'in order, once').to.deep.equal([...new Set(seqs)].sort((x, y) => x - y));
    const journaled = await query<{ seq: string }>('SELECT e.seq FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = $1 ORDER BY e.seq', [second]);
    expect(seqs.every((seq) => journaled.some((row) => Number(row.seq) === seq)), 'every seq shown is the journal\'s').to.equal(true);
    // The mark that told B to make it itself is not the agent's: nothing of it in the journal.
    const stored = await query<{ entry: unknown }>('SELECT e.entry FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = $1', [second]);
    expect(JSON.stringify(stored)).not.to.contain('acp-warden/placed');

    // The first session is still served here, on the same connection.
    const local = await editor.request(5, 'session/prompt', { sessionId: first, prompt: [{ type: 'text', text: 'still here' }] });
    expect((local.result as { stopReason?: string }).stopReason).to.equal('end_turn');
  });

  it('at its limit with another host as busy: local (no hop for nothing); once a less-loaded host joins: there', async () => {
    const [a, b] = [await host('a', 1), await host('b', 1)];
    const [aId, bId] = [await hostIdOf(a), await hostIdOf(b)];
    const onB = await client(b, 'b-editor');
    expect(await ownerOf(await newSession(onB, 2))).to.equal(bId);
    await heartbeatLoad(bId, 1);

    const editor = await client(a, 'editor');
    expect(await ownerOf(await newSession(editor, 2)), 'below the limit: local').to.equal(aId);
    expect(await ownerOf(await newSession(editor, 3)), 'at the limit, B as busy (1): local').to.equal(aId);

    const c = await host('c');
    const cId = await hostIdOf(c);
    expect(await ownerOf(await newSession(editor, 4)), 'C (0) is the least loaded').to.equal(cId);
  });

  it('the chosen host cannot be reached (SIGKILLed, its lease still running): the session is made where the client is', async () => {
    // A long lease (90 s: heartbeats every 30 s): B is still live in the database when it is asked, its load still the 0 it registered with.
    const long = (name: string, loadLimit?: number) =>
      startClusterHost(join(fixture.state, name), fixture.launched, { store: fixture.url, lease: 90, args: ['--token-file', join(fixture.state, 'token'), ...(loadLimit === undefined ? [] : ['--load-limit', String(loadLimit)])] });
    const [a, b] = [await long('a', 0), await long('b')];
    const [aId, bId] = [await hostIdOf(a), await hostIdOf(b)];
    const editor = await client(a, 'editor');
    // Limit 0, both idle: B is not less loaded, the first is local; then B (0) is less loaded than A (1).
    expect(await ownerOf(await newSession(editor, 2)), 'no host less loaded: local').to.equal(aId);
    expect(await ownerOf(await newSession(editor, 3)), 'A (1) at its limit 0, B (0)').to.equal(bId);

    const exited = new Promise((resolve) => b.process.once('exit', resolve));
    b.process.kill('SIGKILL');
    await exited;
    const [row] = await query<{ live: boolean; load: number }>('SELECT lease_until > now() AS live, load FROM hosts WHERE host_id = $1', [bId]);
    expect(row?.live, 'B still live in the database (its lease runs 90 s)').to.equal(true);
    expect(row?.load, 'B\'s load as registered (no heartbeat yet): less than A\'s 1, so B is chosen').to.equal(0);
    const made = await newSession(editor, 4);
    expect(await ownerOf(made), 'B chosen, not reached: made here').to.equal(aId);
    const answer = await editor.request(5, 'session/prompt', { sessionId: made, prompt: [{ type: 'text', text: 'made here' }] });
    expect((answer.result as { stopReason?: string }).stopReason).to.equal('end_turn');
  });
});
