/**
 * The live view of a host on a store several hosts share (issue 17): each session's owner host
 * (its id and name) and the epoch it holds the session at, from the session's chart, on a real
 * PostgreSQL; where the session went once another host took it (its next write fenced), and
 * the new owner's view naming itself at the next epoch. A host on SQLite shows no owner.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createHost, type Host } from '../../src/runtime/host.js';
import type { LiveMachineView, LiveViewState } from '../../src/inspect/live-view-model.js';
import { queryRows, requirePostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { waitUntil } from '../support/processes.js';

/** The session's chart in a served view's `/state.json`. */
async function machineOf(viewUrl: string, sessionId: string): Promise<LiveMachineView | undefined> {
  const state = (await (await fetch(`${viewUrl}state.json`)).json()) as LiveViewState;
  return state.machines.find((machine) => machine.kind === 'machine' && machine.sessionId === sessionId);
}

describe('the live view: owner host and epoch of each session', function () {
  this.timeout(120_000);
  const hosts: Host[] = [];
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'warden-live-owner-'))));
  afterEach(async () => {
    // host.stop() closes the views it serves.
    for (const host of hosts.splice(0)) await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const open = (store: string) => {
    const host = createHost({ store, agents: { demo: demoAgent({ wordDelayMs: 0 }) } });
    hosts.push(host);
    return host;
  };

  describe('on PostgreSQL', () => {
    let server: TestPostgres;
    let databases = 0;
    let url: string;
    before(async function () {
      requirePostgres(this);
      server = await startPostgres();
    });
    after(async () => server?.stop());
    beforeEach(async () => (url = await server.createDatabase(`live_owner_${process.pid}_${++databases}`)));

    /** Runs `sql` on the test's database. */
    const query = <T extends pg.QueryResultRow>(sql: string, values: unknown[] = []) => queryRows<T>(url, sql, values);

    it('shows the owner host (id and name) and the epoch; once another host took the session, where it went, and that host shows itself at the next epoch', async () => {
      const a = open(url);
      await a.opened;
      const session = await a.newSession({ cwd: dir });
      expect((await session.prompt('hello').result).stopReason).to.equal('end_turn');
      const aView = await a.inspect.serve();
      const journaled = await a.journal.getSession(session.sessionId);
      const aId = journaled?.owner?.hostId;
      expect(aId, 'the journal names the owner').to.be.a('string');
      expect(journaled?.owner).to.deep.equal({ hostId: aId, epoch: 1, hostName: hostname() });
      const owned = await machineOf(aView.url, session.sessionId);
      expect(owned).to.deep.include({ state: 'ready', status: 'active' });
      expect(owned?.owner).to.deep.equal({ hostId: aId, hostName: hostname(), epoch: 1, here: true });

      // Host B takes the session, as its claim does once A's lease ran out: the row names B at
      // the next epoch (written here directly, so that A's own lease check cannot come first).
      const b = open(url);
      await b.opened;
      const [other] = await query<{ host_id: string }>('SELECT host_id FROM hosts WHERE host_id <> $1', [aId]);
      const bId = other?.host_id;
      expect(bId).to.be.a('string');
      await query('UPDATE sessions SET owner_host = $2, epoch = epoch + 1, owned_at = now() WHERE session_id = $1', [session.sessionId, bId]);

      // A's next write is fenced: the session moves away, and A's view says where it went.
      const refused = await session.prompt('on the stale owner').result.then(() => expect.fail('the stale owner may not run a turn'), (error: { data?: { reason?: string } }) => error);
      expect(refused.data?.reason).to.equal('session_moved');
      await waitUntil(async () => (await machineOf(aView.url, session.sessionId))?.state === 'failed', 'the session failed in A\'s view', 30_000, 50);
      const moved = await machineOf(aView.url, session.sessionId);
      expect(moved?.owner, 'a fenced write names the new owner\'s id, name and epoch').to.deep.equal({ hostId: bId, hostName: hostname(), epoch: 2, here: false });
      expect(moved?.failure).to.contain(`host ${bId} on ${hostname()} owns it now (epoch 2)`);

      // B resumes it: its view names B, at epoch 2 (the claim keeps the epoch B holds).
      await b.openSession(session.sessionId, { how: 'resume' });
      const bView = await b.inspect.serve();
      const resumed = await machineOf(bView.url, session.sessionId);
      expect(resumed?.status).to.equal('active');
      expect(resumed?.owner).to.deep.equal({ hostId: bId, hostName: hostname(), epoch: 2, here: true });
      expect((await b.journal.getSession(session.sessionId))?.owner).to.deep.equal({ hostId: bId, epoch: 2, hostName: hostname() });
    });
  });

  it('a host on SQLite: no owner, no epoch', async () => {
    const host = open(':memory:');
    const session = await host.newSession({ cwd: dir });
    const view = await host.inspect.serve();
    const machine = await machineOf(view.url, session.sessionId);
    expect(machine).to.deep.include({ state: 'ready', sessionId: session.sessionId });
    expect(machine).not.to.have.property('owner');
    expect(host.journal.getSession(session.sessionId)).not.to.have.property('owner');
  });
});
