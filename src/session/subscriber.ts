/**
 * A subscriber: one connection (the editor's stdio today; a WebSocket client or an embedding
 * program's iterator next) reading its sessions through cursors (cursor.ts), with flow
 * control. Its transport says when it is full through a gate (the agent server closes the
 * connection's delivery gate while its output is backed up): from then on the live updates
 * are not written nor kept, the session and its agent go on at full speed and the journal
 * holds what this connection has not seen. Once the gate opens, each cursor that fell
 * behind reads the journal from where it stood, a page at a time and only while the gate is
 * open, until it is live again. `session/load` is the same read from 0.
 *
 * Order is the journal's (per session); nothing is delivered twice (a cursor only moves
 * forward between replays, and an entry a page already wrote is not written again when its
 * live delivery comes late) and nothing is lost (what is not in the journal waits in the
 * cursor, in its place; an empty page read before an entry the cursor knows of was journaled
 * ends nothing: the cursor reads again). Memory holds at most one page of the journal per cursor and what
 * the journal does not hold (answers and requests to the client, bounded by the requests
 * the editor has open).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { AnyActorRef } from 'xstate';
import type { AgentHandlerOutput } from '../protocol/native-agent.js';
import type { JournalEntry, JournalRecord } from '../journal/journal.js';
import { ReadGate } from '../port/read-gate.js';
import { isPromiseLike, type Maybe } from '../journal/host-journal.js';
import { liveCursor, mustHold, pinsWhatFollows, rewind, takeHeld, updatesOf, type ReplayWaiter, type SessionCursor } from './cursor.js';

/** What a subscriber runs on. */
export interface SubscriberOptions {
  /** Writes one output to the connection. */
  readonly write: (output: AgentHandlerOutput) => void;
  /**
   * Reads the session's journal after `afterSeq`: a page (when `paged`: an empty page is the
   * end), or everything after it, at once or as a promise. Throws (or rejects with) what the
   * journal threw.
   */
  readonly read: (sessionId: string, afterSeq: number) => Maybe<readonly JournalRecord[]>;
  readonly paged: boolean;
  /** The `seq` of the session's last journal entry (0: none yet), at once or as a promise. */
  readonly lastSeq: (sessionId: string) => Maybe<number>;
  /**
   * Runs `run` in the owner's own turn (an actor: a self-sent event): how a read answered by a
   * promise carries on. Default: at once (a journal that only answers at once never needs it).
   */
  readonly later?: (run: () => void) => void;
  /** Open while the connection's transport takes more (see {@link deliveryGateOf}). */
  readonly gate: ReadGate;
  /** Calls {@link Subscriber.step} for `sessionId` later, in the owner's own turn (an actor: a self-sent event). */
  readonly schedule: (sessionId: string) => void;
  /** Delivers whatever was appended but not delivered yet (a group commit under way), before the journal is read. */
  readonly settle?: () => void;
  /** Reading the journal failed while catching up (not a replay: a replay's waiter hears it): what was not delivered stays unread. */
  readonly readFailed?: (sessionId: string, error: unknown) => void;
  /**
   * The updates a journal record shows this connection when read back (`replaying`: a replay,
   * not a catch-up). Default {@link updatesOf}: the agent's updates and notices, the prompts
   * only in a replay. A hub's connection also sees the turns it did not start.
   */
  readonly shows?: (sessionId: string, record: JournalRecord, replaying: boolean) => readonly SessionUpdate[];
}

/** Where a session stands for this connection (for tests and the inspector). */
export interface CursorPosition {
  readonly state: 'live' | 'behind';
  readonly delivered: number;
  readonly head: number;
  readonly held: number;
}

/** One connection's cursors over its sessions. */
export class Subscriber {
  readonly #options: SubscriberOptions;
  readonly #cursors = new Map<string, TrackedCursor>();
  readonly #leaveGate: () => void;

  constructor(options: SubscriberOptions) {
    this.#options = options;
    this.#leaveGate = options.gate.subscribe((open) => {
      if (!open) return;
      for (const cursor of this.#cursors.values()) if (cursor.state === 'behind') this.#wake(cursor);
    });
  }

  /**
   * An output for the connection. `seq`: the journal entry it stands for (an update that is on
   * disk), written now when the session's cursor is live and the transport takes it, else
   * left to the journal. Without `seq` (an answer, a request to the client, warden's own
   * notice: an update the journal refused is never delivered): written now unless the session's cursor is behind, in which case it
   * waits there, behind the entries journaled before it. `sessionId` undefined: not a
   * session's (written now).
   */
  deliver(sessionId: string | undefined, output: AgentHandlerOutput, seq?: number): void {
    let cursor = sessionId === undefined ? undefined : this.#cursors.get(sessionId);
    if (seq !== undefined && sessionId !== undefined) {
      // A session seen first now: what the journal held before this entry is its history, not news.
      cursor ??= this.#track(liveCursor(sessionId, seq - 1));
      if (seq > cursor.head) cursor.head = seq;
      // Read from the journal before its live delivery came (committed, not yet acknowledged when the page was read): out already.
      if (seq <= cursor.readTo) return;
      if (cursor.state === 'live' && this.#options.gate.open) {
        this.#options.write(output);
        cursor.delivered = seq;
        return;
      }
      cursor.state = 'behind';
      if (this.#options.gate.open) this.#wake(cursor);
      return;
    }
    if (!cursor || !mustHold(cursor)) {
      this.#options.write(output);
      return;
    }
    cursor.held.push({ after: cursor.head, output });
  }

  /**
   * An entry of the session was journaled that is not delivered as such (a prompt, a stop
   * reason): what the journal does not hold and comes after it waits behind it too, when the
   * entry is one that pins what follows ({@link pinsWhatFollows}).
   */
  journaled(sessionId: string, seq: number, entry: JournalEntry): void {
    if (!pinsWhatFollows(entry)) return;
    const cursor = this.#cursors.get(sessionId);
    if (cursor && seq > cursor.head) cursor.head = seq;
  }

  /**
   * Replays the session to the connection from the start of its journal (`session/load`), or
   * from after `waiter.after` (a client re-attaching from the last entry it saw), then calls
   * `waiter.done` (the answer follows the history). A replay asked while one runs goes after
   * it, from its own start. Live updates of the session meanwhile reach the connection
   * through the replay, in journal order. With nothing journaled after `waiter.after` (and no
   * replay under way), the cursor is live from there and `waiter.done` is called at once.
   */
  replay(sessionId: string, waiter: ReplayWaiter): void {
    this.#options.settle?.();
    let head: Maybe<number>;
    try {
      head = this.#options.lastSeq(sessionId);
    } catch (error) {
      waiter.failed(error);
      return;
    }
    if (!isPromiseLike(head)) return this.#replayFrom(sessionId, waiter, head);
    // The head comes later: the replay starts now all the same (else a live update meanwhile would
    // go out ahead of the history, then again in it); reading to an empty page finds its end.
    const cursor = this.#cursors.get(sessionId) ?? this.#track(liveCursor(sessionId, waiter.after ?? 0));
    cursor.replays.push(waiter);
    if (cursor.replays.length === 1) {
      rewind(cursor, waiter.after, waiter.withPrompts);
      cursor.page = [];
    }
    head.then(
      (seq) =>
        this.#later(() => {
          if (seq > cursor.head) cursor.head = seq;
        }),
      () => undefined, // the read meets the same failure, and the replay's waiter hears it
    );
    this.#wake(cursor);
  }

  #replayFrom(sessionId: string, waiter: ReplayWaiter, head: number): void {
    let cursor = this.#cursors.get(sessionId);
    cursor ??= this.#track(liveCursor(sessionId, head));
    if (head > cursor.head) cursor.head = head;
    const after = waiter.after ?? 0;
    if (cursor.state === 'live' && cursor.replays.length === 0 && head <= after) {
      // Nothing after `after` to read (a client re-attaching that saw it all): live from there at once, not a turn later.
      cursor.delivered = after;
      waiter.done(after);
      return;
    }
    cursor.replays.push(waiter);
    if (cursor.replays.length === 1) {
      rewind(cursor, waiter.after, waiter.withPrompts);
      cursor.page = [];
    }
    this.#wake(cursor);
  }

  /** Reads on for the session (what {@link SubscriberOptions.schedule} asked for): while the gate is open, until caught up. */
  step(sessionId: string): void {
    const cursor = this.#cursors.get(sessionId);
    if (!cursor) return;
    cursor.scheduled = false;
    if (cursor.state === 'live' || !this.#options.gate.open) return; // the gate wakes it when it opens
    // A page is on its way: the cursor steps on when it comes.
    if (cursor.reading) return;
    if (cursor.page.length === 0) {
      this.#options.settle?.();
      const afterSeq = cursor.delivered;
      let page: Maybe<readonly JournalRecord[]>;
      try {
        page = this.#options.read(sessionId, afterSeq);
      } catch (error) {
        this.#giveUp(cursor, error);
        return;
      }
      if (isPromiseLike(page)) {
        cursor.reading = true;
        // What the journal was known to hold when the read went out: a page is only as new as that.
        const headAtRead = cursor.head;
        const arrived = (run: () => void) =>
          this.#later(() => {
            cursor.reading = false;
            if (this.#cursors.get(sessionId) === cursor) run();
          });
        page.then(
          (records) =>
            arrived(() => {
              // A replay rewound the cursor meanwhile: that page is not the one it needs now.
              if (cursor.delivered !== afterSeq || cursor.state === 'live') return this.#wake(cursor);
              cursor.page = [...records];
              // An empty page that went out before an entry it must hold was journaled (a commit
              // while the read was in flight raised the head) ends nothing: read again from here.
              if (records.length === 0 && cursor.head > headAtRead && cursor.head > cursor.delivered) return this.#wake(cursor);
              this.#readOn(cursor);
            }),
          (error: unknown) => arrived(() => this.#giveUp(cursor, error)),
        );
        return;
      }
      cursor.page = [...page];
    }
    this.#readOn(cursor);
  }

  /** Writes the cursor's page while the gate is open; an empty page read is the end (caught up). */
  #readOn(cursor: TrackedCursor): void {
    const { sessionId } = cursor;
    // Nothing after it: caught up (an unpaged read may have missed what came since, so it reads again until then).
    if (cursor.page.length === 0) return this.#caughtUp(cursor);
    if (!this.#options.gate.open) return; // the gate wakes it
    const { write } = this.#options;
    while (cursor.page.length > 0) {
      const record = cursor.page.shift() as JournalRecord;
      if (record.seq <= cursor.delivered) continue;
      for (const held of takeHeld(cursor, record.seq)) write(held);
      const updates = this.#options.shows ? this.#options.shows(sessionId, record, cursor.withPrompts) : updatesOf(record.entry, cursor.withPrompts);
      for (const update of updates) write({ type: 'acp.update', sessionId, update, seq: record.seq });
      cursor.delivered = record.seq;
      if (record.seq > cursor.readTo) cursor.readTo = record.seq;
      if (!this.#options.gate.open) return; // full again: the gate wakes it
    }
    this.#wake(cursor); // the next page, after this one had a turn to go out
  }

  #later(run: () => void): void {
    if (this.#options.later) this.#options.later(run);
    else run();
  }

  /** Where the session stands for this connection, if it has a cursor. */
  positionOf(sessionId: string): CursorPosition | undefined {
    const cursor = this.#cursors.get(sessionId);
    return cursor && { state: cursor.state, delivered: cursor.delivered, head: cursor.head, held: cursor.held.length };
  }

  /** Stops following the gate (the connection is gone). */
  close(): void {
    this.#leaveGate();
  }

  #track(cursor: SessionCursor<AgentHandlerOutput>): TrackedCursor {
    const tracked: TrackedCursor = Object.assign(cursor, { page: [] as JournalRecord[], reading: false, readTo: 0 });
    this.#cursors.set(cursor.sessionId, tracked);
    return tracked;
  }

  #wake(cursor: SessionCursor<AgentHandlerOutput>): void {
    if (cursor.scheduled) return;
    cursor.scheduled = true;
    this.#options.schedule(cursor.sessionId);
  }

  /** Everything journaled was delivered: what waited goes out, the cursor is live, a replay is answered (the next one starts). */
  #caughtUp(cursor: TrackedCursor): void {
    for (const held of takeHeld(cursor)) this.#options.write(held);
    cursor.state = 'live';
    cursor.withPrompts = false;
    cursor.replayedTo = undefined;
    // The load's answer goes out while the cursor is live, before a next replay starts over.
    cursor.replays.shift()?.done(cursor.delivered);
    if (cursor.replays.length > 0 && cursor.state === 'live') {
      rewind(cursor, cursor.replays[0]?.after, cursor.replays[0]?.withPrompts);
      cursor.page = [];
      this.#wake(cursor);
    }
  }

  /** The journal cannot be read: the replays fail, what waited goes out, the cursor goes on live from here. */
  #giveUp(cursor: TrackedCursor, error: unknown): void {
    const replays = cursor.replays.splice(0);
    for (const held of takeHeld(cursor)) this.#options.write(held);
    cursor.state = 'live';
    cursor.withPrompts = false;
    cursor.replayedTo = undefined;
    cursor.delivered = cursor.head;
    cursor.page = [];
    if (replays.length === 0) this.#options.readFailed?.(cursor.sessionId, error);
    for (const replay of replays) replay.failed(error);
  }
}

/**
 * A cursor with the page of the journal it is writing out, whether a page is on its way, and
 * `readTo`: the last seq it wrote from a page (a live delivery of that entry or an older one,
 * acknowledged by the journal only after the page read it, is not written again).
 */
type TrackedCursor = SessionCursor<AgentHandlerOutput> & { page: JournalRecord[]; reading: boolean; readTo: number };

type System = AnyActorRef['system'];
const gates = new WeakMap<System, ReadGate>();

/**
 * The delivery gate of an actor system (one connection's server and its handler): closed by
 * the agent server while the connection's output is backed up, for a handler that delivers
 * from a journal (its subscriber pauses; the agents are not paused). Made on first use.
 */
export function deliveryGateOf(system: System): ReadGate {
  let gate = gates.get(system);
  if (!gate) {
    gate = new ReadGate();
    gates.set(system, gate);
  }
  return gate;
}
