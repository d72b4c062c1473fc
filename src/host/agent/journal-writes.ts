/**
 * The host agent's journal writes: one append, or an update joining the open group commit, each before the editor hears of it.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { type JournalEntry, JournalError } from '../journal.js';
import type { ClientCall, Live } from './live.js';
import { commitGroup, deliver, emit, fail } from './delivery.js';
import { failedWrite, journalFailure } from './journal-failures.js';

/**
 * Journals an update and shows it to the editor. With a journal that groups commits, the
 * updates of one event-loop turn go into one transaction, committed at the end of the turn
 * (or before anything else is journaled or emitted, which keeps the order), and reach the
 * editor only then: never shown before they are on disk. One transaction per update cost
 * about 50 µs on disk; a streamed turn is hundreds of updates.
 */
export function journalUpdate(live: Live, sessionId: string, update: SessionUpdate, journaled: boolean): void {
  const journal = live.input.journal;
  // Module functions, not closures: this runs once per streamed update.
  if (!journal.begin || !journal.commit) return journalUpdateAlone(live, sessionId, update, journaled);
  let group = live.group;
  if (!group) {
    try {
      journal.begin();
    } catch {
      // No group today: one append at a time, as a journal without groups.
      return journalUpdateAlone(live, sessionId, update, journaled);
    }
    group = live.group = { outbox: [], sessions: new Set() };
    queueMicrotask(() => commitGroup(live));
  }
  let seq: number | undefined;
  if (journaled) {
    try {
      seq = journal.append(sessionId, { kind: 'update', update });
      group.sessions.add(sessionId);
    } catch (error) {
      failedWrite(live, sessionId, error);
    }
  }
  group.outbox.push(seq === undefined ? { type: 'acp.update', sessionId, update } : { type: 'acp.update', sessionId, update, seq });
}

/** One append at a time: an update the journal did not take is shown now all the same (not lost), without a seq. */
function journalUpdateAlone(live: Live, sessionId: string, update: SessionUpdate, journaled: boolean): void {
  const seq = journaled ? recordSeq(live, sessionId, { kind: 'update', update }) : undefined;
  if (seq === undefined) emit(live, { type: 'acp.update', sessionId, update });
  else deliver(live, { type: 'acp.update', sessionId, update, seq }, seq);
}

/** Journals the answer to a permission request `call` of `sessionId` (its tool call and what the answer chose). */
export function recordPermission(live: Live, sessionId: string, call: ClientCall, outcome: unknown): void {
  const toolCall = (call.params as { toolCall?: { toolCallId?: string; title?: string } }).toolCall;
  record(live, sessionId, { kind: 'permission', toolCallId: toolCall?.toolCallId, title: toolCall?.title ?? undefined, outcome });
}

/** Appends to the journal; `false` (and a count, and an event) when the journal failed. */
export function record(live: Live, sessionId: string, entry: JournalEntry): boolean {
  return recordSeq(live, sessionId, entry) !== undefined;
}

/**
 * Appends to the journal; the entry's `seq`, or `undefined` (and a count, and an event) when
 * the journal failed. The editor's cursor learns of it: what is answered after it goes out after it.
 */
export function recordSeq(live: Live, sessionId: string, entry: JournalEntry): number | undefined {
  let seq: number | undefined;
  const failed = writeOrError(live, sessionId, () => {
    seq = live.input.journal.append(sessionId, entry);
  });
  if (failed !== undefined || seq === undefined) return undefined;
  live.subscriber.journaled(sessionId, seq, entry);
  return seq;
}

export function safely(live: Live, sessionId: string, write: () => unknown): boolean {
  return writeOrError(live, sessionId, write) === undefined;
}

export function writeOrError(live: Live, sessionId: string, write: () => unknown): unknown {
  // Whatever was grouped before is committed (and shown) first: the journal's order is the editor's.
  commitGroup(live);
  try {
    write();
    return undefined;
  } catch (error) {
    failedWrite(live, sessionId, error);
    return error ?? new Error('the journal failed');
  }
}

/**
 * Runs the work of one editor request; a {@link JournalError} it meets answers that request
 * with -32603 (naming the store file and the fix) and is counted, instead of stopping the
 * host agent, which serves everything else on. Any other exception is a bug and escapes.
 */
export function journalFailureAnswers(live: Live, requestId: string, sessionId: string | undefined, work: () => void): void {
  try {
    work();
  } catch (error) {
    if (!(error instanceof JournalError)) throw error;
    failedWrite(live, sessionId, error);
    fail(live, requestId, journalFailure(error, sessionId));
  }
}

