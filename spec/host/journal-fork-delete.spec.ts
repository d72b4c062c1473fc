/**
 * The journal's `forkSession` and `deleteSession` (SQLite engine, on a real file): what
 * `session/fork` and `session/delete` behind the host rely on.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UnknownSessionError, type Journal, type JournalEntry } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';

const said = (text: string): JournalEntry => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } });

describe('journal: forkSession and deleteSession (SQLite)', () => {
  let dir: string;
  let path: string;
  let journal: Journal;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-journal-fork-'));
    path = join(dir, 'journal.sqlite');
    journal = sqliteJournal(path);
  });

  afterEach(() => {
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a fork starts with a copy of the source conversation (prompts, updates, notices, in order), and its title', () => {
    journal.createSession({ sessionId: 'source', agent: 'demo', cwd: '/work' });
    journal.append('source', { kind: 'prompt', prompt: [{ type: 'text', text: 'first question' }] });
    journal.append('source', said('an answer'));
    journal.append('source', { kind: 'restart', restarts: 1, exit: 'signaled SIGKILL' });
    journal.append('source', { kind: 'notice', severity: 'warning', title: 'demo restarted', description: 'restart 1' });
    journal.append('source', { kind: 'recovered', restarts: 1 });
    journal.append('source', { kind: 'stop', stopReason: 'end_turn' });
    const fork = journal.forkSession({ sessionId: 'fork', agent: 'demo', cwd: '/elsewhere', from: 'source' });
    expect(fork).to.deep.include({ sessionId: 'fork', agent: 'demo', cwd: '/elsewhere', title: 'first question', state: 'open', restarts: 0 });
    expect(journal.entries('fork').map((record) => record.entry.kind)).to.deep.equal(['prompt', 'update', 'notice']);
    // The fork goes on by itself; the source is untouched.
    journal.append('fork', said('only in the fork'));
    expect(journal.entries('source')).to.have.length(6);
    expect(journal.entries('fork').at(-1)?.entry).to.deep.equal(said('only in the fork'));
    expect(journal.listSessions().sessions.map((session) => session.sessionId)).to.have.members(['source', 'fork']);
  });

  it('a fork of an unknown session, or onto an existing id, throws and records nothing', () => {
    journal.createSession({ sessionId: 'taken', agent: 'demo', cwd: '/work' });
    expect(() => journal.forkSession({ sessionId: 'new', agent: 'demo', cwd: '/work', from: 'nobody' })).to.throw(UnknownSessionError);
    expect(journal.getSession('new')).to.equal(undefined);
    expect(() => journal.forkSession({ sessionId: 'taken', agent: 'demo', cwd: '/work', from: 'taken' })).to.throw();
    expect(journal.entries('taken')).to.deep.equal([]);
  });

  it('a deleted session is gone for this journal and for another one on the same file: no record, no entries, no appends', () => {
    journal.createSession({ sessionId: 'kept', agent: 'demo', cwd: '/work' });
    journal.createSession({ sessionId: 'gone', agent: 'demo', cwd: '/work' });
    journal.append('gone', { kind: 'prompt', prompt: [{ type: 'text', text: 'forget me' }] });
    journal.deleteSession('gone');
    expect(journal.getSession('gone')).to.equal(undefined);
    expect(journal.entries('gone')).to.deep.equal([]);
    expect(journal.listSessions().sessions.map((session) => session.sessionId)).to.deep.equal(['kept']);
    // It was appended to before: an append now must not find it by a cached lookup.
    expect(() => journal.append('gone', said('late'))).to.throw(UnknownSessionError);
    journal.deleteSession('never-there'); // a no-op
    const later = sqliteJournal(path);
    try {
      expect(later.getSession('gone')).to.equal(undefined);
      expect(later.listSessions().sessions.map((session) => session.sessionId)).to.deep.equal(['kept']);
    } finally {
      later.close();
    }
  });

  it('a fork keeps its history when its source is deleted', () => {
    journal.createSession({ sessionId: 'source', agent: 'demo', cwd: '/work' });
    journal.append('source', { kind: 'prompt', prompt: [{ type: 'text', text: 'hello' }] });
    journal.forkSession({ sessionId: 'fork', agent: 'demo', cwd: '/work', from: 'source' });
    journal.deleteSession('source');
    expect(journal.entries('fork').map((record) => record.entry)).to.deep.equal([{ kind: 'prompt', prompt: [{ type: 'text', text: 'hello' }] }]);
    expect(journal.getSession('fork')?.title).to.equal('hello');
  });

  it('a fork of a long session copies every entry of its conversation (20,000 updates)', () => {
    journal.createSession({ sessionId: 'long', agent: 'demo', cwd: '/work' });
    journal.begin?.();
    for (let index = 0; index < 20_000; index++) journal.append('long', said(`word ${index} `));
    journal.commit?.();
    journal.forkSession({ sessionId: 'long-fork', agent: 'demo', cwd: '/work', from: 'long' });
    const copied = journal.entries('long-fork');
    expect(copied).to.have.length(20_000);
    expect(copied.at(-1)?.entry).to.deep.equal(said('word 19999 '));
  });
});
