/**
 * Logging in to a PostgreSQL store that asks for a password, as docs/cluster.md sets one up
 * (a role with a password, `scram-sha-256` in pg_hba.conf), with the real CLI: the password
 * comes from PGPASSWORD or the URL (percent-encoded); a login that cannot work is named with
 * its fix, never with a stack trace nor the password.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { requirePostgres, startPostgres, type TestPostgres } from '../support/postgres.js';
import { wardenMain } from '../support/warden-process.js';

/** The role's password: `/` and `@` must be percent-encoded in a URL. */
const password = 'p/w@rd:1';

/** `warden ARGS` with only `env` of the PG* variables (none from the test's own environment). */
function warden(args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('PG')));
  return new Promise((resolve) => {
    execFile(process.execPath, [wardenMain, ...args], { timeout: 60_000, env: { ...clean, ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('a PostgreSQL store that asks for a password (docs/cluster.md setup)', function () {
  this.timeout(120_000);
  let server: TestPostgres;
  let at: string;

  before(async function () {
    requirePostgres(this);
    server = await startPostgres();
    const admin = new pg.Client(server.url);
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE login_test LOGIN PASSWORD '${password}'`);
      await admin.query('CREATE DATABASE login_test OWNER login_test');
      // The role logs in by password only (the suite's own role keeps trust).
      const hba = join(server.dataDir, 'data', 'pg_hba.conf');
      writeFileSync(hba, `host all login_test 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
      await admin.query('SELECT pg_reload_conf()');
    } finally {
      await admin.end();
    }
    at = `127.0.0.1:${server.port}/login_test`;
  });
  after(async () => server?.stop());

  it('PGPASSWORD logs in; without it the message names PGPASSWORD; a wrong one is refused naming the fix', async () => {
    const store = `postgres://login_test@${at}`;
    const none = await warden(['cluster', 'status', '--store', store]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.include('asks for a password and none was given').and.include('PGPASSWORD');
    const serveNone = await warden(['serve', '--listen', '127.0.0.1:0', '--store', store, '--agent', 'demo']);
    expect(serveNone.code).to.equal(2);
    expect(serveNone.stderr).to.include('asks for a password and none was given').and.include('PGPASSWORD');
    const wrong = await warden(['cluster', 'status', '--store', store], { PGPASSWORD: 'not it' });
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.include('28P01').and.include('PGPASSWORD');
    const right = await warden(['cluster', 'status', '--store', store], { PGPASSWORD: password });
    // In: the database holds no cluster yet.
    expect(right.code, right.stderr).to.equal(1);
    expect(right.stderr).to.include('has no warden cluster');
  });

  it('a password in the URL: percent-encoded it logs in; as typed (/ and @ in it) it is refused naming percent-encoding, without a stack trace or the password', async () => {
    const encoded = await warden(['cluster', 'status', '--store', `postgres://login_test:${encodeURIComponent(password)}@${at}`]);
    expect(encoded.stderr).to.include('has no warden cluster');
    for (const args of [['cluster', 'status'], ['serve', '--listen', '127.0.0.1:0', '--agent', 'demo']]) {
      const raw = await warden([...args, '--store', `postgres://login_test:${password}@${at}`]);
      expect(raw.code, raw.stderr).to.equal(2);
      expect(raw.stderr).to.include('percent-encode').and.include('PGPASSWORD');
      expect(raw.stderr).not.to.include(password).and.not.to.match(/^\s+at /mu);
    }
  });
});
