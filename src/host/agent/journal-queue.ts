/**
 * One ordered write queue per session over an {@link AsyncJournal} (docs/cluster-plan.md,
 * "One ordered write queue per session"): a session's writes are issued one at a time, and
 * every output for that session goes out only after the writes queued before it settled. So a
 * client never sees an update before it is durable, an answer never before the entries
 * journaled before it, and the order it sees is the journal's. Updates that arrive while a
 * write is in flight join the next group: one `appendGroup` per round trip.
 */
import type { AsyncJournal, JournalUpdateEntry } from '../async-journal.js';
import type { JournalEntry } from '../journal.js';

/** What a queue needs around it. */
export interface JournalQueueOptions<Output> {
  readonly journal: AsyncJournal;
  /** Sends an output to the client; called in each session's journal order. */
  readonly write: (output: Output) => void;
  /** A write the journal refused (counted, an event): the outputs behind it still go out. */
  readonly failed: (sessionId: string, error: unknown) => void;
}

type Step<Output> =
  | { readonly kind: 'group'; readonly entries: JournalUpdateEntry[]; readonly outputs: Array<(seq: number | undefined) => Output>; ready: boolean }
  | { readonly kind: 'record'; readonly entry: JournalEntry; readonly settle: (seq: number | undefined, error?: unknown) => void }
  | { readonly kind: 'output'; readonly output: Output };

interface SessionQueue<Output> {
  readonly steps: Step<Output>[];
  inFlight: boolean;
}

/** The write queues of a host's sessions (see the module's comment). */
export interface JournalQueue<Output> {
  /** An update: joins the group being collected, written at the end of the event-loop turn (or after the write in flight); its output goes out once written, with its seq (without it when refused). */
  update(sessionId: string, entry: JournalUpdateEntry, output: (seq: number | undefined) => Output): void;
  /** Any other entry, after what is queued before it: resolves with its seq once durable, rejects with the journal's error (counted). */
  record(sessionId: string, entry: JournalEntry): Promise<number>;
  /** An output that goes out after everything queued before it for `sessionId` (`undefined`: no session, at once). */
  output(sessionId: string | undefined, output: Output): void;
  /** Steps not yet settled for `sessionId` (0: nothing waits). */
  pending(sessionId: string): number;
  /** Resolves once every session's queue is empty. */
  settled(): Promise<void>;
}

/**
 * Creates the queues. With a journal whose promises are already settled (SQLite through
 * `asyncJournalOf`), a turn's updates are one group committed at the microtask, as before,
 * and outputs that follow no write go out at once.
 */
export function createJournalQueue<Output>(options: JournalQueueOptions<Output>): JournalQueue<Output> {
  const sessions = new Map<string, SessionQueue<Output>>();
  let idle: Array<() => void> = [];

  const queueOf = (sessionId: string): SessionQueue<Output> => {
    let queue = sessions.get(sessionId);
    if (!queue) sessions.set(sessionId, (queue = { steps: [], inFlight: false }));
    return queue;
  };

  const pump = (sessionId: string): void => {
    const queue = sessions.get(sessionId);
    if (!queue) return;
    while (!queue.inFlight && queue.steps.length > 0) {
      const step = queue.steps[0]!;
      if (step.kind === 'output') {
        queue.steps.shift();
        options.write(step.output);
        continue;
      }
      // A group still collecting this event-loop turn's updates waits for its microtask.
      if (step.kind === 'group' && !step.ready) return;
      queue.inFlight = true;
      const done = () => {
        queue.steps.shift();
        queue.inFlight = false;
        pump(sessionId);
      };
      if (step.kind === 'group') {
        options.journal.appendGroup(sessionId, step.entries).then(
          (seqs) => {
            step.outputs.forEach((output, index) => options.write(output(seqs[index])));
            done();
          },
          (error: unknown) => {
            options.failed(sessionId, error);
            for (const output of step.outputs) options.write(output(undefined));
            done();
          },
        );
      } else {
        options.journal.append(sessionId, step.entry).then(
          (seq) => {
            step.settle(seq);
            done();
          },
          (error: unknown) => {
            options.failed(sessionId, error);
            step.settle(undefined, error ?? new Error('the journal failed'));
            done();
          },
        );
      }
      return;
    }
    if (!queue.inFlight && queue.steps.length === 0) {
      sessions.delete(sessionId);
      if (sessions.size === 0) {
        const waiting = idle;
        idle = [];
        for (const resolve of waiting) resolve();
      }
    }
  };

  return {
    update(sessionId, entry, output) {
      const queue = queueOf(sessionId);
      const last = queue.steps.at(-1);
      // The tail group not yet issued takes it: while a write is in flight, groups grow.
      if (last?.kind === 'group' && !(queue.inFlight && queue.steps.length === 1)) {
        last.entries.push(entry);
        last.outputs.push(output);
        return;
      }
      const group: Step<Output> = { kind: 'group', entries: [entry], outputs: [output], ready: false };
      queue.steps.push(group);
      queueMicrotask(() => {
        group.ready = true;
        pump(sessionId);
      });
    },
    record(sessionId, entry) {
      return new Promise<number>((resolve, reject) => {
        const queue = queueOf(sessionId);
        // A group before it is written now, not at its microtask: the journal's order is kept either way.
        const last = queue.steps.at(-1);
        if (last?.kind === 'group') last.ready = true;
        queue.steps.push({ kind: 'record', entry, settle: (seq, error) => (seq === undefined ? reject(error) : resolve(seq)) });
        pump(sessionId);
      });
    },
    output(sessionId, output) {
      const queue = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (!queue || sessionId === undefined) return options.write(output);
      const last = queue.steps.at(-1);
      if (last?.kind === 'group') last.ready = true;
      queue.steps.push({ kind: 'output', output });
      pump(sessionId);
    },
    pending: (sessionId) => sessions.get(sessionId)?.steps.length ?? 0,
    settled: () => (sessions.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve))),
  };
}
