/**
 * The client-side fault walk (spec/support/client-fault-walk.ts; issue 31) over a cluster:
 * three `warden serve` hosts on one real PostgreSQL (lease 2 s, one token file), the walk's
 * proxy pointed at a host drawn at random before each new connection (a host that does not own
 * the session forwards to its owner), and the `node_restart` fault a SIGKILL of the session's
 * owner, started again on a new port (another host takes the session over once the lease ran
 * out). The same checks as on one host, against the journal read straight from PostgreSQL.
 * Replay one run: CLUSTER_CLIENT_FAULTS_SEED=<seed> CLUSTER_CLIENT_FAULTS_RUNS=1; more:
 * CLUSTER_CLIENT_FAULTS_RUNS, CLUSTER_CLIENT_FAULTS_PROMPTS. Skipped, saying why, without PostgreSQL.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { walkClientFaults } from '../support/client-fault-walk.js';
import { clusterFixture, ownerOf, startClusterHost, type ClusterHost } from '../support/cluster.js';
import { postgresJournal } from '../support/journal-rows.js';
import { startWsFaultProxy, type WsFaultProxy } from '../support/ws-fault-proxy.js';

const baseSeed = Number(process.env.CLUSTER_CLIENT_FAULTS_SEED ?? 3131);
const runs = Number(process.env.CLUSTER_CLIENT_FAULTS_RUNS ?? 1);
const promptsPerRun = Number(process.env.CLUSTER_CLIENT_FAULTS_PROMPTS ?? 8);
const lease = 2;

describe('a cluster under client-side faults (three hosts on PostgreSQL, clients on random hosts, the owner killed), seeded (issue 31)', function () {
  this.timeout(600_000);
  const fixture = clusterFixture('client_faults');
  let proxy: WsFaultProxy | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  for (let run = 0; run < runs; run++) {
    const seed = baseSeed + run;
    it(`seed ${seed}: ${promptsPerRun} keyed prompts through random hosts, a fault drawn for each; one prompt entry and one end per key, each answer the journal's, every update once and in order per connection (replay: CLUSTER_CLIENT_FAULTS_SEED=${seed} CLUSTER_CLIENT_FAULTS_RUNS=1)`, async () => {
      const cwd = join(fixture.state, 'project');
      mkdirSync(cwd);
      const tokenFile = join(fixture.state, 'token');
      const start = (name: string) => startClusterHost(join(fixture.state, name), fixture.launched, { store: fixture.url, lease, args: ['--env', 'DEMO_WORD_DELAY_MS=2', '--token-file', tokenFile] });
      const hosts: ClusterHost[] = [];
      for (const name of ['a', 'b', 'c']) hosts.push(await start(name));
      proxy = await startWsFaultProxy(hosts[0]!.url);
      const through = proxy;
      let restarts = 0;
      await walkClientFaults({
        seed,
        prompts: promptsPerRun,
        proxy,
        world: {
          name: '3 hosts',
          cwd,
          token: () => hosts[0]!.token,
          beforeReconnect(random) {
            through.retarget(hosts[Math.floor(random() * hosts.length)]!.url);
          },
          async killAndRestart(sessionId) {
            const owner = await ownerOf(fixture.url, sessionId);
            const index = Math.max(0, hosts.findIndex((host) => host.advertise === owner.advertise));
            const killed = hosts[index]!;
            killed.process.kill('SIGKILL');
            await killed.exited;
            hosts[index] = await start(`restarted-${++restarts}`);
          },
          // The killed owner's lease has not run out yet: another host takes the session on a later try.
          retryableResume: (error) => error.data?.reason === 'session_owned' || error.data?.reason === 'owner_unreachable',
          journal: (ids) => postgresJournal(fixture.url, ids),
        },
      });
    });
  }
});
