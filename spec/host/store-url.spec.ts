import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHost } from '../../src/host/host.js';

describe('a postgres:// store before the host runs on PostgreSQL', () => {
  it('createHost refuses it naming the database without the password, and makes no file named after the URL', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-store-url-'));
    const cwd = process.cwd();
    try {
      process.chdir(dir);
      expect(() => createHost({ store: 'postgres://warden:s3cret@127.0.0.1:5432/journal' }))
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
