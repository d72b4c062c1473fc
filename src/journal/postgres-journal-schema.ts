/**
 * The PostgreSQL journal's schema and its versioned migrations (table `warden_schema`, one row
 * per applied version), run by the shared runner (migrations.ts) in one transaction under a
 * transaction-level advisory lock: hosts starting together on one database migrate it once,
 * the others wait and find it migrated. docs/cluster.md ("One PostgreSQL, many hosts") describes the tables.
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

// Every write carries an idempotency key (the writing journal's host id and a counter): a
// write retried after its connection died with the COMMIT's outcome unknown is not written
// twice. The key is stored on the write's first entry (unique); the write's other entries are
// the session's next ones (its seqs are drawn under the session's row lock, so nothing of the
// session comes between them). The version-1 function stays for hosts still running the old code.
const version2 = `
ALTER TABLE entries ADD COLUMN write_id text COLLATE "C";
CREATE UNIQUE INDEX entries_by_write ON entries (write_id);

CREATE FUNCTION warden_append(p_session text, p_host text, p_epoch bigint, p_write text, p_ats timestamptz[], p_kinds text[], p_entries text[], p_title text, p_restarts integer)
RETURNS bigint[] LANGUAGE plpgsql AS $$
DECLARE
  k bigint;
  owner text;
  current_epoch bigint;
  first_seq bigint;
  seqs bigint[] := '{}';
BEGIN
  -- The session's row lock first (a takeover takes it too, so a takeover committed first is
  -- seen here, and one coming second waits for this commit). An earlier attempt of this write
  -- still running on a connection that died holds it as well: it is waited for, then seen below.
  SELECT key, owner_host, epoch INTO k, owner, current_epoch FROM sessions WHERE session_id = p_session FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = '${unknownSessionState}', MESSAGE = 'unknown session';
  END IF;
  -- A retry of a write that committed: the seqs written then (under the epoch held then), nothing written again.
  SELECT seq INTO first_seq FROM entries WHERE write_id = p_write AND session_key = k;
  IF FOUND THEN
    RETURN ARRAY(SELECT seq FROM entries WHERE session_key = k AND seq >= first_seq ORDER BY seq LIMIT coalesce(array_length(p_entries, 1), 0));
  END IF;
  IF owner IS DISTINCT FROM p_host OR current_epoch <> p_epoch THEN
    RAISE EXCEPTION USING ERRCODE = '${fencedState}', MESSAGE = 'fenced', DETAIL = json_build_object('owner', owner, 'epoch', current_epoch)::text;
  END IF;
  UPDATE sessions SET updated_at = p_ats[array_upper(p_ats, 1)], title = COALESCE(title, p_title), restarts = restarts + p_restarts WHERE key = k;
  FOR i IN 1 .. coalesce(array_length(p_entries, 1), 0) LOOP
    seqs := seqs || nextval('entry_seq');
  END LOOP;
  INSERT INTO entries (seq, session_key, at, kind, entry, write_id)
    SELECT u.seq, k, u.at, u.kind, u.entry, CASE WHEN u.i = 1 THEN p_write END
    FROM unnest(seqs, p_ats, p_kinds, p_entries) WITH ORDINALITY AS u(seq, at, kind, entry, i);
  RETURN seqs;
END $$;
`;

/**
 * A prompt entry's idempotency key as the index `entries_by_prompt_key` keys it: the JSON string
 * literal (quotes and escapes kept) right after `"kind":"prompt",` at the entry's start, where the
 * host writes it (session-prompts.ts). Read from the text, not through `json`/`jsonb`: both
 * refuse a `\u0000` anywhere in the entry (a `warden serve` request id holds one), which would
 * refuse the prompt's append. The lookup passes the key as `JSON.stringify(key)`.
 */
export const promptKeyExpression = String.raw`substring(entry from '^\{"kind":"prompt","idempotencyKey":("(?:[^"\\]|\\.)*")')`;

// The prompts journaled with an idempotency key, found by (session, key) from any host and after
// a restart: a partial index on prompt entries only (other entries' inserts are not touched).
// Hosts running the code of version 2 write as before.
const version3 = `
CREATE INDEX entries_by_prompt_key ON entries (session_key, (${promptKeyExpression})) WHERE kind = 'prompt';
`;

// A subagent child session names the session that announced it (NULL: a session of its own,
// every session of an older store). A child is owned by nobody (its parent's host runs it), so
// no takeover picks it up. Hosts running the code of version 3 read and write as before.
const version4 = `
ALTER TABLE sessions ADD COLUMN parent_session_id text COLLATE "C";
CREATE INDEX sessions_by_parent ON sessions (parent_session_id) WHERE parent_session_id IS NOT NULL;
`;

const migrations: ReadonlyArray<AsyncMigration<pg.ClientBase>> = [
  { version: 1, name: 'journal, owners with epochs, hosts', up: async (client) => void (await client.query(version1)) },
  { version: 2, name: 'idempotent appends (entries.write_id)', up: async (client) => void (await client.query(version2)) },
  { version: 3, name: 'prompts found by idempotency key', up: async (client) => void (await client.query(version3)) },
  { version: 4, name: 'subagent children name their parent session', up: async (client) => void (await client.query(version4)) },
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
