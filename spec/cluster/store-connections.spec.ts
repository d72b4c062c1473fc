/**
 * One store opener per process (issue 29): `warden serve` on a PostgreSQL store, a member of a
 * cluster (advertised, so its takeover loop runs and listens) that has placed a session (so its
 * routing table was used), opens one pool that the journal, the takeover and the routing share,
 * plus the two connections a pool cannot lend (journal/postgres-store.ts): the lease's and the
 * LISTEN of the wake-ups. Counted by a hook in the process (spec/support/pg-openers.mjs) that
 * notes each `pg.Pool` and each `pg.Client` made outside a pool.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clusterFixture, startClusterHost } from '../support/cluster.js';
import { waitUntil } from '../support/processes.js';
import { initializeParams, socketClient } from '../support/serve-daemon.js';

const hook = fileURLToPath(new URL('../support/pg-openers.mjs', import.meta.url));

interface Opener {
  readonly kind: 'pool' | 'client';
  readonly max: number | null;
  readonly applicationName: string | null;
}

describe('warden serve on a PostgreSQL store: one opener, one pool', function () {
  this.timeout(120_000);
  const fixture = clusterFixture('openers');

  it('opens one pool for the journal, the takeover and the routing, one lease connection and one listening connection', async () => {
    const log = join(fixture.state, 'openers.jsonl');
    const openers = (): Opener[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Opener) : []);
    const host = await startClusterHost(join(fixture.state, 'a'), fixture.launched, {
      store: fixture.url,
      lease: 2,
      args: ['--load-limit', '1'],
      env: { NODE_OPTIONS: `--import=${hook}`, WARDEN_PG_OPENERS: log },
    });
    const editor = await socketClient(host, fixture.sockets);
    expect((await editor.request(1, 'initialize', initializeParams('editor'))).error).to.equal(undefined);
    // The second session is at the load limit: placement asks the routing table for the other hosts (none: it stays here).
    for (const id of [2, 3]) expect((await editor.request(id, 'session/new', { cwd: fixture.state, mcpServers: [] })).error).to.equal(undefined);
    await waitUntil(() => openers().some((opener) => opener.kind === 'client'), 'the takeover loop to listen', 30_000);

    const seen = openers().map((opener) => `${opener.kind} max=${opener.max ?? '-'} ${opener.applicationName ?? ''}`.trim()).sort();
    expect(seen).to.deep.equal(['client max=- warden takeover', 'pool max=1', 'pool max=6']);
  });
});
