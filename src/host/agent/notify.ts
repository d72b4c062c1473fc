/**
 * A notice to the editor (journaled, never conversation), and how an agent process's exit is told.
 */
import { describePortExit, type PortExitReason } from '../../port/port-exit.js';
import { noticeUpdate } from '../../session/cursor.js';
import { FencedAppendError } from '../../journal/async-journal.js';
import type { Live } from './live.js';
import { deliver, emit } from './delivery.js';
import { record } from './journal-writes.js';

/**
 * A notice to the editor: journaled as a `notice` entry (not an update: never part of the
 * conversation a replay or an agent sees), then sent as a `notice` update, which the agent
 * server renders as a signed text for clients without `session.notices`. `journaled: false`:
 * warden's own word about this host's hold on the session (it moved, its lease was lost), sent
 * without a seq.
 */
export function notify(live: Live, sessionId: string, severity: 'info' | 'warning' | 'error', title: string, description: string | undefined, journaled = true): void {
  const update = noticeUpdate(severity, title, description);
  if (!journaled) return emit(live, { type: 'acp.update', sessionId, update });
  record(live, sessionId, { kind: 'notice', severity, title, description }, (seq, error) => {
    // On record: it goes out in the journal's order (a cursor behind reads it from there).
    // Refused as fenced: the session is another host's now, this one only says it moved.
    // Refused otherwise (the store failing): shown all the same, without a seq (never conversation).
    if (seq === undefined && error instanceof FencedAppendError) return;
    deliver(live, seq === undefined ? { type: 'acp.update', sessionId, update } : { type: 'acp.update', sessionId, update, seq }, seq);
  });
}

/** An agent process's exit, for a notice: a port exit described as such, else the reason as given (not the supervision `describeExit`, which takes an `ExitReason`). */
export function describeAgentExit(reason: unknown): string {
  if (typeof reason === 'object' && reason !== null && 'kind' in reason) {
    try {
      return describePortExit(reason as PortExitReason);
    } catch {
      // not a port exit
    }
  }
  return typeof reason === 'string' ? reason : JSON.stringify(reason);
}
