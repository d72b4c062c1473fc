/**
 * Cursors that may follow a subagent child (docs/acp.md, "Subagent sessions"): a child's entries
 * live in its top parent's journal, tagged with its id, so a cursor on the child reads that
 * journal and shows only its own entries, untagged. Used by the host's cursors and the hub's.
 */
import { updatesOf } from './cursor.js';
import { childRecordUpdates, type SubagentParents } from './subagent-tree.js';
import type { SubscriberOptions } from './subscriber.js';

/**
 * Journal reads (`reads`, keyed by the session a cursor follows) for cursors that may follow a
 * subagent child: a child's shows only its own entries of its top parent's journal, untagged;
 * any other cursor shows what `shows` (default: `updatesOf`) shows.
 */
export function childCursors<T extends Pick<SubscriberOptions, 'read' | 'paged' | 'lastSeq'>>(
  parents: SubagentParents,
  reads: T,
  shows: NonNullable<SubscriberOptions['shows']> = (_sessionId, record, replaying) => updatesOf(record.entry, replaying),
): T & Pick<SubscriberOptions, 'shows'> {
  return {
    ...reads,
    shows: (sessionId, record, replaying) => (parents.has(sessionId) ? childRecordUpdates(sessionId, record) : shows(sessionId, record, replaying)),
  };
}

