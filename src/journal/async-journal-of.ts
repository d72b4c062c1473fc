/**
 * A synchronous {@link Journal} (the SQLite engine, or an embedder's own) seen as an
 * {@link AsyncJournal}: each call runs synchronously, as the host makes it
 * ({@link hostJournalOf}), and returns a settled promise, so what SQLite made durable when
 * `append` returned is durable when the promise resolves. A journal without the optional
 * calls gets their fallbacks (pages and state entries filtered from `entries`, a group as
 * appends one by one, ownership as a no-op).
 */
import type { AsyncJournal } from './async-journal.js';
import type { Journal } from './journal.js';
import { hostJournalOf } from './host-journal.js';

/**
 * `journal` as an {@link AsyncJournal}. Engines without epochs: `claim` resolves `undefined`
 * and nothing is fenced (the SQLite engine's owners are processes on one machine).
 *
 * @example
 * ```ts
 * const journal = asyncJournalOf(sqliteJournal('/var/lib/my-app/agents.sqlite'));
 * const seq = await journal.append('s1', { kind: 'closed' });
 * ```
 */
export function asyncJournalOf(journal: Journal): AsyncJournal {
  const calls = hostJournalOf(journal);
  const promised = <K extends keyof AsyncJournal>(key: K) =>
    (async (...args: unknown[]) => (calls[key] as (...args: unknown[]) => unknown)(...args)) as unknown as AsyncJournal[K];
  return {
    createSession: promised('createSession'),
    recordChild: promised('recordChild'),
    childSessions: promised('childSessions'),
    forkSession: promised('forkSession'),
    getSession: promised('getSession'),
    listSessions: promised('listSessions'),
    append: promised('append'),
    appendGroup: promised('appendGroup'),
    deleteSession: promised('deleteSession'),
    entries: promised('entries'),
    readEntries: promised('readEntries'),
    stateEntries: promised('stateEntries'),
    lastSeq: promised('lastSeq'),
    promptByKey: promised('promptByKey'),
    claim: promised('claim'),
    release: promised('release'),
    setResume: promised('setResume'),
    setState: promised('setState'),
    close: promised('close'),
  };
}
