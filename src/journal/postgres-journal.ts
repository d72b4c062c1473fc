/**
 * The PostgreSQL journal (`pg`): the store many hosts share (docs/cluster.md). Each
 * journal is one host of the cluster: a row in `hosts` with a lease it renews, and the epoch of
 * every session it owns. Every write to a session is fenced by that epoch in the same statement
 * (`warden_append`, postgres-journal-schema.ts): a host that lost a session (another host
 * claimed it after its lease expired) has its writes refused with {@link FencedAppendError}.
 * An append is durable when its promise resolves (PostgreSQL's commit, `synchronous_commit` as
 * the server has it: `on` by default).
 *
 * A database that blinks (restarted, unreachable for seconds) is ridden out: every call that
 * fails with a connection error is tried again, with backoff, for up to `retryFor`; an append
 * carries a write id, so one retried after its COMMIT's answer was lost is not written twice
 * (docs/cluster.md, "Database faults").
 *
 * The host writes through it as through any journal that answers with promises
 * (host-journal.ts, agent/journal-queue.ts): `--store postgres://…`, `createHost({ store })`.
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { FencedAppendError, type AsyncJournal, type JournalUpdateEntry, type SessionClaim } from './async-journal.js';
import {
  SessionOwnedError,
  stateEntryKinds,
  titleOf,
  UnknownSessionError,
  type JournalEntry,
  type JournalSession,
} from './journal.js';
import { postgresRetryBackoff } from './postgres-connection.js';
import { storeOf, type PostgresStore } from './postgres-store.js';
import { connectionErrorCode, PostgresJournalError, storeError } from './postgres-journal-error.js';
import { decodeCursor, encodeCursor, recordOf, sessionOf, type EntryRow, type SessionRow } from './postgres-rows.js';
import { defaultLeaseMs, leaseStanding, type LeaseStanding } from './lease.js';
import { notifyExpression } from './wake-ups.js';
import { childrenOf } from './child-sessions.js';
import { entryText } from './entry-text.js';
import { ensurePostgresSchema, fencedState, promptKeyExpression, unknownSessionState } from './postgres-journal-schema.js';

export { PostgresJournalError } from './postgres-journal-error.js';

/** Options of {@link openPostgresJournal}. */
export interface PostgresJournalOptions {
  /** How long this host's ownership outlives its last renewal, in ms (default 12,000; tests: 2,000 or less). */
  readonly lease?: number;
  /** Renew the lease every `lease / 3` (default `true`; `false`: only {@link PostgresJournal.renewLease} does, for tests). */
  readonly renew?: boolean;
  /** `ws://…` the other hosts forward to (the `hosts` row: docs/cluster.md, "Routing"). */
  readonly advertise?: string;
  /** Connections in the pool for the journal's calls (default 4): the pool of its own store when opened on a URL; createHost's shared pool has 2 more (a takeover look, a routing look-up). The lease's renewals use one more of their own. */
  readonly connections?: number;
  /**
   * How long a call keeps retrying after a connection error (the server restarting, shut down,
   * unreachable), in ms from its first failure (default 30,000; 0: never retried). Retries back
   * off from 100 ms, doubling to 2 s. Then the call rejects with {@link PostgresJournalError}.
   */
  readonly retryFor?: number;
  /** The monotonic clock in ms of {@link PostgresJournal.standing} (default `performance.now`), for tests. */
  readonly monotonic?: () => number;
  /** The clock of the entries' and sessions' stamps, for tests. */
  readonly now?: () => Date;
}

/** A PostgreSQL journal: an {@link AsyncJournal} that is also one host of the cluster. */
export interface PostgresJournal extends AsyncJournal {
  /** Takes `sessionId` for this host (see {@link AsyncJournal.claim}): always at an epoch. */
  claim(sessionId: string): Promise<SessionClaim & { readonly epoch: number }>;
  /** This host's id in `hosts` (new at every open). */
  readonly hostId: string;
  /** The epoch this journal holds for `sessionId`, if it owns it. */
  epochOf(sessionId: string): number | undefined;
  /** How many sessions this journal holds an epoch for: the load its heartbeat reports, and placement weighs (cluster/placement.ts). */
  owned(): number;
  /** The lease this host holds its sessions by, in ms (the `lease` option). */
  readonly lease: number;
  /**
   * The lease as this host sees it on its own monotonic clock, from the send of its last
   * renewal that succeeded (journal/lease.ts): `held`, `suspended` (a lease without one: another
   * host may take its sessions) or `stopped` (two leases). A host frozen (SIGSTOP) sees the
   * whole pause at its first look.
   */
  standing(): LeaseStanding;
  /**
   * A rolling restart begins: the host row says `draining` (placement counts it no more) and
   * from now on `release` keeps each session this host's, so that stopping its agents leaves the
   * sessions to be handed over ({@link PostgresJournal.handOver}) rather than dropped.
   */
  startHandOver(): Promise<void>;
  /**
   * Ends this host's lease now (the row stays `draining`) and wakes the live members of the
   * cluster (`NOTIFY warden_cluster`, journal/wake-ups.ts), so that they take its open sessions
   * over at once (cluster/takeover.ts); resolves with how many are still its own when none is
   * left or after `waitMs`. Call it once its agents stopped; `close` after.
   */
  handOver(waitMs: number): Promise<number>;
  /**
   * Renews this host's lease now (also done every `lease / 3` unless `renew: false`). One
   * attempt, never retried: a connection error rejects it ({@link PostgresJournalError}), and the
   * timer's next tick is the retry. A failed renewal gives no session up.
   */
  renewLease(): Promise<void>;
}

const maxPage = 200;
const defaultRetryFor = 30_000;

/**
 * Opens the journal in the PostgreSQL database at `url` (`postgres://user@host:port/db`, or a
 * store opened by openPostgresStore, whose pool it then shares and does not end):
 * creates or migrates its schema, registers this host with a lease, and renews it.
 *
 * @example
 * ```ts
 * const journal = await openPostgresJournal('postgres://warden@db.internal/warden', { lease: 12_000 });
 * const session = await journal.createSession({ sessionId: 's1', agent: 'claude', cwd: '/work' });
 * await journal.append('s1', { kind: 'prompt', prompt: [{ type: 'text', text: 'hello' }] });
 * ```
 */
export async function openPostgresJournal(url: string | PostgresStore, options: PostgresJournalOptions = {}): Promise<PostgresJournal> {
  const lease = options.lease ?? defaultLeaseMs;
  if (!(Number.isInteger(lease) && lease > 0)) throw new TypeError(`Expected the \`lease\` option to be a positive integer of milliseconds, got \`${String(lease)}\` (${typeof lease}).`);
  const retryFor = options.retryFor ?? defaultRetryFor;
  if (!(Number.isInteger(retryFor) && retryFor >= 0)) throw new TypeError(`Expected the \`retryFor\` option to be a non-negative integer of milliseconds, got \`${String(retryFor)}\` (${typeof retryFor}).`);
  const now = options.now ?? (() => new Date());
  const { store, owned } = storeOf(url, { connections: options.connections ?? 4 });
  const { pool, where } = store;
  const hostId = randomUUID();
  const monotonic = options.monotonic ?? (() => performance.now());
  /** When the last renewal that succeeded was sent (the registration counts as one). */
  let renewedAt = monotonic();
  try {
    const client = await pool.connect();
    try {
      await ensurePostgresSchema(client, where);
    } finally {
      client.release();
    }
    await pool.query("INSERT INTO hosts (host_id, name, pid, advertise, lease_until) VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5 / 1000.0))", [hostId, hostname(), process.pid, options.advertise ?? null, lease]);
  } catch (error) {
    if (owned) await store.end();
    const failure = storeError(where, error);
    throw new Error(`cannot open the journal at ${where}: ${failure instanceof PostgresJournalError ? `it ${failure.problem}` : failure.message}`, { cause: error });
  }

  // The lease is renewed on the store's connection for it (postgres-store.ts): a renewal never
  // waits behind the session writes that fill the pool.
  const leasePool = store.lease();
  /** Epochs of the sessions this journal owns. */
  const epochs = new Map<string, number>();
  /** Aborted by `close`: from then on every call is refused, and a call waiting to retry stops waiting. */
  const closing = new AbortController();
  // Every call waiting to retry listens to it (many at once in a blink): no leak to warn of.
  setMaxListeners(0, closing.signal);
  const open = () => {
    if (closing.signal.aborted) throw new Error(`the journal ${where} is closed`);
  };
  /**
   * Runs `attempt` until it settles with anything but a connection error, or until `retryFor`
   * has passed since its first connection error (then a {@link PostgresJournalError} saying so).
   * `attempt` is told whether an attempt before it failed (its outcome may be unknown: a COMMIT
   * whose answer was lost). One call's attempts run one after the other, so its caller's order holds.
   */
  /**
   * When this journal last met a connection error (monotonic ms; any call's, or a renewal's):
   * after an outage that was not a restart every host's lease ran out in the database, so for a
   * lease from then this journal takes no session from another host that has not closed (it may
   * be renewing right now), as the restart guard does after a restart.
   */
  let awayAt: number | undefined;
  /**
   * A renewal that takes this long to answer met a database that was not answering (frozen,
   * stalled: no connection error says so): an outage all the same, from its answer on, and while
   * it is in flight. Else a host whose look was queued in the frozen database could claim, at the
   * thaw, the sessions of an owner whose renewal was queued beside it.
   */
  const stalledAfter = Math.max(1, Math.floor(lease / 3));
  let renewalSentAt: number | undefined;
  const retried = async <T>(attempt: (again: boolean) => Promise<T>): Promise<T> => {
    let failedAt: number | undefined;
    for (let delay = postgresRetryBackoff.firstMs; ; delay = Math.min(delay * 2, postgresRetryBackoff.longestMs)) {
      open();
      try {
        return await attempt(failedAt !== undefined);
      } catch (error) {
        const code = connectionErrorCode(error);
        if (code === undefined || closing.signal.aborted) throw storeError(where, error);
        awayAt = monotonic();
        failedAt ??= performance.now();
        const waited = Math.round(performance.now() - failedAt);
        if (waited >= retryFor) throw new PostgresJournalError(where, code, error, waited);
        await sleep(Math.min(delay, retryFor - waited), undefined, { signal: closing.signal }).catch(() => undefined);
      }
    }
  };
  const query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => retried(() => pool.query<R>(text, values));
  /** In one transaction on one connection (one attempt: callers retry it whole). */
  const transaction = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    // A connection lost while the client is held is also emitted on it: the query in flight rejects with it already.
    const lost = () => undefined;
    client.on('error', lost);
    let failure: unknown;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failure = error;
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.off('error', lost);
      // A connection that failed is not given to the next caller.
      client.release(connectionErrorCode(failure) === undefined ? undefined : (failure as Error));
    }
  };
  /**
   * Creates a session (`create` runs in one transaction and inserts its row stamped `at`),
   * retried: an attempt that finds the row its own earlier attempt committed (this host's, the
   * same stamp) is done; any other duplicate is refused as the first attempt's would be.
   */
  const creating = (sessionId: string, at: string, create: (client: pg.PoolClient) => Promise<void>): Promise<void> =>
    retried(async (again) => {
      try {
        await transaction(create);
      } catch (error) {
        if (!(again && (error as { code?: unknown }).code === uniqueViolation)) throw error;
        const mine = await pool.query('SELECT 1 FROM sessions WHERE session_id = $1 AND owner_host = $2 AND created_at = $3', [sessionId, hostId, at]);
        if (!mine.rowCount) throw error;
      }
    });

  /** A session's owner is gone: released, its host closed, or its lease expired while the database has been up for a lease (a restart of the database expires no lease). */
  const ownerFree = `(s.owner_host IS NULL OR NOT EXISTS (SELECT 1 FROM hosts h WHERE h.host_id = s.owner_host AND h.state <> 'gone'
      AND (h.lease_until > now() OR pg_postmaster_start_time() > now() - make_interval(secs => $3 / 1000.0))))`;

  /** Why a session's owner refused this journal: the owner's host row, for the error. */
  const ownedError = async (sessionId: string): Promise<Error> => {
    const { rows } = await query<{ owner_host: string | null; epoch: string; pid: number | null; name: string | null; owned_at: Date | null }>(
      'SELECT s.owner_host, s.epoch, h.pid, h.name, s.owned_at FROM sessions s LEFT JOIN hosts h ON h.host_id = s.owner_host WHERE s.session_id = $1',
      [sessionId],
    );
    const row = rows[0];
    if (!row) return new UnknownSessionError(sessionId);
    return new SessionOwnedError(sessionId, {
      pid: row.pid ?? 0,
      host: row.name ?? 'an unknown host',
      acquiredAt: (row.owned_at ?? new Date(0)).toISOString(),
      ...(row.owner_host === null ? {} : { hostId: row.owner_host }),
      epoch: Number(row.epoch),
    });
  };

  /** Writes made by this journal: each write's id is `hostId:n`, the same for all its attempts. */
  let writes = 0;
  /** The fenced write: one call of `warden_append`, retried under one write id. */
  const write = async (sessionId: string, entries: readonly JournalEntry[]): Promise<number[]> => {
    const held = epochs.get(sessionId);
    const writeId = `${hostId}:${++writes}`;
    const at = now().toISOString();
    let title: string | null = null;
    let restarts = 0;
    for (const entry of entries) {
      if (entry.kind === 'prompt') title ??= titleOf(entry.prompt) ?? null;
      if (entry.kind === 'restart') restarts++;
    }
    const values = [sessionId, hostId, held ?? -1, writeId, entries.map(() => at), entries.map((entry) => entry.kind), entries.map((entry) => entryText(entry)), title, restarts];
    const { rows } = await retried(() =>
      pool.query<{ seqs: string[] }>('SELECT warden_append($1, $2, $3, $4, $5, $6, $7, $8, $9) AS seqs', values).catch((error: unknown) => Promise.reject(refusal(sessionId, held, error) ?? error)),
    ).catch(async (error: unknown) => Promise.reject(error instanceof FencedAppendError ? await withOwnerName(error) : error));
    return (rows[0]?.seqs ?? []).map(Number);
  };
  /** A fenced write's refusal with the new owner's machine name (its host row), for the host's `session_moved` answer; without it when that cannot be read. */
  const withOwnerName = async (fenced: FencedAppendError): Promise<FencedAppendError> => {
    const { hostId: owner } = fenced.owner;
    if (owner === undefined) return fenced;
    const rows = await query<{ name: string }>('SELECT name FROM hosts WHERE host_id = $1', [owner]).then((result) => result.rows, () => []);
    const name = rows[0]?.name;
    return name === undefined ? fenced : new FencedAppendError(fenced.sessionId, fenced.heldEpoch, { ...fenced.owner, hostName: name });
  };
  /** A write the store refused as the journal's own errors (unknown session, fenced). */
  const refusal = (sessionId: string, held: number | undefined, error: unknown): Error | undefined => {
    const code = (error as { code?: unknown }).code;
    if (code === unknownSessionState) return new UnknownSessionError(sessionId);
    if (code !== fencedState) return undefined;
    if (held !== undefined) epochs.delete(sessionId);
    const owner = JSON.parse((error as { detail?: string }).detail ?? '{}') as { owner?: string | null; epoch?: number };
    return new FencedAppendError(sessionId, held, { hostId: owner.owner ?? undefined, epoch: Number(owner.epoch ?? 0) });
  };
  /** A fenced update of a session's own row (resume, state). */
  const setFenced = async (sessionId: string, assignment: string, values: readonly unknown[]): Promise<void> => {
    const held = epochs.get(sessionId);
    const { rowCount } = await query(`UPDATE sessions SET ${assignment} WHERE session_id = $1 AND owner_host = $2 AND epoch = $3`, [sessionId, hostId, held ?? -1, ...values]);
    if (rowCount) return;
    const { rows } = await query<{ owner_host: string | null; epoch: string; name: string | null }>(
      'SELECT s.owner_host, s.epoch, h.name FROM sessions s LEFT JOIN hosts h ON h.host_id = s.owner_host WHERE s.session_id = $1',
      [sessionId],
    );
    const row = rows[0];
    if (!row) throw new UnknownSessionError(sessionId);
    if (held !== undefined) epochs.delete(sessionId);
    throw new FencedAppendError(sessionId, held, { hostId: row.owner_host ?? undefined, ...(row.name === null ? {} : { hostName: row.name }), epoch: Number(row.epoch) });
  };

  let renewing: NodeJS.Timeout | undefined;
  /** A rolling restart is under way: `release` keeps sessions (see `startHandOver`). */
  let handingOver = false;
  /** One attempt, never retried: a renewal is worth something only now (the timer's next tick is the retry). */
  const renewLease = async (): Promise<void> => {
    open();
    const sentAt = monotonic();
    renewalSentAt = sentAt;
    await leasePool
      .query("UPDATE hosts SET heartbeat_at = now(), lease_until = now() + make_interval(secs => $2 / 1000.0), load = $3 WHERE host_id = $1 AND state <> 'gone'", [hostId, lease, epochs.size])
      .catch((error: unknown) => {
        if (connectionErrorCode(error) !== undefined) awayAt = monotonic();
        return Promise.reject(storeError(where, error));
      })
      .finally(() => {
        renewalSentAt = undefined;
        if (monotonic() - sentAt >= stalledAfter) awayAt = monotonic();
      });
    // The database stamped the lease no earlier than the send: the lease runs from there.
    renewedAt = Math.max(renewedAt, sentAt);
  };
  if (options.renew !== false) {
    // A failed renewal is not ownership lost (nothing here gives a session up for it): the next
    // tick tries again. One at a time: ticks during a renewal that hangs are skipped.
    let inFlight = false;
    const tick = () => {
      if (inFlight) return;
      inFlight = true;
      void renewLease()
        .catch(() => undefined)
        .finally(() => {
          inFlight = false;
        });
    };
    renewing = setInterval(tick, Math.max(1, Math.floor(lease / 3)));
    renewing.unref();
  }

  // A session with its owner host's name (hosts.host_id is the key: one row at most).
  const sessionColumns = 'SELECT s.*, h.name AS owner_name FROM sessions s LEFT JOIN hosts h ON h.host_id = s.owner_host';
  const entryColumns = 'SELECT e.seq, e.at, e.entry FROM entries e JOIN sessions s ON s.key = e.session_key WHERE s.session_id = $1';
  const created = async (client: pg.PoolClient, sessionId: string, agent: string, cwd: string, at: string): Promise<string> => {
    const { rows } = await client.query<{ key: string }>(
      "INSERT INTO sessions (session_id, agent, cwd, created_at, updated_at, state, owner_host, epoch, owned_at) VALUES ($1, $2, $3, $4, $4, 'open', $5, 1, now()) RETURNING key",
      [sessionId, agent, cwd, at, hostId],
    );
    return (rows[0] as { key: string }).key;
  };
  const session = async (sessionId: string): Promise<JournalSession> => {
    const { rows } = await query<SessionRow>(`${sessionColumns} WHERE s.session_id = $1`, [sessionId]);
    if (!rows[0]) throw new UnknownSessionError(sessionId);
    return sessionOf(rows[0], where);
  };

  return {
    hostId,
    lease,
    standing: () => leaseStanding(renewedAt, monotonic(), lease),
    async startHandOver() {
      handingOver = true;
      await query("UPDATE hosts SET state = 'draining' WHERE host_id = $1 AND state = 'live'", [hostId]);
    },
    async handOver(waitMs) {
      handingOver = true;
      if (renewing) clearInterval(renewing);
      renewing = undefined;
      // The lease ends and every takeover loop is woken (NOTIFY, delivered at the commit: a look it wakes sees the lease ended).
      await query(
        `WITH ended AS (UPDATE hosts SET state = 'draining', lease_until = now() WHERE host_id = $1 AND state <> 'gone' RETURNING host_id)
         SELECT ${notifyExpression('host_id', 'handedOver')} FROM ended`,
        [hostId],
      );
      const until = Date.now() + waitMs;
      for (;;) {
        const { rows } = await query<{ left: string }>("SELECT count(*) AS left FROM sessions WHERE owner_host = $1 AND state = 'open'", [hostId]);
        const left = Number(rows[0]?.left ?? 0);
        if (left === 0 || Date.now() >= until) return left;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    epochOf: (sessionId) => epochs.get(sessionId),
    owned: () => epochs.size,
    renewLease,
    async createSession({ sessionId, agent, cwd }) {
      const at = now().toISOString();
      await creating(sessionId, at, async (client) => void (await created(client, sessionId, agent, cwd, at)));
      epochs.set(sessionId, 1);
      return session(sessionId);
    },
    async recordChild({ sessionId, parentSessionId, agent, cwd, title }) {
      open();
      const at = now().toISOString();
      // No owner: its parent's host runs it, and no takeover picks a session without one.
      await query(
        "INSERT INTO sessions (session_id, agent, cwd, title, created_at, updated_at, state, parent_session_id) VALUES ($1, $2, $3, $4, $5, $5, 'open', $6) ON CONFLICT (session_id) DO NOTHING",
        [sessionId, agent, cwd, title ?? null, at, parentSessionId],
      );
    },
    async childSessions(sessionId) {
      const { rows } = await query<{ id: string; parent: string }>(`${childrenOf('$1')} SELECT id, parent FROM child`, [sessionId]);
      return rows.map(({ id, parent }) => ({ sessionId: id, parentSessionId: parent }));
    },
    async forkSession({ sessionId, agent, cwd, from }) {
      const at = now().toISOString();
      await creating(sessionId, at, async (client) => {
        const origin = await client.query<{ key: string; title: string | null }>('SELECT key, title FROM sessions WHERE session_id = $1', [from]);
        const source = origin.rows[0];
        if (!source) throw new UnknownSessionError(from);
        const key = await created(client, sessionId, agent, cwd, at);
        await client.query('UPDATE sessions SET title = $2 WHERE key = $1', [key, source.title]);
        await client.query('SELECT warden_copy_conversation($1, $2)', [source.key, key]);
      });
      epochs.set(sessionId, 1);
      return session(sessionId);
    },
    async getSession(sessionId) {
      const { rows } = await query<SessionRow>(`${sessionColumns} WHERE s.session_id = $1`, [sessionId]);
      return rows[0] ? sessionOf(rows[0], where) : undefined;
    },
    async listSessions(query_ = {}) {
      const limit = Math.max(1, Math.min(maxPage, Math.floor(query_.limit ?? 50)));
      const after = query_.cursor ? decodeCursor(query_.cursor) : undefined;
      const filters: string[] = [];
      const args: unknown[] = [];
      if (query_.cwd !== undefined) {
        args.push(query_.cwd);
        filters.push(`s.cwd = $${args.length}`);
      }
      if (after) {
        args.push(after.updatedAt, after.sessionId);
        filters.push(`(s.updated_at < $${args.length - 1} OR (s.updated_at = $${args.length - 1} AND s.session_id < $${args.length}))`);
      }
      args.push(limit + 1);
      const { rows } = await query<SessionRow>(`${sessionColumns} ${filters.length ? `WHERE ${filters.join(' AND ')}` : ''} ORDER BY s.updated_at DESC, s.session_id DESC LIMIT $${args.length}`, args);
      const page = rows.slice(0, limit).map((row) => sessionOf(row, where));
      const last = page.at(-1);
      return { sessions: page, nextCursor: rows.length > limit && last ? encodeCursor(last) : undefined };
    },
    async append(sessionId, entry) {
      open();
      return (await write(sessionId, [entry]))[0] as number;
    },
    async appendGroup(sessionId, entries: readonly JournalUpdateEntry[]) {
      open();
      if (entries.length === 0) return [];
      return write(sessionId, entries);
    },
    async deleteSession(sessionId) {
      const deleted = await retried(() =>
        transaction(async (client) => {
          const gone = await client.query<{ key: string }>(
            `DELETE FROM sessions s WHERE s.session_id = $1 AND (s.owner_host = $2 OR ${ownerFree}) RETURNING key`,
            [sessionId, hostId, lease],
          );
          const key = gone.rows[0]?.key;
          if (key !== undefined) await client.query('DELETE FROM entries WHERE session_key = $1', [key]);
          // Its subagent children's records, theirs, and so on (their entries are the parent's).
          if (key !== undefined) await client.query(`DELETE FROM sessions WHERE session_id IN (${childrenOf('$1')} SELECT id FROM child)`, [sessionId]);
          return key !== undefined;
        }),
      );
      epochs.delete(sessionId);
      if (deleted) return;
      const refused = await ownedError(sessionId);
      // Unknown: nothing to forget.
      if (!(refused instanceof UnknownSessionError)) throw refused;
    },
    async entries(sessionId, afterSeq = 0) {
      const { rows } = await query<EntryRow>(`${entryColumns} AND e.seq > $2 ORDER BY e.seq`, [sessionId, afterSeq]);
      return rows.map((row) => recordOf(sessionId, row, where));
    },
    async readEntries(sessionId, page) {
      const limit = Math.floor(page.limit);
      if (!(limit >= 1)) throw new TypeError(`Expected the \`limit\` of a journal page to be a positive integer, got \`${String(page.limit)}\`.`);
      // The running size before each row: a page ends with the row that brings it to maxBytes (always one row at least).
      const { rows } = await query<EntryRow>(
        `SELECT seq, at, entry FROM (SELECT e.seq, e.at, e.entry, sum(length(e.entry)) OVER (ORDER BY e.seq) - length(e.entry) AS before
           FROM entries e WHERE e.session_key = (SELECT key FROM sessions WHERE session_id = $1) AND e.seq > $2 ORDER BY e.seq LIMIT $3) page
         WHERE before < $4 ORDER BY seq`,
        [sessionId, page.afterSeq ?? 0, limit, page.maxBytes ?? Number.MAX_SAFE_INTEGER],
      );
      return rows.map((row) => recordOf(sessionId, row, where));
    },
    async stateEntries(sessionId) {
      const { rows } = await query<EntryRow>(`${entryColumns} AND e.kind = ANY($2) ORDER BY e.seq`, [sessionId, [...stateEntryKinds]]);
      return rows.map((row) => recordOf(sessionId, row, where));
    },
    async promptByKey(sessionId, key) {
      // Through the partial index `entries_by_prompt_key` (its WHERE and expression, as written there).
      const { rows } = await query<EntryRow>(`${entryColumns} AND e.kind = 'prompt' AND ${promptKeyExpression} = $2 ORDER BY e.seq LIMIT 1`, [sessionId, JSON.stringify(key)]);
      const row = rows[0];
      if (!row) return undefined;
      const { seq, entry } = recordOf(sessionId, row, where);
      const ends = await query<EntryRow>(`${entryColumns} AND e.seq > $2 AND e.kind IN ('stop', 'error') ORDER BY e.seq LIMIT 1`, [sessionId, seq]);
      const end = ends.rows[0];
      return {
        seq,
        promptDigest: entry.kind === 'prompt' ? entry.promptDigest : undefined,
        requestId: entry.kind === 'prompt' ? entry.requestId : undefined,
        end: end ? recordOf(sessionId, end, where) : undefined,
      };
    },
    async lastSeq(sessionId) {
      const { rows } = await query<{ seq: string | null }>('SELECT max(e.seq) AS seq FROM entries e WHERE e.session_key = (SELECT key FROM sessions WHERE session_id = $1)', [sessionId]);
      return Number(rows[0]?.seq ?? 0);
    },
    async claim(sessionId) {
      // Back from an outage (or in one: a renewal hangs) for less than a lease: only a session nobody holds, or whose host closed, is free.
      const stalled = renewalSentAt !== undefined && monotonic() - renewalSentAt >= stalledAfter;
      const mayTakeExpired = !stalled && (awayAt === undefined || monotonic() - awayAt >= lease);
      // The row locked first, so that the owner it had is the one this claim takes it from (a
      // claim racing this one waits, then finds the session taken). A retry after a COMMIT whose
      // answer was lost finds the session its own already: it cannot say whom it took it from.
      const claimed = await retried(() =>
        transaction(async (client): Promise<(SessionClaim & { readonly epoch: number }) | undefined> => {
          const before = (await client.query<{ owner_host: string | null; epoch: string }>('SELECT owner_host, epoch FROM sessions WHERE session_id = $1 FOR UPDATE', [sessionId])).rows[0];
          const { rows } = await client.query<{ epoch: string }>(
            `UPDATE sessions s SET epoch = CASE WHEN s.owner_host = $2 THEN s.epoch ELSE s.epoch + 1 END,
               owned_at = CASE WHEN s.owner_host = $2 THEN s.owned_at ELSE now() END, owner_host = $2
             WHERE s.session_id = $1 AND (s.owner_host = $2 OR ${mayTakeExpired ? ownerFree : "(s.owner_host IS NULL OR NOT EXISTS (SELECT 1 FROM hosts h WHERE h.host_id = s.owner_host AND h.state <> 'gone'))"}) RETURNING s.epoch`,
            mayTakeExpired ? [sessionId, hostId, lease] : [sessionId, hostId],
          );
          const row = rows[0];
          if (!row) return undefined;
          const epoch = Number(row.epoch);
          if (!before || before.owner_host === null || before.owner_host === hostId) return { epoch };
          const owner = (await client.query<{ name: string; state: string }>('SELECT name, state FROM hosts WHERE host_id = $1', [before.owner_host])).rows[0];
          // Its host closed (its sessions were released, or meant to be): free, not taken from anyone.
          if (owner?.state === 'gone') return { epoch };
          return { epoch, from: { hostId: before.owner_host, ...(owner ? { hostName: owner.name } : {}), epoch: Number(before.epoch), handedOver: owner?.state === 'draining' } };
        }),
      );
      if (!claimed) throw await ownedError(sessionId);
      epochs.set(sessionId, claimed.epoch);
      return claimed;
    },
    async release(sessionId) {
      // Handing over: the session stays this host's until another takes it.
      if (handingOver) return;
      const held = epochs.get(sessionId);
      epochs.delete(sessionId);
      if (held === undefined) return;
      await query('UPDATE sessions SET owner_host = NULL WHERE session_id = $1 AND owner_host = $2 AND epoch = $3', [sessionId, hostId, held]);
    },
    setResume: (sessionId, resume) => setFenced(sessionId, 'resume = $4', [resume === undefined ? null : JSON.stringify(resume)]),
    setState: (sessionId, state) => setFenced(sessionId, 'state = $4, updated_at = $5', [state, now().toISOString()]),
    async close() {
      if (closing.signal.aborted) return;
      if (renewing) clearInterval(renewing);
      closing.abort();
      try {
        // What this host holds is free at once for the others; its lease with it. One attempt each (not retried: closing does not wait for a database that is away).
        await pool.query('UPDATE sessions SET owner_host = NULL WHERE owner_host = $1', [hostId]);
        await pool.query("UPDATE hosts SET state = 'gone', lease_until = now() WHERE host_id = $1", [hostId]);
      } catch {
        // closing anyway: the lease expires by itself
      } finally {
        epochs.clear();
        if (owned) await store.end();
      }
    },
  };
}

/** SQLSTATE of a duplicate key (a session id taken). */
const uniqueViolation = '23505';
