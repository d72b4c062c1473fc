/**
 * Small child logics for supervision tests, playing the roles of OTP's `supervisor_1`
 * test module: a worker that crashes or finishes on command, one that traps shutdown and
 * takes its time, one that cannot start.
 */
import { assign, createMachine, fromCallback, setup, type AnyActorRef } from 'xstate';
import { SHUTDOWN_EVENT, shutdownExit, type ExitReason } from '../../src/supervision/index.js';

/** Events the test worker understands. */
export type WorkerEvent =
  | { type: 'crash'; message?: string }
  | { type: 'finish' }
  | { type: 'exit'; reason: ExitReason }
  | { type: 'ping' };

/**
 * A worker machine: `crash` makes it fail (abnormal exit), `finish` makes it reach a final
 * state (normal exit), `exit` ends it with a given exit reason as output. It does not handle
 * the shutdown event, so its supervisor stops it at once.
 */
export const worker = setup({
  types: {} as { events: WorkerEvent; context: { pings: number; output: ExitReason | undefined }; input: unknown },
}).createMachine({
  id: 'worker',
  context: { pings: 0, output: undefined },
  initial: 'running',
  states: {
    running: {
      on: {
        ping: { actions: assign({ pings: ({ context }) => context.pings + 1 }) },
        crash: {
          actions: ({ event }) => {
            throw new Error(event.message ?? 'boom');
          },
        },
        finish: 'finished',
        exit: { target: 'finished', actions: assign({ output: ({ event }) => event.reason }) },
      },
    },
    finished: { type: 'final' },
  },
  output: ({ context }) => context.output,
});

/**
 * A worker that traps shutdown: on the shutdown event it waits `input.stopDelay` ms of the
 * actor clock (or forever when `stopDelay` is `'never'`) before finishing.
 */
export const trappingWorker = setup({
  types: {} as { events: WorkerEvent | { type: typeof SHUTDOWN_EVENT }; input: { stopDelay: number | 'never' }; context: { stopDelay: number | 'never' } },
  delays: { stopDelay: ({ context }) => (context.stopDelay === 'never' ? 2 ** 30 : context.stopDelay) },
}).createMachine({
  id: 'trappingWorker',
  context: ({ input }) => ({ stopDelay: input?.stopDelay ?? 0 }),
  initial: 'running',
  states: {
    running: {
      on: {
        [SHUTDOWN_EVENT]: 'stopping',
        crash: { actions: () => { throw new Error('boom'); } },
      },
    },
    stopping: { after: { stopDelay: 'stopped' } },
    stopped: { type: 'final' },
  },
  output: () => shutdownExit(),
});

/** A logic whose start throws: a child that cannot start. */
export const cannotStart = fromCallback(() => {
  throw new Error('cannot start');
});

/** A worker whose start fails when `input.fail()` returns true (decided per incarnation). */
export const startsWhen = fromCallback<{ type: string }, { fail: () => boolean }>(({ input, receive }) => {
  if (input.fail()) throw new Error('start failed');
  receive((event) => {
    if (event.type === 'crash') throw new Error('crashed');
  });
  return () => {};
});

/** A machine that finishes during its own start: a normal exit right away. */
export const finishesAtOnce = createMachine({ id: 'finishesAtOnce', initial: 'done', states: { done: { type: 'final' } } });

/** Sends a worker event to a child ref (children cannot be stopped from outside, only told). */
export function tell(ref: AnyActorRef | undefined, event: WorkerEvent): void {
  if (!ref) throw new Error('no such child running');
  ref.send(event);
}

/**
 * A callback worker that writes `start:<name>` and `stop:<name>` to a shared journal, to
 * observe start and stop order. `{ type: 'crash' }` makes it fail.
 */
export function journaled(journal: string[]) {
  return fromCallback<{ type: string }, { name: string }>(({ input, receive }) => {
    journal.push(`start:${input.name}`);
    receive((event) => {
      // A throw inside `receive` runs in the actor's transition: the actor fails.
      if (event.type === 'crash') throw new Error(`${input.name} crashed`);
    });
    return () => {
      journal.push(`stop:${input.name}`);
    };
  });
}

/** Collects a supervisor's emitted events (the supervision event stream). */
export function recordEvents(actor: AnyActorRef): Array<{ type: string; [key: string]: unknown }> {
  const events: Array<{ type: string; [key: string]: unknown }> = [];
  actor.on('*', (event: { type: string }) => events.push(event));
  return events;
}
