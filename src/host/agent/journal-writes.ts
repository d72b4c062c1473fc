/**
 * The host agent's journal writes, each through its session's write queue: an update joins the
 * group being collected, any other entry or call goes after what is queued before it, and what
 * the editor hears of them goes out once they are durable.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { type JournalEntry, JournalError } from '../../journal/journal.js';
import type { HostJournal, Maybe } from '../../journal/host-journal.js';
import { FencedAppendError } from '../../journal/async-journal.js';
import { noticeUpdate } from '../../session/cursor.js';
import type { ClientCall, Live } from './live.js';
import { emit, fail } from './delivery.js';
import { failedWrite, journalFailure } from './journal-failures.js';
import type { CallResult } from '../../journal/host-journal.js';
import { memberTextOf, withMemberText } from '../../jsonrpc/json-text.js';

/**
 * Journals an update and shows it to the editor. The updates of one event-loop turn (and
 * those that come while the session's previous write is in flight) go into one transaction,
 * and reach the editor only once it is durable, with its seq. One transaction per update cost
 * about 50 µs on disk with SQLite, 500 µs with PostgreSQL; a streamed turn is hundreds of
 * updates. An update the journal did not take is never shown (see {@link refusedWrite}): what
 * a client sees live is what a replay gives it.
 */
export function journalUpdate(live: Live, sessionId: string, update: SessionUpdate): void {
  // Serialized once: the journal's entry and the editor's line both splice this text in (json-text.ts).
  const entry = withMemberText({ kind: 'update' as const, update }, 'update');
  const text = memberTextOf(entry, 'update');
  live.writes.update(sessionId, entry, (seq) => {
    // The journal takes the session's updates again: a next refusal is news again.
    if (live.unshown.size > 0) live.unshown.delete(sessionId);
    return { sessionId, output: withMemberText({ type: 'acp.update' as const, sessionId, update, seq }, 'update', text), seq };
  });
}

/**
 * A write the session's queue had refused: counted (a fenced one stops the session here:
 * another host owns it, and its own notice and answers say so). A group of updates it refused
 * (`unshown`) is not shown; for any refusal but a fence the editor is told so by a notice,
 * once until the journal takes the session's updates again. The notice is not journaled (the
 * journal just failed), so it has no seq: warden's own word, as a moved or lease-lost one.
 */
export function refusedWrite(live: Live, sessionId: string, error: unknown, unshown: number): void {
  failedWrite(live, sessionId, error);
  if (unshown === 0 || error instanceof FencedAppendError || live.unshown.has(sessionId)) return;
  live.unshown.add(sessionId);
  const description = `The journal could not take what the agent said (${(error as Error | undefined)?.message ?? String(error)}), so it was not shown: it is missing here and from the session's history, until the journal takes the agent's updates again.`;
  emit(live, { type: 'acp.update', sessionId, update: noticeUpdate('error', 'updates lost: the journal failed', description) });
}

/** Journals the answer to a permission request `call` of `sessionId` (its tool call and what the answer chose). */
export function recordPermission(live: Live, sessionId: string, call: ClientCall, outcome: unknown): void {
  const toolCall = (call.params as { toolCall?: { toolCallId?: string; title?: string } }).toolCall;
  record(live, sessionId, { kind: 'permission', toolCallId: toolCall?.toolCallId, title: toolCall?.title ?? undefined, outcome });
}

/**
 * Appends to the journal, after what is queued for the session; a refusal is counted (and an
 * event). `then` gets the entry's `seq` once durable, or `undefined` when refused. The
 * editor's cursor learns of it: what is answered after it goes out after it.
 */
export function record(live: Live, sessionId: string, entry: JournalEntry, then?: (seq: number | undefined, error?: unknown) => void): void {
  live.writes.record(sessionId, entry, (seq, error) => {
    if (seq !== undefined) live.subscriber.journaled(sessionId, seq, entry);
    then?.(seq, error);
  });
}

/** A journal call about the session that nothing waits for (a state, a release): a failure only counts. */
export function safely(live: Live, sessionId: string, write: (journal: HostJournal) => Maybe<unknown>): void {
  live.writes.call(sessionId, write, (result) => {
    if (!result.ok) failedWrite(live, sessionId, result.error);
  });
}

/** A journal call about the session, after what is queued for it, carrying on with its answer (a failure is the caller's to count). */
export function journalCall<T>(live: Live, sessionId: string, call: (journal: HostJournal) => Maybe<T>, settle: (result: CallResult<T>) => void): void {
  live.writes.call(sessionId, call, settle);
}

/**
 * Runs the work of one editor request; a {@link JournalError} it meets answers that request
 * with -32603 (naming the store and the fix) and is counted, instead of stopping the host
 * agent, which serves everything else on. Any other exception is a bug and escapes.
 */
export function journalFailureAnswers(live: Live, requestId: string, sessionId: string | undefined, work: () => void): void {
  try {
    work();
  } catch (error) {
    if (!(error instanceof JournalError)) throw error;
    failedWrite(live, sessionId, error);
    fail(live, requestId, journalFailure(error, sessionId), sessionId);
  }
}
