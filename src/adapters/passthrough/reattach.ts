/**
 * Bringing the agent back after a restart: `initialize` again (with the editor's client
 * capabilities), then each open session re-attached, one after the other, with
 * `session/resume`, or `session/load` with its replay drained by `_acp-warden/drain`
 * round trips (Gemini goes on replaying after its answer). Promise actors invoked by the
 * passthrough machine's recovering states; a rejection with `peer_lost` means the new
 * process died too (its restart starts the recovery again).
 */
import type { InitializeResponse } from '@agentclientprotocol/sdk';
import { fromPromise, type AnyActorRef } from 'xstate';
import { drainReplay, initialize, loadSession, resumeSession } from '../../acp/agent-client.js';
import { toRpcError } from '../../jsonrpc/rpc-error.js';
import type { OpenSession } from './context.js';
import { handlesOf } from './handles.js';
import { clientOf } from './requests.js';

/** `initialize` of the agent process now running. */
export const initializeLogic = fromPromise<InitializeResponse, { readonly owner: AnyActorRef }>(({ input: { owner } }) => initialize(clientOf(owner)));

/** What re-attaching one session needs. */
export interface ReattachInput {
  readonly owner: AnyActorRef;
  readonly sessionId: string;
  readonly session: OpenSession;
  /** What the restarted agent answered to `initialize`. */
  readonly agent: InitializeResponse;
}

/** Re-attaches one session to the restarted agent. */
export const reattachLogic = fromPromise<void, ReattachInput>(async ({ input: { owner, sessionId, session, agent } }) => {
  const client = clientOf(owner);
  const caps = agent.agentCapabilities ?? {};
  const params = {
    sessionId,
    cwd: session.cwd,
    mcpServers: handlesOf(owner).mcpServers.get(sessionId) ?? [],
    ...(session.additionalDirectories ? { additionalDirectories: [...session.additionalDirectories] } : {}),
  };
  if (caps.sessionCapabilities?.resume) {
    await resumeSession(client, params);
    return;
  }
  if (!caps.loadSession) throw new Error('the agent offers neither session/resume nor session/load');
  await loadSession(client, params);
  // Its replay may go on after the answer: hidden until it is over, and what waits (the
  // next prompt) runs only then.
  await drainReplay(client, sessionId);
});

/** Whether a recovery step failed because the agent process died (again). */
export const isAgentLost = (error: unknown) => toRpcError(error).failure === 'peer_lost';
