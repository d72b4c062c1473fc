/**
 * What a hub tells of itself: its sessions (`_acp-warden/sessions`, `warden sessions`), its
 * connections, its host agent, its snapshot's summary, and when it is drained.
 */
import type { AnyActorRef } from 'xstate';
import type { JournalSessionPage } from '../journal/journal.js';
import { callNowOrLater, type CallResult } from '../journal/host-journal.js';
import { runningSessionAgent, sessionMachinesOf } from '../host/host-agent.js';
import { attached, roleOf, type Role } from './session-roles.js';
import { type HubClientInfo, type HubSessionInfo, type HubLive, type HubContext, lives, laterInHub } from './hub-live.js';

/**
 * The hub's snapshot context, made at every transition: the counts, and the clients walked
 * only when read (the live view's observer reads them when it shows the hub) and then kept in
 * that snapshot. A hub with no observer, the common case, never walks them.
 */
export function summary(live: HubLive): HubContext {
  let clients: ReturnType<typeof hubConnections> | undefined;
  return {
    connections: live.connections.size,
    sessions: live.sessions.size,
    get clients() {
      return (clients ??= connectionsOf(live));
    },
  };
}

/** The host agent a hub runs (for the host's tree, processes and shutdown). */
export function hostAgentOfHub(hub: AnyActorRef): AnyActorRef | undefined {
  return lives.get(hub)?.host;
}

/** Resolves once no prompt is in flight on the hub (at once when none is). */
export function hubDrained(hub: AnyActorRef): Promise<void> {
  const live = lives.get(hub);
  if (!live || live.promptsInFlight === 0 || hub.getSnapshot().status !== 'active') return Promise.resolve();
  return new Promise((resolve) => live.drained.push(resolve));
}

/** The sessions the hub serves now and the journal keeps (see {@link HubSessionInfo}). */
export function hubSessions(hub: AnyActorRef): Promise<HubSessionInfo[]> {
  const live = lives.get(hub);
  if (!live) return Promise.resolve([]);
  return new Promise((resolve, reject) => sessionsOf(live, (listed) => (listed.ok ? resolve(listed.value) : reject(listed.error))));
}

/** Where each connection stands in each session it attached (for the live view). */
export function hubConnections(hub: AnyActorRef): HubClientInfo[] {
  const live = lives.get(hub);
  return live ? connectionsOf(live) : [];
}

/** Each connection with its sessions (role and cursor), in one walk over the sessions' attachments. */
export function connectionsOf(live: HubLive): HubClientInfo[] {
  const sessionsOf = new Map<string, Array<ReturnType<typeof hubConnections>[number]['sessions'][number]>>();
  for (const session of live.sessions.values()) {
    for (const connectionId of attached(session.roles)) {
      const connection = live.connections.get(connectionId);
      if (!connection) continue;
      const position = connection.subscriber.positionOf(session.sessionId);
      const role: Role = connectionId === session.roles.controller ? 'controller' : 'observer';
      const entry = { sessionId: session.sessionId, role, delivered: position?.delivered, state: position?.state };
      const list = sessionsOf.get(connectionId);
      if (list) list.push(entry);
      else sessionsOf.set(connectionId, [entry]);
    }
  }
  return [...live.connections.values()].map((connection) => ({ connectionId: connection.id, peer: connection.peer, sessions: sessionsOf.get(connection.id) ?? [] }));
}

// Connections

/** The sessions the hub runs and the journal keeps, to `then` (at once with a journal that answers at once). */
export function sessionsOf(live: HubLive, then: (result: CallResult<HubSessionInfo[]>) => void): void {
  const machines = sessionMachinesOf(live.host);
  const found = new Map<string, HubSessionInfo>();
  const info = (sessionId: string, agent: string | undefined, state: string): HubSessionInfo => {
    const session = live.sessions.get(sessionId);
    const clients = session
      ? attached(session.roles).map((connectionId) => {
          const connection = live.connections.get(connectionId);
          return { connectionId, role: roleOf(session.roles, connectionId) as Role, peer: connection?.peer, delivered: connection?.subscriber.positionOf(sessionId)?.delivered };
        })
      : [];
    return { sessionId, agent, state, clients, lastActivity: session?.lastActivity === undefined ? undefined : new Date(session.lastActivity).toISOString() };
  };
  for (const [sessionId, machine] of machines) found.set(sessionId, info(sessionId, runningSessionAgent(live.host, sessionId), String(machine.getSnapshot().value)));
  const from = (cursor: string | undefined): void => {
    const read = (page: CallResult<JournalSessionPage>) => {
      if (!page.ok) return then(page);
      for (const session of page.value.sessions) {
        const known = found.get(session.sessionId) ?? info(session.sessionId, session.agent, 'stored');
        found.set(session.sessionId, session.owner ? { ...known, owner: session.owner } : known);
      }
      if (page.value.nextCursor !== undefined) return from(page.value.nextCursor);
      then({ ok: true, value: [...found.values()] });
    };
    callNowOrLater(() => live.journal.listSessions(cursor === undefined ? {} : { cursor }), read, (page) => laterInHub(live, () => read(page)));
  };
  from(undefined);
}
