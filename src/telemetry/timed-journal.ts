/**
 * The journal, its writes timed: each `append` (one entry) and each `commit` (a group of
 * streamed updates made durable) is recorded in `acp_warden.journal.duration`. The host
 * exposes no timing of its own; wrapping the journal it is given is the smallest hook, and it
 * stays outside the host.
 */
import type { Histogram } from '@opentelemetry/api';
import type { Journal } from '../host/journal.js';
import { attributes } from './names.js';

const appendAttributes = { [attributes.journalOperation]: 'append' } as const;
const commitAttributes = { [attributes.journalOperation]: 'commit' } as const;

/** `journal`, with `append` and `commit` timed into `histogram` (seconds); every other method as it is. */
export function timedJournal(journal: Journal, histogram: Histogram): Journal {
  const timed = <A extends unknown[], R>(write: (...args: A) => R, recorded: typeof appendAttributes | typeof commitAttributes) =>
    (...args: A): R => {
      const start = performance.now();
      try {
        return write(...args);
      } finally {
        histogram.record((performance.now() - start) / 1000, recorded);
      }
    };
  const bound = new Map<PropertyKey, unknown>();
  bound.set('append', timed(journal.append.bind(journal), appendAttributes));
  if (journal.commit) bound.set('commit', timed(journal.commit.bind(journal), commitAttributes));
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
