/**
 * Model-based test of the supervisor: random trees, random faults, random time, checked
 * step by step against a model of OTP's semantics (spec/support/supervision-model.ts).
 *
 * Every child logic here settles synchronously (workers are stopped at once, nested
 * supervisors shut down within the same send), so after each command the tree is at rest
 * and can be compared with the model as is.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { createActor, SimulatedClock, type Actor, type AnyActorRef } from 'xstate';
import {
  createSupervisor,
  errorExit,
  shutdown,
  shutdownExit,
  supervisionTree,
  whichChildren,
  type ChildSpec,
  type ExitReason,
  type SupervisionEvent,
  type SupervisionTreeNode,
  type SupervisorLogic,
} from '../../src/supervision/index.js';
import { tell, worker } from '../support/children.js';
import {
  ModelSystem,
  type ChildPath,
  type ChildShape,
  type ExpectedNode,
  type Flags,
  type ModelExit,
  type RootShape,
  type SupervisorShape,
} from '../support/supervision-model.js';

// ---------------------------------------------------------------------------------------
// Random trees

const strategyArb = fc.constantFrom('one_for_one' as const, 'one_for_all' as const, 'rest_for_one' as const);
const restartArb = fc.constantFrom('permanent' as const, 'transient' as const, 'temporary' as const);
const intensityArb = fc.integer({ min: 0, max: 4 });
// Round periods line up with the clock steps below, so that restarts exactly `period` old
// (which still count) happen often.
const periodArb = fc.oneof(fc.constantFrom(100, 500, 1000, 5000), fc.integer({ min: 1, max: 3000 }));
const workerShutdownArb = fc.constantFrom(undefined, 'brutal_kill' as const, 'infinity' as const, 0, 5000);

type Unnamed<T> = T extends { children: readonly ChildShape[] }
  ? Omit<T, 'id' | 'children'> & { children: UnnamedChild[] }
  : Omit<T, 'id'>;
type UnnamedChild = Unnamed<ChildShape>;

function childArb(depth: number): fc.Arbitrary<UnnamedChild> {
  const workerArb: fc.Arbitrary<UnnamedChild> = fc.record({
    kind: fc.constant('worker' as const),
    restart: restartArb,
    shutdown: workerShutdownArb,
  });
  if (depth === 0) return workerArb;
  const supArb: fc.Arbitrary<UnnamedChild> = fc.record({
    kind: fc.constant('supervisor' as const),
    restart: restartArb,
    strategy: strategyArb,
    intensity: intensityArb,
    period: periodArb,
    children: fc.array(childArb(depth - 1), { minLength: 1, maxLength: 3 }),
  });
  return fc.oneof({ arbitrary: workerArb, weight: 3 }, { arbitrary: supArb, weight: 1 });
}

function name(children: readonly UnnamedChild[]): ChildShape[] {
  return children.map((child, index): ChildShape =>
    child.kind === 'worker'
      ? { ...child, id: `w${index}` }
      : { ...child, id: `s${index}`, children: name(child.children) },
  );
}

/** A root with 1..5 children; nested supervisors two levels deep at most. */
const rootArb: fc.Arbitrary<RootShape> = fc
  .record({
    strategy: strategyArb,
    intensity: intensityArb,
    period: periodArb,
    children: fc.array(childArb(2), { minLength: 1, maxLength: 5 }),
  })
  .map((root) => ({ ...root, children: name(root.children) }));

function childSpec(shape: ChildShape): ChildSpec {
  if (shape.kind === 'worker') {
    return {
      id: shape.id,
      start: { logic: worker },
      restart: shape.restart,
      ...(shape.shutdown === undefined ? {} : { shutdown: shape.shutdown }),
    };
  }
  return { id: shape.id, start: { logic: supervisorFor(shape, shape.id) }, restart: shape.restart };
}

function supervisorFor(shape: RootShape | SupervisorShape, supName: string): SupervisorLogic {
  return createSupervisor({
    name: supName,
    strategy: shape.strategy,
    intensity: shape.intensity,
    period: shape.period,
    children: shape.children.map(childSpec),
  });
}

function describeShape(shape: RootShape): string {
  const flags = (f: Flags): string => `${f.strategy} ${f.intensity}/${f.period}ms`;
  const child = (c: ChildShape): string =>
    c.kind === 'worker'
      ? `${c.id}:${c.restart}${c.shutdown === undefined ? '' : `,${String(c.shutdown)}`}`
      : `${c.id}:${c.restart}{${flags(c)} [${c.children.map(child).join(' ')}]}`;
  return `root{${flags(shape)} [${shape.children.map(child).join(' ')}]}`;
}

// ---------------------------------------------------------------------------------------
// The system under test

const ROOT_ID = 'root';

interface Real {
  readonly actor: Actor<SupervisorLogic>;
  readonly clock: SimulatedClock;
  /** Everything `actor.on('*')` saw: the root's events and the relayed nested ones. */
  readonly events: SupervisionEvent[];
  /** Every actor created in the system (from the inspection stream). */
  readonly refs: Set<AnyActorRef>;
  readonly flags: Map<string, Flags>;
  /** What the commands did, resolved targets included: printed with any failure. */
  readonly log: string[];
}

function startReal(shape: RootShape, flags: Map<string, Flags>): Real {
  const clock = new SimulatedClock();
  const events: SupervisionEvent[] = [];
  const refs = new Set<AnyActorRef>();
  const actor = createActor(supervisorFor(shape, 'root'), {
    clock,
    id: ROOT_ID,
    inspect: (event) => {
      if (event.type === '@xstate.actor') refs.add(event.actorRef as AnyActorRef);
    },
  });
  actor.on('*', (event) => {
    events.push(event as SupervisionEvent);
  });
  actor.start();
  return { actor, clock, events, refs, flags, log: [describeShape(shape)] };
}

/** The running actor of the child at `path`, found through `whichChildren`. */
function refAt(real: Real, path: ChildPath): AnyActorRef {
  let sup: AnyActorRef = real.actor;
  for (const id of path) {
    const row = whichChildren(sup).find((child) => child.id === id);
    if (!row?.ref) throw new Error(`no running child at ${path.join('/')} (${row ? row.status : 'absent'})`);
    sup = row.ref;
  }
  return sup;
}

function pick<T>(items: readonly T[], index: number): T {
  return items[index % items.length] as T;
}

// ---------------------------------------------------------------------------------------
// Invariants

function toModelExit(reason: Record<string, unknown> | undefined): ModelExit | undefined {
  if (!reason) return undefined;
  const kind = reason.kind as ModelExit['kind'];
  if (kind === 'shutdown' && reason.detail !== undefined) return { kind, detail: String(reason.detail) };
  return { kind } as ModelExit;
}

function observed(nodes: readonly SupervisionTreeNode[] | undefined): ExpectedNode[] {
  return (nodes ?? []).map((node) => ({
    id: node.id,
    status: node.status as ExpectedNode['status'],
    running: node.sessionId !== undefined,
    restarts: node.restarts,
    lastExit: toModelExit(node.lastExit),
    ...(node.children ? { children: observed(node.children) } : {}),
  }));
}

/** Every ref `whichChildren` shows as running is an active actor, and vice versa. */
function checkRefs(sup: AnyActorRef, path: string): void {
  for (const row of whichChildren(sup)) {
    const where = `${path}/${row.id}`;
    if (row.status === 'running') {
      expect(row.ref, `${where} is running but has no ref`).to.not.equal(undefined);
      expect(row.ref?.getSnapshot().status, `${where} is running but its actor is not active`).to.equal('active');
      if (row.type === 'supervisor' && row.ref) checkRefs(row.ref, where);
    } else {
      expect(row.ref, `${where} is ${row.status} but still has a ref`).to.equal(undefined);
    }
  }
}

/** `root/s0#2/s1#1`: a supervisor path with the incarnation of every nested supervisor on it. */
function incarnationKey(path: string, incarnations: ReadonlyMap<string, number>): string {
  const ids = path.split('/');
  return ids
    .map((id, depth) => (depth === 0 ? id : `${id}#${incarnations.get(ids.slice(0, depth + 1).join('/')) ?? 0}`))
    .join('/');
}

/**
 * Restarts never exceed intensity in any window, per supervisor incarnation, from the event
 * stream alone. A `child.exited` with action `restart` is an allowed restart; `give_up` is a
 * refused one, and the very next event of that supervisor is `intensity.exceeded`.
 * Allowed decisions within `[t - period, t]` must never be more than `intensity`, and a
 * refusal must be justified (the allowed ones in its window, plus it, exceed intensity).
 */
function checkIntensityFromEvents(real: Real): void {
  const incarnations = new Map<string, number>();
  const allowed = new Map<string, number[]>();
  const events = real.events;
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as SupervisionEvent;
    if (event.type === 'child.started') {
      // A restarted nested supervisor is a new process with an empty window (OTP), and so
      // are the supervisors below it.
      const child = `${event.supervisor}/${event.childId}`;
      incarnations.set(child, (incarnations.get(child) ?? 0) + 1);
      continue;
    }
    if (event.type !== 'child.exited' || (event.action !== 'restart' && event.action !== 'give_up')) continue;
    const flags = real.flags.get(event.supervisor);
    if (!flags) throw new Error(`event from an unknown supervisor path ${event.supervisor}`);
    const key = incarnationKey(event.supervisor, incarnations);
    const times = allowed.get(key) ?? [];
    allowed.set(key, times);
    const inWindow = times.filter((time) => time >= event.at - flags.period).length + 1;
    const next = events[index + 1];
    const refused = event.action === 'give_up';
    const followedByExceeded = next?.type === 'intensity.exceeded' && next.supervisor === event.supervisor;
    expect(followedByExceeded, `intensity.exceeded must follow exactly the refused restarts: ${event.action} of ${event.childId}`).to.equal(refused);
    const where = `${key} restart of ${event.childId} at ${event.at} (intensity ${flags.intensity}/${flags.period}ms, earlier allowed: ${times.join(',')})`;
    if (refused) {
      expect(inWindow, `refused without reason: ${where}`).to.be.greaterThan(flags.intensity);
      // ... and the supervisor then gives up with reached_max_restart_intensity.
      const exit = events.slice(index + 2).find((later) => later.type === 'supervisor.shutdown' && later.supervisor === event.supervisor);
      expect(exit && exit.type === 'supervisor.shutdown' ? exit.reason : undefined, `exit after ${where}`).to.deep.equal({
        kind: 'shutdown',
        detail: 'reached_max_restart_intensity',
      });
    } else {
      expect(inWindow, `restarts exceed intensity: ${where}`).to.be.at.most(flags.intensity);
      times.push(event.at);
    }
  }
}

function checkInvariants(model: ModelSystem, real: Real): void {
  const context = `\n  steps: ${real.log.join(' ; ')}`;
  try {
    // (1) intensity, from the events
    checkIntensityFromEvents(real);

    // (2) the tree matches the model
    const tree = supervisionTree(real.actor);
    expect(tree.status, 'root phase').to.equal(model.running ? 'running' : 'stopped');
    expect(tree.restarts, 'root restarts').to.equal(model.root.totalRestarts);
    expect(observed(tree.children), 'tree').to.deep.equal(model.expectedChildren());
    const snapshot = real.actor.getSnapshot();
    if (model.running) {
      expect(snapshot.status, 'root actor status').to.equal('active');
    } else {
      expect(snapshot.status, 'root actor status').to.equal('done');
      expect(toModelExit(snapshot.output as Record<string, unknown>), 'root exit reason').to.deep.equal(model.root.exit);
    }
    checkRefs(real.actor, ROOT_ID);

    // (3) no actor runs that the model does not expect, and none is missing
    const active = [...real.refs].filter((ref) => ref.getSnapshot().status === 'active');
    expect(active.length, `active actors (${active.map((ref) => ref.id).join(',')})`).to.equal(
      model.liveCount() + (model.running ? 1 : 0),
    );
  } catch (error) {
    if (error instanceof Error) error.message += context;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------
// Commands

type Cmd = fc.AsyncCommand<ModelSystem, Real>;

class CrashWorker implements Cmd {
  constructor(readonly index: number) {}
  check(model: Readonly<ModelSystem>): boolean {
    return model.running && model.liveWorkers().length > 0;
  }
  async run(model: ModelSystem, real: Real): Promise<void> {
    const path = pick(model.liveWorkers(), this.index);
    real.log.push(`crash ${path.join('/')} @${model.now}`);
    tell(refAt(real, path), { type: 'crash' });
    model.crash(path);
    checkInvariants(model, real);
  }
  toString(): string {
    return `crash(#${this.index})`;
  }
}

class FinishWorker implements Cmd {
  constructor(readonly index: number) {}
  check(model: Readonly<ModelSystem>): boolean {
    return model.running && model.liveWorkers().length > 0;
  }
  async run(model: ModelSystem, real: Real): Promise<void> {
    const path = pick(model.liveWorkers(), this.index);
    real.log.push(`finish ${path.join('/')} @${model.now}`);
    tell(refAt(real, path), { type: 'finish' });
    model.finish(path);
    checkInvariants(model, real);
  }
  toString(): string {
    return `finish(#${this.index})`;
  }
}

const exitReasons = {
  normal: { real: { kind: 'normal' }, model: { kind: 'normal' } },
  shutdown: { real: shutdownExit(), model: { kind: 'shutdown' } },
  shutdownDetail: { real: shutdownExit('bye'), model: { kind: 'shutdown', detail: 'bye' } },
  error: { real: errorExit(new Error('failure')), model: { kind: 'error' } },
  killed: { real: { kind: 'killed' }, model: { kind: 'killed' } },
} satisfies Record<string, { real: ExitReason; model: ModelExit }>;
type ReasonName = keyof typeof exitReasons;

/** A worker ends on its own with an exit reason as its output (normal, shutdown, error...). */
class ExitWorker implements Cmd {
  constructor(readonly index: number, readonly reason: ReasonName) {}
  check(model: Readonly<ModelSystem>): boolean {
    return model.running && model.liveWorkers().length > 0;
  }
  async run(model: ModelSystem, real: Real): Promise<void> {
    const path = pick(model.liveWorkers(), this.index);
    const reason: { real: ExitReason; model: ModelExit } = exitReasons[this.reason];
    real.log.push(`exit ${path.join('/')} ${this.reason} @${model.now}`);
    tell(refAt(real, path), { type: 'exit', reason: reason.real });
    model.exitWorker(path, reason.model);
    checkInvariants(model, real);
  }
  toString(): string {
    return `exit(#${this.index}, ${this.reason})`;
  }
}

/** A nested supervisor is told to exit with some reason; its parent sees that exit. */
class StopNested implements Cmd {
  constructor(readonly index: number, readonly reason: ReasonName) {}
  check(model: Readonly<ModelSystem>): boolean {
    return model.running && model.liveSupervisors().length > 0;
  }
  async run(model: ModelSystem, real: Real): Promise<void> {
    const path = pick(model.liveSupervisors(), this.index);
    const reason: { real: ExitReason; model: ModelExit } = exitReasons[this.reason];
    real.log.push(`stopNested ${path.join('/')} ${this.reason} @${model.now}`);
    const exit = await shutdown(refAt(real, path), reason.real);
    expect(toModelExit(exit as unknown as Record<string, unknown>)).to.deep.equal(reason.model);
    model.stopNested(path, reason.model);
    checkInvariants(model, real);
  }
  toString(): string {
    return `stopNested(#${this.index}, ${this.reason})`;
  }
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(model: ModelSystem, real: Real): Promise<void> {
    real.log.push(`+${this.ms}ms`);
    real.clock.increment(this.ms);
    model.advance(this.ms);
    checkInvariants(model, real);
  }
  toString(): string {
    return `advance(${this.ms})`;
  }
}

/**
 * Advances the clock by the period of one of the supervisors, give or take 1 ms, so that
 * restarts land exactly on (and just around) the edge of an intensity window.
 */
class AdvanceByPeriod implements Cmd {
  constructor(readonly index: number, readonly delta: -1 | 0 | 1) {}
  check(model: Readonly<ModelSystem>): boolean {
    return model.running;
  }
  async run(model: ModelSystem, real: Real): Promise<void> {
    const periods = [...real.flags.values()].map((flags) => flags.period);
    const ms = Math.max(0, pick(periods, this.index) + this.delta);
    real.log.push(`+${ms}ms`);
    real.clock.increment(ms);
    model.advance(ms);
    checkInvariants(model, real);
  }
  toString(): string {
    return `advanceByPeriod(#${this.index}, ${this.delta})`;
  }
}

class ShutdownRoot implements Cmd {
  check(model: Readonly<ModelSystem>): boolean {
    return model.running;
  }
  async run(model: ModelSystem, real: Real): Promise<void> {
    real.log.push(`shutdown @${model.now}`);
    const exit = await shutdown(real.actor);
    expect(exit).to.deep.equal({ kind: 'shutdown' });
    model.shutdownRoot();
    checkInvariants(model, real);
  }
  toString(): string {
    return 'shutdownRoot';
  }
}

const index = fc.nat({ max: 1000 });
const stepArb = fc.oneof(fc.integer({ min: 0, max: 200 }), fc.constantFrom(100, 500, 1000), fc.integer({ min: 0, max: 6000 }));
const reasonArb = fc.constantFrom(...(Object.keys(exitReasons) as ReasonName[]));
const commandArb: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 6, arbitrary: index.map((i): Cmd => new CrashWorker(i)) },
  { weight: 2, arbitrary: index.map((i): Cmd => new FinishWorker(i)) },
  { weight: 1, arbitrary: fc.tuple(index, reasonArb).map(([i, reason]): Cmd => new ExitWorker(i, reason)) },
  { weight: 1, arbitrary: fc.tuple(index, reasonArb).map(([i, reason]): Cmd => new StopNested(i, reason)) },
  { weight: 3, arbitrary: stepArb.map((ms): Cmd => new Advance(ms)) },
  { weight: 2, arbitrary: fc.tuple(index, fc.constantFrom(-1 as const, 0 as const, 1 as const)).map(([i, delta]): Cmd => new AdvanceByPeriod(i, delta)) },
  { weight: 1, arbitrary: fc.constant<Cmd>(new ShutdownRoot()) },
);

// ---------------------------------------------------------------------------------------

describe('supervisor: model-based (fast-check)', function () {
  this.timeout(60_000);

  it('random kills, normal exits and time never break intensity, the tree matches the OTP model, nothing runs after stop', async () => {
    await fc.assert(
      fc.asyncProperty(
        rootArb,
        fc.commands([commandArb], { maxCommands: 40, size: 'max' }),
        fc.constantFrom('shutdown' as const, 'xstate stop' as const),
        async (shape, commands, finalStop) => {
          const model = new ModelSystem(ROOT_ID, shape);
          const real = startReal(shape, model.flagsByPath());
          try {
            checkInvariants(model, real);
            await fc.asyncModelRun(() => ({ model, real }), commands);
            if (model.running && finalStop === 'shutdown') {
              real.log.push(`final shutdown @${model.now}`);
              const exit = await shutdown(real.actor);
              expect(exit).to.deep.equal({ kind: 'shutdown' });
              model.shutdownRoot();
              checkInvariants(model, real);
            } else if (model.running) {
              // XState's synchronous stop(): no OTP counterpart, so only "everything is
              // down" is checked, not which specs are kept.
              real.log.push(`final actor.stop() @${model.now}`);
              real.actor.stop();
              expect(real.actor.getSnapshot().status).to.equal('stopped');
              const tree = supervisionTree(real.actor);
              expect(tree.status).to.equal('stopped');
              for (const node of tree.children ?? []) {
                expect([node.id, node.status, node.sessionId]).to.deep.equal([node.id, 'terminated', undefined]);
              }
            }
            // Nothing left running, among all the actors the system ever created.
            const stillActive = [...real.refs].filter((ref) => ref.getSnapshot().status === 'active');
            expect(stillActive.map((ref) => ref.id), `actors still active after stop\n  steps: ${real.log.join(' ; ')}`).to.deep.equal([]);
            for (const ref of real.refs) expect(['stopped', 'done', 'error']).to.include(ref.getSnapshot().status);
          } finally {
            if (real.actor.getSnapshot().status === 'active') real.actor.stop();
          }
        },
      ),
      { numRuns: Number(process.env.MODEL_RUNS ?? 200) },
    );
  });
});
