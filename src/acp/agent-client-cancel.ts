/**
 * ACP v2's cancels of one piece of work, asked of an agent through its client:
 * `tool_call/cancel` and `terminal/cancel`. Sent to a v2 agent only for a tool call or a
 * terminal that advertises `capabilities.cancel` now (v2-cancellable.ts: a client MUST NOT
 * send them otherwise); a terminal warden runs for the agent itself (terminals.ts) is killed
 * here, as `terminal/kill` would. Anything else is answered as v2 says an agent answers a
 * tool call or terminal that is unknown, already final or not cancellable: -32602. A v1 agent
 * has no such methods: only `session/cancel`, which cancels the whole turn.
 */
import type { AnyActorRef } from 'xstate';
import { sendRequest } from '../jsonrpc/connection.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { V2_AGENT_METHODS } from '../protocol/methods-v2.js';
import { liveOf, requireInitialized } from './agent-client-state.js';

/** `tool_call/cancel` of one tool call of `sessionId`: resolves when the agent accepted it (its final status comes as an update). */
export async function cancelToolCall(client: AnyActorRef, sessionId: string, toolCallId: string): Promise<Record<string, unknown>> {
  const live = liveOf(client);
  requireInitialized(live, V2_AGENT_METHODS.tool_call_cancel);
  if (!live.mode.v2) throw RpcError.invalidParams(`tool call ${toolCallId} is not cancellable: the agent speaks ACP v1, which cancels a whole turn (session/cancel), never one tool call`, { toolCallId });
  if (!live.inbound.get(sessionId)?.cancellable.toolCalls.has(toolCallId)) throw RpcError.invalidParams(`tool call ${toolCallId} is unknown, already final, or not cancellable (the agent does not advertise capabilities.cancel on it)`, { toolCallId });
  return ((await sendRequest(live.connection, V2_AGENT_METHODS.tool_call_cancel, { sessionId, toolCallId })) as Record<string, unknown> | null) ?? {};
}

/** `terminal/cancel` of one terminal of `sessionId`: its process stops; the terminal is not released. */
export async function cancelTerminal(client: AnyActorRef, sessionId: string, terminalId: string): Promise<Record<string, unknown>> {
  const live = liveOf(client);
  requireInitialized(live, V2_AGENT_METHODS.terminal_cancel);
  if (live.mode.v2 && live.inbound.get(sessionId)?.cancellable.terminals.has(terminalId)) {
    return ((await sendRequest(live.connection, V2_AGENT_METHODS.terminal_cancel, { sessionId, terminalId })) as Record<string, unknown> | null) ?? {};
  }
  // A terminal warden runs for a v1 agent (its terminal/create): warden stops it itself.
  if (live.terminals.running(sessionId).includes(terminalId)) return live.terminals.kill({ sessionId, terminalId });
  throw RpcError.invalidParams(`terminal ${terminalId} is unknown, has already exited, or is not cancellable`, { terminalId });
}
