/**
 * What the host agent tells the editor: through the editor's subscriber, in each session's order,
 * after the journal writes queued before it (src/host/agent/journal-queue.ts).
 */
import type { AgentHandlerOutput } from '../../protocol/native-agent.js';
import { type ErrorObject, RpcError } from '../../jsonrpc/rpc-error.js';
import { deliveryGateOf, Subscriber, type SubscriberOptions } from '../../session/subscriber.js';
import type { HostJournal } from '../../journal/host-journal.js';
import type { Live } from './live.js';
import { failedWrite } from './journal-failures.js';
import { later } from './continuation.js';
import { topSessionOf } from '../../session/subagent-tree.js';
import { childCursors } from '../../session/child-cursors.js';
import { updatesOf, updatesWithTurns } from '../../session/cursor.js';

/**
 * Everything the host tells the editor goes out here, after the journal writes of its session
 * queued before it; `session`: the session of an answer the host keeps no record of (a
 * prompt's: its session's machine knows it).
 */
export function emit(live: Live, output: AgentHandlerOutput, session?: string): void {
  const sessionId = sessionOfOutput(live, output) ?? session;
  live.writes.output(sessionId, { sessionId, output, seq: undefined });
}

/** Hands an output to the editor's subscriber now, in its session's order (`seq`: the journal entry it stands for). */
export function deliver(live: Live, output: AgentHandlerOutput, seq: number | undefined): void {
  live.subscriber.deliver(sessionOfOutput(live, output), output, seq);
}

/** The session an output belongs to, if any: its order is that session's. */
function sessionOfOutput(live: Live, output: AgentHandlerOutput): string | undefined {
  switch (output.type) {
    case 'acp.update':
    case 'acp.replayComplete':
      return output.sessionId;
    case 'acp.respond':
    case 'acp.error': {
      const sessionId = live.requestSessions.get(output.requestId);
      live.requestSessions.delete(output.requestId);
      return sessionId;
    }
    case 'acp.clientRequest': {
      const sessionId = (output.params as { sessionId?: unknown } | undefined)?.sessionId;
      return typeof sessionId === 'string' ? sessionId : undefined;
    }
    default:
      return undefined;
  }
}

/** Journal entries read per page when a cursor catches up or replays, and the most bytes of them. */
const cursorPageSize = 100;

const cursorPageBytes = 256 * 1024;

/** How a subscriber reads a journal: a page at a time when the journal pages (see {@link SubscriberOptions}). */
export function journalReads(journal: HostJournal, journalOf: (sessionId: string) => string = (sessionId) => sessionId): Pick<SubscriberOptions, 'read' | 'paged' | 'lastSeq'> {
  return {
    read: (sessionId, afterSeq) => {
      const from = journalOf(sessionId);
      return journal.paged ? journal.readEntries(from, { afterSeq, limit: cursorPageSize, maxBytes: cursorPageBytes }) : journal.entries(from, afterSeq);
    },
    paged: journal.paged,
    // Without it, what is answered during a replay waits for the replay's end.
    lastSeq: (sessionId) => (journal.knowsLastSeq ? journal.lastSeq(journalOf(sessionId)) : Number.MAX_SAFE_INTEGER),
  };
}

/** The editor's connection as a subscriber: it reads this host's journal, paused by the connection's delivery gate. */
export function subscriberOf(live: Live): Subscriber {
  const self = live.scope.self;
  return new Subscriber({
    write: (output) => live.scope.emit(output),
    // A subagent child's cursor reads its top parent's journal and shows the child's entries only (subagents.ts).
    ...childCursors(live.subagents, journalReads(live.journal, (sessionId) => topSessionOf(live.subagents, sessionId)), (_sessionId, record, replaying) =>
      // An ACP v2 editor's replay shows each turn's end too (its `idle`, with the typed failure of a
      // cut turn), as a `warden serve` replay does; a v1 editor's stays as it was (v1 has no place for it).
      replaying && (live.context?.protocolVersion ?? 1) >= 2 ? updatesWithTurns(record.entry) : updatesOf(record.entry, replaying),
    ),
    gate: deliveryGateOf(live.scope.system),
    // A turn of its own: what was written had a turn to go out; a stopped host reads no more.
    schedule: (sessionId) =>
      setImmediate(() => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'host.catchUp', sessionId } as never);
      }),
    settle: () => live.writes.flush(),
    later: (run) => later(live, run),
    readFailed: (sessionId, error) => failedWrite(live, sessionId, error),
  });
}

export const fail = (live: Live, requestId: string, error: RpcError | ErrorObject, session?: string) =>
  emit(live, { type: 'acp.error', requestId, error: error instanceof RpcError ? error.toErrorObject() : error }, session);
