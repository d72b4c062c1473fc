/**
 * The store a host runs on, opened once for the process (createHost, host.ts): a SQLite file
 * opened now, a PostgreSQL URL opened in the background by the one store opener
 * (journal/postgres-store.ts), or the program's own journal; with timing faults when asked.
 */
import { asyncJournalOf } from '../journal/async-journal-of.js';
import { deferredJournal } from '../journal/deferred-journal.js';
import { delayedJournal } from '../journal/delayed-journal.js';
import { isAsyncJournal, type HostStore } from '../journal/host-journal.js';
import { defaultJournalPath, sqliteJournal } from '../journal/sqlite-journal.js';
import { isPostgresUrl } from '../journal/store-url.js';
import type { HostOptions } from './host-api.js';
import type { ClusterStore } from './host-duties.js';

/**
 * The store a host runs on: a synchronous journal opened now (a bad SQLite path throws here),
 * a PostgreSQL URL opened in the background (`pg` loaded only then), or the program's own.
 */
export function openStore(options: HostOptions): { readonly journal: HostStore; readonly opened: Promise<void>; readonly postgres?: ClusterStore } {
  const given = options.store;
  const delay = options.journalDelay;
  const delayed = (store: HostStore): HostStore => (delay ? delayedJournal(isAsyncJournal(store) ? store : asyncJournalOf(store), delay) : store);
  if (typeof given === 'object') return { journal: delayed(given), opened: Promise.resolve() };
  const path = given ?? defaultJournalPath();
  if (!isPostgresUrl(path)) return { journal: delayed(sqliteJournal(path)), opened: Promise.resolve() };
  // The process's one opener of the store (its pool shared by the journal, the lease, the takeover and the routing), pg loaded only now.
  // Its pool: the journal's connections (the `connections` option, default 4), one more for a takeover look, one for a routing look-up.
  const connections = (options.postgres?.connections ?? 4) + 2;
  const store = import('../journal/postgres-store.js').then(({ openPostgresStore }) => openPostgresStore(path, { connections }));
  const opening = Promise.all([store, import('../journal/postgres-journal.js')]).then(([opened, { openPostgresJournal }]) => openPostgresJournal(opened, options.postgres));
  opening.catch(() => store.then((opened) => opened.end()).catch(() => undefined));
  // The cluster's own calls (lease, takeover) keep the store's timing: only the host's journal calls are delayed.
  const journal = deferredJournal(delay ? opening.then((opened) => delayedJournal(opened, delay)) : opening);
  const opened = journal.opened.then(() => undefined);
  opened.catch(() => undefined);
  return { journal, opened, postgres: { store, journal: opening } };
}
