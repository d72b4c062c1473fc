/**
 * A hub's connections coming and going: each with its subscriber (a cursor per session it
 * attached, paused by its own delivery gate); one that goes leaves its sessions running.
 */
import type { AgentHandlerOutput } from '../protocol/native-agent.js';
import type { ReadGate } from '../port/read-gate.js';
import type { JournalRecord } from '../journal/journal.js';
import { settleJournal } from '../host/host-agent.js';
import { Subscriber } from '../session/subscriber.js';
import { updatesOf, updatesWithTurns } from '../session/cursor.js';
import { journalReads } from '../host/agent/delivery.js';
import { childCursors } from '../session/child-cursors.js';
import { topSessionOf } from '../session/subagent-tree.js';
import type { HubEvent } from './hub-events.js';
import { attached, detach, roleOf } from './session-roles.js';
import { type HubConnection, type HubLive, separator, laterInHub, promptSenderOf } from './hub-live.js';
import { route } from './hub-client-calls.js';
import { armIdle } from './hub-idle.js';

export function connect(live: HubLive, event: Extract<HubEvent, { type: 'hub.connect' }>): void {
  const { connectionId, deliver, gate, peer } = event;
  const connection: HubConnection = { id: connectionId, deliver, peer, subscriber: subscriberFor(live, connectionId, deliver, gate), gate, context: undefined, forwarding: undefined };
  live.connections.set(connectionId, connection);
}

export function subscriberFor(live: HubLive, connectionId: string, deliver: (output: AgentHandlerOutput) => void, gate: ReadGate): Subscriber {
  const self = live.scope.self;
  return new Subscriber({
    write: deliver,
    // A subagent child's cursor reads its top parent's journal and shows the child's entries only (src/host/agent/subagents.ts).
    ...childCursors(
      live.children,
      journalReads(live.journal, (sessionId) => topSessionOf(live.children, sessionId)),
      // A replay shows every turn; a catch-up shows the turns this connection did not start (its own it got live: its prompt, its answer).
      (sessionId, record, replaying) => (replaying || !ownTurnEntry(live, sessionId, record, connectionId) ? updatesWithTurns(record.entry) : updatesOf(record.entry, false)),
    ),
    gate,
    later: (run) => laterInHub(live, run),
    schedule: (sessionId) =>
      setImmediate(() => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'hub.step', connectionId, sessionId } satisfies HubEvent);
      }),
    settle: () => settleJournal(live.host),
  });
}

export function ownTurnEntry(live: HubLive, sessionId: string, record: JournalRecord, connectionId: string): boolean {
  if (record.entry.kind !== 'prompt' && record.entry.kind !== 'stop' && record.entry.kind !== 'error') return true;
  // The entry names its prompt's key, which names the connection (read before or after the host said it was journaled).
  return promptSenderOf(live, record.entry.requestId, sessionId) === connectionId;
}

export function disconnect(live: HubLive, connectionId: string): void {
  const connection = live.connections.get(connectionId);
  if (!connection) return;
  live.connections.delete(connectionId);
  connection.subscriber.close();
  connection.forwarding?.close();
  for (const key of live.callKeys.keys()) if (key.startsWith(`${connectionId}${separator}`)) live.callKeys.delete(key);
  for (const session of live.sessions.values()) {
    if (!roleOf(session.roles, connectionId)) continue;
    const { roles } = detach(session.roles, connectionId);
    session.roles = roles;
    if (attached(roles).length === 0) armIdle(live, session);
  }
  // What it was asked and did not answer goes to whoever controls the session now (or waits).
  for (const call of live.calls.values()) {
    if (call.sentTo?.connectionId !== connectionId) continue;
    call.sentTo = undefined;
    route(live, call);
  }
}
