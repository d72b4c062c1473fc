import { expect } from 'chai';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

describe('journal pages (readEntries)', () => {
  it('reads a session a page at a time, in order, after a seq, without the other sessions, bounded in entries and in bytes', () => {
    const journal = sqliteJournal(':memory:');
    try {
      journal.createSession({ sessionId: 'a', agent: 'demo', cwd: '/tmp' });
      journal.createSession({ sessionId: 'b', agent: 'demo', cwd: '/tmp' });
      for (let index = 0; index < 25; index++) {
        journal.append('a', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `a${index}` } } });
        journal.append('b', { kind: 'stop', stopReason: 'end_turn' });
      }
      const texts: string[] = [];
      let afterSeq = 0;
      let pages = 0;
      for (;;) {
        const page = journal.readEntries!('a', { afterSeq, limit: 10 });
        pages++;
        for (const record of page) {
          expect(record.sessionId).to.equal('a');
          texts.push((record.entry as { update: { content: { text: string } } }).update.content.text);
        }
        if (page.length < 10) break;
        afterSeq = page.at(-1)!.seq;
      }
      expect(pages).to.equal(3);
      expect(texts).to.deep.equal(Array.from({ length: 25 }, (_, index) => `a${index}`));
      // The same as the whole read.
      expect(journal.entries('a').map((record) => record.seq)).to.deep.equal(journal.readEntries!('a', { limit: 100 }).map((record) => record.seq));
      expect(journal.readEntries!('missing', { limit: 5 })).to.deep.equal([]);
      // A byte bound: the page stops after the entry that reaches it, never before the first.
      expect(journal.readEntries!('a', { limit: 10, maxBytes: 1 })).to.have.length(1);
      const [first, second] = journal.readEntries!('a', { limit: 2 }).map((record) => JSON.stringify(record.entry).length);
      expect(journal.readEntries!('a', { limit: 10, maxBytes: first! + second! })).to.have.length(2);
      expect(journal.readEntries!('a', { limit: 10, maxBytes: first! + second! + 1 })).to.have.length(3);
      expect(() => journal.readEntries!('a', { limit: 0 })).to.throw(TypeError, /positive integer/);
    } finally {
      journal.close();
    }
  });
});
