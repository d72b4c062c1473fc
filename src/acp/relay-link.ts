/**
 * A peer host's relay link for an ACP v2 client (docs/cluster.md, "Routing"). A host that
 * forwards a v2 client's session to its owner opens its link as a v1 connection marked
 * `_meta["acp-warden/relay"]: true` in `initialize`, carrying the core's (v1-named) requests
 * the client's own v2 edge made. The owner's connection then does not render for the link
 * what a v1 client would see but sends the core's own output, which the forwarding host hands
 * to its client's connection to render in v2, as for a session of its own:
 *
 * - updates as the journal holds them, with their seq (a subagent child's still tagged, nothing
 *   gated: the client's own server routes and gates them);
 * - what v1 has no message for (`session.turnJournaled`: a prompt's insertion, which v2
 *   acknowledges, and another connection's turn; `session.promptJoined`; `acp.replayComplete`)
 *   as `_acp-warden/relayed` notifications, a request of the link named by its JSON-RPC id.
 *
 * Answers and the agent's requests go as on any link. Only a hub connection
 * (`NativeAgent.servesPeerLinks`) serves the mark; elsewhere it is ignored.
 */
import type { JsonRpcId } from '../jsonrpc/message.js';
import { sendNotification } from '../jsonrpc/connection.js';
import type { AgentHandlerOutput } from '../protocol/native-agent.js';
import { requestOf, type Live } from './server-live.js';

/** The `initialize` `_meta` key a relay link sets (`true`). */
export const RELAY_META_KEY = 'acp-warden/relay';

/** The notification that carries one of the core's outputs over a relay link. */
export const RELAYED_METHOD = '_acp-warden/relayed';

/** The outputs v1 has no message for, sent as they are over a relay link. */
export type RelayedOutput = Extract<AgentHandlerOutput, { type: 'session.turnJournaled' | 'session.promptJoined' | 'acp.replayComplete' }>;

const relayedTypes = new Set<unknown>(['session.turnJournaled', 'session.promptJoined', 'acp.replayComplete']);

/** Whether a v1 `initialize`'s params (as sent) ask for a relay link. */
export function asksForRelay(params: Record<string, unknown>): boolean {
  return (params._meta as Record<string, unknown> | undefined)?.[RELAY_META_KEY] === true;
}

/** On the owner: `output` over the link; a request of the link it names goes as the request's JSON-RPC id. */
export function sendRelayed(live: Live, output: RelayedOutput): void {
  const request = requestOf(live, output.requestId);
  sendNotification(live.connection, RELAYED_METHOD, { output, ...(request ? { rpcId: request.rpcId } : {}) });
}

/**
 * On the forwarding host: the output a {@link RELAYED_METHOD} notification carries, its
 * `requestId` the forwarding's own key for the request the owner named (`keyOf`: the link's
 * key of a request id it sent), else as the owner sent it (another connection's turn);
 * `undefined`: not such an output.
 */
export function relayedOutputOf(params: unknown, keyOf: (id: JsonRpcId) => string | undefined): RelayedOutput | undefined {
  const { output, rpcId } = (params ?? {}) as { output?: RelayedOutput; rpcId?: JsonRpcId };
  if (typeof output !== 'object' || output === null || !relayedTypes.has(output.type) || typeof output.sessionId !== 'string' || typeof output.seq !== 'number') return undefined;
  const key = rpcId === undefined ? undefined : keyOf(rpcId);
  return key === undefined ? output : { ...output, requestId: key };
}
