/**
 * Loaded with `--import` into a warden process (spec/cluster/store-connections.spec.ts): one
 * JSON line per `pg.Pool` and per `pg.Client` made outside a pool, appended to the file named
 * by WARDEN_PG_OPENERS, so a spec counts what the process opened on its store. Patches the pg
 * module object the program imports (the same instance: modules are cached by real path).
 */
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const pg = createRequire(import.meta.url)('pg');
const file = process.env.WARDEN_PG_OPENERS;
const note = (kind, options = {}) => appendFileSync(file, `${JSON.stringify({ kind, max: options.max ?? null, applicationName: options.application_name ?? null })}\n`);
const { Pool, Client } = pg;
pg.Pool = class CountedPool extends Pool {
  constructor(options) {
    super(options);
    note('pool', options);
  }
};
pg.Client = class CountedClient extends Client {
  constructor(options) {
    super(options);
    note('client', options);
  }
};
