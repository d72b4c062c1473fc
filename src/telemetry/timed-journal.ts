/**
 * The journal, its writes timed: each `append` (one entry) and each `commit` (a group of
 * streamed updates made durable: `commit` of a synchronous journal, `appendGroup` of one that
 * answers with promises, timed until it settles) is recorded in `acp_warden.journal.duration`. The host
 * exposes no timing of its own; wrapping the journal it is given is the smallest hook, and it
 * stays outside the host.
 */
import type { Histogram } from '@opentelemetry/api';
import { isAsyncJournal, isPromiseLike, type HostStore } from '../journal/host-journal.js';
import { attributes } from './names.js';

const appendAttributes = { [attributes.journalOperation]: 'append' } as const;
const commitAttributes = { [attributes.journalOperation]: 'commit' } as const;

/** `journal`, with `append` and `commit` (or `appendGroup`) timed into `histogram` (seconds); every other method as it is. */
export function timedJournal<J extends HostStore>(journal: J, histogram: Histogram): J {
  const timed = <A extends unknown[], R>(write: (...args: A) => R, recorded: typeof appendAttributes | typeof commitAttributes) =>
    (...args: A): R => {
      const start = performance.now();
      const done = () => histogram.record((performance.now() - start) / 1000, recorded);
      let result: R;
      try {
        result = write(...args);
      } catch (error) {
        done();
        throw error;
      }
      if (isPromiseLike(result)) result.then(done, done);
      else done();
      return result;
    };
  const bound = new Map<PropertyKey, unknown>();
  bound.set('append', timed(journal.append.bind(journal) as (...args: unknown[]) => unknown, appendAttributes));
  if (isAsyncJournal(journal)) bound.set('appendGroup', timed(journal.appendGroup.bind(journal) as (...args: unknown[]) => unknown, commitAttributes));
  else if (journal.commit) bound.set('commit', timed(journal.commit.bind(journal), commitAttributes));
  return new Proxy(journal, {
    get(target, key) {
      if (bound.has(key)) return bound.get(key);
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      // Methods run on the journal itself (a class's private fields need it as `this`).
      const method = (value as (...args: unknown[]) => unknown).bind(target);
      bound.set(key, method);
      return method;
    },
  });
}
