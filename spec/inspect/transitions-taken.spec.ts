/**
 * The transition a chart lights, from a real machine's inspection events (issue 18): the
 * microsteps' transitions (transitions-taken.ts) carried by the snapshot event the inspector
 * and the live view make (stately-event.ts), folded by the live view's model and drawn
 * (chart-draw-script.ts). A self-transition, edges declared with wildcards (`xstate.done.actor.*`,
 * `job.*`, `*`) and an eventless step after an event each light exactly their own edges;
 * without the transitions (a stream from another XState program) the event still finds a
 * wildcard's edge, the most specific descriptor first.
 */
import { expect } from 'chai';
import { createActor, createMachine, fromPromise, type InspectionEvent } from 'xstate';
import type { ChartDrawElement, ChartHighlight } from '../../src/inspect/chart-draw-script.js';
import { layoutChart } from '../../src/inspect/chart-layout.js';
import { chartOfMachine } from '../../src/inspect/chart-model.js';
import { drawChart } from '../../src/inspect/chart-svg.js';
import { createLiveViewModel } from '../../src/inspect/live-view-model.js';
import { statelyEventOf } from '../../src/inspect/stately-event.js';
import { createMoveTracker, readMove } from '../../src/host/transitions-taken.js';
import { waitUntil } from '../support/processes.js';

const machine = createMachine({
  id: 'jobs',
  initial: 'idle',
  on: { '*': '.lost' },
  states: {
    idle: { on: { start: 'working', 'job.*': 'queued' } },
    queued: { on: { 'job.cancel': 'idle' } },
    working: {
      // A self-transition: taken (its actions run), the state value stays `working`.
      on: { progress: { target: 'working', reenter: true }, finish: 'checking' },
    },
    checking: { always: 'done' },
    lost: { on: { start: 'working' } },
    done: { invoke: { id: 'fetcher', src: fromPromise(async () => 'fetched') }, on: { 'xstate.done.actor.*': 'idle' } },
  },
});
const chart = chartOfMachine(machine, { name: 'jobs', source: 'spec', description: 'test' });

/** The edges drawn lit, as `SOURCE LABEL TARGET`. */
function litEdges(tree: ChartDrawElement): string[] {
  const lit: string[] = [];
  const visit = (element: ChartDrawElement) => {
    if (element.tag === 'g' && (element.attrs.class ?? '').split(' ').includes('last')) lit.push(`${element.attrs['data-source']} ${element.attrs['data-label']} ${element.attrs['data-target']}`);
    for (const child of element.children ?? []) visit(child);
  };
  visit(tree);
  return lit;
}

describe('the transition taken last, lit on the chart', function () {
  this.timeout(60_000);

  /** The machine run with the inspector's conversion feeding a live view model, and what its graph lights after each step. */
  async function run() {
    const model = createLiveViewModel({ machines: [machine.config] });
    const moves = createMoveTracker();
    const inspect = (event: InspectionEvent) => {
      const move = moves.note(event);
      const stately = statelyEventOf(event, {}, Date.now(), move && readMove(move));
      if (stately) model.apply('s', stately);
    };
    const actor = createActor(machine, { inspect });
    const laid = await layoutChart(chart);
    const view = () => {
      const [shown] = model.view().machines;
      if (!shown) throw new Error('no machine in view');
      return shown;
    };
    const lit = () => {
      const { active, last } = view();
      return litEdges(drawChart(laid, { active, ...(last ? { last } : {}) } as ChartHighlight));
    };
    return { actor, view, lit };
  }

  it('a self-transition: its edge lit, though the state value did not change', async () => {
    const { actor, view, lit } = await run();
    actor.start();
    actor.send({ type: 'start' });
    expect(lit()).to.deep.equal(['idle start working']);
    actor.send({ type: 'progress' });
    expect(view()).to.deep.include({ state: 'working' });
    expect(view().last).to.deep.include({ from: 'working', event: 'progress', to: 'working' });
    expect(lit()).to.deep.equal(['working progress working']);
    actor.stop();
  });

  it('wildcards: xstate.done.actor.* by the done event of an invoked actor, job.* by job.retry, * by an event nobody else handles', async () => {
    const { actor, view, lit } = await run();
    actor.start();
    actor.send({ type: 'job.retry' });
    expect(lit()).to.deep.equal(['idle job.* queued']);
    actor.send({ type: 'job.cancel' });
    expect(lit()).to.deep.equal(['queued job.cancel idle']);
    actor.send({ type: 'whatever' });
    expect(lit()).to.deep.equal([' * lost']);
    actor.send({ type: 'start' });
    actor.send({ type: 'finish' });
    // An event, then an eventless step: both edges.
    expect(lit()).to.have.members(['working finish checking', 'checking always done']);
    await waitUntil(() => view().state === 'idle', 'the invoked promise done', 10_000);
    expect(view().last?.event).to.equal('xstate.done.actor.fetcher');
    expect(lit()).to.deep.equal(['done xstate.done.actor.* idle']);
    actor.stop();
  });

  it('without the transitions taken (another program\'s stream): the event finds its wildcard edge, an exact descriptor before a wildcard', async () => {
    const laid = await layoutChart(chart);
    const lit = (last: ChartHighlight['last']) => litEdges(drawChart(laid, { active: [last?.to ?? 'idle'], last }));
    expect(lit({ from: 'done', event: 'xstate.done.actor.fetcher', to: 'idle' })).to.deep.equal(['done xstate.done.actor.* idle']);
    expect(lit({ from: 'idle', event: 'job.retry', to: 'queued' })).to.deep.equal(['idle job.* queued']);
    expect(lit({ from: 'idle', event: 'job', to: 'queued' })).to.deep.equal(['idle job.* queued']);
    expect(lit({ from: 'idle', event: 'jobs', to: 'queued' })).to.deep.equal([]);
    expect(lit({ from: 'idle', event: 'anything', to: 'lost' })).to.deep.equal([' * lost']);
    // `start` from lost: its own edge, not the root's `*`.
    expect(lit({ from: 'lost', event: 'start', to: 'working' })).to.deep.equal(['lost start working']);
  });
});
