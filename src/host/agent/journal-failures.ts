/**
 * What the host agent does when the journal fails: the count and event, and the one answer a request gets.
 */
import { type ErrorObject, RpcError } from '../../jsonrpc/rpc-error.js';
import { JournalError } from '../../journal/journal.js';
import { FencedAppendError } from '../../journal/async-journal.js';
import type { Live } from './live.js';

/**
 * The one answer to a request the journal failed (whatever it was doing): -32603 with the
 * journal's message (for a {@link JournalError}: naming the store file and the fix), the
 * session when there is one, and the store and its error code; `consequence` says what did
 * not happen because of it.
 */
export function journalFailure(error: unknown, sessionId: string | undefined, consequence?: string): ErrorObject {
  const message = error instanceof JournalError ? error.message : `the journal failed: ${(error as Error | undefined)?.message ?? String(error)}`;
  const data = { ...(sessionId !== undefined ? { sessionId } : {}), ...(error instanceof JournalError ? { store: error.path, code: error.code } : {}) };
  return RpcError.internalError(consequence ? `${message}; ${consequence}` : message, data).toErrorObject();
}

/** A write or read the journal refused: counted, an event; a fenced write (another host owns the session now) stops the session here instead. */
export function failedWrite(live: Live, sessionId: string | undefined, error: unknown): void {
  if (error instanceof FencedAppendError) return live.sessionLost(error.sessionId, error);
  live.journalErrors++;
  live.input.onEvent?.({ type: 'journal.error', ...(sessionId ? { sessionId } : {}), message: (error as Error).message });
}
