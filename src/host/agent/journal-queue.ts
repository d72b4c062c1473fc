/**
 * One ordered write queue per session (docs/cluster.md, "Running a host on PostgreSQL"): a
 * session's journal calls are issued one at a time, and every output for that
 * session goes out only after the calls queued before it settled. So a client never sees an
 * update before it is durable (nor ever one the journal refused), an answer never before the
 * entries journaled before it, and the order it sees is the journal's. Updates that arrive while a call is in flight join the next
 * group: one `appendGroup` per round trip, so groups grow exactly when the store is slow.
 *
 * A journal that answers at once (SQLite) runs the queue synchronously: a call is made and
 * settled when it is queued (once what is before it went), a turn's updates are one group
 * written at the microtask or before the session's next call or output, as the host did
 * before it had asynchronous journals. An answer that comes as a promise is settled through
 * `later` (the host agent's own turn), and the session's queue waits for it.
 */
import type { JournalEntry } from '../../journal/journal.js';
import { callNowOrLater, type CallResult, type HostJournal, type JournalUpdateEntry, type Maybe } from '../../journal/host-journal.js';
import { entryText } from '../../journal/entry-text.js';

/** What a queue needs around it. */
export interface JournalQueueOptions<Output> {
  readonly journal: HostJournal;
  /** Sends an output to the client; called in each session's journal order. */
  readonly write: (output: Output) => void;
  /**
   * A group or record the journal refused: `unshown` is how many updates of a group are not
   * shown for it (0 for a record). The outputs queued behind it still go out.
   */
  readonly failed: (sessionId: string, error: unknown, unshown: number) => void;
  /** Runs the settling of an answer that came as a promise (in the owner's own turn: an actor's self-sent event). */
  readonly later: (run: () => void) => void;
  /**
   * The bound on the bytes of entries not yet acknowledged, over every session, of a journal
   * that answers later (default none): past it `pressure(true)` (the host stops reading its
   * agents), back under half of it `pressure(false)`.
   */
  readonly maxPendingBytes?: number;
  readonly pressure?: (full: boolean) => void;
}

export type { CallResult };

type Step<Output> =
  | { readonly kind: 'group'; readonly entries: JournalUpdateEntry[]; readonly outputs: Array<(seq: number) => Output>; ready: boolean; bytes: number }
  | { readonly kind: 'call'; readonly run: (journal: HostJournal) => Maybe<unknown>; readonly settle: (result: CallResult<unknown>) => void }
  | { readonly kind: 'output'; readonly output: Output };

interface SessionQueue<Output> {
  readonly steps: Step<Output>[];
  /** A call or group is waiting for its promise. */
  inFlight: boolean;
  /** The queue is being run now (a settle that queues more for the session leaves it to the run under way). */
  running: boolean;
}

/** The write queues of a host's sessions (see the module's comment). */
export interface JournalQueue<Output> {
  /** An update: joins the group being collected, written at the end of the event-loop turn (or after the call in flight); its output goes out once written, with its seq, and never when the journal refused the group. */
  update(sessionId: string, entry: JournalUpdateEntry, output: (seq: number) => Output): void;
  /** Any journal call about the session, after what is queued before it (a group collected is written first); `settle` gets its answer or error. */
  call<T>(sessionId: string, run: (journal: HostJournal) => Maybe<T>, settle: (result: CallResult<T>) => void): void;
  /** An append that is counted as a failure (`failed`) when refused: `settle` gets its seq, or `undefined` and the error. */
  record(sessionId: string, entry: JournalEntry, settle?: (seq: number | undefined, error?: unknown) => void): void;
  /** An output that goes out after everything queued before it for `sessionId` (`undefined`: no session, at once). */
  output(sessionId: string | undefined, output: Output): void;
  /** Writes every collected group now (a reader of the journal is about to look). */
  flush(): void;
  /** Steps not yet settled for `sessionId` (0: nothing waits). */
  pending(sessionId: string): number;
  /** Resolves once every session's queue is empty. */
  settled(): Promise<void>;
  /**
   * Resolves once no journal call is in flight (what was sent to the store has been answered),
   * whether or not its settling ran: what a host that stopped waits for before closing its store.
   */
  callsSettled(): Promise<void>;
}

/** Creates the queues (see the module's comment). */
export function createJournalQueue<Output>(options: JournalQueueOptions<Output>): JournalQueue<Output> {
  const sessions = new Map<string, SessionQueue<Output>>();
  let idle: Array<() => void> = [];
  let calling = 0;
  /** Bytes of entries queued or in flight, not yet acknowledged (counted only with a bound). */
  let pendingBytes = 0;
  let full = false;
  const bound = options.journal.answersLater ? options.maxPendingBytes : undefined;
  /** Counts `bytes` more (or fewer) waiting, and says when the bound is crossed. */
  const weigh = (bytes: number): void => {
    if (bound === undefined) return;
    pendingBytes += bytes;
    if (!full && pendingBytes > bound) {
      full = true;
      options.pressure?.(true);
    } else if (full && pendingBytes <= bound / 2) {
      full = false;
      options.pressure?.(false);
    }
  };
  // An update's own text is made once (json-text.ts): weighing it costs a splice, not a serialization.
  const sizeOf = (entry: JournalEntry): number => (bound === undefined ? 0 : entryText(entry).length);
  const answered: Array<() => void> = [];

  const queueOf = (sessionId: string): SessionQueue<Output> => {
    let queue = sessions.get(sessionId);
    if (!queue) sessions.set(sessionId, (queue = { steps: [], inFlight: false, running: false }));
    return queue;
  };

  /** Settles a call or group with its answer, now when it came at once, else in `later`. */
  const issue = (sessionId: string, queue: SessionQueue<Output>, run: () => Maybe<unknown>, settle: (result: CallResult<unknown>) => void): void => {
    const onItsWay = callNowOrLater(run, settle, (result) => {
      calling -= 1;
      if (calling === 0) for (const resolve of answered.splice(0)) resolve();
      options.later(() => {
        queue.inFlight = false;
        settle(result);
        pump(sessionId);
      });
    });
    if (!onItsWay) return;
    queue.inFlight = true;
    calling += 1;
  };

  const pump = (sessionId: string): void => {
    const queue = sessions.get(sessionId);
    if (!queue || queue.running) return;
    queue.running = true;
    try {
      while (!queue.inFlight && queue.steps.length > 0) {
        const step = queue.steps[0] as Step<Output>;
        // A group still collecting this event-loop turn's updates waits for its microtask.
        if (step.kind === 'group' && !step.ready) break;
        queue.steps.shift();
        if (step.kind === 'output') options.write(step.output);
        else if (step.kind === 'call') issue(sessionId, queue, () => step.run(options.journal), step.settle);
        else {
          issue(sessionId, queue, () => options.journal.appendGroup(sessionId, step.entries), (result) => {
            weigh(-step.bytes);
            // What the journal did not take is never shown: a client sees what a replay would give, no more.
            if (!result.ok) return options.failed(sessionId, result.error, step.outputs.length);
            const seqs = result.value as readonly number[];
            step.outputs.forEach((output, index) => options.write(output(seqs[index] as number)));
          });
        }
      }
    } finally {
      queue.running = false;
    }
    if (!queue.inFlight && queue.steps.length === 0 && sessions.get(sessionId) === queue) {
      sessions.delete(sessionId);
      if (sessions.size === 0) {
        const waiting = idle;
        idle = [];
        for (const resolve of waiting) resolve();
      }
    }
  };

  /** What is queued after a collected group writes it first: the journal's order is kept either way. */
  const push = (sessionId: string, step: Step<Output>): void => {
    const queue = queueOf(sessionId);
    const last = queue.steps.at(-1);
    if (last?.kind === 'group') last.ready = true;
    queue.steps.push(step);
    pump(sessionId);
  };

  const call = <T>(sessionId: string, run: (journal: HostJournal) => Maybe<T>, settle: (result: CallResult<T>) => void): void =>
    push(sessionId, { kind: 'call', run, settle: settle as (result: CallResult<unknown>) => void });

  return {
    update(sessionId, entry, output) {
      const queue = queueOf(sessionId);
      const last = queue.steps.at(-1);
      // The tail group not yet written takes it: while a call is in flight, groups grow.
      const bytes = sizeOf(entry);
      weigh(bytes);
      if (last?.kind === 'group') {
        last.entries.push(entry);
        last.outputs.push(output);
        last.bytes += bytes;
        return;
      }
      const group: Step<Output> = { kind: 'group', entries: [entry], outputs: [output], ready: false, bytes };
      queue.steps.push(group);
      queueMicrotask(() => {
        group.ready = true;
        pump(sessionId);
      });
    },
    call,
    record(sessionId, entry, settle) {
      const bytes = sizeOf(entry);
      weigh(bytes);
      call(sessionId, (journal) => journal.append(sessionId, entry), (result) => {
        weigh(-bytes);
        if (result.ok) return settle?.(result.value);
        options.failed(sessionId, result.error, 0);
        settle?.(undefined, result.error);
      });
    },
    output(sessionId, output) {
      if (sessionId === undefined || !sessions.has(sessionId)) return options.write(output);
      push(sessionId, { kind: 'output', output });
    },
    flush() {
      for (const [sessionId, queue] of sessions) {
        const last = queue.steps.at(-1);
        if (last?.kind === 'group' && !last.ready) {
          last.ready = true;
          pump(sessionId);
        }
      }
    },
    pending: (sessionId) => sessions.get(sessionId)?.steps.length ?? 0,
    settled: () => (sessions.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve))),
    callsSettled: () => (calling === 0 ? Promise.resolve() : new Promise<void>((resolve) => answered.push(resolve))),
  };
}
