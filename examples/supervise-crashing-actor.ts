/**
 * Supervise an XState actor that crashes, and print the supervision events.
 *
 *   npx tsx examples/supervise-crashing-actor.ts
 *
 * A `counter` machine throws on its third tick; every restart starts it from zero. Its supervisor restarts it (one_for_one,
 * at most 3 restarts in 2 s); when it crashes a fourth time within the window, the
 * supervisor gives up and exits with reason `shutdown`, which is printed at the end.
 */
import { assign, createActor, setup, toPromise } from 'xstate';
import { createSupervisor, describeExit, type ExitReason, type SupervisionEvent } from '../src/index.js';

const counter = setup({
  types: {} as { context: { ticks: number } },
  actions: {
    tick: assign({ ticks: ({ context }) => context.ticks + 1 }),
    overflowAtThree: ({ context }) => {
      if (context.ticks === 3) throw new Error(`tick ${context.ticks}: counter overflowed`);
    },
  },
}).createMachine({
  id: 'counter',
  context: { ticks: 0 },
  initial: 'counting',
  states: { counting: { after: { 100: { target: 'counting', reenter: true, actions: ['tick', 'overflowAtThree'] } } } },
});

const supervisor = createSupervisor({
  strategy: 'one_for_one',
  intensity: 3,
  period: 2000,
  children: [{ id: 'counter', start: { logic: counter } }],
});

const actor = createActor(supervisor, { id: 'example' });
actor.on('*', (event: SupervisionEvent) => {
  const detail = event.type === 'child.exited' ? `${describeExit(event.reason)} -> ${event.action}` : '';
  console.log(`${event.supervisor} ${event.type} ${'childId' in event ? event.childId : ''} ${detail}`.trim());
});
actor.start();

const exit = (await toPromise(actor)) as ExitReason;
console.log(`supervisor exited: ${describeExit(exit)}`);
