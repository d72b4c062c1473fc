/**
 * A v2 editor's retry of a keyed prompt (`idempotencyKey`) that joined the prompt of that key,
 * inserted and its turn under way (src/host/agent/idempotent-prompts.ts, `session.promptJoined`):
 * acknowledged at once with that prompt's `messageId`, as the original was at its insertion
 * (v2's answer to a prompt says it is inserted); the turn's end is the session's `state_update`
 * `idle`, which the editor gets once. The core still answers the retry at the turn's end (v1's
 * answer): the request is settled by then, and that answer goes nowhere.
 */
import { respond } from '../jsonrpc/connection.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { checkDrained } from './server-draining.js';
import { type Live, requestOf, settled } from './server-live.js';
import { userMessageId } from './v2-message-ids.js';

/** Retry `requestId` joined the prompt journaled at `seq`: acknowledged now with its message id. */
export function v2RetryJoined(live: Live, requestId: string, seq: number): void {
  const request = requestOf(live, requestId);
  if (!request || request.method !== AGENT_METHODS.session_prompt) return;
  settled(live, request);
  respond(live.connection, request.rpcId, { messageId: userMessageId(seq) });
  checkDrained(live);
}
