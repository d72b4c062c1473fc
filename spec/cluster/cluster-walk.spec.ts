/**
 * A seeded random walk over a cluster (issue 17, fast-check, replayable like the single-host
 * walk: CLUSTER_WALK_SEED, CLUSTER_WALK_STEPS): three `warden serve` hosts on one PostgreSQL
 * (lease 2 s, advertised), two sessions with a client each, and steps drawn from prompts, kills
 * (SIGKILL of a host, a new one started in its place), freezes (SIGSTOP past two leases, then
 * SIGCONT), immediate restarts of PostgreSQL and client reconnects. Checked after every step:
 * each session has one owner, a live host, at an epoch that never went back; every update a
 * client got is in the journal, its seqs increasing across reconnects (once, in order); every
 * prompt settled (answered or failed, never left waiting); no agent process of a killed host
 * is left.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { join } from 'node:path';
import pg from 'pg';
import { clusterFixture, ownerOf, startClusterHost, type ClusterHost } from '../support/cluster.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { demoAgentsOf, initializeParams, seqUpdatesOf, socketClient, type LineClient } from '../support/serve-daemon.js';

const seed = Number(process.env.CLUSTER_WALK_SEED ?? 20261203);
const steps = Number(process.env.CLUSTER_WALK_STEPS ?? 8);
const lease = 2;

type Step =
  | { readonly kind: 'prompt'; readonly session: number }
  | { readonly kind: 'kill' | 'freeze'; readonly host: number }
  | { readonly kind: 'dbRestart' }
  | { readonly kind: 'reconnect'; readonly session: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('prompt' as const), session: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('kill' as const), host: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('freeze' as const), host: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'dbRestart' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reconnect' as const), session: fc.nat(1) }) },
);

/** A client of one session: its connection (to the session's owner), what it saw, where its cursor stands. */
interface Walker {
  readonly sessionId: string;
  connection: (LineClient & { readonly socket: { close(): void } }) | undefined;
  /** The host it is connected to. */
  host: ClusterHost | undefined;
  /** Frames of the connection already taken into `seqs`. */
  taken: number;
  /** Every seq the client got, over all its connections. */
  readonly seqs: number[];
  nextId: number;
}

describe('a random walk over a cluster of three hosts on one PostgreSQL', function () {
  this.timeout(600_000);
  const fixture = clusterFixture('walk');

  it(`keeps one owner per session, every update once and in order, every prompt settled, no orphan (seed ${seed})`, async () => {
    let runs = 0;
    const property = fc.asyncProperty(fc.array(step, { minLength: steps, maxLength: steps }), async (walk) => {
      runs++;
      const state = join(fixture.state, `run-${runs}`);
      let started = 0;
      const startHost = () => startClusterHost(join(state, `host-${++started}`), fixture.launched, { store: fixture.url, lease, args: ['--env', 'DEMO_WORD_DELAY_MS=20'] });
      const hosts: ClusterHost[] = [await startHost(), await startHost(), await startHost()];
      /** Agent processes of hosts that were killed: they must end with them. */
      const orphans: number[] = [];
      const epochs = new Map<string, number>();
      const byAdvertise = (advertise: string | null) => hosts.find((one) => one.advertise === advertise);

      const connect = async (walker: Walker | undefined, sessionId?: string): Promise<Walker> => {
        const owner = (sessionId ? byAdvertise((await ownerOf(fixture.url, sessionId)).advertise) : hosts[0]) as ClusterHost;
        const connection = await socketClient(owner, fixture.sockets);
        await connection.request(1, 'initialize', initializeParams('cluster-walk'));
        if (!walker) {
          const created = await connection.request(2, 'session/new', { cwd: state, mcpServers: [] });
          return { sessionId: (created.result as { sessionId: string }).sessionId, connection, host: owner, taken: 0, seqs: [], nextId: 3 };
        }
        const cursor = walker.seqs.at(-1) ?? 0;
        const resumed = await connection.request(2, 'session/resume', { sessionId: walker.sessionId, cwd: state, mcpServers: [], _meta: { 'acp-warden/after': cursor } }, 60_000);
        expect(resumed.error, `resume of ${walker.sessionId}: ${JSON.stringify(resumed.error)}`).to.equal(undefined);
        walker.connection = connection;
        walker.host = owner;
        walker.taken = 0;
        walker.nextId = 3;
        return walker;
      };
      /** Takes what the walker's connection got since the last look. */
      const absorb = (walker: Walker) => {
        const frames = walker.connection?.frames ?? [];
        const fresh = frames.slice(walker.taken);
        walker.taken = frames.length;
        for (const update of seqUpdatesOf(fresh, walker.sessionId)) if (update.seq !== undefined) walker.seqs.push(update.seq);
      };
      /** Waits until every session has a live owner (a takeover after a kill or a freeze). */
      const settled = async () => {
        for (const walker of walkers) {
          await waitUntil(async () => byAdvertise((await ownerOf(fixture.url, walker.sessionId)).advertise) !== undefined, `a live owner of ${walker.sessionId}`, 30_000, 200);
        }
      };
      const reconnect = async (walker: Walker) => {
        absorb(walker);
        walker.connection?.socket.close();
        walker.connection = undefined;
        walker.host = undefined;
        await connect(walker, walker.sessionId);
      };

      const walkers: Walker[] = [];
      walkers.push(await connect(undefined), await connect(undefined));
      for (const next of walk) {
        if (next.kind === 'prompt') {
          const walker = walkers[next.session] as Walker;
          // A client whose host went away (or that lost the session) reconnects to the owner first.
          const owner = await ownerOf(fixture.url, walker.sessionId);
          if (!walker.connection || walker.host?.advertise !== owner.advertise) await reconnect(walker);
          const answer = await (walker.connection as LineClient).request(walker.nextId++, 'session/prompt', { sessionId: walker.sessionId, prompt: [{ type: 'text', text: 'walk on' }] }, 60_000).catch((error: Error) => ({ error: { message: error.message } }));
          // Settled either way: an answer, or an error naming why (the host lost it, the connection closed).
          expect(answer, 'every prompt settles').to.have.any.keys('result', 'error');
          if ((answer as { error?: { message?: string } }).error && !(answer as { result?: unknown }).result) await reconnect(walker);
        } else if (next.kind === 'kill') {
          const victim = hosts[next.host] as ClusterHost;
          orphans.push(...demoAgentsOf(victim.process.pid));
          victim.process.kill('SIGKILL');
          await victim.exited;
          hosts[next.host] = await startHost();
          await settled();
          // Its clients lost their connection: they come back on the session's owner.
          for (const walker of walkers) if (walker.host === victim) await reconnect(walker);
        } else if (next.kind === 'freeze') {
          const frozen = hosts[next.host] as ClusterHost;
          process.kill(frozen.process.pid as number, 'SIGSTOP');
          await new Promise((resolve) => setTimeout(resolve, 2 * lease * 1000 + 1000));
          process.kill(frozen.process.pid as number, 'SIGCONT');
          await settled();
        } else if (next.kind === 'dbRestart') {
          await fixture.server.restart({ immediate: true });
          await settled();
        } else if (next.kind === 'reconnect') {
          await reconnect(walkers[next.session] as Walker);
        }
        // After every step.
        for (const walker of walkers) {
          absorb(walker);
          const owner = await ownerOf(fixture.url, walker.sessionId);
          expect(byAdvertise(owner.advertise), `session ${walker.sessionId} is owned by a live host`).to.not.equal(undefined);
          expect(owner.epoch, `the epoch of ${walker.sessionId} never goes back`).to.be.at.least(epochs.get(walker.sessionId) ?? 1);
          epochs.set(walker.sessionId, owner.epoch);
          expect(walker.seqs.join(","), `${walker.sessionId}: once and in order across reconnects`).to.equal([...new Set(walker.seqs)].sort((a, b) => a - b).join(","));
          const journaled = await journalSeqs(fixture.url, walker.sessionId);
          expect(walker.seqs.filter((seq) => !journaled.has(seq)), `${walker.sessionId}: every update a client got is journaled`).to.deep.equal([]);
        }
        await waitUntil(() => orphans.every((pid) => !isAlive(pid)), 'no agent of a killed host left', 15_000);
      }
      for (const walker of walkers) walker.connection?.socket.close();
      for (const host of hosts) host.process.kill('SIGKILL');
    });
    const details = await fc.check(property, { seed, numRuns: Number(process.env.CLUSTER_WALK_RUNS ?? 1), endOnFailure: true });
    if (details.failed) throw new Error(`cluster walk failed: CLUSTER_WALK_SEED=${details.seed} (path ${details.counterexamplePath}): ${String(details.errorInstance)}`);
  });
});

/** The seqs of a session's journal entries. */
async function journalSeqs(url: string, sessionId: string): Promise<Set<number>> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ seq: string }>('SELECT e.seq FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = $1', [sessionId]);
    return new Set(rows.map((row) => Number(row.seq)));
  } finally {
    await client.end();
  }
}
