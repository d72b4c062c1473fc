import { expect } from 'chai';
import { asyncJournalOf } from '../../src/journal/async-journal-of.js';
import { UnknownSessionError, type Journal } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

/** A journal with only the calls every journal has: what an embedder's own store may be. */
function bareJournal(): Journal {
  const { begin: _begin, commit: _commit, readEntries: _readEntries, stateEntries: _stateEntries, lastSeq: _lastSeq, claim: _claim, release: _release, ...bare } = sqliteJournal(':memory:');
  return bare;
}

const update = (text: string) => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } }) as const;

describe('asyncJournalOf (a synchronous journal as an AsyncJournal)', () => {
  it('a journal without the optional calls gets their fallbacks: pages, state entries and the last seq from entries, a group as appends', async () => {
    const journal = asyncJournalOf(bareJournal());
    try {
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const seqs = await journal.appendGroup('s1', [update('a'), update('b'), update('c')]);
      const mode = await journal.append('s1', { kind: 'mode', modeId: 'plan' });
      expect((await journal.entries('s1')).map((record) => record.seq)).to.deep.equal([...seqs, mode]);
      expect((await journal.readEntries('s1', { afterSeq: seqs[0] as number, limit: 2 })).map((record) => record.seq)).to.deep.equal(seqs.slice(1));
      expect(await journal.readEntries('s1', { limit: 10, maxBytes: 1 })).to.have.length(1);
      expect((await journal.stateEntries('s1')).map((record) => record.seq)).to.deep.equal([mode]);
      expect(await journal.lastSeq('s1')).to.equal(mode);
      expect(await journal.lastSeq('nope')).to.equal(0);
      expect(await journal.claim('s1')).to.deep.equal({ epoch: undefined });
      await journal.release('s1');
    } finally {
      await journal.close();
    }
  });

  it('a synchronous throw becomes a rejection (never thrown at the caller)', async () => {
    const journal = asyncJournalOf(sqliteJournal(':memory:'));
    try {
      const pending = journal.append('nope', { kind: 'closed' });
      expect(pending).to.be.instanceOf(Promise);
      let error: unknown;
      await pending.catch((caught: unknown) => {
        error = caught;
      });
      expect(error).to.be.instanceOf(UnknownSessionError);
      expect(await journal.claim('nope').catch((caught: unknown) => caught)).to.be.instanceOf(UnknownSessionError);
    } finally {
      await journal.close();
    }
  });

  it('a group on a journal with begin/commit is one commit: every update of it is there when it resolves', async () => {
    const sync = sqliteJournal(':memory:');
    const calls: string[] = [];
    const counted: Journal = {
      ...sync,
      begin: () => (calls.push('begin'), sync.begin?.()),
      append: (sessionId, entry) => (calls.push('append'), sync.append(sessionId, entry)),
      commit: () => (calls.push('commit'), sync.commit?.()),
    };
    const journal = asyncJournalOf(counted);
    try {
      await journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const seqs = await journal.appendGroup('s1', Array.from({ length: 100 }, (_, index) => update(`#${index}`)));
      expect(calls).to.deep.equal(['begin', ...seqs.map(() => 'append'), 'commit']);
      expect((sync.entries('s1')).map((record) => record.seq)).to.deep.equal(seqs);
    } finally {
      await journal.close();
    }
  });
});
