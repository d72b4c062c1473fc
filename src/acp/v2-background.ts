/**
 * Background work as a v2 editor reads it: `background` on every `state_update` warden sends
 * it (a complete snapshot; ACP v2, "Background Work"). The edge derives it from the updates it
 * relays, so it lists only what the editor was told of: a terminal the agent announced
 * (`terminal_update`) that has not reported its `exitStatus`, and a tool call not final
 * (`pending` / `in_progress`), each of a turn that ended (the running turn's own work is its
 * foreground). Work ends when its update says so (the editor gets that update before the snapshot that drops
 * it, as v2 asks); a turn warden cut (the agent crashed or hung, the host was lost) takes the
 * session's work with it: none of it runs any more.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { hasExited, isFinalStatus } from './v2-cancellable.js';

/** A session's open work: each tool call and terminal with the turn (its prompt's seq) it came in. */
export interface OpenWork {
  readonly toolCalls: Map<string, number>;
  readonly terminals: Map<string, number>;
}

/** Open work by session, for one v2 connection. */
export type Work = Map<string, OpenWork>;

/**
 * Notes what `update` (as the core relays it: v1's shapes, v2's own kinds as they came) says of
 * `sessionId`'s work, in turn `turn`. Whether work ended (the snapshot changed).
 */
export function noteWork(work: Work, sessionId: string, update: SessionUpdate, turn: number): boolean {
  const patch = update as { sessionUpdate: string; toolCallId?: string; terminalId?: string; status?: string | null; exitStatus?: unknown };
  let open = work.get(sessionId);
  if (patch.sessionUpdate === 'tool_call' || patch.sessionUpdate === 'tool_call_update') {
    if (typeof patch.toolCallId !== 'string') return false;
    if (isFinalStatus(patch.status)) return open?.toolCalls.delete(patch.toolCallId) ?? false;
    if (!open) work.set(sessionId, (open = { toolCalls: new Map(), terminals: new Map() }));
    if (!open.toolCalls.has(patch.toolCallId)) open.toolCalls.set(patch.toolCallId, turn);
    return false;
  }
  if (patch.sessionUpdate === 'terminal_update') {
    if (typeof patch.terminalId !== 'string') return false;
    if (hasExited(patch.exitStatus)) return open?.terminals.delete(patch.terminalId) ?? false;
    if (!open) work.set(sessionId, (open = { toolCalls: new Map(), terminals: new Map() }));
    if (!open.terminals.has(patch.terminalId)) open.terminals.set(patch.terminalId, turn);
  }
  return false;
}

/** A turn of `sessionId` was cut by warden: its work is gone with the agent. */
export function workLost(work: Work, sessionId: string): void {
  work.delete(sessionId);
}

/**
 * `sessionId`'s background work now: its open terminals and tool calls of turns other than
 * `running` (the turn under way, if one is: its own work is its foreground).
 */
export function backgroundOf(work: Work, sessionId: string, running: number | undefined): V2.BackgroundWork[] {
  const open = work.get(sessionId);
  if (!open) return [];
  const terminals = [...open.terminals].filter(([, turn]) => turn !== running).map(([terminalId]) => ({ type: 'terminal' as const, terminalId }));
  const toolCalls = [...open.toolCalls].filter(([, turn]) => turn !== running).map(([toolCallId]) => ({ type: 'tool_call' as const, toolCallId }));
  return [...terminals, ...toolCalls];
}

/** `state` (a `state_update`) with the session's background work. */
export function withBackground(state: V2.SessionUpdate, background: V2.BackgroundWork[]): V2.SessionUpdate {
  return { ...state, background } as V2.SessionUpdate;
}
