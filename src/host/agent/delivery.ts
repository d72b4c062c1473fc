/**
 * What the host agent tells the editor: through the editor's subscriber, in each session's order,
 * after the group commit of the updates journaled before it.
 */
import type { AgentHandlerOutput } from '../../acp/native-agent.js';
import { type ErrorObject, RpcError } from '../../jsonrpc/rpc-error.js';
import { deliveryGateOf, Subscriber, type SubscriberOptions } from '../../session/subscriber.js';
import type { Journal } from '../journal.js';
import type { Live } from './live.js';
import { failedWrite } from './journal-failures.js';

/** Everything the host tells the editor goes out here, after the updates journaled before it. */
export function emit(live: Live, output: AgentHandlerOutput): void {
  commitGroup(live);
  deliver(live, output, undefined);
}

/** Hands an output to the editor's subscriber, in its session's order (`seq`: the journal entry it stands for). */
export function deliver(live: Live, output: AgentHandlerOutput, seq: number | undefined): void {
  live.subscriber.deliver(sessionOfOutput(live, output), output, seq);
}

/** The session an output belongs to, if any: its order is that session's. */
function sessionOfOutput(live: Live, output: AgentHandlerOutput): string | undefined {
  switch (output.type) {
    case 'acp.update':
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
export function journalReads(journal: Journal): Pick<SubscriberOptions, 'read' | 'paged' | 'lastSeq'> {
  return {
    read: (sessionId, afterSeq) => (journal.readEntries ? journal.readEntries(sessionId, { afterSeq, limit: cursorPageSize, maxBytes: cursorPageBytes }) : journal.entries(sessionId, afterSeq)),
    paged: journal.readEntries !== undefined,
    // Without it, what is answered during a replay waits for the replay's end.
    lastSeq: (sessionId) => (journal.lastSeq ? journal.lastSeq(sessionId) : Number.MAX_SAFE_INTEGER),
  };
}

/** The editor's connection as a subscriber: it reads this host's journal, paused by the connection's delivery gate. */
export function subscriberOf(live: Live): Subscriber {
  const self = live.scope.self;
  return new Subscriber({
    write: (output) => live.scope.emit(output),
    ...journalReads(live.input.journal),
    gate: deliveryGateOf(live.scope.system),
    // A turn of its own: what was written had a turn to go out; a stopped host reads no more.
    schedule: (sessionId) =>
      setImmediate(() => {
        if (self.getSnapshot().status === 'active') self.send({ type: 'host.catchUp', sessionId } as never);
      }),
    settle: () => commitGroup(live),
    readFailed: (sessionId, error) => failedWrite(live, sessionId, error),
  });
}

export const fail = (live: Live, requestId: string, error: RpcError | ErrorObject) =>
  emit(live, { type: 'acp.error', requestId, error: error instanceof RpcError ? error.toErrorObject() : error });

/**
 * Commits the open group of updates and shows them, in order; a failed commit is a journal
 * error, the updates are still shown (without their seq: the journal does not hold them).
 */
export function commitGroup(live: Live): void {
  const group = live.group;
  if (!group) return;
  live.group = undefined;
  let lost = false;
  try {
    live.input.journal.commit?.();
  } catch (error) {
    lost = true;
    for (const sessionId of group.sessions) failedWrite(live, sessionId, error);
  }
  for (const output of group.outbox) {
    if (!lost || output.seq === undefined) deliver(live, output, output.seq);
    else deliver(live, { type: 'acp.update', sessionId: output.sessionId, update: output.update }, undefined);
  }
}
