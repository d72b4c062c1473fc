/**
 * A session is live in one warden at a time: taking it from the journal's owners and giving it back.
 */
import { RpcError } from '../../jsonrpc/rpc-error.js';
import { SessionOwnedError } from '../../journal/journal.js';
import type { SessionClaim } from '../../journal/async-journal.js';
import type { Live } from './live.js';
import { fail } from './delivery.js';
import { failedWrite, journalFailure } from './journal-failures.js';
import { journalCall, safely } from './journal-writes.js';

/**
 * Takes the session for this host (the journal's owners), then runs `then` with what the claim
 * did (whom it took the session from); when another warden that still runs has it live, or the
 * journal fails, answers the request instead (and runs `refused`, if given).
 */
export function claimThen(live: Live, requestId: string, sessionId: string, then: (claimed: SessionClaim) => void, refused?: () => void): void {
  journalCall(live, sessionId, (journal) => journal.claim(sessionId), (result) => {
    if (result.ok) return then(result.value);
    const { error } = result;
    if (error instanceof SessionOwnedError) fail(live, requestId, RpcError.because('session_owned', `Internal error: ${error.message}`, { sessionId, owner: error.owner }));
    else {
      failedWrite(live, sessionId, error);
      fail(live, requestId, journalFailure(error, sessionId));
    }
    refused?.();
  });
}

/** Gives the session back to the journal's owners (closed, failed, stopped); a failure only counts. */
export function releaseOwnership(live: Live, sessionId: string): void {
  safely(live, sessionId, (journal) => journal.release(sessionId));
}
