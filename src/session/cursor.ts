/**
 * A cursor: where one connection stands in one session's journal. The journal is the buffer:
 * while the connection keeps up, updates go out live and the cursor follows them; when it
 * falls behind (its transport is full, or a `session/load` replays from 0), the live updates
 * are not kept (they are on disk) and the cursor later reads them from the journal, from the
 * last one it delivered. Only what the journal does not hold (answers, requests to the
 * client, a notice the journal failed to take) waits in the cursor, each pinned behind the
 * journal position it followed, so that it goes out in its place.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { JournalEntry } from '../journal/journal.js';

/**
 * `live`: everything journaled so far was delivered; what comes goes out now.
 * `behind`: the journal holds what was not delivered yet (from `delivered` on); it is read
 * from there, a page at a time, until the cursor is live again.
 */
export type CursorState = 'live' | 'behind';

/** What waits in a cursor: an output the journal does not hold, pinned after journal position `after`. */
export interface HeldOutput<TOutput> {
  readonly after: number;
  readonly output: TOutput;
}

/**
 * A replay reading through this cursor (a `session/load` from 0, or a re-attach from the last
 * entry a client saw: `after`, exclusive): told once it has caught up (or the journal failed).
 */
export interface ReplayWaiter {
  /** The replay delivered everything up to journal entry `delivered` (the cursor is live from there). */
  readonly done: (delivered: number) => void;
  readonly failed: (error: unknown) => void;
  /** Replays the entries after this `seq` (default 0: the whole history). */
  readonly after?: number;
  /** The replay shows the user's prompts (default true); false: a catch-up, as after a pause. */
  readonly withPrompts?: boolean;
}

/** One connection's position in one session's journal. */
export interface SessionCursor<TOutput> {
  readonly sessionId: string;
  state: CursorState;
  /** The `seq` of the last journal entry delivered (or skipped as not for the editor); 0: none. */
  delivered: number;
  /** The `seq` of the last journal entry known to exist for the session (delivered or not). */
  head: number;
  /** A replay (`session/load`) echoes the user's prompts too; catching up after a pause does not (live never does). */
  withPrompts: boolean;
  /**
   * During a replay: the `head` it started at. The history up to there is old news: what the
   * journal does not hold goes out at once unless live updates came after it (then it waits
   * for them, in their place).
   */
  replayedTo: number | undefined;
  /** Outputs the journal does not hold, in order, each behind its journal position. */
  readonly held: Array<HeldOutput<TOutput>>;
  /** Replays reading through this cursor: the first is under way, the others go after it, each from 0. */
  readonly replays: ReplayWaiter[];
  /** A read of the next page is scheduled (not to schedule two). */
  scheduled: boolean;
}

/** A cursor that is live at `head` (a session seen first live). */
export function liveCursor<TOutput>(sessionId: string, head: number): SessionCursor<TOutput> {
  return { sessionId, state: 'live', delivered: head, head, withPrompts: false, replayedTo: undefined, held: [], replays: [], scheduled: false };
}

/** Puts the cursor back to `after` (0: the start) for a replay: what the journal holds after it is read again, prompts included. */
export function rewind(cursor: SessionCursor<unknown>, after = 0, withPrompts = true): void {
  cursor.state = 'behind';
  cursor.delivered = after;
  cursor.withPrompts = withPrompts;
  cursor.replayedTo = cursor.head;
}

/** Whether an output the journal does not hold must wait in the cursor (else it goes out now). */
export function mustHold(cursor: SessionCursor<unknown>): boolean {
  if (cursor.state === 'live') return false;
  // In a replay with nothing live since it started, only history is ahead of it.
  return cursor.replayedTo === undefined || cursor.head > cursor.replayedTo;
}

/** Takes the held outputs pinned before journal position `seq` (all of them when `seq` is undefined), oldest first. */
export function takeHeld<TOutput>(cursor: SessionCursor<TOutput>, seq?: number): TOutput[] {
  let count = 0;
  while (count < cursor.held.length && (seq === undefined || (cursor.held[count] as HeldOutput<TOutput>).after < seq)) count++;
  return cursor.held.splice(0, count).map((held) => held.output);
}

/**
 * The updates a journal entry stands for on the wire, as a connection got them live: the
 * agent's updates and the notices (a notice comes back as a notice); the user's prompt only
 * in a replay (`withPrompts`), as `user_message_chunk`s, one per block. Other entries (stop
 * reasons, restarts, permissions) are facts, not updates: none.
 */
export function updatesOf(entry: JournalEntry, withPrompts: boolean): SessionUpdate[] {
  switch (entry.kind) {
    case 'update':
      return [entry.update];
    case 'notice':
      return [noticeUpdate(entry.severity, entry.title, entry.description)];
    case 'prompt':
      return withPrompts ? entry.prompt.map((block) => ({ sessionUpdate: 'user_message_chunk', content: block }) as SessionUpdate) : [];
    default:
      return [];
  }
}

/** The `_meta` key of the update that shows a turn's end (see {@link turnEndUpdate}). */
export const TURN_END_META_KEY = 'acp-warden/turnEnded';

/**
 * The update that shows a turn's end to a connection that did not get the prompt's answer (an
 * observer, or a client re-attached after its prompt's connection was gone): a
 * `session_info_update` that changes nothing, with `_meta["acp-warden/turnEnded"]` =
 * `{ stopReason }` or `{ error }` (a standard kind, so every client takes it).
 */
export function turnEndUpdate(entry: Extract<JournalEntry, { kind: 'stop' | 'error' }>): SessionUpdate {
  const ended = entry.kind === 'stop' ? { stopReason: entry.stopReason } : { error: entry.error };
  return { sessionUpdate: 'session_info_update', _meta: { [TURN_END_META_KEY]: ended } } as SessionUpdate;
}

/**
 * What a journal entry shows a connection that sees every turn (an observer, a replay for a
 * re-attached client): as {@link updatesOf} with the prompts, and each turn's end.
 */
export function updatesWithTurns(entry: JournalEntry): SessionUpdate[] {
  return entry.kind === 'stop' || entry.kind === 'error' ? [turnEndUpdate(entry)] : updatesOf(entry, true);
}

/**
 * Whether what is answered after this entry waits behind it in a cursor that is behind: a
 * turn's own entries (its prompt, shown in a replay; its stop or error) do. Other facts (closed,
 * attached, restarts, mode / config / resume) are not the editor's to wait for: a close
 * answered during a replay goes out at once.
 */
export function pinsWhatFollows(entry: JournalEntry): boolean {
  return entry.kind === 'prompt' || entry.kind === 'stop' || entry.kind === 'error';
}

/** A `notice` update (acp-warden's own kind; the agent server renders it as text for clients without `session.notices`). */
export function noticeUpdate(severity: 'info' | 'warning' | 'error', title: string, description: string | undefined): SessionUpdate {
  return { sessionUpdate: 'notice', severity, title, ...(description !== undefined ? { description } : {}) } as unknown as SessionUpdate;
}
