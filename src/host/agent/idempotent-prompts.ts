/**
 * Idempotent prompts (docs/acp.md, "Idempotent prompts"; issue 30): a prompt sent with an
 * idempotency key is inserted at most once per key in its session. The key comes version-neutral
 * in the prompt's `_meta["acp-warden/idempotencyKey"]` (ACP v1 sends it there; the v2 edge puts
 * v2's `idempotencyKey` field there: src/acp/v2-requests.ts). A retry of a
 * key whose prompt the session holds (queued, or its turn running) joins it and is answered when
 * it ends, with the same outcome; one whose prompt the journal has (ended here, in an earlier
 * process, or on another host of a shared store) is answered at once with the journaled end; one
 * for another prompt (another digest) is refused `-32602` (`idempotency_key_reused`).
 *
 * The message id rule, for the v2 edge: a prompt's `messageId` is derived from its prompt entry's
 * journal seq (never given twice, the same after a restart or a failover), which the answer to
 * a keyed prompt (the original and every retry) carries as `_meta["acp-warden/promptSeq"]` in its
 * result, and `session.turnJournaled` carries for the original when its turn starts.
 */
import { promptDigestOf } from '../../journal/prompt-digest.js';
import type { KeyedPrompt } from '../../journal/journal.js';
import { RpcError, type ErrorObject } from '../../jsonrpc/rpc-error.js';
import { IDEMPOTENCY_KEY_META, PROMPT_SEQ_META, type AgentRequestEvent } from '../../protocol/native-agent.js';
import type { HeldKeyedPrompt, HostSession, Live } from './live.js';
import { emit, fail } from './delivery.js';
import { failedWrite, journalFailure } from './journal-failures.js';
import { journalCall } from './journal-writes.js';

/** The longest key, in characters (ACP v2: 1 to 255). */
export const maxIdempotencyKeyLength = 255;

/** A keyed prompt's identity, as journaled with it. */
export interface PromptKey {
  readonly idempotencyKey: string;
  readonly promptDigest: string;
}


/** A prompt's outcome, as the session answers it. */
type Outcome = { readonly result: unknown } | { readonly error: ErrorObject };

/** The key of a prompt's params (`undefined`: none), or the -32602 refusing it. */
export function promptKeyOf(params: Readonly<Record<string, unknown>>): PromptKey | undefined | RpcError {
  const meta = params._meta;
  const key = meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>)[IDEMPOTENCY_KEY_META] : undefined;
  if (key === undefined || key === null) return undefined;
  const length = typeof key === 'string' ? [...key].length : 0;
  // No U+0000: PostgreSQL's text (and its JSON operators) cannot hold it.
  if (typeof key !== 'string' || length < 1 || length > maxIdempotencyKeyLength || key.includes('\u0000')) {
    return RpcError.invalidParams(`an idempotency key is a string of 1 to ${maxIdempotencyKeyLength} characters, none of them U+0000`, { idempotencyKey: key });
  }
  return { idempotencyKey: key, promptDigest: promptDigestOf(params.prompt) };
}

/** The refusal of a key reused for another prompt. */
function reused(idempotencyKey: string, seq: number | undefined): RpcError {
  return RpcError.because('idempotency_key_reused', `the idempotency key ${JSON.stringify(idempotencyKey)} was used for another prompt in this session: send a new key for a new prompt`, {
    idempotencyKey,
    ...(seq === undefined ? {} : { promptSeq: seq }),
  });
}

/**
 * A prompt for a live session with key `key`: joins the session's prompt of that key, is
 * answered from the journal, or goes to the session's prompts (`came`) once the journal says
 * it has no prompt of that key (looked up after what is queued for the session).
 */
export function keyedPromptCame(live: Live, session: HostSession, request: AgentRequestEvent, key: PromptKey, came: (request: AgentRequestEvent) => void): void {
  const { sessionId, keyed } = session;
  const held = keyed.get(key.idempotencyKey);
  if (held) {
    if (held.promptDigest !== key.promptDigest) fail(live, request.requestId, reused(key.idempotencyKey, held.seq), sessionId);
    else {
      held.retries.push(request.requestId);
      if (held.seq !== undefined) joined(live, sessionId, request.requestId, held.seq);
    }
    return;
  }
  const first: HeldKeyedPrompt = { requestId: request.requestId, promptDigest: key.promptDigest, retries: [], seq: undefined };
  keyed.set(key.idempotencyKey, first);
  journalCall(live, sessionId, (journal) => journal.promptByKey(sessionId, key.idempotencyKey), (found) => {
    const waiting = [first.requestId, ...first.retries];
    if (!found.ok) {
      keyed.delete(key.idempotencyKey);
      failedWrite(live, sessionId, found.error);
      for (const requestId of waiting) fail(live, requestId, journalFailure(found.error, sessionId, 'the prompt was not sent to the agent'), sessionId);
      return;
    }
    if (found.value === undefined) {
      const keyedRequest: AgentRequestEvent = Object.assign({}, request, { identity: key });
      came(keyedRequest);
      return;
    }
    keyed.delete(key.idempotencyKey);
    const outcome = journaledOutcome(found.value, key);
    for (const requestId of waiting) answer(live, sessionId, requestId, outcome);
  });
}

/** What a prompt found in the journal answers: its turn's end, or the refusal of a reused key. */
function journaledOutcome(found: KeyedPrompt, key: PromptKey): Outcome {
  if (found.promptDigest !== key.promptDigest) return { error: reused(key.idempotencyKey, found.seq).toErrorObject() };
  const end = found.end?.entry;
  if (end?.kind === 'stop') return { result: withSeq({ stopReason: end.stopReason }, found.seq) };
  if (end?.kind === 'error') return { error: end.error };
  // On record without an end: a turn another process runs now (a session is live in one at a time, so only a race of the end's write).
  return { error: RpcError.internalError(`the prompt of idempotency key ${JSON.stringify(key.idempotencyKey)} is on record (seq ${found.seq}) but its turn has no end on record yet: send it again in a moment`).toErrorObject() };
}

/** A result with the prompt entry's seq in its `_meta`. */
function withSeq(result: unknown, seq: number | undefined): unknown {
  if (seq === undefined || result === null || typeof result !== 'object') return result;
  const meta = (result as { _meta?: unknown })._meta;
  return { ...result, _meta: { ...(meta !== null && typeof meta === 'object' ? meta : {}), [PROMPT_SEQ_META]: seq } };
}

function answer(live: Live, sessionId: string, requestId: string, outcome: Outcome): void {
  emit(live, 'error' in outcome ? { type: 'acp.error', requestId, error: outcome.error } : { type: 'acp.respond', requestId, result: outcome.result }, sessionId);
}

/** The held keyed prompt of request `requestId`, with its key. */
function heldOf(session: HostSession, requestId: string): [string, HeldKeyedPrompt] | undefined {
  for (const entry of session.keyed) if (entry[1].requestId === requestId) return entry;
  return undefined;
}

/** A prompt's entry is journaled: a keyed one's seq is kept for its answers, and the retries that joined it meanwhile are told. */
export function keyedPromptJournaled(live: Live, session: HostSession, requestId: string, seq: number): void {
  const held = heldOf(session, requestId);
  if (!held) return;
  held[1].seq = seq;
  for (const retry of held[1].retries) joined(live, session.sessionId, retry, seq);
}

/** Retry `requestId` joined the keyed prompt journaled at `seq` (a v2 edge acknowledges it now; v1 answers it at the turn's end). */
function joined(live: Live, sessionId: string, requestId: string, seq: number): void {
  live.scope.emit({ type: 'session.promptJoined', sessionId, requestId, seq });
}

/**
 * A `$/cancel_request` of a retry that joined a keyed prompt: that retry alone ends, answered
 * `cancelled` (a v2 editor's, not acknowledged yet, -32800); the prompt it joined, sent by
 * someone else or earlier, goes on. Whether `requestId` was such a retry.
 */
export function cancelRetry(live: Live, session: HostSession, requestId: string): boolean {
  for (const held of session.keyed.values()) {
    const index = held.retries.indexOf(requestId);
    if (index < 0) continue;
    held.retries.splice(index, 1);
    answer(live, session.sessionId, requestId, { result: { stopReason: 'cancelled' } });
    return true;
  }
  return false;
}

/**
 * Answers prompt `requestId` with `outcome`: a keyed prompt's answer carries its prompt
 * entry's seq, and every retry that joined it gets the same answer.
 */
export function answerPrompt(live: Live, session: HostSession, requestId: string, outcome: Outcome): void {
  const held = heldOf(session, requestId);
  if (!held) return answer(live, session.sessionId, requestId, outcome);
  session.keyed.delete(held[0]);
  const { seq, retries } = held[1];
  const answered = 'result' in outcome ? { result: withSeq(outcome.result, seq) } : outcome;
  for (const id of [requestId, ...retries]) answer(live, session.sessionId, id, answered);
}
