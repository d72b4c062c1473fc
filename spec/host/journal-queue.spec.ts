import { expect } from 'chai';
import { asyncJournalOf } from '../../src/journal/async-journal-of.js';
import type { AsyncJournal, JournalUpdateEntry } from '../../src/journal/async-journal.js';
import { createJournalQueue } from '../../src/host/agent/journal-queue.js';
import { hostJournalOf } from '../../src/journal/host-journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

const update = (text: string): JournalUpdateEntry => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });

/** A journal whose group commits resolve only when the test says so: `release()` lets the oldest one through. */
function gatedJournal(inner: AsyncJournal) {
  const groups: Array<{ readonly size: number; release(): void }> = [];
  const journal: AsyncJournal = {
    ...inner,
    appendGroup: (sessionId, entries) =>
      new Promise((resolve, reject) => {
        groups.push({ size: entries.length, release: () => void inner.appendGroup(sessionId, entries).then(resolve, reject) });
      }),
  };
  return { journal, groups };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createJournalQueue (a session\'s ordered journal writes)', () => {
  it('shows no update before its group is durable; updates arriving meanwhile join one next group; other sessions are not held', async () => {
    const sqlite = asyncJournalOf(sqliteJournal(':memory:'));
    const { journal, groups } = gatedJournal(sqlite);
    await sqlite.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const shown: string[] = [];
    const queue = createJournalQueue<string>({ journal: hostJournalOf(journal), later: (run) => run(), write: (output) => shown.push(output), failed: () => expect.fail('no write fails') });
    queue.update('s1', update('a'), (seq) => `a@${seq}`);
    queue.update('s1', update('b'), (seq) => `b@${seq}`);
    queue.output('s1', 'answer1');
    await turn();
    expect(groups.map((group) => group.size)).to.deep.equal([2]);
    expect(shown).to.deep.equal([]);
    // While the first group is in flight: three updates in two turns, one group; another session's output goes out at once.
    queue.update('s1', update('c'), (seq) => `c@${seq}`);
    await turn();
    queue.update('s1', update('d'), (seq) => `d@${seq}`);
    queue.update('s1', update('e'), (seq) => `e@${seq}`);
    queue.output('s2', 'other');
    queue.output(undefined, 'initialize');
    await turn();
    expect(shown).to.deep.equal(['other', 'initialize']);
    groups[0]!.release();
    await turn();
    const seqs = (await sqlite.entries('s1')).map((record) => record.seq);
    expect(shown).to.deep.equal(['other', 'initialize', `a@${seqs[0]}`, `b@${seqs[1]}`, 'answer1']);
    expect(groups.map((group) => group.size)).to.deep.equal([2, 3]);
    groups[1]!.release();
    await queue.settled();
    const all = (await sqlite.entries('s1')).map((record) => record.seq);
    expect(shown.slice(5)).to.deep.equal([`c@${all[2]}`, `d@${all[3]}`, `e@${all[4]}`]);
    expect(queue.pending('s1')).to.equal(0);
    // A group in flight with nothing behind it takes no more updates: they make the next group.
    queue.update('s1', update('f'), (seq) => `f@${seq}`);
    await turn();
    queue.update('s1', update('g'), (seq) => `g@${seq}`);
    await turn();
    expect(groups.map((group) => group.size)).to.deep.equal([2, 3, 1]);
    groups[2]!.release();
    await turn();
    expect(groups.map((group) => group.size)).to.deep.equal([2, 3, 1, 1]);
    groups[3]!.release();
    await queue.settled();
    expect(shown.slice(8).map((output) => output.split('@')[0])).to.deep.equal(['f', 'g']);
    expect((await sqlite.entries('s1')).length).to.equal(7);
  });

  it('a record waits for the group before it and settles with its seq; a refused write is counted, a refused update never shown, and what follows still goes out', async () => {
    const journal = asyncJournalOf(sqliteJournal(':memory:'));
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const shown: string[] = [];
    const failures: string[] = [];
    const queue = createJournalQueue<string>({ journal: hostJournalOf(journal), later: (run) => run(), write: (output) => shown.push(output), failed: (sessionId, _error, unshown) => failures.push(`${sessionId}: ${unshown} not shown`) });
    queue.update('s1', update('a'), (seq) => `a@${seq}`);
    const seq = await new Promise<number | undefined>((resolve) => queue.record('s1', { kind: 'stop', stopReason: 'end_turn' }, resolve));
    const entries = await journal.entries('s1');
    expect(entries.map((record) => record.entry.kind)).to.deep.equal(['update', 'stop']);
    expect(seq).to.equal(entries[1]!.seq);
    expect(shown).to.deep.equal([`a@${entries[0]!.seq}`]);
    queue.update('nope', update('x'), (seq) => `x@${seq}`);
    const refused = new Promise<unknown>((resolve) => queue.record('nope', { kind: 'closed' }, (seq, error) => resolve(seq === undefined ? error : expect.fail('an unknown session is refused'))));
    queue.output('nope', 'after');
    expect(await refused).to.be.an('error');
    await queue.settled();
    // The group the journal refused is not shown (issue 28: a client sees only what the journal holds).
    expect(failures).to.deep.equal(['nope: 1 not shown', 'nope: 0 not shown']);
    expect(shown.slice(1)).to.deep.equal(['after']);
  });

  it('with a synchronous journal one event-loop turn\'s updates are one group, shown after its microtask in order', async () => {
    const journal = asyncJournalOf(sqliteJournal(':memory:'));
    await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    let groupCalls = 0;
    const counted: AsyncJournal = { ...journal, appendGroup: (sessionId, entries) => (groupCalls++, journal.appendGroup(sessionId, entries)) };
    const shown: string[] = [];
    const queue = createJournalQueue<string>({ journal: hostJournalOf(counted), later: (run) => run(), write: (output) => shown.push(output), failed: () => expect.fail('no write fails') });
    for (const text of ['a', 'b', 'c']) queue.update('s1', update(text), (seq) => `${text}@${seq}`);
    expect(shown).to.deep.equal([]);
    await queue.settled();
    const seqs = (await journal.entries('s1')).map((record) => record.seq);
    expect(groupCalls).to.equal(1);
    expect(shown).to.deep.equal([`a@${seqs[0]}`, `b@${seqs[1]}`, `c@${seqs[2]}`]);
  });
});
