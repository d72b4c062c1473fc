/**
 * The loads and resumes of a session under way: they wait for each other, and a close or delete interrupts them.
 */
import { RpcError } from '../../jsonrpc/rpc-error.js';
import type { AttachJob, Live } from './live.js';

export function beginAttach(live: Live, sessionId: string, opens: boolean): AttachJob {
  const job: AttachJob = { sessionId, opens, interrupted: undefined };
  const jobs = live.attaching.get(sessionId) ?? new Set();
  jobs.add(job);
  live.attaching.set(sessionId, jobs);
  // Kept when the attach held them already while it asked the journal (see `attach`).
  if (opens && !live.opening.has(sessionId)) live.opening.set(sessionId, []);
  return job;
}

/** The load or resume was answered: the ones that waited for it go on. */
export function endAttach(live: Live, job: AttachJob): void {
  const jobs = live.attaching.get(job.sessionId);
  jobs?.delete(job);
  if (jobs?.size === 0) live.attaching.delete(job.sessionId);
  if (job.opens) releaseAttaches(live, job.sessionId);
}

/** Makes later loads and resumes of the session wait (unless something already does); whether it did. */

export function holdAttaches(live: Live, sessionId: string): boolean {
  if (live.opening.has(sessionId)) return false;
  live.opening.set(sessionId, []);
  return true;
}

/** The loads and resumes that waited for the session go on, in order. */
export function releaseAttaches(live: Live, sessionId: string): void {
  const waiting = live.opening.get(sessionId) ?? [];
  live.opening.delete(sessionId);
  for (const next of waiting) next();
}

/** The session was closed or deleted: the loads and resumes of it under way answer that. */

export function interruptAttaches(live: Live, sessionId: string, how: 'closed' | 'deleted'): void {
  for (const job of live.attaching.get(sessionId) ?? []) job.interrupted ??= how;
}

/** What a load or resume that a close or delete interrupted answers. */
export function interruption(sessionId: string, how: 'load' | 'resume', interrupted: 'closed' | 'deleted'): RpcError {
  return interrupted === 'deleted'
    ? RpcError.because('session_deleted', `Resource not found: session ${sessionId} (deleted while it was being ${how === 'load' ? 'loaded' : 'resumed'})`, { sessionId })
    : RpcError.because('session_closed', `Internal error: session ${sessionId} was closed while it was being ${how === 'load' ? 'loaded' : 'resumed'}; session/${how} opens it again`, { sessionId });
}

/**
 * `attach`, after a load's replay: answers for a running session, else opens it on its agent,
 * as the journal has it now (a close or delete may have come during the replay).
 */
