/**
 * A hub's idle sessions (no connection for the idle timeout, or past the cap of live sessions:
 * closed on their agent, the journal keeps them) and the sessions it takes over from a lost host.
 */
import { AGENT_METHODS } from '../protocol/methods.js';
import { runningSessionAgent, TAKEOVER_META_KEY } from '../host/host-agent.js';
import type { HubEvent } from './hub-events.js';
import { attached } from './session-roles.js';
import { defaultIdleTimeoutMs, type HubSession, type HubLive, daemonContext, hostKey } from './hub-live.js';

export function armIdle(live: HubLive, session: HubSession): void {
  // Free now (nobody attached, or its turn over): past the cap of live sessions, the least recently used go first.
  hibernateOverCap(live);
  if (!live.sessions.has(session.sessionId)) return;
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
  closeDetached(live, session);
}

/**
 * Closes a session nobody is attached to and no turn runs in, on its agent (its process stops
 * once no other session of it is open): the journal keeps it, the next attach resumes it. The
 * idle timeout's end and a hibernation (hibernateOverCap below) both come here.
 */
export function closeDetached(live: HubLive, session: HubSession): void {
  const { sessionId } = session;
  disarmIdle(live, session);
  live.sessions.delete(sessionId);
  const key = hostKey(live);
  live.requests.set(key, { kind: 'idleClose', sessionId, agent: runningSessionAgent(live.host, sessionId) });
  live.host.send({ type: 'session.close', requestId: key, method: AGENT_METHODS.session_close, params: { sessionId }, context: daemonContext });
}

/**
 * Hibernation: the cap on sessions a hub keeps live on their agents (`maxLiveSessions`, `warden serve
 * --max-live-agents`). Past it, the least recently used sessions that nobody is attached to and
 * no turn runs in are hibernated, as OTP hibernates an idle process: closed on their agent (a
 * CLI that runs one process per session, Claude Code's or Codex's, stops; a shared ACP agent
 * process stops with its last session), kept in the journal, and resumed by the next attach
 * (`session/load` or `session/resume`), which starts their agent again. An attached or busy
 * session is never hibernated: the cap is then exceeded until one is free, and checked again
 * whenever a session opens, ends a turn or loses its last connection. Returns the sessions
 * hibernated now (most often none), least recently used first.
 */
export function hibernateOverCap(live: HubLive): HubSession[] {
  const cap = live.input.maxLiveSessions ?? 0;
  if (cap <= 0) return [];
  const running = [...live.sessions.values()].filter((session) => runningSessionAgent(live.host, session.sessionId) !== undefined);
  const over = running.length - cap;
  if (over <= 0) return [];
  const free = running
    .filter((session) => session.prompts === 0 && attached(session.roles).length === 0)
    .sort((a, b) => (a.lastActivity ?? 0) - (b.lastActivity ?? 0))
    .slice(0, over);
  for (const session of free) closeDetached(live, session);
  return free;
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
