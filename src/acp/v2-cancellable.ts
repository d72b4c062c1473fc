/**
 * Which work of a v2 agent's session its client may cancel now: the tool calls and terminals
 * that advertise `capabilities.cancel` (ACP v2, "Cancelling Tool Calls" and "Cancelling
 * Terminals"), from the updates the agent sent. A `capabilities` patch replaces the previous
 * value (`null` clears it; omitted leaves it); a tool call that reaches a final status, or a
 * terminal that reports its `exitStatus`, is no longer cancellable whatever it advertised.
 * warden forwards `tool_call/cancel` and `terminal/cancel` only for what is listed here, and
 * answers the rest with v2's -32602 itself (agent-client-cancel.ts).
 */
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';

/** The `_meta` key keeping a v2 tool call's `capabilities` in the journal's v1-shaped update. */
export const V2_CAPABILITIES_META_KEY = 'acp-warden/v2Capabilities';

/** A session's cancellable work, by id. */
export interface Cancellable {
  readonly toolCalls: Set<string>;
  readonly terminals: Set<string>;
}

/** Nothing cancellable yet. */
export function cancellable(): Cancellable {
  return { toolCalls: new Set(), terminals: new Set() };
}

const finalStatuses = new Set(['completed', 'failed', 'cancelled']);

/** Whether a tool call's `status` is final (it runs no more). */
export function isFinalStatus(status: unknown): boolean {
  return typeof status === 'string' && finalStatuses.has(status);
}

/** Whether a terminal's `exitStatus` says its command ended. */
export function hasExited(exitStatus: unknown): boolean {
  return typeof exitStatus === 'object' && exitStatus !== null;
}

/** Notes what `update` (a v2 agent's, as it came) says of cancelling a tool call or a terminal. */
export function noteCancellable(state: Cancellable, update: V2.SessionUpdate): void {
  const patch = update as { sessionUpdate: string; toolCallId?: string; terminalId?: string; status?: string | null; exitStatus?: unknown; capabilities?: { cancel?: unknown } | null };
  const [ids, id] = patch.sessionUpdate === 'tool_call_update' ? [state.toolCalls, patch.toolCallId] : patch.sessionUpdate === 'terminal_update' ? [state.terminals, patch.terminalId] : [undefined, undefined];
  if (!ids || typeof id !== 'string') return;
  if (patch.capabilities !== undefined) {
    const cancel = patch.capabilities?.cancel;
    if (typeof cancel === 'object' && cancel !== null) ids.add(id);
    else ids.delete(id);
  }
  const ended = patch.sessionUpdate === 'tool_call_update' ? isFinalStatus(patch.status) : hasExited(patch.exitStatus);
  if (ended) ids.delete(id);
}
