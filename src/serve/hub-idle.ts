/**
 * A hub's idle sessions (no connection for the idle timeout: closed on their agent, the journal
 * keeps them) and the sessions it takes over from a lost host.
 */
import { AGENT_METHODS } from '../protocol/methods.js';
import { runningSessionAgent, TAKEOVER_META_KEY } from '../host/host-agent.js';
import type { HubEvent } from './hub-events.js';
import { attached } from './session-roles.js';
import { defaultIdleTimeoutMs, type HubSession, type HubLive, daemonContext, hostKey } from './hub-live.js';

export function armIdle(live: HubLive, session: HubSession): void {
  const timeout = live.input.idleTimeoutMs ?? defaultIdleTimeoutMs;
  if (timeout <= 0 || session.idleArmed || attached(session.roles).length > 0) return;
  session.idleArmed = true;
  live.scope.system.scheduler.schedule(live.scope.self, live.scope.self, { type: 'hub.idle', sessionId: session.sessionId } satisfies HubEvent as never, timeout, `idle:${session.sessionId}`);
}

export function disarmIdle(live: HubLive, session: HubSession): void {
  if (!session.idleArmed) return;
  session.idleArmed = false;
  live.scope.system.scheduler.cancel(live.scope.self, `idle:${session.sessionId}`);
}

export function idle(live: HubLive, sessionId: string): void {
  const session = live.sessions.get(sessionId);
  if (!session) return;
  session.idleArmed = false;
  if (attached(session.roles).length > 0) return;
  // A turn still runs: it may go on; the session is idle once it ended and the timeout passed again.
  if (session.prompts > 0) return armIdle(live, session);
  live.sessions.delete(sessionId);
  const key = hostKey(live);
  live.requests.set(key, { kind: 'idleClose', sessionId, agent: runningSessionAgent(live.host, sessionId) });
  live.host.send({ type: 'session.close', requestId: key, method: AGENT_METHODS.session_close, params: { sessionId }, context: daemonContext });
}

// Listing

/** Claims and resumes a session whose host was lost, unless this hub has it (or is taking it) already. */
export function takeOver(live: HubLive, event: Extract<HubEvent, { type: 'hub.takeover' }>): void {
  const { sessionId, previousOwner, handedOver } = event;
  if (live.sessions.has(sessionId) || runningSessionAgent(live.host, sessionId) !== undefined) return;
  for (const request of live.requests.values()) if (request.kind === 'takeover' && request.sessionId === sessionId) return;
  const key = hostKey(live);
  live.requests.set(key, { kind: 'takeover', sessionId });
  live.host.send({ type: 'session.resume', requestId: key, method: AGENT_METHODS.session_resume, params: { sessionId, mcpServers: [], _meta: { [TAKEOVER_META_KEY]: { previousOwner, handedOver } } }, context: daemonContext });
}
