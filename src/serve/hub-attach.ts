/**
 * A hub's connections attached to sessions: attaching one (and replaying to it from its cursor),
 * leaving one, and the sessions another host owns (placed there, forwarded there, closed there).
 */
import type { AgentHandlerOutput, AgentRequestEvent } from '../protocol/native-agent.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import type { HubRouting } from '../cluster/forwarding.js';
import type { SessionLocation } from '../cluster/routing-table.js';
import { type PlacementSelf } from '../cluster/placement.js';
import { attach, attached, detach, roleOf } from './session-roles.js';
import { type HubConnection, type HubRequest, type HubLive, laterInHub, forward, sessionRecord, forwardingOf } from './hub-live.js';
import { route, rerouteCalls } from './hub-client-calls.js';
import { armIdle, disarmIdle } from './hub-idle.js';

/** The connection leaves one session here, as at its disconnect: its role passes on, what the agent asked it goes to whoever controls the session now. */
export function leaveSession(live: HubLive, connectionId: string, sessionId: string): void {
  const session = live.sessions.get(sessionId);
  if (!session || !roleOf(session.roles, connectionId)) return;
  session.roles = detach(session.roles, connectionId).roles;
  if (attached(session.roles).length === 0) armIdle(live, session);
  rerouteCalls(live, sessionId, connectionId);
}

export function attachConnection(live: HubLive, connection: HubConnection, sessionId: string): void {
  const session = sessionRecord(live, sessionId);
  const hadController = session.roles.controller !== undefined;
  session.roles = attach(session.roles, connection.id).roles;
  session.lastActivity = Date.now();
  disarmIdle(live, session);
  // A controller again: what the agent asked meanwhile reaches it.
  if (!hadController && session.roles.controller === connection.id) {
    for (const call of live.calls.values()) if (call.sessionId === sessionId && !call.sentTo) route(live, call);
  }
}

/**
 * Attaches the connection to the session and answers `answer` (the setup a load or resume
 * answers): at once without a replay (`after` < 0: a resume without a cursor), else after the
 * journal's entries after `after` (0: the whole history), then the live stream.
 */
export function attachAndReplay(live: HubLive, connection: HubConnection, attachment: Pick<Extract<HubRequest, { kind: 'attach' }>, 'requestId' | 'sessionId' | 'after'>, answer: Extract<AgentHandlerOutput, { type: 'acp.respond' }>): void {
  const { requestId, sessionId, after } = attachment;
  attachConnection(live, connection, sessionId);
  if (after < 0) return connection.subscriber.deliver(sessionId, answer);
  connection.subscriber.replay(sessionId, {
    after,
    // The history first, then the answer, then the live stream.
    done: (seq) => {
      connection.deliver({ type: 'acp.replayComplete', requestId, sessionId, seq });
      connection.deliver(answer);
    },
    failed: (error) => connection.deliver({ type: 'acp.error', requestId, error: RpcError.internalError(`the journal could not be read: ${(error as Error)?.message ?? String(error)}`, { sessionId }).toErrorObject() }),
  });
}

/**
 * Looks `sessionId` up and, in a later turn of the hub, hands the connection (if still there)
 * and the owner to `forward` when a live host that advertised owns it; otherwise (not
 * routable, or the database did not say: the client may try again) answers `refusal`.
 */
export function toOwner(live: HubLive, routing: HubRouting, connectionId: string, sessionId: string, refusal: Extract<AgentHandlerOutput, { type: 'acp.error' }>, forward: (connection: HubConnection, owner: Extract<SessionLocation, { kind: 'remote' }>) => void): void {
  const settle = (location: SessionLocation | undefined) => {
    const connection = live.connections.get(connectionId);
    if (!connection) return; // gone meanwhile: nothing to answer
    if (location?.kind !== 'remote') return connection.deliver(refusal);
    // A v2 client's too: its link carries the core's requests and output, which its own connection renders (src/acp/relay-link.ts).
    forward(connection, location);
  };
  routing.locate(sessionId).then(
    (location) => laterInHub(live, () => settle(location)),
    () => laterInHub(live, () => settle(undefined)),
  );
}

/**
 * A load or resume refused here because another host owns the session (`session_owned`): when
 * that host is live and advertised, the client's own request goes to it over this connection's
 * forwarding, and the session is relayed from then on; otherwise the refusal is the answer.
 */
export function routeAttach(live: HubLive, routing: HubRouting, request: Extract<HubRequest, { kind: 'attach' }>, refusal: Extract<AgentHandlerOutput, { type: 'acp.error' }>): void {
  toOwner(live, routing, request.connectionId, request.sessionId, refusal, (connection, location) => {
    // Attached here before (the session moved away since): it follows the session on its owner only.
    leaveSession(live, connection.id, request.sessionId);
    forwardingOf(routing, connection).attach(request.asked, request.sessionId, location);
  });
}

/**
 * A close (or delete, or `warden sessions --close`) refused here because another host owns the
 * session: when that host is live and advertised, the client's own request goes there, once
 * (the session is not relayed: closing it needs no stream); otherwise the refusal is the answer.
 */
export function routeClose(live: HubLive, routing: HubRouting, request: Extract<HubRequest, { kind: 'close' }>, sessionId: string, refusal: Extract<AgentHandlerOutput, { type: 'acp.error' }>): void {
  toOwner(live, routing, request.connectionId, sessionId, refusal, (connection, owner) => forwardingOf(routing, connection).forwardOnce(request.asked, sessionId, owner));
}

/**
 * A `session/new` on a host of a cluster: placed by the policy (cluster/placement.ts) here, or
 * on the least-loaded live host, where the client's request goes over this connection's
 * forwarding (the session is relayed from then on). The database not answering, or the chosen
 * host not reached, makes the session here: a session refused is worse than a busy host.
 */
export function placeSession(live: HubLive, routing: HubRouting, connection: HubConnection, request: AgentRequestEvent, self: PlacementSelf): void {
  const here = () => {
    if (!live.connections.has(connection.id)) return; // gone meanwhile: nothing to make
    forward(live, connection, request, { kind: 'new', connectionId: connection.id, requestId: request.requestId, sessionId: undefined });
  };
  routing.place(self).then(
    (target) =>
      laterInHub(live, () => {
        if (target.where === 'local') return here();
        if (!live.connections.has(connection.id)) return;
        forwardingOf(routing, connection).place(request, target, () => laterInHub(live, here));
      }),
    () => laterInHub(live, here),
  );
}
