import { expect } from 'chai';
import { createActor, SimulatedClock, type AnyActorRef } from 'xstate';
import { backoffAttempt, backoffDelay, createSupervisor, delayWithinIntensity, normalizeBackoff, whichChildren } from '../../src/supervision/index.js';
import { recordEvents, tell, worker } from '../support/children.js';

describe('backoff', () => {
  describe('delays', () => {
    const backoff = normalizeBackoff({ minDelay: 3000, maxDelay: 30000, jitter: 0 }, 'x');

    it('doubles from minDelay up to maxDelay (Akka: 3, 6, 12, 24, 30, 30 s)', () => {
      expect([0, 1, 2, 3, 4, 5].map((attempt) => backoffDelay(backoff, attempt, 0))).to.deep.equal([3000, 6000, 12000, 24000, 30000, 30000]);
    });

    it('adds jitter as a fraction of the delay, never beyond maxDelay', () => {
      const jittered = normalizeBackoff({ minDelay: 1000, maxDelay: 10000, jitter: 0.5 }, 'x');
      expect(backoffDelay(jittered, 0, 0)).to.equal(1000);
      expect(backoffDelay(jittered, 0, 0.999)).to.equal(1500);
      expect(backoffDelay(jittered, 10, 0.999)).to.equal(10000);
    });

    it('starts again from minDelay after a stable period (default (min + max) / 2)', () => {
      expect(backoff.resetAfter).to.equal(16500);
      expect(backoffAttempt(backoff, 4, 16499)).to.equal(4);
      expect(backoffAttempt(backoff, 4, 16500)).to.equal(0);
    });

    it('stays inside the intensity window: at most period / (intensity + 1)', () => {
      expect(delayWithinIntensity(5000, 3, 4000)).to.equal(1000);
      expect(delayWithinIntensity(200, 3, 4000)).to.equal(200);
      expect(delayWithinIntensity(5000, 3, 60_000)).to.equal(5000);
      expect(delayWithinIntensity(5000, 3, Infinity)).to.equal(5000);
    });
  });

  describe('a crash loop against the intensity', () => {
    it('gives up even when the backoff would outgrow the window (5 s delays, 3 restarts in 4 s)', () => {
      const clock = new SimulatedClock();
      const sup = createSupervisor({
        intensity: 3,
        period: 4000,
        random: () => 0,
        children: [{ id: 'w', start: { logic: worker }, backoff: { minDelay: 200, maxDelay: 5000, resetAfter: 60_000 } }],
      });
      const actor = createActor(sup, { clock, id: 'sup' });
      const events = recordEvents(actor);
      actor.start();
      const current = () => whichChildren(actor)[0] as { ref: AnyActorRef | undefined; status: string } | undefined;
      // Earlier crashes spaced out (the window forgets them) push the backoff attempt up.
      for (let crash = 0; crash < 5; crash++) {
        tell(current()?.ref, { type: 'crash' });
        clock.increment(5000);
      }
      expect(actor.getSnapshot().status).to.equal('active');
      // Now a crash loop: the child dies 10 ms after every start.
      for (let step = 0; step < 50 && actor.getSnapshot().status === 'active'; step++) {
        if (current()?.ref) tell(current()?.ref, { type: 'crash' });
        clock.increment(10);
        while (current()?.status === 'restarting' && actor.getSnapshot().status === 'active') clock.increment(50);
      }
      expect(events.some((event) => event.type === 'intensity.exceeded')).to.equal(true);
      expect(actor.getSnapshot().status).to.equal('done');
      const delays = events.filter((event) => event.type === 'child.restarting').map((event) => event.delay as number);
      expect(Math.max(...delays)).to.equal(1000);
    });
  });

  describe('in a supervisor', () => {
    function setup() {
      const clock = new SimulatedClock();
      const sup = createSupervisor({
        intensity: 10,
        period: 60_000,
        random: () => 0,
        children: [{ id: 'w', start: { logic: worker }, backoff: { minDelay: 100, maxDelay: 1000, resetAfter: 5000 } }],
      });
      const actor = createActor(sup, { clock, id: 'sup' });
      const events = recordEvents(actor);
      actor.start();
      const current = () => whichChildren(actor)[0] as { ref: AnyActorRef | undefined; status: string };
      return { actor, clock, events, current };
    }

    it('keeps the child visibly restarting until its delay has passed', () => {
      const { actor, clock, current, events } = setup();
      tell(current().ref, { type: 'crash' });
      expect(current()).to.include({ status: 'restarting', ref: undefined });
      expect(events.find((event) => event.type === 'child.restarting')).to.deep.include({ childId: 'w', delay: 100, attempt: 0 });
      clock.increment(99);
      expect(current().status).to.equal('restarting');
      clock.increment(1);
      expect(current().status).to.equal('running');
      // Counted against intensity when the delay ended, not when the child crashed.
      expect(events.find((event) => event.type === 'child.restarted')).to.deep.include({ childId: 'w', countedAt: 100 });
      actor.stop();
    });

    it('grows the delay with consecutive crashes and resets it after a stable run', () => {
      const { actor, clock, current, events } = setup();
      const delays = () => events.filter((event) => event.type === 'child.restarting').map((event) => event.delay);
      for (let crash = 0; crash < 5; crash++) {
        tell(current().ref, { type: 'crash' });
        clock.increment(1000);
      }
      expect(delays()).to.deep.equal([100, 200, 400, 800, 1000]);
      clock.increment(5000); // a stable run
      tell(current().ref, { type: 'crash' });
      expect(delays().at(-1)).to.equal(100);
      actor.stop();
    });

    it('under rest_for_one, stops the followers at once and restarts the group after the delay', () => {
      const clock = new SimulatedClock();
      const actor = createActor(createSupervisor({
        strategy: 'rest_for_one',
        random: () => 0,
        children: [
          { id: 'port', start: { logic: worker }, backoff: { minDelay: 500, maxDelay: 500 } },
          { id: 'connection', start: { logic: worker } },
        ],
      }), { clock });
      actor.start();
      const connection = whichChildren(actor)[1]?.ref as AnyActorRef;
      tell(whichChildren(actor)[0]?.ref, { type: 'crash' });
      expect(connection.getSnapshot().status).to.equal('stopped');
      expect(whichChildren(actor).map((row) => row.status)).to.deep.equal(['restarting', 'restarting']);
      clock.increment(500);
      expect(whichChildren(actor).map((row) => row.status)).to.deep.equal(['running', 'running']);
      expect(actor.getSnapshot().context.restarts).to.equal(1);
      actor.stop();
    });

    it('a shutdown during the wait ends the supervisor and the child never starts again', () => {
      const { actor, clock, current, events } = setup();
      tell(current().ref, { type: 'crash' });
      actor.send({ type: 'supervisor.shutdown' });
      expect(actor.getSnapshot().status).to.equal('done');
      clock.increment(1000);
      expect(whichChildren(actor)[0]).to.include({ status: 'terminated', ref: undefined });
      expect(events.filter((event) => event.type === 'child.started')).to.have.length(1);
    });
  });
});
