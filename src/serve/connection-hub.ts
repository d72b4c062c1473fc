/**
 * The connection hub: ONE host agent (its sessions, agents, journal) served to any number of
 * connections that come and go (`warden serve`). Each connection has its own agent server
 * (initialize, gating, request ids, backpressure) whose handler is a connection agent
 * (connection-agent.ts) standing for this hub; the hub is the host agent's only "editor",
 * always there, so sessions outlive every connection.
 *
 * - **Cursors per connection**: each connection reads each session it attached through its
 *   own cursor over the journal (src/session/subscriber.ts), paused by its own delivery gate:
 *   a slow client pauses only itself. `session/load` replays from the start; `session/resume`
 *   with `_meta["acp-warden/after"]` = the last `seq` the client saw replays exactly what came
 *   after it; then the live stream. The replay is the hub's, per connection: a session the host
 *   agent runs now is attached and answered here at once (its current modes and config, what
 *   the host agent would answer); only a session that is not running (only in the journal, or
 *   being opened or closed) is asked of the host agent (`session/resume`) first.
 * - **Roles** (session-roles.ts): one controller per session may prompt, cancel, answer the
 *   agent's requests, set mode and config, close; observers receive everything, including the
 *   controller's prompts and each turn's end (a turn's entries handed on as observed, each
 *   connection's server rendering them in its client's ACP version: v1 `turnEndUpdate`, v2
 *   `user_message` / `state_update`); control passes when the controller leaves, or by
 *   `_acp-warden/take_control`. A connection speaks v1 or v2, as its client negotiated.
 * - **Detach**: a connection that closes leaves its sessions running; the agent's requests of a
 *   session without a controller follow the unattended policy (unattended-policy.ts); a session
 *   without any connection for the idle timeout is closed on its agent (the journal keeps it;
 *   the next attach restores it).
 *
 * This file is the actor (its start, its events, its stop); its parts, one concept a file:
 * hub-live.ts (options, live record, helpers), hub-connections.ts (connections coming and
 * going), hub-clients.ts (what clients send), hub-host-output.ts (what the host agent says),
 * hub-attach.ts (attaching sessions, those another host owns), hub-client-calls.ts (the
 * agent's requests to a client), hub-idle.ts (idle sessions, takeover), hub-listing.ts (what
 * the hub tells of itself).
 */
import type { ActorLogic, ActorSystem } from 'xstate';
import { createActor } from 'xstate';
import { nanoid } from 'nanoid';
import type { AgentHandlerOutput } from '../protocol/native-agent.js';
import { AGENT_METHODS } from '../protocol/methods.js';
import { hostJournalOf } from '../journal/host-journal.js';
import type { HubEvent } from './hub-events.js';
import { denied } from './unattended-policy.js';
import { type HubInput, type HubLive, type HubSnapshot, type HubScope, lives, daemonContext } from './hub-live.js';
import { answerHost } from './hub-client-calls.js';
import { idle, takeOver } from './hub-idle.js';
import { summary } from './hub-listing.js';
import { connect, disconnect } from './hub-connections.js';
import { onClientEvent } from './hub-clients.js';
import { onHostOutput } from './hub-host-output.js';

export { AFTER_META_KEY, HUB_METHODS, defaultIdleTimeoutMs, type HubContext, type HubInput, type HubOptions, type HubSessionInfo } from './hub-live.js';
export { hostAgentOfHub, hubConnections, hubDrained, hubSessions } from './hub-listing.js';
export { routeClientEvent } from './hub-clients.js';

/** Actor logic of the hub (see the module's doc). */
export const connectionHubLogic = {
  config: { name: 'connectionHub' },
  getInitialSnapshot(scope: HubScope, input: HubInput): HubSnapshot {
    const host = createActor(input.host.logic, { parent: scope.self, id: 'agent', input: input.host.input });
    const live: HubLive = {
      scope,
      input,
      journal: hostJournalOf(input.journal),
      host,
      subscription: host.on('*', (output: AgentHandlerOutput) => onHostOutput(live, output)),
      connections: new Map(),
      sessions: new Map(),
      requests: new Map(),
      requestKeys: new Map(),
      calls: new Map(),
      callKeys: new Map(),
      initialize: undefined,
      initializeWaiting: [],
      nextKey: 1,
      keyNonce: nanoid(8),
      promptsInFlight: 0,
      subagents: false,
      children: new Map(),
      drained: [],
    };
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, context: summary(live) };
  },
  start(_snapshot: HubSnapshot, scope: HubScope): void {
    const live = lives.get(scope.self) as HubLive;
    live.host.start();
    if (live.input.host.delegateInitialize) {
      live.requests.set('init', { kind: 'initialize' });
      live.host.send({ type: 'initialize', requestId: 'init', method: AGENT_METHODS.initialize, params: { protocolVersion: daemonContext.protocolVersion, clientCapabilities: daemonContext.clientCapabilities, clientInfo: daemonContext.clientInfo }, context: daemonContext });
    } else {
      live.initialize = { result: undefined };
      live.host.send({ type: 'initialized', context: daemonContext });
    }
  },
  transition(snapshot: HubSnapshot, event: HubEvent | { readonly type: `xstate.${string}` }, scope: HubScope): HubSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as HubLive;
    switch (event.type) {
      case 'hub.connect':
        connect(live, event as Extract<HubEvent, { type: 'hub.connect' }>);
        break;
      case 'hub.disconnect':
        disconnect(live, (event as Extract<HubEvent, { type: 'hub.disconnect' }>).connectionId);
        break;
      case 'hub.client': {
        const { connectionId, event: clientEvent } = event as Extract<HubEvent, { type: 'hub.client' }>;
        const connection = live.connections.get(connectionId);
        if (connection) onClientEvent(live, connection, clientEvent);
        break;
      }
      case 'hub.takeover':
        takeOver(live, event as Extract<HubEvent, { type: 'hub.takeover' }>);
        break;
      case 'hub.continue':
        (event as Extract<HubEvent, { type: 'hub.continue' }>).run();
        break;
      case 'hub.step': {
        const { connectionId, sessionId } = event as Extract<HubEvent, { type: 'hub.step' }>;
        live.connections.get(connectionId)?.subscriber.step(sessionId);
        break;
      }
      case 'hub.idle':
        idle(live, (event as Extract<HubEvent, { type: 'hub.idle' }>).sessionId);
        break;
      case 'hub.unattended': {
        const call = live.calls.get((event as Extract<HubEvent, { type: 'hub.unattended' }>).key);
        if (call?.waiting) answerHost(live, call, { type: 'client.response', key: call.key, result: denied(call.params) });
        break;
      }
      case 'xstate.stop':
        live.subscription.unsubscribe();
        for (const connection of live.connections.values()) {
          connection.subscriber.close();
          connection.forwarding?.close();
        }
        void live.input.routing?.close().catch(() => undefined);
        if (live.host.getSnapshot().status === 'active') scope.stopChild(live.host);
        for (const resolve of live.drained.splice(0)) resolve();
        return { ...snapshot, status: 'stopped', context: summary(live) } as HubSnapshot;
      default:
        break;
    }
    return { ...snapshot, context: summary(live) };
  },
  getPersistedSnapshot(snapshot: HubSnapshot): HubSnapshot {
    return snapshot;
  },
} as unknown as ActorLogic<HubSnapshot, HubEvent, HubInput, ActorSystem<any>>;
