/**
 * The journal as the host agent calls it: every call answers either at once (a synchronous
 * {@link Journal}: SQLite, an embedder's own) or with a promise (an {@link AsyncJournal}:
 * PostgreSQL). The host carries on from the answer the same way in both cases
 * (src/host/agent/continuation.ts): at once when it is a value, so a SQLite host runs exactly
 * as when the journal was only synchronous (same order, same durability on return, no promise
 * per update), and in a later turn of the host's actor when it is a promise.
 */
import type { AsyncJournal, JournalUpdateEntry } from './async-journal.js';
import {
  stateEntryKinds,
  UnknownSessionError,
  type Journal,
  type JournalEntry,
  type JournalPageQuery,
  type JournalRecord,
  type JournalSession,
  type JournalSessionPage,
  type JournalSessionState,
  type KeyedPrompt,
} from './journal.js';

/** A value now, or a promise of it. */
export type Maybe<T> = T | Promise<T>;

/** Whether `value` is a promise (anything thenable) rather than a value given at once. */
export function isPromiseLike<T>(value: Maybe<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** How a journal call ended. */
export type CallResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * Makes `call` and hands its outcome to `settle` at once when it answered at once (or threw);
 * when it answered with a promise, hands the outcome to `settleLater` once that settled instead.
 * Returns whether the answer is still on its way.
 */
export function callNowOrLater<T>(call: () => Maybe<T>, settle: (result: CallResult<T>) => void, settleLater: (result: CallResult<T>) => void): boolean {
  let answer: Maybe<T>;
  try {
    answer = call();
  } catch (error) {
    settle({ ok: false, error });
    return false;
  }
  if (!isPromiseLike(answer)) {
    settle({ ok: true, value: answer });
    return false;
  }
  answer.then(
    (value) => settleLater({ ok: true, value }),
    (error: unknown) => settleLater({ ok: false, error: error ?? new Error('the journal failed') }),
  );
  return true;
}

/** What a `store` of the host may be: a synchronous engine, or one that answers with promises. */
export type HostStore = Journal | AsyncJournal;

/**
 * The journal calls the host makes (those of {@link AsyncJournal}), each answered at once or
 * with a promise; errors are thrown (at once) or rejected.
 */
export type HostJournal = {
  readonly [K in keyof AsyncJournal]: AsyncJournal[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => Maybe<R> : never;
} & {
  /** Whether `readEntries` reads a page (else it is the whole rest, read at once). */
  readonly paged: boolean;
  /** Whether `lastSeq` is the store's own (else a replay's answers wait for the replay's end). */
  readonly knowsLastSeq: boolean;
  /** Whether its calls answer with promises (writes wait in the host's queue meanwhile). */
  readonly answersLater: boolean;
};

/** Whether `store` is an {@link AsyncJournal} (it groups with `appendGroup`) rather than a synchronous {@link Journal}. */
export function isAsyncJournal(store: HostStore): store is AsyncJournal {
  return typeof (store as Partial<AsyncJournal>).appendGroup === 'function';
}

/** `store` as the host calls it: an asynchronous journal as it is, a synchronous one answering at once. */
export function hostJournalOf(store: HostStore): HostJournal {
  if (!isAsyncJournal(store)) return syncHostJournal(store);
  const bound = <K extends keyof AsyncJournal>(key: K) => (store[key] as (...args: unknown[]) => unknown).bind(store) as never;
  return {
    createSession: bound('createSession'),
    recordChild: bound('recordChild'),
    childSessions: bound('childSessions'),
    forkSession: bound('forkSession'),
    getSession: bound('getSession'),
    listSessions: bound('listSessions'),
    append: bound('append'),
    appendGroup: bound('appendGroup'),
    deleteSession: bound('deleteSession'),
    entries: bound('entries'),
    readEntries: bound('readEntries'),
    stateEntries: bound('stateEntries'),
    lastSeq: bound('lastSeq'),
    promptByKey: bound('promptByKey'),
    claim: bound('claim'),
    release: bound('release'),
    setResume: bound('setResume'),
    setState: bound('setState'),
    close: bound('close'),
    paged: true,
    knowsLastSeq: true,
    answersLater: true,
  };
}

/**
 * A synchronous journal with the optional calls filled in (pages and state entries filtered
 * from `entries`, a group as appends one by one, ownership as a no-op), every answer given at
 * once. A group is one transaction when the journal has `begin`/`commit`.
 */
function syncHostJournal(journal: Journal): HostJournal {
  const entriesAfter = (sessionId: string, afterSeq = 0): JournalRecord[] => journal.entries(sessionId, afterSeq);
  return {
    // Recorded and taken, as the interface says (the host claimed it right after, before).
    createSession: (session) => createdAndTaken(journal, session.sessionId, () => journal.createSession(session)),
    forkSession: (session) => createdAndTaken(journal, session.sessionId, () => journal.forkSession(session)),
    recordChild: (child) => journal.recordChild?.(child),
    childSessions: (sessionId) => journal.childSessions?.(sessionId) ?? [],
    getSession: (sessionId) => journal.getSession(sessionId),
    listSessions: (query) => journal.listSessions(query),
    append: (sessionId, entry) => journal.append(sessionId, entry),
    appendGroup: (sessionId, entries) => appendGroupOf(journal, sessionId, entries),
    deleteSession: (sessionId) => journal.deleteSession(sessionId),
    entries: (sessionId, afterSeq) => entriesAfter(sessionId, afterSeq),
    readEntries: (sessionId, page) => (journal.readEntries ? journal.readEntries(sessionId, page) : pageOf(entriesAfter(sessionId, page.afterSeq), page)),
    stateEntries: (sessionId) => (journal.stateEntries ? journal.stateEntries(sessionId) : entriesAfter(sessionId).filter((record) => stateEntryKinds.has(record.entry.kind))),
    lastSeq: (sessionId) => (journal.lastSeq ? journal.lastSeq(sessionId) : (entriesAfter(sessionId).at(-1)?.seq ?? 0)),
    promptByKey: (sessionId, key) => (journal.promptByKey ? journal.promptByKey(sessionId, key) : keyedPromptIn(journal.getSession(sessionId) ? entriesAfter(sessionId) : [], key)),
    claim(sessionId) {
      if (!journal.getSession(sessionId)) throw new UnknownSessionError(sessionId);
      journal.claim?.(sessionId);
      return { epoch: undefined };
    },
    release: (sessionId) => journal.release?.(sessionId),
    setResume: (sessionId, resume) => journal.setResume(sessionId, resume),
    setState: (sessionId, state: JournalSessionState) => journal.setState(sessionId, state),
    close: () => journal.close(),
    paged: journal.readEntries !== undefined,
    knowsLastSeq: journal.lastSeq !== undefined,
    answersLater: false,
  };
}

/**
 * A session recorded by `create`, then taken for this process; when it cannot be taken (the
 * owners table failed), recorded no more: the journal keeps no session the editor never got.
 */
function createdAndTaken(journal: Journal, sessionId: string, create: () => JournalSession): JournalSession {
  const created = create();
  try {
    journal.claim?.(sessionId);
  } catch (error) {
    try {
      journal.deleteSession(sessionId);
    } catch {
      // the claim's error is the one to report
    }
    throw error;
  }
  return created;
}

/** A session's updates in one transaction when the journal groups (`begin`/`commit`), else one append each. */
function appendGroupOf(journal: Journal, sessionId: string, entries: readonly JournalUpdateEntry[]): number[] {
  if (!journal.begin || !journal.commit) return entries.map((entry) => journal.append(sessionId, entry));
  journal.begin();
  let seqs: number[];
  try {
    seqs = entries.map((entry) => journal.append(sessionId, entry));
  } catch (error) {
    // Committed (or told lost) all the same: a group left open would take the next writes in.
    try {
      journal.commit();
    } catch {
      // the append's error is the one to report
    }
    throw error;
  }
  journal.commit();
  return seqs;
}

/** The prompt of `records` journaled with `key`, and its turn's end (a journal without `promptByKey`). */
function keyedPromptIn(records: readonly JournalRecord[], key: string): KeyedPrompt | undefined {
  const at = records.findIndex((record) => record.entry.kind === 'prompt' && record.entry.idempotencyKey === key);
  const found = records[at];
  if (!found || found.entry.kind !== 'prompt') return undefined;
  const end = records.slice(at + 1).find((record) => record.entry.kind === 'stop' || record.entry.kind === 'error');
  return { seq: found.seq, promptDigest: found.entry.promptDigest, requestId: found.entry.requestId, end };
}

/** A page cut from a whole history (a journal without `readEntries`). */
function pageOf(records: readonly JournalRecord[], page: JournalPageQuery): JournalRecord[] {
  const limit = Math.floor(page.limit);
  if (!(limit >= 1)) throw new TypeError(`Expected the \`limit\` of a journal page to be a positive integer, got \`${String(page.limit)}\`.`);
  const taken: JournalRecord[] = [];
  let bytes = 0;
  for (const record of records.slice(0, limit)) {
    taken.push(record);
    bytes += JSON.stringify(record.entry).length;
    if (bytes >= (page.maxBytes ?? Infinity)) break;
  }
  return taken;
}

/** The entries a group holds. */
export type { JournalEntry, JournalSession, JournalSessionPage, JournalUpdateEntry };
