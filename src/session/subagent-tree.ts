/**
 * Which session a subagent child belongs to (ACP's `subagent_update`): each announcement on a
 * session names a child of it, and a child's child belongs to the top session too. Shared by
 * whoever routes an agent's updates by session (the host's journal, the update lines, the
 * passthrough's relay), so that a child's updates take their parent's path, in its order.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { SUBAGENT_META_KEY } from '../protocol/native-agent.js';
import type { JournalRecord } from '../journal/journal.js';

/** Child session id to the id of the session that announced it. */
export type SubagentParents = Map<string, string>;

/** The child a `subagent_update` names, else `undefined`. */
export function announcedChild(update: SessionUpdate): string | undefined {
  const child = update as { sessionUpdate: string; sessionId?: unknown };
  return child.sessionUpdate === 'subagent_update' && typeof child.sessionId === 'string' ? child.sessionId : undefined;
}

/**
 * Notes the child that `update`, sent on `sessionId`, announces (a later one only patches it);
 * returns the child when this noted it.
 */
export function noteAnnouncement(parents: SubagentParents, sessionId: string, update: SessionUpdate): string | undefined {
  const child = announcedChild(update);
  if (child === undefined || child === sessionId || parents.has(child)) return undefined;
  parents.set(child, sessionId);
  return child;
}

/** The children a client may cancel: their `subagent_update`s gave `capabilities.cancel` last. */
export type CancellableChildren = Set<string>;

/**
 * Notes what a `subagent_update` says of its child's cancel, with ACP's patch semantics: an
 * update without `capabilities` leaves it as it was; `capabilities` without `cancel`, or null,
 * takes it away (ACP: a client cancels a child's work only when the child advertises it).
 */
export function noteChildCapabilities(cancellable: CancellableChildren, update: SessionUpdate): void {
  const child = announcedChild(update);
  if (child === undefined || !('capabilities' in update)) return;
  const cancel = (update as { capabilities?: { cancel?: unknown } | null }).capabilities?.cancel;
  if (typeof cancel === 'object' && cancel !== null) cancellable.add(child);
  else cancellable.delete(child);
}

/** The top session `sessionId` belongs to: itself when it is no announced child. */
export function topSessionOf(parents: SubagentParents, sessionId: string): string {
  // Most sessions have no parent: no walk (this is on every update's path).
  if (!parents.has(sessionId)) return sessionId;
  let id = sessionId;
  const seen = new Set([id]);
  for (let parent = parents.get(id); parent !== undefined && !seen.has(parent); parent = parents.get(id)) {
    seen.add(parent);
    id = parent;
  }
  return id;
}

/** Forgets a session's children and theirs (and the session, when it is a child). */
export function forgetChildren(parents: SubagentParents, sessionId: string): void {
  parents.delete(sessionId);
  for (const [child, parent] of [...parents]) if (parent === sessionId && parents.has(child)) forgetChildren(parents, child);
}

/** A child's update as its top parent carries it: tagged with the child's id (`SUBAGENT_META_KEY`). */
export function childUpdate(childId: string, update: SessionUpdate): SessionUpdate {
  const meta = (update as { _meta?: Record<string, unknown> | null })._meta ?? {};
  return { ...update, _meta: { ...meta, [SUBAGENT_META_KEY]: childId } } as SessionUpdate;
}

/** The child an update was tagged for by {@link childUpdate}, else `undefined`. */
export function taggedChild(update: SessionUpdate): string | undefined {
  const child = (update as { _meta?: Record<string, unknown> | null })._meta?.[SUBAGENT_META_KEY];
  return typeof child === 'string' ? child : undefined;
}

/** A tagged update without its tag (`_meta` dropped when nothing else is in it). */
export function untagged(update: SessionUpdate): SessionUpdate {
  const { [SUBAGENT_META_KEY]: _tag, ...rest } = (update as { _meta?: Record<string, unknown> | null })._meta ?? {};
  const copy = { ...update } as { _meta?: unknown };
  if (Object.keys(rest).length > 0) copy._meta = rest;
  else delete copy._meta;
  return copy as SessionUpdate;
}

/**
 * What a record of its top parent's journal shows a cursor on the child `childId` (a replay of
 * the child alone): the child's own updates, untagged; nothing of the parent's or another child's.
 */
export function childRecordUpdates(childId: string, record: JournalRecord): SessionUpdate[] {
  if (record.entry.kind !== 'update' || taggedChild(record.entry.update) !== childId) return [];
  return [untagged(record.entry.update)];
}

/** `update` of `sessionId` as the top session carries it: that session's id, and the update tagged when it is a child's. */
export function carried(parents: SubagentParents, sessionId: string, update: SessionUpdate): { readonly sessionId: string; readonly update: SessionUpdate } {
  const top = topSessionOf(parents, sessionId);
  return top === sessionId ? { sessionId, update } : { sessionId: top, update: childUpdate(sessionId, update) };
}
