/**
 * One connection's handler on a hub (connection-hub.ts): the native agent an agent server
 * serves to one WebSocket client (or any transport), standing for the hub's shared host agent.
 * It forwards what its client sends to the hub, tagged with its connection id, so the agent
 * server keeps the protocol rules per connection (initialize, gating, request ids,
 * backpressure) while the sessions live in the hub. A session's prompts and cancels take its
 * line instead ({@link connectionSessionRoute}): the hub routes them at once. What the hub says
 * to the client (answers, updates from its cursors, the agent's requests) goes down the
 * server's own line for its handler's outputs (acp/server-answers.ts `outputLineOf`), which
 * this agent hands the hub when it connects: neither this agent nor the hub's mailbox is on an
 * update's way to the client. Stopping it (the connection closed) only detaches the
 * connection: its sessions go on.
 */
import type { ActorLogic, ActorScope, ActorSystem, AnyActorRef, Snapshot } from 'xstate';
import type { AgentHandlerEvent, AgentHandlerOutput, SessionRoute } from '../protocol/native-agent.js';
import { routeClientEvent } from './connection-hub.js';
import { deliveryGateOf } from '../session/subscriber.js';
import { outputLineOf } from '../acp/server-answers.js';
import type { HubEvent } from './hub-events.js';

/** What a connection agent runs on. */
export interface ConnectionAgentInput {
  readonly hub: AnyActorRef;
  readonly connectionId: string;
  /** Who is on the other end (the peer address), for `warden sessions` and the live view. */
  readonly peer: string | undefined;
}

/** What a connection agent receives: its client's events (the hub's outputs for its client go down its server's line). */
export type ConnectionAgentEvent = AgentHandlerEvent | { readonly type: `xstate.${string}` };

type ConnectionSnapshot = Snapshot<undefined> & { readonly context: { readonly connectionId: string } };
type Scope = ActorScope<ConnectionSnapshot, ConnectionAgentEvent, ActorSystem<any>, AgentHandlerOutput>;

const inputs = new WeakMap<AnyActorRef, ConnectionAgentInput>();

/**
 * A connection's line for its sessions' prompts and cancels (`NativeAgent.routeSession`): the
 * hub routes each at once (connection-hub.ts `routeClientEvent`), so that neither this agent
 * nor the hub's mailbox is on a prompt's path.
 */
export function connectionSessionRoute(agent: AnyActorRef, _sessionId: string): SessionRoute {
  return {
    send(event) {
      const input = inputs.get(agent);
      return input !== undefined && routeClientEvent(input.hub, input.connectionId, event);
    },
  };
}

/** Actor logic of a connection agent (see the module's doc). */
export const connectionAgentLogic = {
  config: { name: 'connectionAgent' },
  getInitialSnapshot(scope: Scope, input: ConnectionAgentInput): ConnectionSnapshot {
    inputs.set(scope.self, input);
    return { status: 'active', output: undefined, error: undefined, context: { connectionId: input.connectionId } };
  },
  start(_snapshot: ConnectionSnapshot, scope: Scope): void {
    const input = inputs.get(scope.self) as ConnectionAgentInput;
    const deliver = outputLineOf(scope.self);
    if (!deliver) throw new Error('A connection agent runs as the handler of an agent server (agentServerLogic), whose line takes what the hub says to its client: serve it with one.');
    // The agent server closes this gate while its transport is backed up: the hub's cursors for this connection then pause.
    input.hub.send({ type: 'hub.connect', connectionId: input.connectionId, deliver, gate: deliveryGateOf(scope.system), peer: input.peer } satisfies HubEvent);
  },
  transition(snapshot: ConnectionSnapshot, event: ConnectionAgentEvent, scope: Scope): ConnectionSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const input = inputs.get(scope.self) as ConnectionAgentInput;
    if (event.type === 'xstate.stop') {
      input.hub.send({ type: 'hub.disconnect', connectionId: input.connectionId } satisfies HubEvent);
      return { ...snapshot, status: 'stopped' } as ConnectionSnapshot;
    }
    if (event.type.startsWith('xstate.')) return snapshot;
    input.hub.send({ type: 'hub.client', connectionId: input.connectionId, event: event as AgentHandlerEvent } satisfies HubEvent);
    return snapshot;
  },
  getPersistedSnapshot(snapshot: ConnectionSnapshot): ConnectionSnapshot {
    return snapshot;
  },
} as unknown as ActorLogic<ConnectionSnapshot, ConnectionAgentEvent, ConnectionAgentInput, ActorSystem<any>, AgentHandlerOutput>;
