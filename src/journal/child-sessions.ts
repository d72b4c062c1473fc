/**
 * The subagent children a journal records (`sessions.parent_session_id`; docs/acp.md,
 * "Subagent sessions"), as one query both engines run.
 */

/**
 * `child(id, parent)`: the subagent children recorded under the session `parent` names (a
 * placeholder), theirs, and so on; the same SQL in both engines.
 */
export function childrenOf(parent: string): string {
  return `WITH RECURSIVE child(id, parent) AS (SELECT session_id, parent_session_id FROM sessions WHERE parent_session_id = ${parent}
    UNION SELECT s.session_id, s.parent_session_id FROM sessions s JOIN child ON s.parent_session_id = child.id)`;
}
