/**
 * The end of a replay, as the client reads it. warden answers a `session/load` (and a
 * re-attach from a cursor, `_meta["acp-warden/after"]`) after the history it replays, and the
 * host says when the history is out (`acp.replayComplete`): an ACP v1 client finds
 * `_meta["acp-warden/replayComplete"] = { seq }` on the answer, `seq` the last journal entry of
 * the history. A replay cut short (the connection dropped, the journal could not be read) has no
 * such answer, so the client can tell a whole history from a cut one. (ACP v2 has its own
 * `replay_complete` update for it: the RFD "session-replay-complete".)
 */
import type { PendingRequest } from './server-live.js';

/** The `_meta` key of a load's (or re-attach's) answer that says its replay was whole: `{ seq }`, the last journal entry replayed. */
export const REPLAY_COMPLETE_META_KEY = 'acp-warden/replayComplete';

/** `result` with the replay marker in its `_meta` when `request`'s replay completed; as it is otherwise. */
export function withReplayMarker(request: PendingRequest, result: unknown): unknown {
  if (request.replayedTo === undefined || typeof result !== 'object' || result === null || Array.isArray(result)) return result;
  const answer = result as { _meta?: unknown };
  const meta = typeof answer._meta === 'object' && answer._meta !== null ? answer._meta : {};
  return { ...answer, _meta: { ...meta, [REPLAY_COMPLETE_META_KEY]: { seq: request.replayedTo } } };
}
