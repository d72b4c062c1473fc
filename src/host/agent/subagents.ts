/**
 * Subagent child sessions in the host (ACP's `subagent_update`; docs/acp.md, "Subagent
 * sessions"). An agent announces a child on its parent session with a `subagent_update` naming
 * the child's `sessionId`, then sends the child's own updates under that id. The host keeps the
 * child in its parent's journal: the announcement as the parent's update, each child update as
 * a parent entry tagged with the child's id (`SUBAGENT_META_KEY`), so the child is journaled,
 * delivered to the parent's controller and observers after its announcement and in order,
 * replayed with the parent and recovered with it after a restart, by the journal's own order.
 * The editor edge sends a tagged update with the child's `sessionId` (src/acp/subagent-updates.ts).
 *
 * Each child is also recorded as a session of its own, naming its parent (`Journal.recordChild`),
 * so that `session/list` shows it under its parent and a `session/load` of the child replays its
 * entries alone, also after a restart (a cursor on the child reads its top parent's journal).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { topSessionOf } from '../../session/subagent-tree.js';
import { isPromiseLike } from '../../journal/host-journal.js';
import type { Live } from './live.js';
import { journalCall, safely } from './journal-writes.js';
import { failedWrite } from './journal-failures.js';
import { innerAgent, sendTo } from './inner-agents.js';
import type { AgentHandlerEvent } from '../../protocol/native-agent.js';

/** The session open here that journals `sessionId`'s updates: its own, or its top parent's for a child. */
export function journalingSession(live: Live, sessionId: string): string {
  return topSessionOf(live.subagents, sessionId);
}

/**
 * Records the child `update` (on `parentId`, journaled in `topId`'s journal) announced as a
 * session of its own (a child recorded before is left as it is): in the announcement's `cwd`,
 * else its top parent's, on `agent`.
 */
export function recordChild(live: Live, topId: string, parentId: string, childId: string, agent: string, update: SessionUpdate): void {
  const announced = update as { cwd?: unknown; title?: unknown };
  const title = typeof announced.title === 'string' ? announced.title : undefined;
  safely(live, topId, (journal) => {
    const write = (cwd: string) => journal.recordChild({ sessionId: childId, parentSessionId: parentId, agent, cwd, title });
    if (typeof announced.cwd === 'string') return write(announced.cwd);
    const top = journal.getSession(topId);
    return isPromiseLike(top) ? top.then((found) => write(found?.cwd ?? '')) : write(top?.cwd ?? '');
  });
}

/**
 * Notes the children the journal records under `sessionId` (at any depth) before it is opened
 * here again (a restart, another host): a child that runs on in the agent started again is
 * routed to its parent's journal even when the agent does not announce it again. A journal that
 * cannot say only counts the failure: the agent's announcements route the children then.
 */
export function linkChildren(live: Live, sessionId: string, then: () => void): void {
  journalCall(live, sessionId, (journal) => journal.childSessions(sessionId), (found) => {
    if (!found.ok) failedWrite(live, sessionId, found.error);
    else for (const child of found.value) if (!live.subagents.has(child.sessionId)) live.subagents.set(child.sessionId, child.parentSessionId);
    then();
  });
}

/**
 * An editor's `session/cancel` of a subagent child (ACP: it cancels the child's current work,
 * not its parent's turn): to the agent that runs the child's top parent here, whose edge sends it
 * on when the child advertised `cancel` (the passthrough). `false`: `sessionId` is no child
 * known here, or its parent is not open here.
 */
export function cancelChildWork(live: Live, event: Extract<AgentHandlerEvent, { type: 'session.cancel' }>): boolean {
  if (!live.subagents.has(event.sessionId)) return false;
  const top = live.sessions.get(journalingSession(live, event.sessionId));
  if (!top) return false;
  sendTo(innerAgent(live, top.agent), event);
  return true;
}
