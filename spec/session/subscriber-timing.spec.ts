/**
 * Race hunting in the subscriber (issue 28, defect 1): a journal that answers with promises,
 * whose every read and commit lands at a random, seeded moment, against one connection's
 * cursor. A session is made and replayed from 0 as `session/new` does while its first updates
 * are being committed; the connection's transport fills and drains at random; a client
 * re-attaches from the last seq it saw. After each run the checker compares what the
 * connection got with what the journal holds: every journaled update after the cursor's start
 * exactly once, in seq order, nothing the journal does not hold. Seeds are printed; a failing
 * seed replays with SUBSCRIBER_TIMING_SEED.
 */
import { expect } from 'chai';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { AgentHandlerOutput } from '../../src/protocol/native-agent.js';
import type { JournalRecord } from '../../src/journal/journal.js';
import { seededRandom } from '../../src/journal/seeded-random.js';
import { ReadGate } from '../../src/port/read-gate.js';
import { Subscriber } from '../../src/session/subscriber.js';
import { deliveryViolations } from '../support/delivery-check.js';

const chunk = (text: string): SessionUpdate => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });

/** A virtual event loop: tasks run one at a time, the next one drawn at random among those due. */
class Scheduler {
  readonly #tasks: Array<() => void> = [];
  constructor(readonly random: () => number) {}
  /** Runs `task` at some later step. */
  soon(task: () => void): void {
    this.#tasks.push(task);
  }
  /** Runs tasks until none is left (bounded): returns how many ran. */
  run(limit = 100_000): number {
    let ran = 0;
    while (this.#tasks.length > 0 && ran < limit) {
      const index = Math.floor(this.random() * this.#tasks.length);
      const [task] = this.#tasks.splice(index, 1);
      task?.();
      ran++;
    }
    return ran;
  }
}

/**
 * A promise-like answer settled by a task of the {@link Scheduler}, its callbacks run in that
 * task (not in a microtask): the whole run stays synchronous, so a seed replays exactly.
 */
function deferred<T>(): { readonly promise: Promise<T>; resolve(value: T): void } {
  let settled: { value: T } | undefined;
  const waiting: Array<(value: T) => void> = [];
  const promise = {
    then(onValue: (value: T) => void) {
      if (settled) onValue(settled.value);
      else waiting.push(onValue);
      return promise;
    },
  } as unknown as Promise<T>;
  return {
    promise,
    resolve(value) {
      settled = { value };
      for (const onValue of waiting.splice(0)) onValue(value);
    },
  };
}

interface Run {
  readonly written: AgentHandlerOutput[];
  readonly journaled: number[];
  readonly after: number;
}

/**
 * One seeded run: a journal answering later, a replay from 0 (what `session/new` asks), a
 * writer committing `updates` updates to session `s` one after another meanwhile (each
 * delivered live once acknowledged, as the host's write queue does), and the gate closing and
 * opening at random.
 */
function runOnce(seed: number, options: { readonly updates: number; readonly pageSize: number; readonly reattach: boolean }): Run {
  const random = seededRandom(seed);
  const loop = new Scheduler(random);
  const records: JournalRecord[] = [];
  let nextSeq = 1;
  const later = <T>(value: () => T): Promise<T> => {
    // Half the reads run now and answer late (stale), half run late.
    const answer = deferred<T>();
    if (random() < 0.5) {
      const now = value();
      loop.soon(() => answer.resolve(now));
    } else loop.soon(() => answer.resolve(value()));
    return answer.promise;
  };
  const gate = new ReadGate();
  const written: AgentHandlerOutput[] = [];
  let subscriber!: Subscriber;
  subscriber = new Subscriber({
    write: (output) => written.push(output),
    read: (sessionId, afterSeq) => later(() => records.filter((record) => record.sessionId === sessionId && record.seq > afterSeq).slice(0, options.pageSize)),
    paged: true,
    lastSeq: (sessionId) => later(() => records.filter((record) => record.sessionId === sessionId).at(-1)?.seq ?? 0),
    gate,
    schedule: (sessionId) => loop.soon(() => subscriber.step(sessionId)),
    later: (run) => loop.soon(run),
  });
  // The writer: commit, then acknowledge later (the live delivery), one update at a time.
  let written_ = 0;
  const writeNext = () => {
    if (written_ >= options.updates) return;
    const text = `u${written_++}`;
    loop.soon(() => {
      const seq = nextSeq++;
      records.push({ seq, sessionId: 's', at: '', entry: { kind: 'update', update: chunk(text) } });
      // Another session's entry now and then: seqs of one session are not consecutive.
      if (random() < 0.3) records.push({ seq: nextSeq++, sessionId: 'other', at: '', entry: { kind: 'update', update: chunk('x') } });
      loop.soon(() => {
        subscriber.deliver('s', { type: 'acp.update', sessionId: 's', update: chunk(text), seq }, seq);
        writeNext();
      });
    });
  };
  let replayDone = false;
  // The connection is attached and replayed from 0 in one turn (the hub's session/new): nothing reached it before.
  subscriber.replay('s', { after: 0, withPrompts: false, done: () => (replayDone = true), failed: (error) => expect.fail(String(error)) });
  loop.soon(writeNext);
  // The transport fills and drains at random.
  for (let flips = 0; flips < 6; flips++) loop.soon(() => (random() < 0.5 ? gate.hold('transport') : gate.release('transport')));
  loop.run();
  gate.release('transport');
  loop.run();
  expect(replayDone, `seed ${seed}: the replay never ended`).to.equal(true);
  let after = 0;
  if (options.reattach) {
    // A second connection re-attaches from the last seq the first one got, while more is written.
    const seen = written.flatMap((output) => (output.type === 'acp.update' ? [output.seq as number] : []));
    after = seen.at(-1) ?? 0;
    written.length = 0;
    const again = new Subscriber({
      write: (output) => written.push(output),
      read: (sessionId, afterSeq) => later(() => records.filter((record) => record.sessionId === sessionId && record.seq > afterSeq).slice(0, options.pageSize)),
      paged: true,
      lastSeq: (sessionId) => later(() => records.filter((record) => record.sessionId === sessionId).at(-1)?.seq ?? 0),
      gate: new ReadGate(),
      schedule: (sessionId) => loop.soon(() => again.step(sessionId)),
      later: (run) => loop.soon(run),
    });
    subscriber = again;
    written_ = 0;
    let done = false;
    again.replay('s', { after, withPrompts: false, done: () => (done = true), failed: (error) => expect.fail(String(error)) });
    loop.soon(writeNext);
    loop.run();
    expect(done, `seed ${seed}: the re-attach never ended`).to.equal(true);
  }
  return { written, journaled: records.filter((record) => record.sessionId === 's').map((record) => record.seq), after };
}

const baseSeed = Number(process.env.SUBSCRIBER_TIMING_SEED ?? 20261204);
const runs = Number(process.env.SUBSCRIBER_TIMING_RUNS ?? 400);

describe('subscriber under timing faults (a journal whose reads and commits land at random moments)', () => {
  it('the checker finds what is missing, doubled, out of order or not journaled', () => {
    expect(deliveryViolations([1, 2, 3], [1, 2, 3])).to.deep.equal([]);
    expect(deliveryViolations([2, 3], [1, 2, 3])).to.deep.equal(['lost: 1']);
    expect(deliveryViolations([2, 3], [1, 2, 3], 1)).to.deep.equal([]);
    expect(deliveryViolations([1, 2, 2, 3], [1, 2, 3])).to.deep.equal(['seq 2 arrived twice']);
    expect(deliveryViolations([1, 3, 2], [1, 2, 3])).to.deep.equal(['seq 2 arrived after 3 (out of order)']);
    expect(deliveryViolations([1, undefined, 2], [1, 2])).to.deep.equal(['an update without a seq (not journaled)']);
    expect(deliveryViolations([1, 9], [1])).to.deep.equal(['seq 9 is not in the journal']);
  });

  it('an empty page read before the session\'s first update was committed does not end the replay: the update goes out (defect 1)', async () => {
    // The exact interleaving seen on PostgreSQL: session/new replays from 0, the page read is in
    // flight, the first update commits and is delivered (raising the head), then the stale empty page arrives.
    const records: JournalRecord[] = [];
    const pages: Array<() => void> = [];
    const written: AgentHandlerOutput[] = [];
    const turns: Array<() => void> = [];
    const subscriber: Subscriber = new Subscriber({
      write: (output) => written.push(output),
      read: (_sessionId, afterSeq) => {
        const snapshot = records.filter((record) => record.seq > afterSeq);
        return new Promise((resolve) => pages.push(() => resolve(snapshot)));
      },
      paged: true,
      lastSeq: async () => 0,
      gate: new ReadGate(),
      schedule: (sessionId) => turns.push(() => subscriber.step(sessionId)),
      later: (run) => turns.push(run),
    });
    const settle = async () => {
      for (let rounds = 0; rounds < 50; rounds++) {
        await new Promise((resolve) => setImmediate(resolve));
        for (const run of turns.splice(0)) run();
      }
    };
    let done = false;
    subscriber.replay('s', { after: 0, withPrompts: false, done: () => (done = true), failed: (error) => expect.fail(String(error)) });
    await settle();
    expect(pages, 'a page read is in flight').to.have.length(1);
    const update = chunk('available commands');
    records.push({ seq: 1, sessionId: 's', at: '', entry: { kind: 'update', update } });
    subscriber.deliver('s', { type: 'acp.update', sessionId: 's', update, seq: 1 }, 1);
    pages.shift()?.(); // the stale, empty page
    await settle();
    for (let rounds = 0; rounds < 10 && pages.length > 0; rounds++) {
      pages.shift()?.();
      await settle();
    }
    expect(done).to.equal(true);
    expect(written.flatMap((output) => (output.type === 'acp.update' ? [output.seq] : []))).to.deep.equal([1]);
  });

  it('a page that read an entry before its live delivery came does not write it twice', async () => {
    const records: JournalRecord[] = [{ seq: 1, sessionId: 's', at: '', entry: { kind: 'update', update: chunk('a') } }];
    const written: AgentHandlerOutput[] = [];
    const turns: Array<() => void> = [];
    const subscriber: Subscriber = new Subscriber({
      write: (output) => written.push(output),
      read: async (_sessionId, afterSeq) => records.filter((record) => record.seq > afterSeq),
      paged: true,
      lastSeq: async () => 0,
      gate: new ReadGate(),
      schedule: (sessionId) => turns.push(() => subscriber.step(sessionId)),
      later: (run) => turns.push(run),
    });
    let done = false;
    // The replay's lastSeq ran before seq 1 committed; its page read after: it writes seq 1, whose acknowledgement comes later.
    subscriber.replay('s', { after: 0, withPrompts: false, done: () => (done = true), failed: (error) => expect.fail(String(error)) });
    for (let rounds = 0; rounds < 50; rounds++) {
      await new Promise((resolve) => setImmediate(resolve));
      for (const run of turns.splice(0)) run();
    }
    expect(done).to.equal(true);
    subscriber.deliver('s', { type: 'acp.update', sessionId: 's', update: chunk('a'), seq: 1 }, 1);
    expect(written.flatMap((output) => (output.type === 'acp.update' ? [output.seq] : []))).to.deep.equal([1]);
  });

  for (const shape of [
    { updates: 1, pageSize: 100, reattach: false },
    { updates: 6, pageSize: 2, reattach: false },
    { updates: 6, pageSize: 2, reattach: true },
  ]) {
    it(`${runs} seeded runs from seed ${baseSeed}, ${shape.updates} update(s), pages of ${shape.pageSize}${shape.reattach ? ', then a re-attach from the last seq seen' : ''}: every update exactly once, in order`, () => {
      const failures: string[] = [];
      for (let run = 0; run < runs; run++) {
        const seed = baseSeed + run;
        const result = runOnce(seed, shape);
        const violations = deliveryViolations(
          result.written.flatMap((output) => (output.type === 'acp.update' ? [output.seq] : [])),
          result.journaled,
          result.after,
        );
        if (violations.length > 0) failures.push(`seed ${seed}: ${violations.join('; ')}`);
      }
      expect(failures, `${failures.length} of ${runs} runs broke delivery (replay one with SUBSCRIBER_TIMING_SEED=<seed> SUBSCRIBER_TIMING_RUNS=1)`).to.deep.equal([]);
    });
  }
});
