/**
 * The journal as an engine whose driver answers with promises (PostgreSQL's `pg`) sees it: the
 * same store as {@link Journal} (sessions, entries with seqs, pages, state entries, owners),
 * every call a promise. An append is durable when its promise resolves, and the host shows
 * nothing it records before that (docs/cluster.md, "Running a host on PostgreSQL": the host's ordered write queue).
 *
 * Group commit is one call, {@link AsyncJournal.appendGroup}, instead of `begin`/`commit` on a
 * shared connection: with interleaved asynchronous callers an open transaction would mix
 * them. Ownership is fenced by an epoch: a journal that lost a session (another host claimed
 * it) has its writes to it refused with {@link FencedAppendError}, checked in the same
 * statement as the write.
 */
import { BrandedError } from './error-brand.js';
import type {
  JournalChild,
  JournalEntry,
  KeyedPrompt,
  JournalPageQuery,
  JournalRecord,
  JournalSession,
  JournalSessionPage,
  JournalSessionState,
} from './journal.js';

/** An `update` entry: what a group holds. */
export type JournalUpdateEntry = Extract<JournalEntry, { readonly kind: 'update' }>;

/** The store behind the journal, asynchronously. Errors are those of {@link Journal}, plus {@link FencedAppendError}. */
export interface AsyncJournal {
  /** Records a new session (state `open`), owned by this journal (epoch 1 where epochs exist). Rejects if the id exists. */
  createSession(session: { readonly sessionId: string; readonly agent: string; readonly cwd: string }): Promise<JournalSession>;
  /** Records a subagent child session, owned by nobody (see {@link Journal.recordChild}); a known one is a no-op. */
  recordChild(child: JournalChild): Promise<void>;
  /** The subagent children under `sessionId`, at any depth, each with its parent (see {@link Journal.childSessions}). */
  childSessions(sessionId: string): Promise<Array<{ readonly sessionId: string; readonly parentSessionId: string }>>;
  /** Records `sessionId` as a fork of `from` (see {@link Journal.forkSession}), owned by this journal. */
  forkSession(session: { readonly sessionId: string; readonly agent: string; readonly cwd: string; readonly from: string }): Promise<JournalSession>;
  getSession(sessionId: string): Promise<JournalSession | undefined>;
  /** Sessions, most recently updated first; `cwd` filters by exact match; rejects a cursor it did not make ({@link InvalidCursorError}). */
  listSessions(query?: { readonly cwd?: string; readonly cursor?: string; readonly limit?: number }): Promise<JournalSessionPage>;
  /** Appends an entry; resolves with its `seq` once it is durable. Rejects for an unknown session, or a session this journal does not own (fenced). */
  append(sessionId: string, entry: JournalEntry): Promise<number>;
  /**
   * Appends a session's updates in one transaction: resolves with their seqs (increasing, in
   * order) once all are durable, or rejects and none is written. The host calls it once per
   * session for the updates of one event-loop turn, so one session's refusal loses no other's.
   */
  appendGroup(sessionId: string, entries: readonly JournalUpdateEntry[]): Promise<readonly number[]>;
  /** Forgets a session and its entries; an unknown id is a no-op. Rejects while another live host owns it. */
  deleteSession(sessionId: string): Promise<void>;
  /** A session's entries in order (after `afterSeq` when given): the whole history, for small sessions and tests. */
  entries(sessionId: string, afterSeq?: number): Promise<JournalRecord[]>;
  /** A page of a session's entries (see {@link Journal.readEntries}): an empty page is the end. */
  readEntries(sessionId: string, page: JournalPageQuery): Promise<JournalRecord[]>;
  /** A session's `mode`, `config` and `resume` entries, in order. */
  stateEntries(sessionId: string): Promise<JournalRecord[]>;
  /** The `seq` of a session's last entry, 0 when it has none (or the session is unknown). */
  lastSeq(sessionId: string): Promise<number>;
  /** The prompt journaled with idempotency key `key` and its turn's end (see {@link Journal.promptByKey}); `undefined` when none. */
  promptByKey(sessionId: string, key: string): Promise<KeyedPrompt | undefined>;
  /**
   * Takes `sessionId` for this journal: resolves with the epoch it now holds (`undefined` for an
   * engine without epochs) and, when it took the session from another host that was lost or
   * handing it over, that host ({@link SessionClaim}). Rejects with `SessionOwnedError` while a
   * live owner holds it, and `UnknownSessionError` for an unknown id. Claiming a session held
   * already keeps its epoch.
   */
  claim(sessionId: string): Promise<SessionClaim>;
  /** Gives `sessionId` back; one held by another is left alone. */
  release(sessionId: string): Promise<void>;
  /** Remembers the agent-side resume state (fenced as an append). */
  setResume(sessionId: string, resume: unknown): Promise<void>;
  /** Sets the session's state (fenced as an append). */
  setState(sessionId: string, state: JournalSessionState): Promise<void>;
  /** Gives back what this journal holds and releases the store; further calls reject. */
  close(): Promise<void>;
}

/** What a claim did ({@link AsyncJournal.claim}). */
export interface SessionClaim {
  /** The epoch this journal holds the session at now (`undefined`: an engine without epochs). */
  readonly epoch: number | undefined;
  /**
   * The host the session was taken from: another host held it, and its lease had run out
   * (killed, frozen, cut off: `handedOver` false) or it was handing its sessions over (a
   * rolling restart). Absent when the session was free (released, its host closed) or this
   * journal's already, and on an engine without epochs.
   */
  readonly from?: PreviousOwner;
}

/** The host a claim took a session from. */
export interface PreviousOwner {
  readonly hostId: string;
  /** Its machine name, when the store has its row. */
  readonly hostName?: string;
  /** The epoch it held the session at. */
  readonly epoch: number;
  /** It handed the session over (it was draining), rather than being lost. */
  readonly handedOver: boolean;
}

/** Who owns a session now, as the store says when it refuses a stale owner's write. */
export interface CurrentOwner {
  /** The owner host's id (`undefined`: nobody owns it now). */
  readonly hostId: string | undefined;
  /** The owner host's machine name, when the store still has its row. */
  readonly hostName?: string;
  readonly epoch: number;
}

/**
 * A write to a session this journal does not own (any more): another host claimed it (a
 * higher epoch), or this journal never held it. The host stops the session's agent and drops
 * the session: the other owner runs it now.
 */
export class FencedAppendError extends BrandedError {
  override readonly name = 'FencedAppendError';
  constructor(
    readonly sessionId: string,
    /** The epoch this journal wrote with (`undefined`: it never held the session). */
    readonly heldEpoch: number | undefined,
    readonly owner: CurrentOwner,
  ) {
    super(
      `the journal refused a write to session ${sessionId}: ` +
        (heldEpoch === undefined ? 'this host does not own it' : `this host's epoch ${heldEpoch} is stale`) +
        (owner.hostId === undefined ? ` (nobody owns it now, epoch ${owner.epoch}): claim it first` : ` (host ${owner.hostId} owns it at epoch ${owner.epoch}): the session runs there now`),
    );
  }
}
