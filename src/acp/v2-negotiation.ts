/**
 * Which ACP version an editor's `initialize` opens, by the rules of the SDK's protocol router
 * (`agentProtocolRouter`, SDK 2.4.0), for an endpoint that offers v1 and v2: a request for 2
 * or later opens v2 (its id must be a string or an integer: v2 ids are never null or
 * fractional), a request for 1 opens v1, anything lower is refused with -32022 and the
 * versions offered. An endpoint that offers only v1 keeps warden's legacy answer (always 1),
 * as the router does for a v1-only agent. A v2 connection may repeat `initialize`, for 2 or
 * later only (dist/v2/acp.js: "a repeated initialize must request protocol version 2 or later"),
 * and only before any other request (src/acp/editor-requests.ts refuses a later one as the
 * router does: "ACP v2 initialize must not be repeated after other requests").
 */
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { V2_PROTOCOL_VERSION } from '../protocol/methods-v2.js';

/** ACP's code for a protocol version the endpoint does not speak (data `{ requested, supported }`). */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** What an `initialize` opens: today's v1 path (`legacy`: the v1 schema decides, the version is answered as before), v2, or a refusal. */
export type Negotiation = { readonly kind: 'legacy' } | { readonly kind: 'v2' } | { readonly kind: 'refused'; readonly error: RpcError };

/**
 * The version an `initialize` with `requested` (as sent, unchecked) and request id `id` opens on
 * an endpoint that offers `offered`; `current`: the version a previous `initialize` of this
 * connection opened, if any.
 */
export function negotiate(requested: unknown, id: JsonRpcId, offered: readonly number[], current: number | undefined): Negotiation {
  if (!offered.includes(V2_PROTOCOL_VERSION)) return { kind: 'legacy' };
  // Not a protocol version at all: the v1 schema words the refusal (-32602), as before.
  if (typeof requested !== 'number' || !Number.isInteger(requested) || requested < 0 || requested > 0xffff) return { kind: 'legacy' };
  if (current === V2_PROTOCOL_VERSION && requested < V2_PROTOCOL_VERSION) {
    return { kind: 'refused', error: RpcError.invalidRequest(`a repeated initialize must request protocol version ${V2_PROTOCOL_VERSION} or later`) };
  }
  if (requested >= V2_PROTOCOL_VERSION) {
    if (typeof id !== 'string' && !Number.isInteger(id)) return { kind: 'refused', error: RpcError.invalidRequest('ACP v2 request IDs must be strings or integers') };
    return { kind: 'v2' };
  }
  if (requested >= 1 && offered.includes(1)) return { kind: 'legacy' };
  const supported = [...offered].sort((a, b) => a - b);
  return { kind: 'refused', error: new RpcError(UNSUPPORTED_PROTOCOL_VERSION, 'Unsupported protocol version', { requested, supported }) };
}
