/**
 * The journal: every session's history, appended before the editor hears of it, so that a
 * host that crashed (even SIGKILL) can list, replay and resume every session.
 *
 * The interface is deliberately small (sessions, append, read, resume state) so that another
 * engine can be plugged in: `sqliteJournal` (sqlite-journal.ts) is the default. Writes are
 * synchronous: when `append` returns, the entry is in the store's durable log, and only then
 * does the host send the message it records.
 */
import { BrandedError } from './error-brand.js';
import type { ContentBlock, SessionUpdate, StopReason } from '@agentclientprotocol/sdk';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';

/** Where a session stands, as the journal knows it. */
export type JournalSessionState = 'open' | 'closed' | 'failed';

/** One session, as the journal knows it. */
export interface JournalSession {
  readonly sessionId: string;
  /** The agent that serves it (`claude`, `codex`, `demo`, `acp:…`). */
  readonly agent: string;
  /** Absolute working directory. */
  readonly cwd: string;
  /** From the first prompt's text, when there was one. */
  readonly title: string | undefined;
  /** ISO 8601. */
  readonly createdAt: string;
  /** ISO 8601: the last entry appended. */
  readonly updatedAt: string;
  readonly state: JournalSessionState;
  /** What the agent needs to resume the conversation in a new process (Claude session id, Codex thread id). */
  readonly resume: unknown;
  /** How many times the agent process was restarted over the session's life. */
  readonly restarts: number;
  /**
   * Who runs it, on a store several hosts share (PostgreSQL): the owner host's id and the epoch
   * it holds the session at, and its name (the machine's host name) while the store has that
   * host's row. Absent when nobody owns it, and on an engine without hosts (SQLite).
   */
  readonly owner?: { readonly hostId: string; readonly epoch: number; readonly hostName?: string };
  /**
   * The session that announced this one as its subagent child (ACP's `subagent_update`;
   * {@link Journal.recordChild}); absent for a session of its own. A child's history is in
   * its top parent's entries, tagged with the child's id (docs/acp.md, "Subagent sessions").
   */
  readonly parentSessionId?: string;
}

/** A subagent child session as {@link Journal.recordChild} records it. */
export interface JournalChild {
  readonly sessionId: string;
  /** The session that announced it. */
  readonly parentSessionId: string;
  /** Its parent's agent: the process that runs the child. */
  readonly agent: string;
  readonly cwd: string;
  /** The announcement's title, when it had one. */
  readonly title?: string | undefined;
}

/**
 * Which request a turn's entry (its prompt, its end) belongs to: the key the host got the
 * prompt under, as whoever routed it made it. A router serving several clients tells a client's
 * own turns from the others' by it, however late it reads the entry back (a read of the journal
 * can meet an entry before the host has said whose it is). Absent in entries written before it was kept.
 */
export interface TurnOrigin {
  readonly requestId?: string;
}

/**
 * An idempotent prompt's identity (docs/acp.md, "Idempotent prompts"): the client's key, and
 * the digest of what it asked ({@link promptDigestOf}: SHA-256 of the canonical JSON of the
 * content blocks), so that a retry of the key is told from a reuse of it for another prompt.
 * Absent on a prompt sent without a key (and in entries written before keys were kept).
 */
export interface PromptIdentity {
  /** The client's key: an opaque, case-sensitive string of 1 to 255 characters, scoped to the session. */
  readonly idempotencyKey?: string;
  /** Hex SHA-256 of the canonical JSON of `prompt`. */
  readonly promptDigest?: string;
}

/** One fact in a session's history. */
export type JournalEntry =
  /**
   * The user's prompt, as sent; `requestId` ({@link TurnOrigin}): the key the host got it
   * under; `idempotencyKey` and `promptDigest` ({@link PromptIdentity}) when the client gave a key.
   */
  | ({ readonly kind: 'prompt'; readonly prompt: readonly ContentBlock[] } & TurnOrigin & PromptIdentity)
  /** A `session/update` sent to the editor. */
  | { readonly kind: 'update'; readonly update: SessionUpdate }
  /** The agent asked for permission; `outcome` is the editor's answer. */
  | { readonly kind: 'permission'; readonly toolCallId: string | undefined; readonly title: string | undefined; readonly outcome: unknown }
  /** A prompt ended with a stop reason. */
  | ({ readonly kind: 'stop'; readonly stopReason: StopReason } & TurnOrigin)
  /** A prompt ended with an error. */
  | ({ readonly kind: 'error'; readonly error: ErrorObject } & TurnOrigin)
  /** The agent process ended and is being restarted. */
  | { readonly kind: 'restart'; readonly restarts: number; readonly exit: unknown }
  /** The restarted agent resumed the conversation. */
  | { readonly kind: 'recovered'; readonly restarts: number }
  /** The session gave up (restart intensity exceeded). */
  | { readonly kind: 'failed'; readonly reason: string }
  /**
   * A notice to the editor (recovery: the agent restarted, is back, gave up; or an agent's own
   * notice): not part of the conversation. Replayed as a `notice` update, never as the agent's words.
   */
  | { readonly kind: 'notice'; readonly severity: 'info' | 'warning' | 'error'; readonly title: string; readonly description: string | undefined }
  /** The editor closed the session. */
  | { readonly kind: 'closed' }
  /** The host re-attached the session (`session/load` or `session/resume`), possibly in a new host process. */
  | { readonly kind: 'attached'; readonly how: 'load' | 'resume' }
  /**
   * The session's mode changed (the user's `session/set_mode`, once the agent answered it, or
   * the agent's `current_mode_update`): put back on every new agent process. Not conversation.
   */
  | { readonly kind: 'mode'; readonly modeId: string }
  /** A config option (the model, …) changed, as `mode` is: put back on every new agent process. Not conversation. */
  | { readonly kind: 'config'; readonly configId: string; readonly value: string | boolean }
  /** The agent-side resume handle changed (also kept by `setResume`). Not conversation. */
  | { readonly kind: 'resume'; readonly resume: unknown };

/** The kinds of the entries that record a session's state (not its conversation): what {@link Journal.stateEntries} reads. */
export const stateEntryKinds: ReadonlySet<JournalEntry['kind']> = new Set(['mode', 'config', 'resume']);

/** An entry with its place in the log. */
export interface JournalRecord {
  /**
   * Increasing over the whole journal and never given twice, also after the session that held
   * it was deleted: a session's seqs increase, and a cursor (`_meta["acp-warden/seq"]`) that
   * names one names that entry only.
   */
  readonly seq: number;
  readonly sessionId: string;
  /** ISO 8601. */
  readonly at: string;
  readonly entry: JournalEntry;
}

/**
 * A prompt found by its idempotency key ({@link Journal.promptByKey}). The v2 edge derives the
 * prompt's `messageId` from `seq` (the prompt entry's seq: never given twice, also after a
 * restart or on another host of a cluster).
 */
export interface KeyedPrompt {
  /** The prompt entry's seq. */
  readonly seq: number;
  /** The digest journaled with it (absent: none was). */
  readonly promptDigest: string | undefined;
  /** The key the host got it under ({@link TurnOrigin}). */
  readonly requestId: string | undefined;
  /**
   * Its turn's end when journaled: the first `stop` or `error` entry after the prompt (a
   * session runs one turn at a time, and a turn cut by a crash gets its `error` when the
   * session is attached again). Absent while the turn runs.
   */
  readonly end: JournalRecord | undefined;
}

/** Which page of a session's entries {@link Journal.readEntries} reads. */
export interface JournalPageQuery {
  /** The `seq` of the last entry already read; default 0 (from the start). */
  readonly afterSeq?: number;
  /** The most entries to return (at least 1). */
  readonly limit: number;
  /** Stop after the entry that brings the page to this many bytes of JSON; default no such bound. */
  readonly maxBytes?: number;
}

/** A page of sessions, newest first. */
export interface JournalSessionPage {
  readonly sessions: readonly JournalSession[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  readonly nextCursor: string | undefined;
}

/** The store behind the journal. */
export interface Journal {
  /** Records a new session (state `open`). Throws if the id exists. */
  createSession(session: { readonly sessionId: string; readonly agent: string; readonly cwd: string }): JournalSession;
  /**
   * Records a subagent child session (state `open`, owned by nobody: it lives in its parent's
   * agent and entries). Recording a child the journal knows already is a no-op. Optional: a
   * journal without it lists no children (their history is in their parent's entries all the same).
   */
  recordChild?(child: JournalChild): void;
  /**
   * The subagent children recorded under `sessionId`, their children, and so on, each with the
   * session that announced it (optional: without it a host knows a child again only when its
   * agent announces it again).
   */
  childSessions?(sessionId: string): Array<{ readonly sessionId: string; readonly parentSessionId: string }>;
  getSession(sessionId: string): JournalSession | undefined;
  /** Sessions, most recently updated first; `cwd` filters by exact match. */
  listSessions(query?: { readonly cwd?: string; readonly cursor?: string; readonly limit?: number }): JournalSessionPage;
  /** Appends an entry durably and returns its `seq`. Throws for an unknown session. */
  append(sessionId: string, entry: JournalEntry): number;
  /**
   * Group commit (optional): the appends after `begin()` become durable together at
   * `commit()`, one transaction instead of one each. The host groups the updates of one
   * event-loop turn this way and holds them back from the editor until `commit()` returned,
   * so an update is still never shown before it is on disk. Only `update` entries join a
   * group: any other write commits it first. `commit()` throws when the group was lost (rolled
   * back, or the commit failed). A journal without these two commits each append on its own.
   */
  begin?(): void;
  commit?(): void;
  /**
   * Records `sessionId` as a fork of `from` (state `open`, on `agent`, in `cwd`, with `from`'s
   * title): its history starts with a copy of `from`'s conversation so far (its `prompt`,
   * `update` and `notice` entries, in order), so that replaying the fork replays `from` first.
   * Throws if the id exists or `from` is unknown.
   */
  forkSession(session: { readonly sessionId: string; readonly agent: string; readonly cwd: string; readonly from: string }): JournalSession;
  /** Forgets a session: its record and every entry, and its subagent children's records, so that no host lists, loads or resumes them again. An unknown id is a no-op. */
  deleteSession(sessionId: string): void;
  /** A session's entries in order (after `afterSeq` when given). */
  entries(sessionId: string, afterSeq?: number): JournalRecord[];
  /**
   * A page of a session's entries, in order: at most `limit` of those after `afterSeq` (0:
   * from the start), and no more once they reach `maxBytes` of JSON (a page always has at
   * least one entry when there is one). An empty page is the end. Optional: the host replays
   * a `session/load` a page at a time with it, in flat memory whatever the history's size
   * (screenshots included), and falls back to `entries` (the whole history at once) without it.
   */
  readEntries?(sessionId: string, page: JournalPageQuery): JournalRecord[];
  /**
   * A session's state entries (`mode`, `config`, `resume`), in order (optional): what the host
   * reads to re-apply the user's choices when it re-attaches a session. Without it, the host
   * filters `entries`.
   */
  stateEntries?(sessionId: string): JournalRecord[];
  /**
   * The `seq` of a session's last entry, 0 when it has none (optional): where a `session/load`
   * replay ends, so that what the host answers meanwhile goes out after the history, not
   * before. Without it such answers wait for the end of the replay.
   */
  lastSeq?(sessionId: string): number;
  /**
   * The prompt of `sessionId` journaled with idempotency key `key` (the first, if several),
   * and its turn's end when journaled; `undefined` when there is none (or the session is
   * unknown). The engines index a prompt entry written as the host writes it: `kind` first,
   * `idempotencyKey` second (`{"kind":"prompt","idempotencyKey":…}`). Optional: the host looks prompts up by key with it (an index, so a retry after a
   * restart costs one lookup) and scans `entries` without it.
   */
  promptByKey?(sessionId: string, key: string): KeyedPrompt | undefined;
  /**
   * Takes `sessionId` for this journal's process while the session is live here (optional):
   * a session is live in one warden at a time. Throws {@link SessionOwnedError} when another
   * process that still runs holds it; an owner that died (even SIGKILLed) holds nothing.
   * Taking a session this journal holds already is a no-op.
   */
  claim?(sessionId: string): void;
  /** Gives `sessionId` back (closed, failed, or the host stops); a session held by another is left alone. */
  release?(sessionId: string): void;
  /** Remembers the agent-side resume state. */
  setResume(sessionId: string, resume: unknown): void;
  setState(sessionId: string, state: JournalSessionState): void;
  /** Releases the store; further calls throw. */
  close(): void;
}

/** Raised by a journal for a session it does not know. */
export class UnknownSessionError extends BrandedError {
  override readonly name = 'UnknownSessionError';
  constructor(readonly sessionId: string) {
    super(`the journal has no session ${JSON.stringify(sessionId)}`);
  }
}

/** Who holds a session live. */
export interface SessionOwner {
  readonly pid: number;
  /** The machine's name. */
  readonly host: string;
  /** ISO 8601: when it took the session. */
  readonly acquiredAt: string;
  /** On a store several hosts share (PostgreSQL): the owner host's id (its `hostId`). */
  readonly hostId?: string;
  /** On a store several hosts share: the epoch the owner holds the session at. */
  readonly epoch?: number;
}

/** A session that is live in another warden process: loading or resuming it here would run it twice. */
export class SessionOwnedError extends BrandedError {
  override readonly name = 'SessionOwnedError';
  constructor(
    readonly sessionId: string,
    readonly owner: SessionOwner,
  ) {
    super(
      `session ${sessionId} is live in another warden (pid ${owner.pid} on ${owner.host}, since ${owner.acquiredAt}): ` +
        'close it there (session/close, or close that editor) or stop that process, then load it again here',
    );
  }
}

/** A cursor the journal did not make is a caller error (the host answers -32602). */
export class InvalidCursorError extends BrandedError {
  override readonly name = 'InvalidCursorError';
  constructor(readonly cursor: string) {
    super(`invalid cursor ${JSON.stringify(cursor)}: pass back the nextCursor of a previous session/list answer`);
  }
}

/**
 * The store itself failed (a damaged page, a full disk, a lock held too long, an I/O error):
 * the message names the store's file, SQLite's code and the fix. The host answers the
 * request that met it with -32603 and goes on serving the others.
 */
export class JournalError extends BrandedError {
  override readonly name = 'JournalError';
  constructor(
    /** The store's file. */
    readonly path: string,
    /** The engine's code, say `SQLITE_CORRUPT`; `WARDEN_ENTRY_DAMAGED` for a stored entry that is not JSON. */
    readonly code: string,
    options?: { readonly cause?: unknown },
  ) {
    super(`the journal ${path} ${problemOf(code)}`, options);
  }
}

/** The store code of a stored value that does not parse as JSON (see {@link JournalError}). */
export const DAMAGED_ENTRY_CODE = 'WARDEN_ENTRY_DAMAGED';

/** Whether a store error code says the file itself is damaged (or is no database). */
export function isDamagedStore(code: string): boolean {
  return /^SQLITE_(CORRUPT|NOTADB)/u.test(code);
}

/** What a store error code means to the person who has to fix it. */
function problemOf(code: string): string {
  if (isDamagedStore(code)) return `is damaged (${code}): move it aside or restore a backup`;
  if (code === DAMAGED_ENTRY_CODE) return `holds an entry that is not JSON (${code}): move it aside or restore a backup`;
  if (code === 'SQLITE_FULL') return `cannot grow (${code}): free some disk space`;
  if (/^SQLITE_(BUSY|LOCKED)/u.test(code)) return `stayed locked by another process past the busy timeout (${code}): retry, or stop the process that holds it`;
  if (/^SQLITE_READONLY/u.test(code)) return `is read-only (${code}): make it and its directory writable, or choose another --store`;
  if (/^SQLITE_IOERR/u.test(code)) return `could not be read or written (${code}): check the disk, then move the file aside or restore a backup`;
  return `failed (${code}): move it aside or restore a backup if this persists`;
}

/** The title a session gets from its first prompt: the first line of its text, at most 80 characters. */
export function titleOf(prompt: readonly ContentBlock[]): string | undefined {
  for (const block of prompt) {
    if (block.type !== 'text') continue;
    const line = block.text.trim().split('\n', 1)[0]?.trim();
    if (line) return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }
  return undefined;
}
