/**
 * Versioned schema migrations, one runner for every journal engine. A store has a version (0:
 * empty, or made before versions existed); migration `n` brings it from `n - 1` to `n`. Each
 * engine keeps the version its own way (SQLite: `PRAGMA user_version`; PostgreSQL: a
 * `warden_schema` table) and runs the steps inside one transaction it holds exclusively, so a
 * store is either at its old version or at the latest, and two processes opening an old store
 * at once migrate it once. A store newer than the code is refused, untouched.
 */

/** One step of a schema: what brings a store of `version - 1` to `version`. */
export interface Migration<TStore> {
  /** The version the store has after this step (1, 2, …: each one more than the previous). */
  readonly version: number;
  /** What it does, in a few words (PostgreSQL records it). */
  readonly name: string;
  readonly up: (store: TStore) => void;
}

/** An asynchronous step (PostgreSQL's driver answers with promises). */
export interface AsyncMigration<TStore> {
  readonly version: number;
  readonly name: string;
  readonly up: (store: TStore) => Promise<void>;
}

/** Raised when a store's schema is newer than this code's: it was written by a newer acp-warden. */
export class SchemaTooNewError extends Error {
  override readonly name = 'SchemaTooNewError';
  constructor(
    /** The store (file, or database URL without its password). */
    readonly where: string,
    readonly version: number,
    readonly known: number,
  ) {
    super(`the store has schema version ${version}, newer than this acp-warden knows (${known}): upgrade acp-warden to the version that wrote it`);
  }
}

/** The version a list of migrations brings a store to (0 for none). */
export function latestVersion(migrations: ReadonlyArray<{ readonly version: number }>): number {
  return migrations.at(-1)?.version ?? 0;
}

/**
 * The steps that bring a store of version `current` to the latest, in order; none when it is
 * there. Throws {@link SchemaTooNewError} for a newer store, and a `TypeError` for a list that
 * does not number its steps 1, 2, … (a mistake in the code, caught by the first open in any test).
 */
export function pendingMigrations<TStep extends { readonly version: number }>(migrations: readonly TStep[], current: number, where: string): TStep[] {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) throw new TypeError(`Expected migration ${index + 1} to have version ${index + 1}, got \`${migration.version}\`.`);
  });
  if (!Number.isInteger(current) || current < 0) throw new TypeError(`Expected the store's schema version to be a non-negative integer, got \`${current}\`.`);
  const latest = latestVersion(migrations);
  if (current > latest) throw new SchemaTooNewError(where, current, latest);
  return migrations.slice(current);
}

/** How a synchronous engine reads and records its version; `run` is called inside the engine's exclusive transaction. */
export interface SyncSchemaStore<TStore> {
  readonly where: string;
  readonly version: (store: TStore) => number;
  readonly recordVersion: (store: TStore, migration: Migration<TStore>) => void;
}

/**
 * Applies the pending steps of `migrations` to `store` (call it inside the engine's exclusive
 * transaction: the version is read again there), recording the version after each. Returns
 * how many steps ran.
 */
export function runMigrations<TStore>(store: TStore, migrations: ReadonlyArray<Migration<TStore>>, schema: SyncSchemaStore<TStore>): number {
  const steps = pendingMigrations(migrations, schema.version(store), schema.where);
  for (const step of steps) {
    step.up(store);
    schema.recordVersion(store, step);
  }
  return steps.length;
}

/** {@link SyncSchemaStore} for an engine whose calls return promises. */
export interface AsyncSchemaStore<TStore> {
  readonly where: string;
  readonly version: (store: TStore) => Promise<number>;
  readonly recordVersion: (store: TStore, migration: AsyncMigration<TStore>) => Promise<void>;
}

/** {@link runMigrations} for an engine whose calls return promises. */
export async function runMigrationsAsync<TStore>(store: TStore, migrations: ReadonlyArray<AsyncMigration<TStore>>, schema: AsyncSchemaStore<TStore>): Promise<number> {
  const steps = pendingMigrations(migrations, await schema.version(store), schema.where);
  for (const step of steps) {
    await step.up(store);
    await schema.recordVersion(store, step);
  }
  return steps.length;
}
