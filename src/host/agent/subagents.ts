/**
 * Subagent child sessions in the host (ACP's `subagent_update`; docs/acp.md, "Subagent
 * sessions"). An agent announces a child on its parent session with a `subagent_update` naming
 * the child's `sessionId`, then sends the child's own updates under that id. The host keeps the
 * child in its parent's journal: the announcement as the parent's update, each child update as
 * a parent entry tagged with the child's id (`SUBAGENT_META_KEY`), so the child is journaled,
 * delivered to the parent's controller and observers after its announcement and in order,
 * replayed with the parent and recovered with it after a restart, by the journal's own order.
 * The editor edge sends a tagged update with the child's `sessionId` (src/acp/subagent-updates.ts).
 */
import { topSessionOf } from '../../session/subagent-tree.js';
import type { Live } from './live.js';

/** The session open here that journals `sessionId`'s updates: its own, or its top parent's for a child. */
export function journalingSession(live: Live, sessionId: string): string {
  return topSessionOf(live.subagents, sessionId);
}
