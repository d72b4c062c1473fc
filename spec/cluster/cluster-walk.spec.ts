/**
 * A seeded random walk over a cluster (issues 17 and 28, fast-check, replayable like the chaos
 * walk): three `warden serve` hosts (lease 2 s, advertised) on one PostgreSQL reached through a
 * timing proxy (0-20 ms per chunk each way), two sessions, each with a controller, the first
 * with an observer too, every client on a host drawn at random (not its session's owner: the
 * host forwards). Steps: prompts, prompts cancelled (`session/cancel`) mid-turn, kills (SIGKILL
 * of a host, a new one started in its place), freezes (SIGSTOP past two leases, then SIGCONT),
 * database stalls (all traffic held), cuts (every database connection) and immediate restarts,
 * each fault either on its own or in the middle of a streaming turn; clients reconnecting to
 * random hosts. Checked after every step:
 *
 * - each session has one owner, a live host, at an epoch that never went back;
 * - the delivery invariant (spec/support/delivery-invariant.ts) over every connection each
 *   client ever had, against the journal read straight from PostgreSQL: every journaled update
 *   after its cursor once, in seq order; nothing the journal does not hold; a connection that
 *   still follows its session got everything;
 * - every prompt settled (answered, or failed, or its connection gone: never left waiting);
 * - no agent process of a killed host is left.
 *
 * `npm test` runs one short walk; `npm run chaos -- --cluster` long ones (docs/proof.md).
 * CLUSTER_WALK_SEED, CLUSTER_WALK_PATH (replay), CLUSTER_WALK_STEPS, CLUSTER_WALK_RUNS,
 * CLUSTER_WALK_LATENCY_MS, CLUSTER_WALK_SHRINK=1, CLUSTER_WALK_VERBOSE=1 (every walk's log).
 */
import fc from 'fast-check';
import { join } from 'node:path';
import { clusterFixture } from '../support/cluster.js';
import { ClusterWorld, type WalkTotals, type Walker } from './cluster-world.js';

const numberFrom = (name: string, fallback: number) => {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^-?\d+$/u.test(value)) throw new Error(`${name}: expected an integer, got "${value}"`);
  return Number(value);
};
const seed = numberFrom('CLUSTER_WALK_SEED', (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) | 0);
const steps = numberFrom('CLUSTER_WALK_STEPS', 8);
const runs = numberFrom('CLUSTER_WALK_RUNS', 1);
const latencyMs = numberFrom('CLUSTER_WALK_LATENCY_MS', 20);
const path = process.env.CLUSTER_WALK_PATH || undefined;
const shrink = process.env.CLUSTER_WALK_SHRINK === '1';
const verbose = process.env.CLUSTER_WALK_VERBOSE === '1';
const lease = 2;

/** A fault: on its own, or while session `during` streams a turn. */
type Fault =
  | { readonly kind: 'kill' | 'freeze'; readonly host: number }
  | { readonly kind: 'stall'; readonly ms: number }
  | { readonly kind: 'cut' | 'dbRestart' };

type Step =
  | { readonly kind: 'prompt'; readonly session: number; readonly words: number; readonly via: number }
  | { readonly kind: 'cancel'; readonly session: number; readonly after: number; readonly via: number }
  | { readonly kind: 'fault'; readonly fault: Fault; readonly during: number | undefined; readonly via: number }
  | { readonly kind: 'reconnect'; readonly walker: number; readonly via: number };

const via = fc.nat(2);
const fault: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('kill' as const), host: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('freeze' as const), host: fc.nat(2) }) },
  // From a blink to two and a half leases: the lease may run out in the database meanwhile.
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('stall' as const), ms: fc.integer({ min: 200, max: 5_000 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cut' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'dbRestart' as const }) },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('prompt' as const), session: fc.nat(1), words: fc.integer({ min: 1, max: 12 }), via }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), session: fc.nat(1), after: fc.integer({ min: 1, max: 10 }), via }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('fault' as const), fault, during: fc.option(fc.nat(1), { nil: undefined }), via }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('reconnect' as const), walker: fc.nat(2), via }) },
);

/** A step in words, for the log. */
function describeStep(next: Step): string {
  switch (next.kind) {
    case 'prompt':
      return `prompt session ${next.session} (${next.words} words)`;
    case 'cancel':
      return `cancel a turn of session ${next.session} after ${next.after} chunks`;
    case 'reconnect':
      return `reconnect client ${next.walker} via host ${next.via}`;
    case 'fault': {
      const what = next.fault.kind === 'kill' || next.fault.kind === 'freeze' ? `${next.fault.kind} host ${next.fault.host}` : next.fault.kind === 'stall' ? `database stall ${next.fault.ms} ms` : next.fault.kind;
      return next.during === undefined ? what : `${what} while session ${next.during} streams`;
    }
  }
}

async function run(world: ClusterWorld, next: Step): Promise<void> {
  const { via: pick } = next;
  switch (next.kind) {
    case 'prompt':
    case 'cancel': {
      const walker = world.walkers[next.session] as Walker;
      await world.heal(walker, pick);
      await world.prompt(walker, next.kind === 'prompt' ? next.words : 60, next.kind === 'cancel' ? { cancelAfter: next.after } : {});
      return;
    }
    case 'reconnect':
      await world.reconnect(world.walkers[next.walker] as Walker, pick);
      return;
    case 'fault': {
      const { fault: chosen } = next;
      const apply = async () => {
        if (chosen.kind === 'kill') await world.kill(chosen.host);
        else if (chosen.kind === 'freeze') await world.freeze(chosen.host);
        else if (chosen.kind === 'stall') await world.stall(chosen.ms);
        else if (chosen.kind === 'cut') world.cut();
        else await world.restartDatabase();
      };
      await world.faultDuring(next.during, apply);
      await world.settleOwners();
      return;
    }
  }
}

describe('a random walk over a cluster of three hosts on one PostgreSQL behind a timing proxy', function () {
  // Generous: a step waits for takeovers and delivery (a minute each at most), and a walk starts three hosts.
  this.timeout(runs * (120_000 + steps * 180_000));
  const fixture = clusterFixture('walk');

  it(`keeps one owner per session, every update once and in order to every client, every prompt settled, no orphan (seed ${seed}, ${runs} × ${steps} steps)`, async () => {
    const totals: WalkTotals = { steps: 0, prompts: 0, cancelled: 0, kills: 0, freezes: 0, stalls: 0, cuts: 0, dbRestarts: 0, reconnects: 0, checks: 0, updates: 0 };
    const started = Date.now();
    let walks = 0;
    let lastLog: string[] = [];
    const property = fc.asyncProperty(fc.tuple(fc.array(via, { minLength: 3, maxLength: 3 }), fc.array(step, { minLength: steps, maxLength: steps }), fc.nat()), async ([first, walk, proxySeed]) => {
      walks++;
      const world = new ClusterWorld(fixture, join(fixture.state, `walk-${walks}`), lease, totals);
      try {
        // The proxy's delays come from the walk itself: a replayed path draws the same ones.
        await world.start(proxySeed, latencyMs, first);
        await world.check('start');
        for (const [index, next] of walk.entries()) {
          const label = `step ${index + 1} (${describeStep(next)})`;
          world.note(label);
          await run(world, next);
          totals.steps++;
          await world.check(label);
          // A client whose connection no longer follows its session comes back on a random host; the next check covers it.
          for (const [number, walker] of world.walkers.entries()) await world.heal(walker, (next.via + number) % 3);
        }
        await world.check('the end');
        // A long run says how far it got.
        if (runs > 1) console.log(`      walk ${walks}: ${walk.length} steps held, ${((Date.now() - started) / 1000).toFixed(0)} s so far`);
      } finally {
        totals.updates += world.updatesReceived();
        lastLog = world.log;
        if (verbose) console.log(world.log.join('\n'));
        await world.dispose();
      }
    });
    console.log(`      cluster walk seed ${seed} (replay: npm run chaos -- --cluster --seed ${seed})`);
    const details = await fc.check(property, { seed, numRuns: runs, endOnFailure: !shrink, ...(path ? { path } : {}) });
    const figures = `${walks} walks, ${totals.steps} steps, ${totals.checks} checks, ${totals.prompts} prompts (${totals.cancelled} cancelled), ${totals.kills} kills, ${totals.freezes} freezes, ${totals.stalls} stalls, ${totals.cuts} cuts, ${totals.dbRestarts} database restarts, ${totals.reconnects} reconnects, ${totals.updates} updates checked, ${((Date.now() - started) / 1000).toFixed(0)} s`;
    console.log(`      ${figures}`);
    if (details.failed) {
      const walk = (details.counterexample?.[0]?.[1] ?? []) as Step[];
      const replay = `npm run chaos -- --cluster --seed ${details.seed} --path ${details.counterexamplePath}`;
      const steps = walk.map((next, index) => `  ${index + 1}. ${describeStep(next)}`).join('\n');
      throw Object.assign(new Error(`cluster walk failed (seed ${details.seed}, path ${details.counterexamplePath}; replay: ${replay}):\n${String(details.errorInstance)}\n\nthe walk:\n${steps}\n\nits log:\n${lastLog.join('\n')}`), { stack: undefined });
    }
  });
});
