/**
 * A journal that is still being opened (a PostgreSQL store: connecting and migrating take a
 * round trip or more), usable at once: every call waits for the open, and an open that failed
 * rejects every call with its error. Lets `createHost` stay synchronous while the store opens
 * in the background; `opened` is what a program awaits to fail early.
 */
import type { AsyncJournal } from './async-journal.js';

/** An {@link AsyncJournal} whose calls wait for `opening`. */
export interface DeferredJournal extends AsyncJournal {
  /** Resolves with the journal once open; rejects with the open's error. */
  readonly opened: Promise<AsyncJournal>;
}

/** The journal `opening` will give, usable before it does (see the module's comment). */
export function deferredJournal(opening: Promise<AsyncJournal>): DeferredJournal {
  // A failed open is reported by each call (and by `opened`), never as an unhandled rejection.
  opening.catch(() => undefined);
  const waiting = <K extends Exclude<keyof AsyncJournal, 'close'>>(key: K) =>
    (async (...args: unknown[]) => ((await opening)[key] as (...args: unknown[]) => Promise<unknown>)(...args)) as unknown as AsyncJournal[K];
  return {
    opened: opening,
    createSession: waiting('createSession'),
    recordChild: waiting('recordChild'),
    childSessions: waiting('childSessions'),
    forkSession: waiting('forkSession'),
    getSession: waiting('getSession'),
    listSessions: waiting('listSessions'),
    append: waiting('append'),
    appendGroup: waiting('appendGroup'),
    deleteSession: waiting('deleteSession'),
    entries: waiting('entries'),
    readEntries: waiting('readEntries'),
    stateEntries: waiting('stateEntries'),
    lastSeq: waiting('lastSeq'),
    promptByKey: waiting('promptByKey'),
    claim: waiting('claim'),
    release: waiting('release'),
    setResume: waiting('setResume'),
    setState: waiting('setState'),
    // Closing a store that never opened has nothing to give back.
    close: () => opening.then((journal) => journal.close(), () => undefined),
  };
}
