/**
 * Test support for the state charts: recording what real actors go through (from XState's
 * inspection stream), and checking it against a declared chart.
 */
import { setup, type AnyActorRef, type InspectionEvent } from 'xstate';
import { transitionsFor, type Chart } from '../../src/inspect/chart-model.js';

/** One snapshot of an actor: the event that produced it, and where it stood after. */
export interface TraceStep {
  readonly event: string;
  readonly value: string;
  readonly status: string;
}

/** Records every snapshot of every actor in a system, by actor, through `createActor(…, { inspect })`. */
export function traceRecorder(): { readonly inspect: (event: InspectionEvent) => void; readonly steps: (ref: AnyActorRef) => TraceStep[]; readonly actors: () => AnyActorRef[] } {
  const traces = new Map<AnyActorRef, TraceStep[]>();
  return {
    inspect(event) {
      if (event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as { value?: unknown; status?: string };
      if (typeof snapshot.value !== 'string') return;
      const ref = event.actorRef as AnyActorRef;
      const list = traces.get(ref) ?? [];
      traces.set(ref, list);
      list.push({ event: event.event.type, value: snapshot.value, status: snapshot.status ?? '' });
    },
    steps: (ref) => traces.get(ref) ?? [],
    actors: () => [...traces.keys()],
  };
}

/**
 * Checks a trace against a flat declared chart: it starts in the initial state; every value
 * is a state; a change of value under an event is a declared transition of that event to
 * that state (from the state or the root); an event that leaves the value as it was is
 * declared there with a transition that stays (or targets the same state). Returns the
 * transitions it saw, as `from -event-> to`; throws naming the first step that is not declared.
 */
export function checkTrace(chart: Chart, steps: readonly TraceStep[], what: string): Set<string> {
  const seen = new Set<string>();
  const states = Object.keys(chart.states);
  let previous: string | undefined;
  for (const [index, step] of steps.entries()) {
    const where = `${what}, step ${index} (${step.event} → ${step.value}, ${step.status}) in ${JSON.stringify(steps.map((s) => `${s.event}→${s.value}`))}`;
    if (!states.includes(step.value)) throw new Error(`${where}: "${step.value}" is not a state of the ${chart.name} chart (${states.join(', ')})`);
    if (previous === undefined) {
      if (step.event !== 'xstate.init' || step.value !== chart.initial) throw new Error(`${where}: expected to start with xstate.init in "${chart.initial}"`);
      previous = step.value;
      continue;
    }
    if (chart.states[previous]?.type === 'final') throw new Error(`${where}: "${previous}" is final, yet the actor went on`);
    const handled = transitionsFor(chart, previous, step.event);
    if (!handled) throw new Error(`${where}: the chart has no transition for ${step.event} in "${previous}"`);
    const ok = step.value === previous
      ? handled.transitions.some((transition) => transition.targets.length === 0 || transition.targets.includes(previous as string))
      : handled.transitions.some((transition) => transition.targets.includes(step.value));
    if (!ok) throw new Error(`${where}: ${step.event} in "${previous}" is declared (on ${handled.source || 'the root'}) but not to "${step.value}"`);
    seen.add(`${previous} -${step.event}-> ${step.value}`);
    previous = step.value;
  }
  return seen;
}

/**
 * A machine with everything the exporters must carry that the real ones do not have:
 * three levels of nesting, a parallel state, history, a numeric delay, parameterized and
 * named guards, a transition description, states named like Mermaid keywords or with
 * characters an id cannot hold, event names and guards with characters Mermaid reads as
 * syntax, and transitions across scopes.
 */
export const kitchenSink = setup({
  types: {} as { events: { type: 'go' } | { type: 'a:b;c' } | { type: 'x "quoted" #1' } | { type: 'back' } | { type: 'flip' } },
  guards: {
    'ready?': () => true,
    '{odd} <guard>': () => false,
  },
  delays: { soon: 10 },
}).createMachine({
  id: 'sink',
  initial: 'end',
  on: { 'x "quoted" #1': { target: '.deep.inner.leaf', description: 'jumps in: 100%' } },
  states: {
    end: { on: { go: [{ guard: { type: 'ready?' }, target: 'deep' }, { guard: function namedCheck() { return true; }, target: 'state' }] } },
    state: { after: { 250: 'end', soon: [{ guard: '{odd} <guard>', target: 'par' }, { target: 'state', reenter: true }] } },
    deep: {
      initial: 'inner',
      on: { back: 'end', 'a:b;c': {} },
      states: {
        inner: {
          initial: 'leaf',
          states: {
            leaf: { on: { go: '#sink.par.left.on' } },
            'other-leaf': { type: 'final' },
            hist: { type: 'history', history: 'deep' },
          },
        },
      },
    },
    par: {
      type: 'parallel',
      states: {
        left: { initial: 'off', states: { off: { on: { flip: 'on' } }, on: { on: { flip: 'off' } } } },
        right: { initial: 'idle', states: { idle: { always: { target: '#sink.end', guard: 'ready?' } } } },
      },
    },
    'done-now': { type: 'final' },
  },
});
