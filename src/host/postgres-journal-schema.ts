/**
 * The PostgreSQL journal's schema and its versioned migrations (table `warden_schema`, one row
 * per applied version), run by the shared runner (migrations.ts) in one transaction under a
 * transaction-level advisory lock: hosts starting together on one database migrate it once,
 * the others wait and find it migrated. docs/cluster-plan.md explains the tables.
 */
import type pg from 'pg';
import { runMigrationsAsync, type AsyncMigration } from './migrations.js';

/** The advisory lock key of the schema (any constant: "warden" in ASCII). */
const schemaLock = 0x77617264656e;

/** SQLSTATE of an append to a session the journal does not know. */
export const unknownSessionState = 'WU001';
/** SQLSTATE of a write fenced by the session's epoch (another owner, or none). */
export const fencedState = 'WF001';

const version1 = `
CREATE TABLE hosts (
  host_id text COLLATE "C" PRIMARY KEY,
  name text NOT NULL,
  pid integer NOT NULL,
  advertise text,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  lease_until timestamptz NOT NULL,
  state text NOT NULL DEFAULT 'live',
  load integer NOT NULL DEFAULT 0
);
CREATE SEQUENCE entry_seq;
CREATE TABLE sessions (
  key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text COLLATE "C" NOT NULL UNIQUE,
  agent text NOT NULL,
  cwd text NOT NULL,
  title text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  state text NOT NULL,
  resume text,
  restarts integer NOT NULL DEFAULT 0,
  owner_host text COLLATE "C",
  epoch bigint NOT NULL DEFAULT 0,
  owned_at timestamptz
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, session_id DESC);
CREATE INDEX sessions_by_owner ON sessions (owner_host) WHERE owner_host IS NOT NULL;
CREATE TABLE entries (
  seq bigint PRIMARY KEY,
  session_key bigint NOT NULL,
  at timestamptz NOT NULL,
  kind text NOT NULL,
  entry text NOT NULL
);
CREATE INDEX entries_by_session ON entries (session_key, seq);

-- The fenced append: the epoch check and the inserts are one statement (one transaction).
-- The UPDATE takes the session's row lock and, in READ COMMITTED, re-checks the owner and
-- epoch on the newest row version: a takeover committed first makes this find no row; one
-- that comes second waits for this commit. So one session's seqs increase in commit order.
CREATE FUNCTION warden_append(p_session text, p_host text, p_epoch bigint, p_ats timestamptz[], p_kinds text[], p_entries text[], p_title text, p_restarts integer)
RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE
  k bigint;
  seqs bigint[] := '{}';
  owner text;
  current_epoch bigint;
BEGIN
  UPDATE sessions SET updated_at = p_ats[array_upper(p_ats, 1)], title = COALESCE(title, p_title), restarts = restarts + p_restarts
    WHERE session_id = p_session AND owner_host = p_host AND epoch = p_epoch
    RETURNING key INTO k;
  IF k IS NULL THEN
    SELECT owner_host, epoch INTO owner, current_epoch FROM sessions WHERE session_id = p_session;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = '${unknownSessionState}', MESSAGE = 'unknown session';
    END IF;
    RAISE EXCEPTION USING ERRCODE = '${fencedState}', MESSAGE = 'fenced', DETAIL = json_build_object('owner', owner, 'epoch', current_epoch)::text;
  END IF;
  -- The seqs drawn one by one, in the entries' order, then one INSERT for the rows (cheaper than one each).
  FOR i IN 1 .. coalesce(array_length(p_entries, 1), 0) LOOP
    seqs := seqs || nextval('entry_seq');
  END LOOP;
  INSERT INTO entries (seq, session_key, at, kind, entry) SELECT u.seq, k, u.at, u.kind, u.entry FROM unnest(seqs, p_ats, p_kinds, p_entries) AS u(seq, at, kind, entry);
  RETURN seqs;
END $$;

-- A fork's copy of its origin's conversation, in the origin's order (a loop: seqs given in that order).
CREATE FUNCTION warden_copy_conversation(p_from bigint, p_to bigint) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT at, kind, entry FROM entries WHERE session_key = p_from AND kind IN ('prompt', 'update', 'notice') ORDER BY seq LOOP
    INSERT INTO entries (seq, session_key, at, kind, entry) VALUES (nextval('entry_seq'), p_to, r.at, r.kind, r.entry);
  END LOOP;
END $$;
`;

const migrations: ReadonlyArray<AsyncMigration<pg.ClientBase>> = [
  { version: 1, name: 'journal, owners with epochs, hosts', up: async (client) => void (await client.query(version1)) },
];

/**
 * Brings the database behind `client` to the latest schema, in one transaction under the
 * schema's advisory lock; refuses a newer schema (`SchemaTooNewError`), leaving it untouched.
 * `where` names the database in errors (its URL without the password).
 */
export async function ensurePostgresSchema(client: pg.ClientBase, where: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [schemaLock]);
    await client.query('CREATE TABLE IF NOT EXISTS warden_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
    await runMigrationsAsync(client, migrations, {
      where,
      version: async (store) => Number((await store.query<{ version: number | null }>('SELECT max(version) AS version FROM warden_schema')).rows[0]?.version ?? 0),
      recordVersion: async (store, step) => void (await store.query('INSERT INTO warden_schema (version, name) VALUES ($1, $2)', [step.version, step.name])),
    });
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
