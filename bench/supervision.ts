/**
 * Supervision benchmarks: what a supervisor costs next to plain XState doing the same
 * work, measured in the same process, cases interleaved round by round. Prints tables of
 * figures and ratios; asserts nothing about speed (it only checks that each case did what
 * it claims, so that a figure never describes something else).
 *
 * 1. start and stop of a static one_for_one supervisor with N children, against a plain
 *    machine that spawns N children with `spawnChild`, and against N root actors;
 * 2. one restart (crash -> restarted child running), against one `createActor().start()`;
 * 3. one more child at 10 .. 10,000 existing ones: dynamic supervisor `startChild` /
 *    `terminateChild` against a machine parent's `spawnChild` / `stopChild`, with a new id
 *    each time (3) and with one id re-used (3b).
 */
import { createActor, enqueueActions, setup, spawnChild, stopChild, type AnyActorRef } from 'xstate';
import {
  createDynamicSupervisor,
  createSupervisor,
  shutdown,
  startChild,
  terminateChild,
  whichChildren,
  type ChildSpec,
} from '../src/supervision/index.js';
import { collectGarbage, formatNs, formatRatio, formatStats, measureInterleaved, now, since, summarize, table, type Plan, type Stats, check, ratio } from './support/measure.js';

/** The child of every case: one state, and an event that makes it throw (a crash). */
const tiny = setup({
  types: {} as { events: { type: 'crash' } },
}).createMachine({
  id: 'tiny',
  initial: 'idle',
  states: {
    idle: {
      on: {
        crash: {
          actions: () => {
            throw new Error('crash');
          },
        },
      },
    },
  },
});

function childSpecs(count: number): ChildSpec[] {
  return Array.from({ length: count }, (_, index) => ({ id: `c${index}`, start: { logic: tiny } }));
}

/** A plain XState parent that spawns `count` tiny children on entry. */
function spawningParent(count: number) {
  return setup({ actors: { tiny } }).createMachine({
    id: 'parent',
    entry: enqueueActions(({ enqueue }) => {
      for (let index = 0; index < count; index++) enqueue.spawnChild('tiny', { id: `c${index}` });
    }),
  });
}

/** A plain XState parent that spawns and stops children on request. */
const poolParent = setup({
  types: {} as { events: { type: 'spawn'; id: string } | { type: 'stop'; id: string } },
  actors: { tiny },
}).createMachine({
  id: 'pool',
  on: {
    spawn: { actions: spawnChild('tiny', { id: ({ event }) => (event as { id: string }).id }) },
    stop: { actions: stopChild(({ event }) => event.id) },
  },
});

/**
 * A running `poolParent` that already holds `count` children. Filling it with `count`
 * spawn events would cost O(count²) (each spawn copies the children object), minutes at
 * 10,000; restoring a persisted snapshot with `count` children costs O(count) and gives
 * the same state.
 */
function poolParentHolding(count: number): AnyActorRef {
  const seed = createActor(poolParent).start();
  seed.send({ type: 'spawn', id: 'seed' });
  const persisted = seed.getPersistedSnapshot() as unknown as { children: Record<string, unknown> };
  seed.stop();
  const template = persisted.children.seed;
  const children: Record<string, unknown> = {};
  for (let index = 0; index < count; index++) children[`c${index}`] = template;
  const actor = createActor(poolParent, { snapshot: { ...persisted, children } as never }).start();
  check(childCount(actor) === count && activeChildCount(actor) === count, `parent holds ${count} running children`);
  return actor;
}

function childrenOf(actor: AnyActorRef): AnyActorRef[] {
  return Object.values((actor.getSnapshot() as { children: Record<string, AnyActorRef> }).children);
}

function childCount(actor: AnyActorRef): number {
  return childrenOf(actor).length;
}

function activeChildCount(actor: AnyActorRef): number {
  return childrenOf(actor).filter((child) => child.getSnapshot().status === 'active').length;
}

function runningChildren(actor: AnyActorRef): number {
  return whichChildren(actor).filter((row) => row.status === 'running' && row.ref?.getSnapshot().status === 'active').length;
}

function allStopped(refs: readonly AnyActorRef[]): boolean {
  return refs.every((ref) => ref.getSnapshot().status === 'stopped');
}

// ---------------------------------------------------------------------------------------
// 1. Start and stop with N children

async function startStopAt(n: number, plan: Plan, parentPlan: Plan) {
  const supervisor = createSupervisor({ name: 'bench', strategy: 'one_for_one', children: childSpecs(n) });
  const parent = spawningParent(n);
  const startRoots = (): AnyActorRef[] => {
    const actors: AnyActorRef[] = new Array(n);
    for (let index = 0; index < n; index++) actors[index] = createActor(tiny).start();
    return actors;
  };

  const ours = await measureInterleaved(plan, {
    supStart: () => {
      const start = now();
      const actor = createActor(supervisor).start();
      const elapsed = since(start);
      check(runningChildren(actor) === n, `supervisor started ${n} children`);
      actor.stop();
      return elapsed;
    },
    supStop: () => {
      const actor = createActor(supervisor).start();
      const children = whichChildren(actor).map((row) => row.ref as AnyActorRef);
      const start = now();
      actor.stop();
      const elapsed = since(start);
      check(actor.getSnapshot().status === 'stopped' && allStopped(children), 'supervisor and children stopped');
      return elapsed;
    },
    supShutdown: async () => {
      const actor = createActor(supervisor).start();
      const children = whichChildren(actor).map((row) => row.ref as AnyActorRef);
      const start = now();
      const reason = await shutdown(actor);
      const elapsed = since(start);
      check(reason.kind === 'shutdown' && actor.getSnapshot().status === 'done' && allStopped(children), 'supervisor shut down');
      return elapsed;
    },
    rootsStart: () => {
      const start = now();
      const actors = startRoots();
      const elapsed = since(start);
      for (const actor of actors) actor.stop();
      return elapsed;
    },
    rootsStop: () => {
      const actors = startRoots();
      const start = now();
      for (const actor of actors) actor.stop();
      const elapsed = since(start);
      check(allStopped(actors), 'root actors stopped');
      return elapsed;
    },
  });
  collectGarbage();
  // One repetition times the start, then the stop, of the same parent: its stop is O(N²)
  // (every stopChild copies the children object), so it is too slow to pay untimed.
  const parentStops: number[] = [];
  const plain = await measureInterleaved(parentPlan, {
    parentStart: () => {
      const start = now();
      const actor = createActor(parent).start();
      const elapsed = since(start);
      const children = childrenOf(actor);
      check(children.length === n && activeChildCount(actor) === n, `parent spawned ${n} children`);
      const stop = now();
      actor.stop();
      parentStops.push(since(stop));
      check(allStopped(children), 'parent children stopped');
      return elapsed;
    },
  });
  return { ...ours, ...plain, parentStop: summarize(parentStops.slice(parentPlan.warmup)) };
}

async function benchStartStop(): Promise<void> {
  // [N, plan of the supervisor and root-actor cases, plan of the XState parent cases]
  const plans: [number, Plan, Plan][] = [
    [100, { warmup: 10, repetitions: 60, gcEachRepetition: true }, { warmup: 10, repetitions: 60, gcEachRepetition: true }],
    // The XState parent's start and stop are O(N²): about 0.2 s and 0.5-2 s a time at
    // N=1000, hence fewer repetitions of them (in their own rounds).
    [1000, { warmup: 3, repetitions: 30, gcEachRepetition: true }, { warmup: 1, repetitions: 6, gcEachRepetition: true }],
  ];
  const rows: string[][] = [];
  for (const [n, plan, parentPlan] of plans) {
    collectGarbage();
    const r = await startStopAt(n, plan, parentPlan);
    rows.push(['start', `${n}`, formatStats(r.supStart), formatStats(r.parentStart), ratio(r.supStart, r.parentStart), formatStats(r.rootsStart), ratio(r.supStart, r.rootsStart)]);
    rows.push(['stop: actor.stop()', `${n}`, formatStats(r.supStop), formatStats(r.parentStop), ratio(r.supStop, r.parentStop), formatStats(r.rootsStop), ratio(r.supStop, r.rootsStop)]);
    rows.push(['stop: await shutdown(actor) *', `${n}`, formatStats(r.supShutdown), formatStats(r.parentStop), ratio(r.supShutdown, r.parentStop), formatStats(r.rootsStop), ratio(r.supShutdown, r.rootsStop)]);
  }
  console.log('\n### 1. Start and stop with N children (whole operation; median (min–max))\n');
  console.log(table(
    ['operation', 'N', 'supervisor (one_for_one)', 'XState parent + spawnChild', 'ratio', 'XState N root actors', 'ratio'],
    rows,
  ));
  console.log('\n* XState has no graceful stop: the baselines of this row are their `actor.stop()` figures.');
  console.log('Ratio = supervisor / baseline (below 1: the supervisor is faster).');
  console.log(`Repetitions: ${plans.map(([n, plan, parentPlan]) => `N=${n}: ${plan.repetitions} (XState parent ${parentPlan.repetitions})`).join('; ')}.`);
}

// ---------------------------------------------------------------------------------------
// 2. One restart

async function benchRestart(): Promise<void> {
  const perRepetition = 20;
  const plan: Plan = { warmup: 50, repetitions: 300 };
  // Each repetition has its own supervisor whose intensity allows all its restarts, so the
  // intensity window never holds more than `perRepetition` entries.
  const supervisor = createSupervisor({
    name: 'bench',
    strategy: 'one_for_one',
    intensity: perRepetition,
    period: 5000,
    children: [{ id: 'w', start: { logic: tiny } }],
  });

  collectGarbage();
  const r = await measureInterleaved(plan, {
    restart: () => {
      const actor = createActor(supervisor).start();
      let ref = whichChildren(actor)[0]?.ref as AnyActorRef;
      const start = now();
      for (let index = 0; index < perRepetition; index++) {
        ref.send({ type: 'crash' });
        const row = whichChildren(actor)[0];
        if (!row || row.status !== 'running' || !row.ref || row.ref === ref) {
          throw new Error('benchmark invariant broken: the child was not restarted synchronously');
        }
        ref = row.ref;
      }
      const elapsed = since(start);
      check(actor.getSnapshot().context.restarts === perRepetition, 'every crash restarted');
      actor.stop();
      return elapsed / perRepetition;
    },
    spawn: () => {
      const actors: AnyActorRef[] = [];
      const start = now();
      for (let index = 0; index < perRepetition; index++) {
        const actor = createActor(tiny).start();
        if (actor.getSnapshot().status !== 'active') throw new Error('benchmark invariant broken: plain actor not running');
        actors.push(actor);
      }
      const elapsed = since(start);
      for (const actor of actors) actor.stop();
      return elapsed / perRepetition;
    },
    byHand: () => {
      // What a restart costs without a supervisor: crash a root actor, and start a new one
      // from its error observer.
      let current: AnyActorRef;
      const launch = (): AnyActorRef => {
        const actor = createActor(tiny);
        actor.subscribe({ error: () => { current = launch(); } });
        return actor.start();
      };
      current = launch();
      const start = now();
      for (let index = 0; index < perRepetition; index++) {
        const old = current;
        old.send({ type: 'crash' });
        if (current === old || current.getSnapshot().status !== 'active') {
          throw new Error('benchmark invariant broken: hand restart failed');
        }
      }
      const elapsed = since(start);
      current.stop();
      return elapsed / perRepetition;
    },
  });

  console.log('\n### 2. One restart (per operation; median (min–max))\n');
  console.log(table(
    ['operation', 'time', 'restart / this'],
    [
      ['supervisor: child crashes -> restarted child running (send + whichChildren)', formatStats(r.restart), ''],
      ['XState: createActor(tiny).start()', formatStats(r.spawn), ratio(r.restart, r.spawn)],
      ['XState by hand: root actor crashes -> new one started from its error observer', formatStats(r.byHand), ratio(r.restart, r.byHand)],
    ],
  ));
  console.log('\nThe restart includes the throw inside the child and XState turning it into an error');
  console.log('snapshot, which the plain spawn does not; the "by hand" row pays them too.');
}

// ---------------------------------------------------------------------------------------
// 3. One more child at N existing children

/** A running dynamic supervisor that holds `count` tiny children. */
async function dynamicSupervisorHolding(count: number): Promise<AnyActorRef> {
  const supervisor = createActor(createDynamicSupervisor({ name: 'pool' })).start();
  for (let index = 0; index < count; index++) {
    const result = await startChild(supervisor, { id: `c${index}`, start: { logic: tiny } });
    check(result.ok, 'fill the dynamic supervisor');
  }
  check(runningChildren(supervisor) === count, `dynamic supervisor holds ${count}`);
  return supervisor;
}

/**
 * Adds and removes one child `pairs` times; returns the ns per startChild and per
 * terminateChild. With `id`, every add uses that id; without, the supervisor generates a
 * new one (`pool-1`, `pool-2`, ...), the usual way of a dynamic supervisor.
 */
async function supervisorPairs(supervisor: AnyActorRef, pairs: number, id?: string): Promise<{ start: number; stop: number }> {
  const spec = { ...(id === undefined ? {} : { id }), start: { logic: tiny } };
  let spawning = 0;
  let stopping = 0;
  for (let index = 0; index < pairs; index++) {
    const start = now();
    const started = await startChild(supervisor, spec);
    spawning += since(start);
    if (!started.ok) throw new Error('benchmark invariant broken: startChild failed');
    const stop = now();
    const stopped = await terminateChild(supervisor, started.id);
    stopping += since(stop);
    if (!stopped.ok) throw new Error('benchmark invariant broken: terminateChild failed');
  }
  return { start: spawning / pairs, stop: stopping / pairs };
}

interface SpawnFigures {
  readonly n: number;
  readonly supStart: Stats;
  readonly supStop: Stats;
  readonly plainStart: Stats;
  readonly plainStop: Stats;
  readonly plainSameIdStart: Stats;
  readonly plainSameIdStop: Stats;
  readonly sameIdStart: Stats;
  readonly sameIdStop: Stats;
}

async function spawnAt(n: number, pairs: number, plan: Plan): Promise<SpawnFigures> {
  collectGarbage();
  const supervisor = await dynamicSupervisorHolding(n);
  const parent = poolParentHolding(n);
  collectGarbage();

  // Generated ids for the supervisor, new ids for the XState parent too; and the XState
  // parent again with one id re-used, for table 3b.
  let nextPlainId = 0;
  const plainPairs = (id?: string): { start: number; stop: number } => {
    let spawning = 0;
    let stopping = 0;
    for (let index = 0; index < pairs; index++) {
      const childId = id ?? `x${nextPlainId++}`;
      const start = now();
      parent.send({ type: 'spawn', id: childId });
      spawning += since(start);
      const stop = now();
      parent.send({ type: 'stop', id: childId });
      stopping += since(stop);
    }
    return { start: spawning / pairs, stop: stopping / pairs };
  };
  const supStops: number[] = [];
  const plainStops: number[] = [];
  const plainSameIdStops: number[] = [];
  const r = await measureInterleaved(plan, {
    supStart: async () => {
      const figures = await supervisorPairs(supervisor, pairs);
      supStops.push(figures.stop);
      return figures.start;
    },
    plainStart: () => {
      const figures = plainPairs();
      plainStops.push(figures.stop);
      return figures.start;
    },
    plainSameIdStart: () => {
      const figures = plainPairs('extra');
      plainSameIdStops.push(figures.stop);
      return figures.start;
    },
  });
  check(runningChildren(supervisor) === n, `dynamic supervisor still holds ${n}`);
  check(activeChildCount(parent) === n, `parent still holds ${n}`);
  supervisor.stop();
  // The parent is not stopped: XState's stop of a machine with N children is O(N²) (tens
  // of seconds at 10,000). Its children hold no timers; dropping it lets GC take it all.

  // The same id added and removed again and again. V8 leaves a deleted Map entry in its
  // hash chain until the table is rehashed, so the chain of that one key grows by one
  // entry per removal, up to the table's spare capacity (of the order of N) before a
  // rehash clears it: the cost is a sawtooth. Cover it: about 3N timed pairs (at least
  // 1,000), after about 0.7N untimed ones.
  collectGarbage();
  const sameId = await dynamicSupervisorHolding(n);
  const repetitions = 20;
  const sameIdPairs = Math.ceil(Math.max(1_000, 3 * n) / repetitions);
  const sameIdPlan: Plan = { warmup: Math.max(1, Math.ceil((0.7 * n) / sameIdPairs)), repetitions, gcEachRepetition: true };
  const sameIdStops: number[] = [];
  const same = await measureInterleaved(sameIdPlan, {
    sameIdStart: async () => {
      const figures = await supervisorPairs(sameId, sameIdPairs, 'extra');
      sameIdStops.push(figures.stop);
      return figures.start;
    },
  });
  check(runningChildren(sameId) === n, `dynamic supervisor (same id) still holds ${n}`);
  sameId.stop();

  // Every case ran warmup + repetitions times, in order: drop the warm-up samples.
  return {
    n,
    supStart: r.supStart,
    plainStart: r.plainStart,
    supStop: summarize(supStops.slice(plan.warmup)),
    plainStop: summarize(plainStops.slice(plan.warmup)),
    plainSameIdStart: r.plainSameIdStart,
    plainSameIdStop: summarize(plainSameIdStops.slice(plan.warmup)),
    sameIdStart: same.sameIdStart,
    sameIdStop: summarize(sameIdStops.slice(sameIdPlan.warmup)),
  };
}

async function benchSpawnAtSize(): Promise<void> {
  // [existing children, add+remove pairs per repetition, plan]; the XState parent costs
  // ~1 ms a pair at 1,000 and ~10 ms at 10,000, hence fewer pairs there.
  const sizes: [number, number, Plan][] = [
    // The first size also warms up the code paths, hence its longer warm-up.
    // Garbage is collected before every repetition, so that one case's garbage (the XState
    // parent's copies of its children object) is not collected in another's time.
    [10, 50, { warmup: 20, repetitions: 60, gcEachRepetition: true }],
    [100, 50, { warmup: 5, repetitions: 60, gcEachRepetition: true }],
    [1_000, 20, { warmup: 3, repetitions: 40, gcEachRepetition: true }],
    [10_000, 10, { warmup: 2, repetitions: 20, gcEachRepetition: true }],
  ];
  const results: SpawnFigures[] = [];
  for (const [n, pairs, plan] of sizes) results.push(await spawnAt(n, pairs, plan));
  const format = (n: number): string => n.toLocaleString('en-US');
  const first = results[0];
  const last = results[results.length - 1];
  const growth = (pick: (figures: SpawnFigures) => Stats): string =>
    first && last ? formatRatio(pick(last).median / pick(first).median) : '';
  const growthLabel = first && last ? `growth ${format(first.n)} -> ${format(last.n)}` : 'growth';

  console.log('\n### 3. One more child at N existing children (per operation; median (min–max))\n');
  console.log(table(
    ['N existing', 'await startChild', 'XState spawnChild', 'ratio', 'await terminateChild', 'XState stopChild', 'ratio'],
    [
      ...results.map((r) => [
        format(r.n),
        formatStats(r.supStart),
        formatStats(r.plainStart),
        ratio(r.supStart, r.plainStart),
        formatStats(r.supStop),
        formatStats(r.plainStop),
        ratio(r.supStop, r.plainStop),
      ]),
      [growthLabel, growth((r) => r.supStart), growth((r) => r.plainStart), '', growth((r) => r.supStop), growth((r) => r.plainStop), ''],
    ],
  ));
  console.log('\nSupervisor: createDynamicSupervisor, startChild without an id (one is generated) then');
  console.log('terminateChild, both awaited (the replies come synchronously; the await adds a microtask).');
  console.log('XState: a machine parent whose events run spawnChild/stopChild actions, a new id each time');
  console.log('(synchronous send). Each repetition adds and removes one child');
  console.log(`${sizes.map(([n, pairs]) => `${pairs}× at N=${format(n)}`).join(', ')}; the size stays N.`);

  console.log('\n#### 3b. The same id added and removed again and again\n');
  console.log(table(
    ['N existing', 'await startChild', 'XState spawnChild', 'ratio', 'await terminateChild', 'XState stopChild', 'ratio'],
    [
      ...results.map((r) => [
        format(r.n),
        formatStats(r.sameIdStart),
        formatStats(r.plainSameIdStart),
        ratio(r.sameIdStart, r.plainSameIdStart),
        formatStats(r.sameIdStop),
        formatStats(r.plainSameIdStop),
        ratio(r.sameIdStop, r.plainSameIdStop),
      ]),
      [growthLabel, growth((r) => r.sameIdStart), growth((r) => r.plainSameIdStart), '', growth((r) => r.sameIdStop), growth((r) => r.plainSameIdStop), ''],
    ],
  ));
  console.log('\nid "extra" every time. Supervisor: about 3N pairs timed in all (at least 1,000, 20');
  console.log('repetitions), after about 0.7N untimed ones, to cover the sawtooth of V8\'s Map (deleted');
  console.log('entries stay in their hash chain until a rehash). XState: as in table 3.');
}

/** Runs the supervision benchmarks and prints their tables. */
export async function supervision(): Promise<void> {
  const started = now();
  console.log('\n## Supervision');
  for (const section of [benchStartStop, benchRestart, benchSpawnAtSize]) {
    collectGarbage();
    const sectionStarted = now();
    await section();
    console.log(`(${formatNs(since(sectionStarted))})`);
  }
  console.log(`\n(supervision benchmarks: ${formatNs(since(started))})`);
}
