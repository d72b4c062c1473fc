/**
 * ACP v2's cancels of one piece of a session's work (`toolCall.cancel`, `terminal.cancel`),
 * from the editor to the session's agent. An agent that serves them (`NativeAgent.cancelsWork`:
 * a passthrough asks its agent, src/acp/agent-client-cancel.ts) answers; for any other, the
 * work is not cancellable and the host answers as v2 says: -32602. Neither changes the turn.
 */
import { RpcError } from '../../jsonrpc/rpc-error.js';
import type { AgentRequestEvent } from '../../protocol/native-agent.js';
import { fail } from './delivery.js';
import { innerAgent, sendTo } from './inner-agents.js';
import type { Live } from './live.js';

/** Hands a cancel of one tool call or terminal to the session's agent, or refuses it. */
export function cancelWork(live: Live, request: AgentRequestEvent, sessionId: string | undefined): void {
  const session = sessionId ? live.sessions.get(sessionId) : undefined;
  if (!session || !sessionId) return fail(live, request.requestId, RpcError.resourceNotFound(`session ${sessionId}`, { sessionId }), sessionId);
  const idKey = request.type === 'toolCall.cancel' ? 'toolCallId' : 'terminalId';
  const id = request.params[idKey];
  if (typeof id !== 'string') return fail(live, request.requestId, RpcError.invalidParams(`${idKey} must be a string`), sessionId);
  const inner = innerAgent(live, session.agent);
  if (!inner.agent.cancelsWork) {
    const what = request.type === 'toolCall.cancel' ? `tool call ${id}` : `terminal ${id}`;
    return fail(live, request.requestId, RpcError.invalidParams(`${what} is not cancellable: ${session.agent} cancels whole turns only (session/cancel)`, { [idKey]: id }), sessionId);
  }
  live.pending.set(request.requestId, { kind: 'other' });
  sendTo(inner, request);
}
