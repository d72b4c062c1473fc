import { expect } from 'chai';
import { pendingMigrations, runMigrations, runMigrationsAsync, SchemaTooNewError, type AsyncMigration, type Migration } from '../../src/journal/migrations.js';

/** A store that only remembers which steps ran and its version. */
interface FakeStore {
  version: number;
  ran: string[];
}

const steps: Array<Migration<FakeStore>> = [
  { version: 1, name: 'one', up: (store) => void store.ran.push('one') },
  { version: 2, name: 'two', up: (store) => void store.ran.push('two') },
  { version: 3, name: 'three', up: (store) => void store.ran.push('three') },
];

const schema = {
  where: '/var/lib/store',
  version: (store: FakeStore) => store.version,
  recordVersion: (store: FakeStore, step: { version: number }) => {
    store.version = step.version;
  },
};

describe('migrations (the versioned schema runner)', () => {
  it('runs the steps after the store version, in order, recording the version after each', () => {
    const store: FakeStore = { version: 1, ran: [] };
    expect(runMigrations(store, steps, schema)).to.equal(2);
    expect(store).to.deep.equal({ version: 3, ran: ['two', 'three'] });
    expect(runMigrations(store, steps, schema)).to.equal(0);
    expect(store.ran).to.deep.equal(['two', 'three']);
  });

  it('an empty store (version 0) runs every step', async () => {
    const store: FakeStore = { version: 0, ran: [] };
    const asyncSteps: Array<AsyncMigration<FakeStore>> = steps.map((step) => ({ ...step, up: async (s: FakeStore) => step.up(s) }));
    expect(await runMigrationsAsync(store, asyncSteps, { ...schema, version: async (s) => s.version, recordVersion: async (s, step) => schema.recordVersion(s, step) })).to.equal(3);
    expect(store).to.deep.equal({ version: 3, ran: ['one', 'two', 'three'] });
  });

  it('a step that fails stops the run there: the version is the last step that finished', () => {
    const store: FakeStore = { version: 0, ran: [] };
    const failing = [steps[0] as Migration<FakeStore>, { version: 2, name: 'bad', up: () => { throw new Error('disk full'); } }, steps[2] as Migration<FakeStore>];
    expect(() => runMigrations(store, failing, schema)).to.throw('disk full');
    expect(store).to.deep.equal({ version: 1, ran: ['one'] });
  });

  it('refuses a store newer than the code, naming its version, the known one and the fix, and runs nothing', () => {
    const store: FakeStore = { version: 4, ran: [] };
    expect(() => runMigrations(store, steps, schema))
      .to.throw(SchemaTooNewError, 'the store has schema version 4, newer than this acp-warden knows (3): upgrade acp-warden to the version that wrote it')
      .with.property('where', '/var/lib/store');
    expect(store.ran).to.deep.equal([]);
  });

  it('refuses a list of steps not numbered 1, 2, … (a mistake in the code)', () => {
    expect(() => pendingMigrations([{ version: 1 }, { version: 3 }], 0, 'x')).to.throw(TypeError, 'Expected migration 2 to have version 2, got `3`.');
    expect(() => pendingMigrations([{ version: 1 }], -1, 'x')).to.throw(TypeError, 'non-negative integer');
  });
});
