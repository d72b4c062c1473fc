/**
 * The journal's errors (src/journal/error-brand.ts): each keeps its name and its message, and
 * `instanceof` holds across two copies of the module (a process that loads acp-warden twice, as
 * CommonJS and as ESM, has two classes of each name); a class never matches another's error.
 */
import { expect } from 'chai';
import { FencedAppendError } from '../../src/journal/async-journal.js';
import { InvalidCursorError, JournalError, SessionOwnedError, UnknownSessionError } from '../../src/journal/journal.js';
import { PostgresJournalError } from '../../src/journal/postgres-journal-error.js';

type JournalModule = typeof import('../../src/journal/journal.js');
type AsyncJournalModule = typeof import('../../src/journal/async-journal.js');

const owner = { pid: 4242, host: 'build-7', acquiredAt: '2026-12-04T12:00:00.000Z' };

describe('journal errors: names, messages, instanceof across copies of the module', () => {
  it('each keeps its name and its message', () => {
    const made: Array<[Error, string, string]> = [
      [new UnknownSessionError('s1'), 'UnknownSessionError', 'the journal has no session "s1"'],
      [new SessionOwnedError('s1', owner), 'SessionOwnedError', 'session s1 is live in another warden (pid 4242 on build-7, since 2026-12-04T12:00:00.000Z): close it there (session/close, or close that editor) or stop that process, then load it again here'],
      [new InvalidCursorError('x'), 'InvalidCursorError', 'invalid cursor "x": pass back the nextCursor of a previous session/list answer'],
      [new JournalError('/tmp/j.db', 'SQLITE_FULL'), 'JournalError', 'the journal /tmp/j.db cannot grow (SQLITE_FULL): free some disk space'],
      [new FencedAppendError('s1', 3, { hostId: 'h2', epoch: 4 }), 'FencedAppendError', "the journal refused a write to session s1: this host's epoch 3 is stale (host h2 owns it at epoch 4): the session runs there now"],
      [new FencedAppendError('s1', undefined, { hostId: undefined, epoch: 4 }), 'FencedAppendError', 'the journal refused a write to session s1: this host does not own it (nobody owns it now, epoch 4): claim it first'],
    ];
    for (const [error, name, message] of made) {
      expect(error.name, name).to.equal(name);
      expect(error.message, name).to.equal(message);
      expect(String(error), name).to.equal(`${name}: ${message}`);
      expect(error, name).to.be.instanceOf(Error);
    }
    const cause = Object.assign(new Error('no space left'), { code: '53100' });
    const store = new PostgresJournalError('postgres://warden@db/warden', '53100', cause);
    // A subclass of JournalError: its name stays JournalError's, and it is one.
    expect(store.name).to.equal('JournalError');
    expect(store).to.be.instanceOf(JournalError).and.instanceOf(PostgresJournalError);
    expect(store.cause).to.equal(cause);
  });

  it('instanceof holds across two copies of the module, and tells one class from another', async () => {
    const copy = (await import(`../../src/journal/journal.ts?copy=${Date.now()}` as string)) as JournalModule;
    const asyncCopy = (await import(`../../src/journal/async-journal.ts?copy=${Date.now()}` as string)) as AsyncJournalModule;
    expect(copy.UnknownSessionError, 'a second copy of the module').to.not.equal(UnknownSessionError);
    expect(new copy.UnknownSessionError('s1')).to.be.instanceOf(UnknownSessionError);
    expect(new UnknownSessionError('s1')).to.be.instanceOf(copy.UnknownSessionError);
    expect(new copy.SessionOwnedError('s1', owner)).to.be.instanceOf(SessionOwnedError);
    expect(new copy.InvalidCursorError('x')).to.be.instanceOf(InvalidCursorError);
    expect(new copy.JournalError('/tmp/j.db', 'SQLITE_FULL')).to.be.instanceOf(JournalError);
    expect(new asyncCopy.FencedAppendError('s1', 3, { hostId: 'h2', epoch: 4 })).to.be.instanceOf(FencedAppendError);
    expect(new PostgresJournalError('postgres://warden@db/warden', '08006', new Error('gone'))).to.be.instanceOf(copy.JournalError);
    expect(new copy.UnknownSessionError('s1')).to.not.be.instanceOf(SessionOwnedError);
    expect(new JournalError('/tmp/j.db', 'SQLITE_FULL')).to.not.be.instanceOf(PostgresJournalError);
    expect(new asyncCopy.FencedAppendError('s1', 3, { hostId: 'h2', epoch: 4 })).to.not.be.instanceOf(copy.JournalError);
    expect(new Error('plain')).to.not.be.instanceOf(UnknownSessionError);
  });
});
