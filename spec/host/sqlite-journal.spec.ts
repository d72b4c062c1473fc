import { expect } from 'chai';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { InvalidCursorError, SessionOwnedError, UnknownSessionError, type Journal } from '../../src/journal/journal.js';
import { defaultJournalPath, sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { nextMillisecond } from '../support/settle.js';

describe('sqliteJournal', () => {
  let journal: Journal;
  let clock: number;
  const now = () => new Date(Date.UTC(2026, 10, 30, 12, 0, 0) + clock++ * 1000);

  beforeEach(() => {
    clock = 0;
    journal = sqliteJournal(':memory:', { now });
  });
  afterEach(() => journal.close());

  it('records a session as open, with no title, resume state or restarts', () => {
    const session = journal.createSession({ sessionId: 's1', agent: 'claude', cwd: '/work' });
    expect(session).to.include({ sessionId: 's1', agent: 'claude', cwd: '/work', state: 'open', title: undefined, resume: undefined, restarts: 0 });
    expect(() => journal.createSession({ sessionId: 's1', agent: 'claude', cwd: '/work' })).to.throw();
  });

  it('returns entries in append order with increasing seq, and after a given seq', () => {
    journal.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
    const first = journal.append('s1', { kind: 'prompt', prompt: [{ type: 'text', text: 'hello there\nsecond line' }] });
    const second = journal.append('s1', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } } });
    const third = journal.append('s1', { kind: 'stop', stopReason: 'end_turn' });
    expect(second).to.be.greaterThan(first);
    expect(third).to.be.greaterThan(second);
    expect(journal.entries('s1').map((record) => record.entry.kind)).to.deep.equal(['prompt', 'update', 'stop']);
    expect(journal.entries('s1', second).map((record) => record.seq)).to.deep.equal([third]);
    expect(journal.getSession('s1')?.title).to.equal('hello there');
  });

  it('stamps each entry with the wall clock when no clock is given, also many in one group', async () => {
    const wall = sqliteJournal(':memory:');
    try {
      wall.createSession({ sessionId: 's1', agent: 'demo', cwd: '/w' });
      const stamps: Array<{ before: number; after: number }> = [];
      for (let round = 0; round < 3; round++) {
        wall.begin?.();
        for (let index = 0; index < 200; index++) {
          const before = Date.now();
          wall.append('s1', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `#${index}` } } });
          stamps.push({ before, after: Date.now() });
        }
        wall.commit?.();
        await nextMillisecond(); // the next group in a later millisecond
      }
      const records = wall.entries('s1');
      expect(records).to.have.length(600);
      records.forEach((record, index) => {
        const at = Date.parse(record.at);
        expect(record.at).to.equal(new Date(at).toISOString());
        expect(at, `entry ${index}`).to.be.within((stamps[index] as { before: number }).before, (stamps[index] as { after: number }).after);
      });
      expect(Date.parse(wall.getSession('s1')?.updatedAt as string)).to.equal(Date.parse((records.at(-1) as { at: string }).at));
    } finally {
      wall.close();
    }
  });

  it('keeps the first prompt as the title and counts restarts', () => {
    journal.createSession({ sessionId: 's1', agent: 'claude', cwd: '/w' });
    journal.append('s1', { kind: 'prompt', prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'text', text: `  ${'x'.repeat(100)}` }] });
    journal.append('s1', { kind: 'prompt', prompt: [{ type: 'text', text: 'another' }] });
    journal.append('s1', { kind: 'restart', restarts: 1, exit: { kind: 'signaled', signal: 'SIGKILL' } });
    journal.append('s1', { kind: 'restart', restarts: 2, exit: { kind: 'exited', code: 1 } });
    const session = journal.getSession('s1');
    expect(session?.title).to.have.length(80);
    expect(session?.title?.endsWith('…')).to.equal(true);
    expect(session?.restarts).to.equal(2);
  });

  it('stores the resume state and the session state', () => {
    journal.createSession({ sessionId: 's1', agent: 'codex', cwd: '/w' });
    journal.setResume('s1', { threadId: 'thr_1' });
    journal.setState('s1', 'failed');
    expect(journal.getSession('s1')).to.deep.include({ resume: { threadId: 'thr_1' }, state: 'failed' });
  });

  it('refuses entries for a session it does not know, naming it', () => {
    expect(() => journal.append('nope', { kind: 'closed' })).to.throw(UnknownSessionError, '"nope"');
    expect(() => journal.setResume('nope', {})).to.throw(UnknownSessionError);
    expect(journal.getSession('nope')).to.equal(undefined);
  });

  it('lists the most recently updated first, filters by cwd, and pages with cursors', () => {
    for (let index = 0; index < 5; index++) journal.createSession({ sessionId: `s${index}`, agent: 'demo', cwd: index % 2 ? '/odd' : '/even' });
    journal.append('s1', { kind: 'closed' }); // s1 is now the newest
    expect(journal.listSessions().sessions.map((session) => session.sessionId)).to.deep.equal(['s1', 's4', 's3', 's2', 's0']);
    expect(journal.listSessions({ cwd: '/odd' }).sessions.map((session) => session.sessionId)).to.deep.equal(['s1', 's3']);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = journal.listSessions({ limit: 2, ...(cursor ? { cursor } : {}) });
      seen.push(...page.sessions.map((session) => session.sessionId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).to.deep.equal(['s1', 's4', 's3', 's2', 's0']);
    expect(pages).to.equal(3);
  });

  it('refuses a cursor it did not make', () => {
    expect(() => journal.listSessions({ cursor: 'garbage' })).to.throw(InvalidCursorError, 'nextCursor');
  });

  describe('on disk', () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'warden-journal-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('keeps what was appended by a process that was then SIGKILLed', () => {
      const path = join(dir, 'nested', 'journal.sqlite');
      const script = `
        import { sqliteJournal } from ${JSON.stringify(new URL('../../src/journal/sqlite-journal.ts', import.meta.url).pathname)};
        const journal = sqliteJournal(${JSON.stringify(path)});
        journal.createSession({ sessionId: 'k1', agent: 'claude', cwd: '/w' });
        for (let i = 0; i < 100; i++) journal.append('k1', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: String(i) } } });
        journal.setResume('k1', { claudeSessionId: 'abc' });
        process.kill(process.pid, 'SIGKILL');
      `;
      let status: string | null = null;
      try {
        execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'pipe', timeout: 30_000 });
      } catch (error) {
        status = (error as { signal: string | null }).signal;
      }
      expect(status).to.equal('SIGKILL');
      const reopened = sqliteJournal(path);
      try {
        expect(reopened.entries('k1')).to.have.length(100);
        expect(reopened.getSession('k1')?.resume).to.deep.equal({ claudeSessionId: 'abc' });
      } finally {
        reopened.close();
      }
    });

    it('group commit: appends between begin() and commit() become visible (durable) together, and the session is touched once', () => {
      const path = join(dir, 'journal.sqlite');
      let clock = Date.parse('2026-11-30T10:00:00Z');
      const writer = sqliteJournal(path, { now: () => new Date((clock += 1000)) });
      const reader = sqliteJournal(path);
      try {
        writer.createSession({ sessionId: 'g1', agent: 'claude', cwd: '/w' });
        writer.begin?.();
        for (let i = 0; i < 20; i++) writer.append('g1', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: String(i) } } });
        expect(writer.entries('g1'), 'the writer sees its own group').to.have.length(20);
        expect(reader.entries('g1'), 'nothing is on disk before the commit').to.have.length(0);
        writer.commit?.();
        expect(reader.entries('g1').map((record) => (record.entry as { update: { content: { text: string } } }).update.content.text)).to.deep.equal(Array.from({ length: 20 }, (_, i) => String(i)));
        // updated_at is the last append's time, written once at the commit.
        expect(reader.getSession('g1')?.updatedAt).to.equal(new Date(clock).toISOString());
        // After the group, an append is its own transaction again.
        writer.append('g1', { kind: 'stop', stopReason: 'end_turn' });
        expect(reader.entries('g1')).to.have.length(21);
      } finally {
        reader.close();
        writer.close();
      }
    });

    it('group commit: a group of many rows (inserted several at a time) keeps every seq append gave, in order, after a seq given before and before one given after', () => {
      const path = join(dir, 'journal.sqlite');
      const writer = sqliteJournal(path);
      const reader = sqliteJournal(path);
      try {
        writer.createSession({ sessionId: 'm1', agent: 'claude', cwd: '/w' });
        writer.createSession({ sessionId: 'm2', agent: 'claude', cwd: '/w' });
        const before = writer.append('m1', { kind: 'prompt', prompt: [{ type: 'text', text: 'go' }] });
        writer.begin?.();
        const given: Array<[string, number]> = [];
        for (let i = 0; i < 150; i++) {
          const sessionId = i % 3 === 0 ? 'm2' : 'm1';
          given.push([sessionId, writer.append(sessionId, { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: String(i) } } })]);
        }
        expect(given.map(([, seq]) => seq), 'one seq each, in order, after the prompt').to.deep.equal(Array.from({ length: 150 }, (_, i) => before + 1 + i));
        expect(writer.lastSeq?.('m1'), 'a read in the group sees all of it').to.equal(given.filter(([sessionId]) => sessionId === 'm1').at(-1)?.[1]);
        writer.commit?.();
        const after = writer.append('m1', { kind: 'stop', stopReason: 'end_turn' });
        expect(after).to.equal(before + 151);
        for (const sessionId of ['m1', 'm2']) {
          const records = reader.entries(sessionId).filter((record) => record.entry.kind === 'update');
          expect(records.map((record) => [record.sessionId, record.seq]), sessionId).to.deep.equal(given.filter(([id]) => id === sessionId));
          expect(records.map((record) => (record.entry as { update: { content: { text: string } } }).update.content.text)).to.deep.equal(given.flatMap(([id], i) => (id === sessionId ? [String(i)] : [])));
        }
      } finally {
        reader.close();
        writer.close();
      }
    });

    it('group commit: any write other than an update commits the open group first (durable when it returns, whoever opened the group)', () => {
      const path = join(dir, 'journal.sqlite');
      const writer = sqliteJournal(path);
      const reader = sqliteJournal(path);
      try {
        writer.createSession({ sessionId: 'g2', agent: 'claude', cwd: '/w' });
        writer.begin?.();
        writer.append('g2', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'grouped' } } });
        writer.append('g2', { kind: 'stop', stopReason: 'end_turn' });
        expect(reader.entries('g2').map((record) => record.entry.kind), 'the group went first, then the stop on its own').to.deep.equal(['update', 'stop']);
        writer.begin?.();
        writer.append('g2', { kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'again' } } });
        writer.setState('g2', 'closed');
        expect(reader.entries('g2')).to.have.length(3);
        expect(reader.getSession('g2')?.state).to.equal('closed');
        expect(() => writer.commit?.(), 'nothing left to commit, nothing lost').to.not.throw();
      } finally {
        reader.close();
        writer.close();
      }
    });

    it('two processes appending to one store at once (issue 14): every write waits its turn, none fails, every entry is there', async function () {
      this.timeout(120_000);
      const path = join(dir, 'shared.sqlite');
      const perProcess = 20_000;
      // Each writer (after both are ready): a new session every 20 entries, single appends,
      // a group of updates now and then, resume states and state changes: every kind of write.
      const script = (name: string) => `
        import { sqliteJournal } from ${JSON.stringify(new URL('../../src/journal/sqlite-journal.ts', import.meta.url).pathname)};
        const journal = sqliteJournal(${JSON.stringify(path)});
        process.stdout.write('ready\\n');
        await new Promise((resolve) => process.stdin.once('data', resolve));
        const failures = [];
        const attempt = (write) => { try { write(); } catch (error) { failures.push(error.message); } };
        const update = (i) => ({ kind: 'update', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: String(i) } } });
        for (let i = 0; i < ${perProcess}; ) {
          const sessionId = ${JSON.stringify(name)} + '-' + Math.floor(i / 20);
          if (i % 20 === 0) attempt(() => journal.createSession({ sessionId, agent: 'demo', cwd: '/w' }));
          if (i % 50 === 10) {
            attempt(() => journal.begin());
            for (let k = 0; k < 10; k++, i++) attempt(() => journal.append(sessionId, update(i)));
            attempt(() => journal.commit());
            continue;
          }
          attempt(() => journal.append(sessionId, update(i)));
          if (i % 25 === 0) attempt(() => journal.setResume(sessionId, { at: i }));
          if (i % 50 === 0) attempt(() => journal.setState(sessionId, 'open'));
          i++;
        }
        journal.close();
        process.stdout.write(JSON.stringify({ failures: failures.length, first: failures[0] }) + '\\n');
        process.stdin.destroy();
      `;
      const writers = ['w1', 'w2'].map((name) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(name)], { stdio: ['pipe', 'pipe', 'inherit'] });
        let out = '';
        const ready = new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString('utf8');
          if (out.includes('ready')) resolve();
        }));
        const done = new Promise<{ failures: number; first?: string }>((resolve, reject) => child.once('exit', (code) => {
          if (code !== 0) return reject(new Error(`writer ${name} exited ${code}`));
          resolve(JSON.parse(out.trim().split('\n').at(-1) as string) as { failures: number; first?: string });
        }));
        return { name, child, ready, done };
      });
      try {
        await Promise.all(writers.map((writer) => writer.ready));
        for (const writer of writers) writer.child.stdin.write('go\n');
        const outcomes = await Promise.all(writers.map((writer) => writer.done));
        expect(outcomes, 'no write failed in either process').to.deep.equal([{ failures: 0 }, { failures: 0 }]);
        const reader = sqliteJournal(path);
        try {
          for (const { name } of writers) {
            const texts: number[] = [];
            for (let session = 0; session < perProcess / 20; session++) {
              for (const record of reader.entries(`${name}-${session}`)) texts.push(Number((record.entry as { update: { content: { text: string } } }).update.content.text));
            }
            expect(texts, name).to.deep.equal(Array.from({ length: perProcess }, (_, i) => i));
          }
        } finally {
          reader.close();
        }
      } finally {
        for (const { child } of writers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    });

    it('session owners: one journal at a time holds a session; a row of a dead process, or of a reused pid (another start time), holds nothing', () => {
      const path = join(dir, 'owners.sqlite');
      const first = sqliteJournal(path);
      const second = sqliteJournal(path);
      const raw = new Database(path);
      try {
        first.createSession({ sessionId: 'o1', agent: 'demo', cwd: '/w' });
        first.claim?.('o1');
        first.claim?.('o1'); // again: a no-op
        expect(() => second.claim?.('o1')).to.throw(SessionOwnedError, `pid ${process.pid}`);
        second.release?.('o1'); // not its own: left alone
        expect(() => second.claim?.('o1')).to.throw(SessionOwnedError);
        // The same pid, started at another time: a reused pid, not the owner.
        raw.prepare("UPDATE owners SET started = 'an-earlier-boot:12345' WHERE session_id = 'o1'").run();
        second.claim?.('o1');
        expect(() => first.claim?.('o1')).to.throw(SessionOwnedError);
        // A process that has exited.
        const gone = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }));
        raw.prepare('UPDATE owners SET pid = ? WHERE session_id = ?').run(gone, 'o1');
        first.claim?.('o1');
        second.close();
        expect(raw.prepare('SELECT pid FROM owners').all(), 'closing released nothing of the other').to.deep.equal([{ pid: process.pid }]);
        first.close();
        expect(raw.prepare('SELECT * FROM owners').all(), 'closing released its own').to.deep.equal([]);
      } finally {
        raw.close();
        first.close();
        second.close();
      }
    });

    it('names the path and the fix when the file cannot be opened', () => {
      expect(() => sqliteJournal(join(dir))).to.throw(/cannot open the journal at .*--store PATH/);
    });
  });

  it('defaults to the XDG state directory', () => {
    expect(defaultJournalPath({ XDG_STATE_HOME: '/state' })).to.equal('/state/acp-warden/journal.sqlite');
    expect(defaultJournalPath({})).to.match(/\/\.local\/state\/acp-warden\/journal\.sqlite$/);
  });
});
