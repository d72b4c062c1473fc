import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { isPostgresUrl, redactedUrl } from '../../src/journal/store-url.js';

describe('a store string: a PostgreSQL URL or a SQLite path', () => {
  it('tells a PostgreSQL URL from a path, and names it without its password', () => {
    expect(isPostgresUrl('postgres://u@h/db')).to.equal(true);
    expect(isPostgresUrl('POSTGRESQL://u@h/db')).to.equal(true);
    expect(isPostgresUrl('/var/lib/warden/postgres.sqlite')).to.equal(false);
    expect(isPostgresUrl(':memory:')).to.equal(false);
    expect(redactedUrl('postgres://warden:s3cret@127.0.0.1:5432/journal')).to.equal('postgres://warden:***@127.0.0.1:5432/journal');
  });

  it('the SQLite engine refuses a PostgreSQL URL (createHost opens those on PostgreSQL), naming it without the password and making no file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-store-url-'));
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      expect(() => sqliteJournal('postgres://warden:s3cret@127.0.0.1:5432/journal'))
        .to.throw(TypeError, 'the store postgres://warden:***@127.0.0.1:5432/journal is a PostgreSQL URL')
        .with.property('message')
        .that.does.not.contain('s3cret');
      expect(existsSync(join(dir, 'postgres:'))).to.equal(false);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
