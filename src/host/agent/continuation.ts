/**
 * Carrying on after a journal call: at once when the journal answered at once (SQLite: the
 * host runs as it always did), else in a later turn of the host agent's actor, through a
 * self-sent `host.continue` event. A promise's callback never touches the live record itself:
 * the actor's own turn stays the only writer of it.
 */
import type { Continue, Live } from './live.js';
import { callNowOrLater, type CallResult, type Maybe } from '../../journal/host-journal.js';

/** Runs `run` in a later turn of the host agent (dropped once the host stopped: nothing is left to carry on). */
export function later(live: Live, run: () => void): void {
  const self = live.scope.self;
  if (self.getSnapshot().status === 'active') self.send({ type: 'host.continue', run } satisfies Continue as never);
}

/**
 * Makes a journal call that belongs to no one session (a list of sessions) and carries on
 * with its answer or error: at once, or in a later turn when the answer is a promise. Calls
 * about a session go through its write queue instead (`live.writes.call`), after its writes.
 */
export function after<T>(live: Live, call: () => Maybe<T>, settle: (result: CallResult<T>) => void): void {
  callNowOrLater(call, settle, (result) => later(live, () => settle(result)));
}
