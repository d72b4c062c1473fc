/**
 * The supervisor of a passthrough's agent: the port (the agent process), then the ACP
 * client riding on it, rest_for_one. A child of the passthrough machine (`agent`); the
 * client relays the agent's requests to the editor through the machine (`agent.relay`).
 */
import { agentRestartDefaults } from '../../supervision/agent-restart-defaults.js';
import { capabilitiesForAgent } from '../../acp/subagent-updates.js';
import type { AnyActorLogic, AnyActorRef } from 'xstate';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { agentClientLogic } from '../../acp/agent-client.js';
import { updateSeen } from './update-route.js';
import { portTransport } from '../../jsonrpc/port-transport.js';
import { portLogic, portStopBudgetMs } from '../../port/port.js';
import { isServedRecycle } from '../../port/port-exit.js';
import { whichChildren } from '../../supervision/introspection.js';
import { createSupervisor } from '../../supervision/supervisor.js';
import type { PassthroughContext } from './context.js';
import { handlesOf } from './handles.js';
import { portInputOf } from './options.js';

/** The id of the agent's supervisor among the passthrough's children. */
export const AGENT_SUPERVISOR_ID = 'agent';

/** The agent's supervisor of passthrough `owner`, if it has one. */
export const agentSupervisorOf = (owner: AnyActorRef): AnyActorRef | undefined => (owner.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> }).children?.[AGENT_SUPERVISOR_ID];

/** The port or the client under `supervisor`. */
export const childOf = (supervisor: AnyActorRef, id: 'port' | 'client'): AnyActorRef | undefined => whichChildren(supervisor).find((row) => row.id === id)?.ref;

let nextRelay = 1;

/** A request of the agent to the editor: answered when the editor answers (`client.response` / `client.error` into the machine). */
function relayThrough(owner: AnyActorRef) {
  return (method: string, params: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const key = `relay-${nextRelay++}`;
      const handles = handlesOf(owner);
      handles.relays.set(key, { resolve, reject });
      handles.flushUpdates(); // the updates before it first (a tool call before its permission request)
      owner.send({ type: 'agent.relay', key, method, params });
    });
}

/** The supervisor logic for passthrough `owner`'s agent. */
export function agentSupervisorLogic(owner: AnyActorRef): AnyActorLogic {
  const { options } = handlesOf(owner);
  const restart = options.restart ?? {};
  const relay = relayThrough(owner);
  return createSupervisor({
    name: `${options.name} agent`,
    strategy: 'rest_for_one',
    intensity: restart.intensity ?? agentRestartDefaults.intensity,
    period: restart.period ?? agentRestartDefaults.period,
    children: [
      // A soft memory recycle after a served turn is planned: not counted towards the intensity.
      { id: 'port', start: { logic: portLogic, inputFor: () => portInputOf(options) }, backoff: restart.backoff ?? agentRestartDefaults.backoff, shutdown: portStopBudgetMs(options.port?.shutdown), uncounted: isServedRecycle },
      {
        id: 'client',
        // Transient: when the agent process dies, the client ends normally (its peer is
        // gone) and waits; the port's restart restarts it with the new process (rest_for_one).
        restart: 'transient',
        start: {
          logic: agentClientLogic,
          inputFor: () => {
            const editor = (owner.getSnapshot() as { context: PassthroughContext }).context.editor;
            return {
              transport: portTransport(childOf(agentSupervisorOf(owner) as AnyActorRef, 'port') as AnyActorRef),
              handler: { relay, capabilities: capabilitiesForAgent(editor) },
              // Each update is seen here first: its tool calls followed, and passed to the machine unless the host takes it from the client (update-route.ts).
              onUpdate: (sessionId: string, update: SessionUpdate) => updateSeen(owner, sessionId, update),
              ...(editor?.clientInfo ? { clientInfo: editor.clientInfo } : {}),
              ...(options.protocol ? { protocol: options.protocol } : {}),
            };
          },
        },
        shutdown: 'brutal_kill',
      },
    ],
  });
}
