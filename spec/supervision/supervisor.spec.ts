/**
 * The supervisor's behaviour matrix, after OTP's supervisor_SUITE: groups sup_start,
 * sup_stop, normal/shutdown/abnormal termination per restart type, each strategy with its
 * escalation and a failing restart, count_children, tree, significant children.
 */
import { expect } from 'chai';
import { createActor, createMachine, fromTransition, SimulatedClock, type AnyActorRef } from 'xstate';
import {
  createSupervisor,
  countChildren,
  deleteChild,
  errorExit,
  restartChild,
  shutdown,
  shutdownExit,
  startChild,
  supervisionTree,
  SupervisorSpecError,
  terminateChild,
  whichChildren,
  type ChildSpec,
  type RestartType,
  type Strategy,
} from '../../src/supervision/index.js';
import {
  cannotStart,
  finishesAtOnce,
  journaled,
  recordEvents,
  startsWhen,
  tell,
  trappingWorker,
  worker,
} from '../support/children.js';

function workerSpec(id: string, extra: Partial<ChildSpec> = {}): ChildSpec {
  return { id, start: { logic: worker }, ...extra };
}

function child(actor: AnyActorRef, id: string): AnyActorRef | undefined {
  return whichChildren(actor).find((row) => row.id === id)?.ref;
}

function sessionIds(actor: AnyActorRef): Record<string, string | undefined> {
  return Object.fromEntries(whichChildren(actor).map((row) => [row.id, row.ref?.sessionId]));
}

function start(logic: Parameters<typeof createActor>[0], clock = new SimulatedClock()) {
  const actor = createActor(logic, { clock, id: 'sup' });
  const events = recordEvents(actor);
  actor.start();
  return { actor, events, clock };
}

describe('supervisor', () => {
  describe('sup_start', () => {
    it('starts children in spec order', () => {
      const journal: string[] = [];
      const logic = journaled(journal);
      const { actor } = start(createSupervisor({
        children: ['a', 'b', 'c'].map((id) => ({ id, start: { logic, input: { name: id } } })),
      }));
      expect(journal).to.deep.equal(['start:a', 'start:b', 'start:c']);
      expect(whichChildren(actor).map((row) => [row.id, row.status])).to.deep.equal([
        ['a', 'running'], ['b', 'running'], ['c', 'running'],
      ]);
      actor.stop();
    });

    it('fails with failedToStartChild when a child cannot start, stopping the started ones in reverse', () => {
      const journal: string[] = [];
      const logic = journaled(journal);
      const { actor } = start(createSupervisor({
        children: [
          { id: 'a', start: { logic, input: { name: 'a' } } },
          { id: 'b', start: { logic, input: { name: 'b' } } },
          { id: 'bad', start: { logic: cannotStart } },
          { id: 'c', start: { logic, input: { name: 'c' } } },
        ],
      }));
      const snapshot = actor.getSnapshot();
      expect(snapshot.status).to.equal('done');
      expect(snapshot.output).to.include({ kind: 'shutdown' });
      const detail = (snapshot.output as { detail: { failedToStartChild: string; cause: Error } }).detail;
      expect(detail.failedToStartChild).to.equal('bad');
      expect(detail.cause).to.be.instanceOf(Error).with.property('message', 'cannot start');
      expect(journal).to.deep.equal(['start:a', 'start:b', 'stop:b', 'stop:a']);
    });

    it('rejects invalid specs before anything starts, naming the field and the value', () => {
      const bad = (spec: Partial<ChildSpec> & Record<string, unknown>, flags = {}) => () =>
        createSupervisor({ ...flags, children: [{ id: 'x', start: { logic: worker }, ...spec } as ChildSpec] });
      expect(bad({ restart: 'forever' as RestartType })).to.throw(SupervisorSpecError, /`restart` option of child "x".*got `forever` \(string\)/);
      expect(bad({ shutdown: -1 })).to.throw(SupervisorSpecError, /`shutdown`/);
      expect(bad({ start: { logic: {} as never } })).to.throw(SupervisorSpecError, /`start.logic`/);
      expect(bad({ significant: true, restart: 'permanent' }, { autoShutdown: 'any_significant' })).to.throw(SupervisorSpecError, /permanent/);
      expect(bad({ significant: true, restart: 'transient' })).to.throw(SupervisorSpecError, /autoShutdown/);
      expect(bad({ backoff: { minDelay: 10, maxDelay: 5 } })).to.throw(SupervisorSpecError, /backoff.maxDelay/);
      expect(() => createSupervisor({ strategy: 'all_for_none' as Strategy, children: [] })).to.throw(SupervisorSpecError, /strategy/);
      expect(() => createSupervisor({ children: [workerSpec('a'), workerSpec('a')] })).to.throw(SupervisorSpecError, /unique/);
      // The error names the field, the value and the child (and it must be thrown at all).
      expect(bad({ restart: 'forever' as RestartType })).to.throw(SupervisorSpecError).that.includes({ field: 'restart', value: 'forever', childId: 'x' });
    });

    it('builds its children from the actor input', () => {
      const withInput = createActor(createSupervisor<{ ids: string[] }>({ children: (input) => input.ids.map((id) => workerSpec(id)) }), { input: { ids: ['x', 'y'] } });
      withInput.start();
      expect(whichChildren(withInput).map((row) => row.id)).to.deep.equal(['x', 'y']);
      withInput.stop();
    });
  });

  describe('sup_stop', () => {
    it('stops children in reverse start order on graceful shutdown', async () => {
      const journal: string[] = [];
      const logic = journaled(journal);
      const { actor } = start(createSupervisor({
        children: ['a', 'b', 'c'].map((id) => ({ id, start: { logic, input: { name: id } } })),
      }));
      const reason = await shutdown(actor);
      expect(reason).to.deep.equal({ kind: 'shutdown' });
      expect(journal.slice(3)).to.deep.equal(['stop:c', 'stop:b', 'stop:a']);
      expect(actor.getSnapshot().status).to.equal('done');
    });

    it('stops children in reverse start order on XState stop(), unlike plain XState', () => {
      const journal: string[] = [];
      const logic = journaled(journal);
      const { actor } = start(createSupervisor({
        children: ['a', 'b', 'c'].map((id) => ({ id, start: { logic, input: { name: id } } })),
      }));
      actor.stop();
      expect(journal.slice(3)).to.deep.equal(['stop:c', 'stop:b', 'stop:a']);
    });

    it('sup_stop_infinity: waits for a child that traps shutdown, however long it takes', () => {
      const { actor, clock, events } = start(createSupervisor({
        children: [{ id: 'slow', shutdown: 'infinity', start: { logic: trappingWorker, input: { stopDelay: 60_000 } } }],
      }));
      actor.send({ type: 'supervisor.shutdown' });
      expect(actor.getSnapshot().value).to.equal('shuttingDown');
      clock.increment(59_999);
      expect(actor.getSnapshot().status).to.equal('active');
      clock.increment(1);
      expect(actor.getSnapshot().status).to.equal('done');
      expect(events.find((event) => event.type === 'child.exited')).to.deep.include({ childId: 'slow', action: 'terminated', reason: { kind: 'shutdown' } });
    });

    it('sup_stop_timeout: kills a child that does not finish within its shutdown time', () => {
      const { actor, clock, events } = start(createSupervisor({
        children: [{ id: 'stuck', shutdown: 1000, start: { logic: trappingWorker, input: { stopDelay: 'never' } } }],
      }));
      const stuck = child(actor, 'stuck') as AnyActorRef;
      actor.send({ type: 'supervisor.shutdown' });
      clock.increment(999);
      expect(actor.getSnapshot().status).to.equal('active');
      expect(stuck.getSnapshot().value).to.equal('stopping');
      clock.increment(1);
      expect(actor.getSnapshot().status).to.equal('done');
      expect(stuck.getSnapshot().status).to.equal('stopped');
      expect(events.find((event) => event.type === 'child.exited')).to.deep.include({ childId: 'stuck', reason: { kind: 'killed' } });
    });

    it('sup_stop_brutal_kill: stops a trapping child at once', () => {
      const { actor } = start(createSupervisor({
        children: [{ id: 'stuck', shutdown: 'brutal_kill', start: { logic: trappingWorker, input: { stopDelay: 'never' } } }],
      }));
      actor.send({ type: 'supervisor.shutdown' });
      expect(actor.getSnapshot().status).to.equal('done');
    });

    it('a shutdown during a group restart abandons the restart and stops everything', () => {
      const { actor, clock, events } = start(createSupervisor({
        strategy: 'one_for_all',
        children: [workerSpec('a'), { id: 'slow', start: { logic: trappingWorker, input: { stopDelay: 300 } } }, workerSpec('c')],
      }));
      tell(child(actor, 'a'), { type: 'crash' });
      expect(actor.getSnapshot().value).to.equal('restarting');
      actor.send({ type: 'supervisor.shutdown' });
      expect(actor.getSnapshot().value).to.equal('shuttingDown');
      clock.increment(300);
      expect(actor.getSnapshot().status).to.equal('done');
      expect(whichChildren(actor).map((row) => row.status)).to.deep.equal(['terminated', 'terminated', 'terminated']);
      expect(events.filter((event) => event.type === 'child.started')).to.have.length(3);
    });

    it('waits for each child in turn: the next one is asked only after the previous one finished', () => {
      const { actor, clock } = start(createSupervisor({
        children: [
          { id: 'a', start: { logic: trappingWorker, input: { stopDelay: 100 } } },
          { id: 'b', start: { logic: trappingWorker, input: { stopDelay: 100 } } },
        ],
      }));
      const a = child(actor, 'a') as AnyActorRef;
      const b = child(actor, 'b') as AnyActorRef;
      actor.send({ type: 'supervisor.shutdown' });
      expect(b.getSnapshot().value).to.equal('stopping');
      expect(a.getSnapshot().value).to.equal('running');
      clock.increment(100);
      expect(b.getSnapshot().status).to.equal('done');
      expect(a.getSnapshot().value).to.equal('stopping');
      clock.increment(100);
      expect(actor.getSnapshot().status).to.equal('done');
    });
  });

  // OTP: normal_termination, shutdown_termination, abnormal_termination, per restart type.
  describe('termination × restart type', () => {
    const reasons = {
      normal: { kind: 'normal' },
      shutdown: shutdownExit(),
      shutdown_detail: shutdownExit('bye'),
      abnormal: errorExit(new Error('boom')),
    } as const;
    const expectations: Record<RestartType, Record<keyof typeof reasons, 'restart' | 'keep' | 'remove'>> = {
      permanent: { normal: 'restart', shutdown: 'restart', shutdown_detail: 'restart', abnormal: 'restart' },
      transient: { normal: 'keep', shutdown: 'keep', shutdown_detail: 'keep', abnormal: 'restart' },
      temporary: { normal: 'remove', shutdown: 'remove', shutdown_detail: 'remove', abnormal: 'remove' },
    };
    for (const restart of ['permanent', 'transient', 'temporary'] as const) {
      for (const [name, reason] of Object.entries(reasons) as Array<[keyof typeof reasons, (typeof reasons)[keyof typeof reasons]]>) {
        const expected = expectations[restart][name];
        it(`${restart}_${name}: ${expected}`, () => {
          const { actor, events } = start(createSupervisor({ children: [workerSpec('w', { restart })] }));
          const before = child(actor, 'w');
          if (reason.kind === 'error') tell(before, { type: 'crash', message: 'boom' });
          else if (reason.kind === 'normal') tell(before, { type: 'finish' });
          else tell(before, { type: 'exit', reason });
          const exited = events.find((event) => event.type === 'child.exited');
          expect(exited).to.deep.include({ childId: 'w', action: expected });
          expect((exited?.reason as { kind: string }).kind).to.equal(reason.kind);
          const rows = whichChildren(actor);
          if (expected === 'restart') {
            expect(rows).to.have.length(1);
            expect(rows[0]).to.include({ status: 'running', restarts: 1 });
            expect(rows[0]?.ref).to.not.equal(before);
          } else if (expected === 'keep') {
            expect(rows).to.have.length(1);
            expect(rows[0]).to.include({ status: 'terminated', ref: undefined });
          } else {
            expect(rows).to.have.length(0);
          }
          actor.stop();
        });
      }
    }
  });

  describe('strategies', () => {
    const cases: Array<[Strategy, string[]]> = [
      ['one_for_one', ['b']],
      ['one_for_all', ['a', 'b', 'c']],
      ['rest_for_one', ['b', 'c']],
    ];
    for (const [strategy, restarted] of cases) {
      it(`${strategy}: killing b of [a, b, c] restarts ${restarted.join(', ')}`, () => {
        const { actor } = start(createSupervisor({ strategy, children: ['a', 'b', 'c'].map((id) => workerSpec(id)) }));
        const before = sessionIds(actor);
        tell(child(actor, 'b'), { type: 'crash' });
        const after = sessionIds(actor);
        for (const id of ['a', 'b', 'c']) {
          if (restarted.includes(id)) expect(after[id], id).to.not.equal(before[id]);
          else expect(after[id], id).to.equal(before[id]);
        }
        expect(actor.getSnapshot().context.restarts).to.equal(1);
        actor.stop();
      });

      it(`${strategy}_escalation: one restart too many stops every child and exits shutdown`, () => {
        const journal: string[] = [];
        const logic = journaled(journal);
        const { actor, events } = start(createSupervisor({
          strategy,
          intensity: 1,
          period: 5000,
          children: ['a', 'b', 'c'].map((id) => ({ id, start: { logic, input: { name: id } } })),
        }));
        tell(child(actor, 'b'), { type: 'crash' });
        expect(actor.getSnapshot().status).to.equal('active');
        journal.length = 0;
        tell(child(actor, 'b'), { type: 'crash' });
        expect(actor.getSnapshot().status).to.equal('done');
        expect(actor.getSnapshot().output).to.deep.equal({ kind: 'shutdown', detail: 'reached_max_restart_intensity' });
        // b is already dead; the others stop in reverse start order.
        const stops = journal.filter((line) => line.startsWith('stop:'));
        expect(stops).to.deep.equal(['stop:c', 'stop:a']);
        expect(events.map((event) => event.type)).to.include.members(['intensity.exceeded', 'supervisor.shutdown']);
      });

      it(`${strategy}_other_child_fails_restart: the failing start is retried and counts again`, () => {
        let failStarts = false;
        const { actor, events } = start(createSupervisor({
          strategy,
          intensity: 3,
          children: [
            workerSpec('a'),
            { id: 'b', start: { logic: startsWhen, input: { fail: () => failStarts } } },
            workerSpec('c'),
          ],
        }));
        failStarts = true;
        // `a` dies; under one_for_all b restarts too and fails, under the others only a
        // (or a and its followers) restart.
        tell(child(actor, 'a'), { type: 'crash' });
        if (strategy === 'one_for_one') {
          expect(actor.getSnapshot().status).to.equal('active');
          expect(whichChildren(actor).every((row) => row.status === 'running')).to.equal(true);
        } else {
          // b keeps failing at start: each retry is a restart, until intensity is exceeded.
          expect(events.filter((event) => event.type === 'child.startFailed').length).to.equal(3);
          expect(actor.getSnapshot().status).to.equal('done');
          expect(actor.getSnapshot().output).to.deep.equal({ kind: 'shutdown', detail: 'reached_max_restart_intensity' });
        }
        actor.stop();
      });
    }

    it('one_for_all: a temporary bystander is removed, not restarted', () => {
      const { actor } = start(createSupervisor({
        strategy: 'one_for_all',
        children: [workerSpec('a'), workerSpec('tmp', { restart: 'temporary' }), workerSpec('c')],
      }));
      tell(child(actor, 'a'), { type: 'crash' });
      expect(whichChildren(actor).map((row) => row.id)).to.deep.equal(['a', 'c']);
      actor.stop();
    });

    it('one_for_all: siblings stop in reverse order and restart in order', () => {
      const journal: string[] = [];
      const logic = journaled(journal);
      const { actor } = start(createSupervisor({
        strategy: 'one_for_all',
        children: ['a', 'b', 'c', 'd'].map((id) => ({ id, start: { logic, input: { name: id } } })),
      }));
      journal.length = 0;
      tell(child(actor, 'b'), { type: 'crash' });
      expect(journal).to.deep.equal(['stop:d', 'stop:c', 'stop:a', 'start:a', 'start:b', 'start:c', 'start:d']);
      actor.stop();
    });

    it('rest_for_one: only the followers stop, in reverse order, then restart in order', () => {
      const journal: string[] = [];
      const logic = journaled(journal);
      const { actor } = start(createSupervisor({
        strategy: 'rest_for_one',
        children: ['a', 'b', 'c', 'd'].map((id) => ({ id, start: { logic, input: { name: id } } })),
      }));
      journal.length = 0;
      tell(child(actor, 'b'), { type: 'crash' });
      expect(journal).to.deep.equal(['stop:d', 'stop:c', 'start:b', 'start:c', 'start:d']);
      actor.stop();
    });

    it('one_for_all: waits for trapping siblings before restarting the group', () => {
      const { actor, clock } = start(createSupervisor({
        strategy: 'one_for_all',
        children: [
          workerSpec('a'),
          { id: 'slow', start: { logic: trappingWorker, input: { stopDelay: 300 } } },
        ],
      }));
      const a = child(actor, 'a');
      tell(a, { type: 'crash' });
      expect(actor.getSnapshot().value).to.equal('restarting');
      expect(whichChildren(actor).map((row) => row.status)).to.deep.equal(['restarting', 'terminating']);
      clock.increment(300);
      expect(actor.getSnapshot().value).to.equal('running');
      expect(whichChildren(actor).map((row) => row.status)).to.deep.equal(['running', 'running']);
      actor.stop();
    });

    it('ignores a late exit from an incarnation that was already replaced', () => {
      // Both children fail in one go; under one_for_all the first failure restarts both,
      // and the second failure's report arrives for an incarnation that no longer exists.
      const { actor } = start(createSupervisor({ strategy: 'one_for_all', intensity: 5, children: [workerSpec('a'), workerSpec('b')] }));
      const a = child(actor, 'a') as AnyActorRef;
      const b = child(actor, 'b') as AnyActorRef;
      // Queue both reports inside one supervisor step.
      actor.send({ type: 'supervisor.child.exit', id: 'a', incarnation: 1, reason: errorExit(new Error('a')) });
      actor.send({ type: 'supervisor.child.exit', id: 'b', incarnation: 1, reason: errorExit(new Error('b')) });
      expect(actor.getSnapshot().context.restarts).to.equal(1);
      expect(child(actor, 'a')).to.not.equal(a);
      expect(child(actor, 'b')).to.not.equal(b);
      actor.stop();
    });
  });

  describe('hanging_restart_loop', () => {
    it('a child that never starts again exhausts intensity, while other events are served in between', () => {
      let fail = false;
      const { actor, events } = start(createSupervisor({
        intensity: 4,
        children: [{ id: 'flaky', start: { logic: startsWhen, input: { fail: () => fail } } }, workerSpec('other')],
      }));
      fail = true;
      tell(child(actor, 'flaky'), { type: 'crash' } as never);
      const attempts = events.filter((event) => event.type === 'child.startFailed').length;
      expect(attempts).to.equal(4);
      expect(events.filter((event) => event.type === 'intensity.exceeded')).to.have.length(1);
      expect(actor.getSnapshot().status).to.equal('done');
    });
  });

  describe('restart intensity', () => {
    it('counts restarts in a sliding window of the injected clock', () => {
      const { actor, clock } = start(createSupervisor({ intensity: 2, period: 1000, children: [workerSpec('w')] }));
      tell(child(actor, 'w'), { type: 'crash' }); // t=0: 1
      clock.increment(600);
      tell(child(actor, 'w'), { type: 'crash' }); // t=600: 2
      clock.increment(401);
      tell(child(actor, 'w'), { type: 'crash' }); // t=1001: the t=0 restart left the window
      expect(actor.getSnapshot().status).to.equal('active');
      expect(actor.getSnapshot().context.restartsInWindow).to.equal(2);
      tell(child(actor, 'w'), { type: 'crash' }); // t=1001: 3 in window > 2
      expect(actor.getSnapshot().status).to.equal('done');
    });

    it('uncounted exits (a planned recycle, beyond OTP) restart without adding to the window; the others still count', () => {
      const recycle = (reason: { kind: string; error?: unknown }) => reason.kind === 'error' && (reason.error as Error).message === 'recycle';
      const { actor, events } = start(createSupervisor({ intensity: 1, period: 60_000, children: [workerSpec('w', { uncounted: recycle as never })] }));
      for (let n = 0; n < 5; n++) tell(child(actor, 'w'), { type: 'crash', message: 'recycle' });
      expect(actor.getSnapshot().status).to.equal('active');
      expect(actor.getSnapshot().context.restartsInWindow).to.equal(0);
      expect(events.filter((event) => event.type === 'child.exited' && event.action === 'restart')).to.have.length(5);
      tell(child(actor, 'w'), { type: 'crash' }); // counted: 1 of 1
      expect(actor.getSnapshot().status).to.equal('active');
      tell(child(actor, 'w'), { type: 'crash', message: 'recycle' }); // still free
      tell(child(actor, 'w'), { type: 'crash' }); // counted: 2 > 1
      expect(actor.getSnapshot().output).to.deep.equal({ kind: 'shutdown', detail: 'reached_max_restart_intensity' });
    });

    it('uncounted restarts with backoff: the delayed restart adds nothing either', () => {
      const recycle = (reason: { kind: string; error?: unknown }) => reason.kind === 'error' && (reason.error as Error).message === 'recycle';
      const { actor, clock } = start(createSupervisor({ intensity: 1, period: 60_000, children: [workerSpec('w', { uncounted: recycle as never, backoff: { minDelay: 10, maxDelay: 10 } })] }));
      for (let n = 0; n < 3; n++) {
        tell(child(actor, 'w'), { type: 'crash', message: 'recycle' });
        clock.increment(10);
      }
      expect(actor.getSnapshot().status).to.equal('active');
      expect(actor.getSnapshot().context.restartsInWindow).to.equal(0);
      expect(child(actor, 'w')).to.not.equal(undefined);
    });

    it('intensity 0 gives up on the first restart, and never reports it as a restart', () => {
      const { actor, events } = start(createSupervisor({ intensity: 0, children: [workerSpec('w')] }));
      tell(child(actor, 'w'), { type: 'crash' });
      expect(actor.getSnapshot().output).to.deep.equal({ kind: 'shutdown', detail: 'reached_max_restart_intensity' });
      expect(events.map((event) => `${event.type}${event.action ? `:${event.action}` : ''}`)).to.deep.equal([
        'child.started', 'child.exited:give_up', 'intensity.exceeded', 'supervisor.shutdown',
      ]);
      expect(actor.getSnapshot().context.restarts).to.equal(0);
    });
  });

  describe('count_children and which_children', () => {
    it('counts specs, active children, supervisors and workers', () => {
      const nested = createSupervisor({ name: 'nested', children: [workerSpec('n1')] });
      const { actor } = start(createSupervisor({
        children: [workerSpec('a'), workerSpec('t', { restart: 'transient' }), { id: 'sub', start: { logic: nested } }],
      }));
      expect(countChildren(actor)).to.deep.equal({ specs: 3, active: 3, supervisors: 1, workers: 2 });
      tell(child(actor, 't'), { type: 'finish' });
      expect(countChildren(actor)).to.deep.equal({ specs: 3, active: 2, supervisors: 1, workers: 2 });
      expect(whichChildren(actor).map((row) => [row.id, row.type, row.status])).to.deep.equal([
        ['a', 'worker', 'running'], ['t', 'worker', 'terminated'], ['sub', 'supervisor', 'running'],
      ]);
      expect(() => whichChildren(child(actor, 'a') as AnyActorRef)).to.throw(TypeError, /Expected a supervisor actor/);
      actor.stop();
    });
  });

  describe('tree', () => {
    it('escalates: a nested supervisor that gives up exits shutdown and its parent restarts it', () => {
      const nested = createSupervisor({ name: 'nested', intensity: 1, children: [workerSpec('leaf')] });
      const { actor, events } = start(createSupervisor({ name: 'root', children: [{ id: 'sub', start: { logic: nested } }, workerSpec('sibling')] }));
      const sub = child(actor, 'sub') as AnyActorRef;
      const sibling = child(actor, 'sibling');
      tell(child(sub, 'leaf'), { type: 'crash' });
      tell(child(sub, 'leaf'), { type: 'crash' });
      expect(sub.getSnapshot().status).to.equal('done');
      const newSub = child(actor, 'sub') as AnyActorRef;
      expect(newSub).to.not.equal(sub);
      expect(child(actor, 'sibling')).to.equal(sibling);
      expect(whichChildren(newSub).map((row) => row.status)).to.deep.equal(['running']);
      const escalation = events.find((event) => event.type === 'child.exited' && event.childId === 'sub');
      expect(escalation).to.deep.include({ supervisor: 'sup', action: 'restart', reason: { kind: 'shutdown', detail: 'reached_max_restart_intensity' } });
      actor.stop();
    });

    it('a transient nested supervisor that gives up is not restarted (shutdown is a normal exit)', () => {
      const nested = createSupervisor({ intensity: 0, children: [workerSpec('leaf')] });
      const { actor } = start(createSupervisor({ children: [{ id: 'sub', restart: 'transient', start: { logic: nested } }] }));
      tell(child(child(actor, 'sub') as AnyActorRef, 'leaf'), { type: 'crash' });
      expect(whichChildren(actor)[0]).to.include({ status: 'terminated' });
      actor.stop();
    });

    it('relays nested events with their supervisor path, and snapshots the whole tree', () => {
      const leafSup = createSupervisor({ name: 'leafSup', children: [workerSpec('leaf')] });
      const mid = createSupervisor({ name: 'mid', strategy: 'rest_for_one', children: [{ id: 'inner', start: { logic: leafSup } }, workerSpec('w')] });
      const { actor, events } = start(createSupervisor({ name: 'root', children: [{ id: 'mid', start: { logic: mid } }] }));
      const inner = child(child(actor, 'mid') as AnyActorRef, 'inner') as AnyActorRef;
      tell(child(inner, 'leaf'), { type: 'crash' });
      // The nested supervisors' own init is relayed too: every level's start is seen.
      expect(events.filter((event) => event.type === 'child.started').slice(0, 4).map((event) => `${event.supervisor}:${event.childId}`))
        .to.deep.equal(['sup/mid/inner:leaf', 'sup/mid:inner', 'sup/mid:w', 'sup:mid']);
      const relayed = events.find((event) => event.type === 'child.restarted');
      expect(relayed).to.deep.include({ supervisor: 'sup/mid/inner', childId: 'leaf', restarts: 1 });
      const tree = supervisionTree(actor);
      expect(JSON.parse(JSON.stringify(tree))).to.deep.equal(tree);
      expect(tree).to.deep.include({ id: 'sup', name: 'root', type: 'supervisor', status: 'running', strategy: 'one_for_one' });
      const midNode = tree.children?.[0];
      expect(midNode).to.deep.include({ id: 'mid', type: 'supervisor', strategy: 'rest_for_one', restarts: 0 });
      const leaf = midNode?.children?.[0]?.children?.[0];
      expect(leaf).to.deep.include({ id: 'leaf', name: 'worker', status: 'running', restarts: 1 });
      expect(leaf?.lastExit).to.deep.include({ kind: 'error' });
      expect((leaf?.lastExit?.error as { message: string }).message).to.equal('boom');
      actor.stop();
    });

    it('shows the pid of a child that exposes one in its snapshot (ports do)', () => {
      const fakePort = fromTransition((state) => state, { pid: 4242 });
      const { actor, events } = start(createSupervisor({ children: [{ id: 'port', name: 'port', start: { logic: fakePort } }] }));
      expect(supervisionTree(actor).children?.[0]).to.deep.include({ id: 'port', name: 'port', pid: 4242 });
      expect(events[0]).to.deep.include({ type: 'child.started', pid: 4242 });
      actor.stop();
    });

    it('a nested supervisor that fails its init after a slow sibling stopped is an abnormal exit, not a normal one', () => {
      const nested = createSupervisor({
        name: 'nested',
        children: [
          { id: 'slow', start: { logic: trappingWorker, input: { stopDelay: 100 } } },
          { id: 'bad', start: { logic: cannotStart } },
        ],
      });
      const { actor, clock, events } = start(createSupervisor({ intensity: 0, children: [{ id: 'sub', restart: 'transient', start: { logic: nested } }] }));
      clock.increment(100); // the slow sibling finishes; the nested supervisor exits
      const exited = events.find((event) => event.type === 'child.exited' && event.supervisor === 'sup');
      expect(exited).to.deep.include({ childId: 'sub', action: 'give_up' });
      expect((exited?.reason as { kind: string; error: Error }).error.name).to.equal('SupervisorStartError');
      expect(actor.getSnapshot().status).to.equal('done');
    });

    it('refuses to be restored from a persisted snapshot, saying what to do instead', () => {
      const logic = createSupervisor({ children: [workerSpec('w')] });
      const first = createActor(logic).start();
      const persisted = first.getPersistedSnapshot();
      first.stop();
      const restored = createActor(logic, { snapshot: persisted });
      expect(restored.getSnapshot().status).to.equal('error');
      expect((restored.getSnapshot() as { error: Error }).error.message).to.match(/cannot be restored.*create a new actor/);
    });

    it('works as a child of a plain machine: onDone receives the exit reason', () => {
      const sup = createSupervisor({ intensity: 0, children: [workerSpec('w')] });
      const host = createMachine({
        initial: 'supervising',
        context: { exit: undefined as unknown },
        states: {
          supervising: { invoke: { id: 'sup', src: sup, onDone: { target: 'gaveUp', actions: ({ context, event }) => { context.exit = event.output; } } } },
          gaveUp: { type: 'final' },
        },
      });
      const actor = createActor(host).start();
      const sup0 = actor.getSnapshot().children.sup as AnyActorRef;
      tell(child(sup0, 'w'), { type: 'crash' });
      expect(actor.getSnapshot().value).to.equal('gaveUp');
      expect(actor.getSnapshot().context.exit).to.deep.equal({ kind: 'shutdown', detail: 'reached_max_restart_intensity' });
    });
  });

  describe('significant children', () => {
    it('any_significant: the first significant exit shuts the supervisor down', () => {
      const journal: string[] = [];
      const { actor } = start(createSupervisor({
        autoShutdown: 'any_significant',
        children: [
          { id: 'j', start: { logic: journaled(journal), input: { name: 'j' } } },
          workerSpec('s1', { restart: 'transient', significant: true }),
          workerSpec('s2', { restart: 'temporary', significant: true }),
        ],
      }));
      tell(child(actor, 's1'), { type: 'finish' });
      expect(actor.getSnapshot().status).to.equal('done');
      expect(actor.getSnapshot().output).to.deep.equal({ kind: 'shutdown' });
      expect(journal).to.deep.equal(['start:j', 'stop:j']);
    });

    it('any_significant: a transient significant child that crashes is restarted, not a shutdown', () => {
      const { actor } = start(createSupervisor({
        autoShutdown: 'any_significant',
        children: [workerSpec('s1', { restart: 'transient', significant: true })],
      }));
      tell(child(actor, 's1'), { type: 'crash' });
      expect(actor.getSnapshot().status).to.equal('active');
      expect(whichChildren(actor)[0]).to.include({ status: 'running', restarts: 1 });
      actor.stop();
    });

    it('all_significant: shuts down when the last significant child has exited', () => {
      const { actor } = start(createSupervisor({
        autoShutdown: 'all_significant',
        children: [
          workerSpec('other'),
          workerSpec('s1', { restart: 'transient', significant: true }),
          workerSpec('s2', { restart: 'temporary', significant: true }),
        ],
      }));
      tell(child(actor, 's1'), { type: 'finish' });
      expect(actor.getSnapshot().status).to.equal('active');
      tell(child(actor, 's2'), { type: 'crash' });
      expect(actor.getSnapshot().status).to.equal('done');
    });

    it('never: significant children are refused', () => {
      expect(() => createSupervisor({ children: [workerSpec('s', { restart: 'temporary', significant: true })] })).to.throw(SupervisorSpecError);
    });
  });

  describe('child management (static)', () => {
    it('terminateChild keeps the spec, restartChild starts it again, deleteChild removes it', async () => {
      const { actor } = start(createSupervisor({ children: [workerSpec('a'), workerSpec('b')] }));
      expect(await terminateChild(actor, 'a')).to.deep.equal({ ok: true });
      expect(whichChildren(actor)[0]).to.include({ id: 'a', status: 'terminated' });
      expect(await deleteChild(actor, 'b')).to.deep.equal({ ok: false, reason: 'running' });
      const restarted = await restartChild(actor, 'a');
      expect(restarted.ok).to.equal(true);
      expect(await restartChild(actor, 'a')).to.deep.equal({ ok: false, reason: 'running' });
      await terminateChild(actor, 'a');
      expect(await deleteChild(actor, 'a')).to.deep.equal({ ok: true });
      expect(await deleteChild(actor, 'nope')).to.deep.equal({ ok: false, reason: 'not_found' });
      expect(whichChildren(actor).map((row) => row.id)).to.deep.equal(['b']);
      actor.stop();
    });

    it('startChild appends to the start order and refuses duplicates and invalid specs', async () => {
      const { actor } = start(createSupervisor({ strategy: 'rest_for_one', children: [workerSpec('a')] }));
      const added = await startChild(actor, workerSpec('b'));
      expect(added).to.include({ ok: true, id: 'b' });
      expect(await startChild(actor, workerSpec('b'))).to.deep.equal({ ok: false, reason: 'already_started' });
      const invalid = await startChild(actor, workerSpec('c', { restart: 'sometimes' as RestartType }));
      expect(invalid.ok).to.equal(false);
      expect((invalid as { reason: { invalidSpec: unknown } }).reason.invalidSpec).to.be.instanceOf(SupervisorSpecError);
      const failed = await startChild(actor, { id: 'bad', start: { logic: cannotStart } });
      expect((failed as { reason: { startFailed: Error } }).reason.startFailed.message).to.equal('cannot start');
      expect(whichChildren(actor).map((row) => row.id)).to.deep.equal(['a', 'b']);
      // rest_for_one: b was started after a, so a's crash restarts b too.
      const b = child(actor, 'b');
      tell(child(actor, 'a'), { type: 'crash' });
      expect(child(actor, 'b')).to.not.equal(b);
      actor.stop();
    });

    it('answers not_running once the supervisor has exited', async () => {
      const { actor } = start(createSupervisor({ children: [] }));
      await shutdown(actor);
      expect(await startChild(actor, workerSpec('late'))).to.deep.equal({ ok: false, reason: 'not_running' });
      expect(await terminateChild(actor, 'late')).to.deep.equal({ ok: false, reason: 'not_running' });
      expect(await shutdown(actor)).to.deep.equal({ kind: 'shutdown' });
    });

    it('answers not_running to a command sent while the supervisor is ending (it never reaches the mailbox)', async () => {
      const { actor } = start(createSupervisor({ intensity: 0, children: [workerSpec('w')] }));
      let pending: Promise<unknown> | undefined;
      actor.on('child.exited', () => {
        pending ??= startChild(actor, workerSpec('late'));
      });
      tell(child(actor, 'w'), { type: 'crash' });
      expect(actor.getSnapshot().status).to.equal('done');
      expect(await pending).to.deep.equal({ ok: false, reason: 'not_running' });
    });

    it('shutdown() of a supervisor stopped with XState stop() says killed', async () => {
      const { actor } = start(createSupervisor({ children: [workerSpec('w')] }));
      actor.stop();
      expect(await shutdown(actor)).to.deep.equal({ kind: 'killed' });
    });

    it('a child that finishes during its own start exits normally right away', () => {
      const { actor, events } = start(createSupervisor({ children: [{ id: 'quick', restart: 'transient', start: { logic: finishesAtOnce } }] }));
      expect(events.map((event) => event.type)).to.include('child.exited');
      expect(whichChildren(actor)[0]).to.include({ status: 'terminated' });
      actor.stop();
    });

    it('passes the restart context to inputFor on every incarnation', () => {
      const seen: Array<{ restarts: number; lastExit: string | undefined }> = [];
      const { actor } = start(createSupervisor({
        children: [{
          id: 'w',
          start: {
            logic: worker,
            inputFor: (context) => {
              seen.push({ restarts: context.restarts, lastExit: context.lastExit?.kind });
              return {};
            },
          },
        }],
      }));
      tell(child(actor, 'w'), { type: 'crash' });
      expect(seen).to.deep.equal([{ restarts: 0, lastExit: undefined }, { restarts: 1, lastExit: 'error' }]);
      actor.stop();
    });

    it('registers every incarnation under its systemId', () => {
      const { actor } = start(createSupervisor({ children: [workerSpec('w', { systemId: 'the-worker' })] }));
      const first = actor.system.get('the-worker');
      expect(first).to.equal(child(actor, 'w'));
      tell(first, { type: 'crash' });
      expect(actor.system.get('the-worker')).to.equal(child(actor, 'w')).and.not.equal(first);
      actor.stop();
    });
  });
});
