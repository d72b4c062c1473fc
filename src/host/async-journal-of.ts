/**
 * A synchronous {@link Journal} (the SQLite engine, or an embedder's own) seen as an
 * {@link AsyncJournal}: each call runs synchronously, as today, and returns a settled
 * promise, so what SQLite made durable when `append` returned is durable when the promise
 * resolves. A journal without the optional calls gets their fallbacks (pages and state entries
 * filtered from `entries`, a group as appends one by one, ownership as a no-op).
 */
import type { AsyncJournal } from './async-journal.js';
import { stateEntryKinds, UnknownSessionError, type Journal, type JournalRecord } from './journal.js';

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
  const entriesAfter = (sessionId: string, afterSeq = 0): JournalRecord[] => journal.entries(sessionId, afterSeq);
  return {
    // Recorded and taken, as the interface says (the host claimed it right after, before).
    async createSession(session) {
      const created = journal.createSession(session);
      journal.claim?.(session.sessionId);
      return created;
    },
    async forkSession(session) {
      const created = journal.forkSession(session);
      journal.claim?.(session.sessionId);
      return created;
    },
    getSession: async (sessionId) => journal.getSession(sessionId),
    listSessions: async (query) => journal.listSessions(query),
    append: async (sessionId, entry) => journal.append(sessionId, entry),
    async appendGroup(sessionId, entries) {
      if (!journal.begin || !journal.commit) return entries.map((entry) => journal.append(sessionId, entry));
      journal.begin();
      let seqs: number[];
      try {
        seqs = entries.map((entry) => journal.append(sessionId, entry));
      } finally {
        // Committed (or told lost) whatever happened: a group left open would take the next writes in.
        journal.commit();
      }
      return seqs;
    },
    deleteSession: async (sessionId) => journal.deleteSession(sessionId),
    entries: async (sessionId, afterSeq) => entriesAfter(sessionId, afterSeq),
    async readEntries(sessionId, page) {
      if (journal.readEntries) return journal.readEntries(sessionId, page);
      const limit = Math.floor(page.limit);
      if (!(limit >= 1)) throw new TypeError(`Expected the \`limit\` of a journal page to be a positive integer, got \`${String(page.limit)}\`.`);
      const records: JournalRecord[] = [];
      let bytes = 0;
      for (const record of entriesAfter(sessionId, page.afterSeq).slice(0, limit)) {
        records.push(record);
        bytes += JSON.stringify(record.entry).length;
        if (bytes >= (page.maxBytes ?? Infinity)) break;
      }
      return records;
    },
    stateEntries: async (sessionId) => (journal.stateEntries ? journal.stateEntries(sessionId) : entriesAfter(sessionId).filter((record) => stateEntryKinds.has(record.entry.kind))),
    lastSeq: async (sessionId) => (journal.lastSeq ? journal.lastSeq(sessionId) : (entriesAfter(sessionId).at(-1)?.seq ?? 0)),
    async claim(sessionId) {
      if (!journal.getSession(sessionId)) throw new UnknownSessionError(sessionId);
      journal.claim?.(sessionId);
      return undefined;
    },
    release: async (sessionId) => journal.release?.(sessionId),
    setResume: async (sessionId, resume) => journal.setResume(sessionId, resume),
    setState: async (sessionId, state) => journal.setState(sessionId, state),
    close: async () => journal.close(),
  };
}
