/**
 * The subscriber (src/session/subscriber.ts) over a real SQLite journal: a connection reads
 * each session from a cursor; while its gate is closed (the transport is full) live updates
 * are left to the journal, and once it opens the cursor reads them from there, in order,
 * once each, with what the journal does not hold (answers) in its place.
 */
import { expect } from 'chai';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { AgentHandlerOutput } from '../../src/protocol/native-agent.js';
import type { Journal } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { ReadGate } from '../../src/port/read-gate.js';
import { Subscriber } from '../../src/session/subscriber.js';

const chunk = (text: string): SessionUpdate => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });

/** A journal, a gate, a subscriber writing into `written`, and a loop that runs what it scheduled (as the host's turns would). */
function world(pageSize = 3) {
  const journal: Journal = sqliteJournal(':memory:');
  const gate = new ReadGate();
  const written: AgentHandlerOutput[] = [];
  const scheduled: string[] = [];
  let writesUntilFull = Infinity;
  const subscriber = new Subscriber({
    write: (output) => {
      written.push(output);
      if (--writesUntilFull === 0) gate.hold('transport');
    },
    read: (sessionId, afterSeq) => journal.readEntries?.(sessionId, { afterSeq, limit: pageSize }) ?? [],
    paged: true,
    lastSeq: (sessionId) => journal.lastSeq?.(sessionId) ?? 0,
    gate,
    schedule: (sessionId) => scheduled.push(sessionId),
  });
  /** Appends an update and delivers it live, as the host does. */
  const stream = (sessionId: string, text: string) => {
    const update = chunk(text);
    const seq = journal.append(sessionId, { kind: 'update', update });
    subscriber.deliver(sessionId, { type: 'acp.update', sessionId, update, seq }, seq);
    return seq;
  };
  const runScheduled = () => {
    for (let rounds = 0; scheduled.length > 0 && rounds < 10_000; rounds++) subscriber.step(scheduled.shift() as string);
  };
  const texts = (sessionId: string) =>
    written.flatMap((output) => (output.type === 'acp.update' && output.sessionId === sessionId ? [(output.update as { content: { text: string } }).content.text] : []));
  const seqs = (sessionId: string) => written.flatMap((output) => (output.type === 'acp.update' && output.sessionId === sessionId ? [output.seq] : []));
  return {
    journal,
    gate,
    written,
    subscriber,
    stream,
    runScheduled,
    texts,
    seqs,
    fullAfter: (writes: number) => {
      writesUntilFull = writes;
    },
  };
}

describe('subscriber: a connection reading sessions from cursors', () => {
  it('live while the gate is open: each update is written at once, with its seq', () => {
    const w = world();
    w.journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    const seqs = [w.stream('s', 'a'), w.stream('s', 'b')];
    expect(w.texts('s')).to.deep.equal(['a', 'b']);
    expect(w.seqs('s')).to.deep.equal(seqs);
    expect(w.subscriber.positionOf('s')).to.include({ state: 'live', delivered: seqs[1] });
  });

  it('gate closed: updates are left to the journal, an answer waits in its place; once open, all arrive once, in order', () => {
    const w = world(2);
    w.journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    w.stream('s', 'u0');
    w.gate.hold('transport');
    for (let index = 1; index <= 7; index++) w.stream('s', `u${index}`);
    w.subscriber.deliver('s', { type: 'acp.respond', requestId: 'p1', result: { stopReason: 'end_turn' } });
    w.stream('s', 'u8');
    // Nothing written while full: the journal is the buffer.
    expect(w.texts('s')).to.deep.equal(['u0']);
    expect(w.subscriber.positionOf('s')).to.include({ state: 'behind', held: 1 });
    w.gate.release('transport');
    w.runScheduled();
    expect(w.texts('s')).to.deep.equal(Array.from({ length: 9 }, (_, index) => `u${index}`));
    const answerAt = w.written.findIndex((output) => output.type === 'acp.respond');
    expect(answerAt, 'the answer after u7, before u8').to.equal(8);
    const seqs = w.seqs('s') as number[];
    expect(seqs.every((seq, index) => index === 0 || seq > (seqs[index - 1] as number))).to.equal(true);
    expect(w.subscriber.positionOf('s')).to.include({ state: 'live', held: 0 });
  });

  it('a transport that fills again while catching up: the cursor stops there and goes on from it, no update twice, none lost', () => {
    const w = world(4);
    w.journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    w.gate.hold('transport');
    for (let index = 0; index < 20; index++) w.stream('s', `u${index}`);
    for (let round = 0; round < 30 && w.subscriber.positionOf('s')?.state !== 'live'; round++) {
      w.fullAfter(3); // the transport takes three lines, then is full
      w.gate.release('transport');
      w.runScheduled();
      if (w.subscriber.positionOf('s')?.state !== 'live') expect(w.gate.open).to.equal(false);
    }
    expect(w.texts('s')).to.deep.equal(Array.from({ length: 20 }, (_, index) => `u${index}`));
  });

  it('an update the journal did not take (no seq) while behind is not lost: it waits in its place and goes out between the journaled ones', () => {
    const w = world(2);
    w.journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    w.gate.hold('transport');
    w.stream('s', 'u0');
    w.subscriber.deliver('s', { type: 'acp.update', sessionId: 's', update: chunk('unjournaled') });
    w.stream('s', 'u1');
    w.gate.release('transport');
    w.runScheduled();
    expect(w.texts('s')).to.deep.equal(['u0', 'unjournaled', 'u1']);
  });

  it('another session keeps its own cursor: one behind does not hold the other back once the gate opens', () => {
    const w = world();
    for (const sessionId of ['a', 'b']) w.journal.createSession({ sessionId, agent: 'demo', cwd: '/' });
    w.gate.hold('transport');
    w.stream('a', 'a0');
    w.gate.release('transport');
    w.stream('b', 'b0');
    // b is live: written at once, while a's cursor still has to catch up.
    expect(w.texts('b')).to.deep.equal(['b0']);
    expect(w.texts('a')).to.deep.equal([]);
    w.runScheduled();
    expect(w.texts('a')).to.deep.equal(['a0']);
  });

  it('replay reads from 0 with the prompts, carries the same seqs as live, then calls done', () => {
    const w = world(2);
    w.journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    const prompt = w.journal.append('s', { kind: 'prompt', prompt: [{ type: 'text', text: 'hi' }] });
    const live = [w.stream('s', 'a'), w.stream('s', 'b')];
    w.journal.append('s', { kind: 'stop', stopReason: 'end_turn' });
    w.written.length = 0;
    let done = 0;
    w.subscriber.replay('s', { done: () => done++, failed: (error) => expect.fail(String(error)) });
    w.runScheduled();
    expect(done).to.equal(1);
    expect(w.written.map((output) => (output.type === 'acp.update' ? output.update.sessionUpdate : output.type))).to.deep.equal(['user_message_chunk', 'agent_message_chunk', 'agent_message_chunk']);
    expect(w.seqs('s')).to.deep.equal([prompt, ...live]);
  });

  it('a re-attach from the last entry journaled is live at once: done without waiting for a turn, nothing replayed, the next update goes out as it comes', () => {
    const w = world();
    w.journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    // Journaled while this connection was away (not delivered to it).
    let last = 0;
    for (const text of ['a', 'b', 'c']) last = w.journal.append('s', { kind: 'update', update: chunk(text) });
    let done = 0;
    w.subscriber.replay('s', { after: last, done: () => done++, failed: (error) => expect.fail(String(error)) });
    expect(done).to.equal(1);
    expect(w.subscriber.positionOf('s')).to.include({ state: 'live', delivered: last });
    const next = w.stream('s', 'd');
    w.runScheduled();
    expect(w.texts('s')).to.deep.equal(['d']);
    expect(w.seqs('s')).to.deep.equal([next]);
    expect(done).to.equal(1);
  });

  it('during a replay an answer goes out at once (only history is ahead of it), unless live updates came before it: then it follows them', () => {
    const w = world(2);
    w.journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    for (let index = 0; index < 6; index++) w.stream('s', `old${index}`);
    w.written.length = 0;
    w.subscriber.replay('s', { done: () => {}, failed: (error) => expect.fail(String(error)) });
    w.subscriber.deliver('s', { type: 'acp.respond', requestId: 'close', result: {} });
    expect(w.written.map((output) => output.type)).to.deep.equal(['acp.respond']);
    w.stream('s', 'new');
    w.subscriber.deliver('s', { type: 'acp.respond', requestId: 'prompt', result: { stopReason: 'end_turn' } });
    w.runScheduled();
    const order = w.written.map((output) => (output.type === 'acp.respond' ? output.requestId : ((output as { update?: { content: { text: string } } }).update?.content.text)));
    expect(order).to.deep.equal(['close', 'old0', 'old1', 'old2', 'old3', 'old4', 'old5', 'new', 'prompt']);
  });
});

describe('subscriber over a journal that answers with promises', () => {
  it('a replay whose head comes later: a live update meanwhile goes out once, in its place after the history', async () => {
    const journal: Journal = sqliteJournal(':memory:');
    journal.createSession({ sessionId: 's', agent: 'demo', cwd: '/' });
    const history = [journal.append('s', { kind: 'update', update: chunk('a') }), journal.append('s', { kind: 'update', update: chunk('b') })];
    const written: AgentHandlerOutput[] = [];
    const later: Array<() => void> = [];
    const scheduled: string[] = [];
    const subscriber = new Subscriber({
      write: (output) => written.push(output),
      read: async (sessionId, afterSeq) => journal.readEntries?.(sessionId, { afterSeq, limit: 10 }) ?? [],
      paged: true,
      lastSeq: async (sessionId) => journal.lastSeq?.(sessionId) ?? 0,
      gate: new ReadGate(),
      schedule: (sessionId) => scheduled.push(sessionId),
      later: (run) => later.push(run),
    });
    let done = false;
    subscriber.replay('s', { after: 0, withPrompts: false, done: () => (done = true), failed: (error) => expect.fail(String(error)) });
    // Live while the head is on its way (a resume on a host that runs the session).
    const live = journal.append('s', { kind: 'update', update: chunk('c') });
    subscriber.deliver('s', { type: 'acp.update', sessionId: 's', update: chunk('c'), seq: live }, live);
    for (let rounds = 0; rounds < 100 && !done; rounds++) {
      await new Promise((resolve) => setImmediate(resolve));
      for (const run of later.splice(0)) run();
      for (const sessionId of scheduled.splice(0)) subscriber.step(sessionId);
    }
    expect(done).to.equal(true);
    const seqs = written.flatMap((output) => (output.type === 'acp.update' ? [output.seq] : []));
    expect(seqs).to.deep.equal([...history, live]);
  });
});
