/**
 * The passthrough's direct line to one session (`NativeAgent.routeSession`): a prompt of an
 * open session, while the agent is ready and nothing waits for it, goes from the host straight
 * to the agent's ACP client (its line written at once), and the passthrough machine is told
 * after the write (`prompt.forwarded`: the turn's bookkeeping, for the watchdog and the
 * answer). Anything else, or a prompt while the agent starts, restarts, re-attaches or was
 * given up, goes through the machine as before (`send` answers `false`), which queues, defers
 * or refuses it in order. The session's updates come the other way as directly
 * (`watchUpdates`, update-route.ts).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { AnyActorRef } from 'xstate';
import { carried } from '../../session/subagent-tree.js';
import type { AgentHandlerEvent, AgentRequestEvent, SessionRoute } from '../../protocol/native-agent.js';
import type { PassthroughContext, RequestSettled } from './context.js';
import { handlesOf } from './handles.js';
import { forwardRequest } from './requests.js';
import { watchSessionUpdates } from './update-route.js';

type PassthroughSnapshot = { status: string; context: PassthroughContext; matches(state: string): boolean };

/** Whether the machine would forward `prompt` at once, as its `ready` state does: then it may go straight to the agent. */
function forwardsAtOnce(agent: AnyActorRef, sessionId: string): boolean {
  const snapshot = agent.getSnapshot() as PassthroughSnapshot;
  return snapshot.status === 'active' && snapshot.matches('ready') && snapshot.context.waiting.length === 0 && sessionId in snapshot.context.sessions && handlesOf(agent).client !== undefined;
}

/** A host's line to session `sessionId` of the passthrough `agent`: its prompts go straight to the agent's ACP client. */
export function passthroughSessionRoute(agent: AnyActorRef, sessionId: string): SessionRoute {
  return {
    send(event: AgentHandlerEvent) {
      if (event.type !== 'session.prompt') return false;
      const request = event as AgentRequestEvent;
      if (request.params.sessionId !== sessionId || !forwardsAtOnce(agent, sessionId)) return false;
      const active = () => agent.getSnapshot().status === 'active';
      forwardRequest(agent, { type: 'request.forward', request, agentCloses: false }, (settled: RequestSettled) => agent.send(settled), () => !active());
      // Written: now the machine counts it in flight and starts the session's turn afresh.
      agent.send({ type: 'prompt.forwarded', sessionId, request });
      return true;
    },
    // The session's updates go from the agent's client straight to the host while the passthrough is ready.
    watchUpdates: watchSessionUpdates(agent, sessionId),
    // The agent's subagent children, as its updates announced them (update-route.ts).
    carried: (id: string, update: SessionUpdate) => carried(handlesOf(agent).subagents, id, update),
  };
}
