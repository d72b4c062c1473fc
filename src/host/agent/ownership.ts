/**
 * A session is live in one warden at a time: taking it from the journal's owners and giving it back.
 */
import { RpcError } from '../../jsonrpc/rpc-error.js';
import { SessionOwnedError } from '../journal.js';
import type { Live } from './live.js';
import { fail } from './delivery.js';
import { safely } from './journal-writes.js';

/**
 * Takes the session for this host (the journal's owners); `false`, having answered the
 * request, when another warden that still runs has it live.
 */
export function claimed(live: Live, requestId: string, sessionId: string): boolean {
  try {
    live.input.journal.claim?.(sessionId);
    return true;
  } catch (error) {
    if (!(error instanceof SessionOwnedError)) throw error;
    fail(live, requestId, RpcError.because('session_owned', `Internal error: ${error.message}`, { sessionId, owner: error.owner }));
    return false;
  }
}

/** Gives the session back to the journal's owners (closed, failed, stopped); a failure only counts. */

export function releaseOwnership(live: Live, sessionId: string): void {
  if (live.input.journal.release) safely(live, sessionId, () => live.input.journal.release?.(sessionId));
}
