/**
 * What a host on a PostgreSQL store does as a member of the cluster, beside serving its
 * sessions (docs/cluster.md): it watches its own lease and tells its host agents how it stands
 * (self-fencing), its hub takes over the sessions of lost members, and placement knows who this
 * host is and how loaded. createHost wires these; each starts once the store is open, and none
 * loads pg or the takeover loop unless the store is PostgreSQL.
 */
import type { AnyActorRef } from 'xstate';
import type { PostgresJournal } from '../journal/postgres-journal.js';
import type { PostgresStore } from '../journal/postgres-store.js';
import type { HubInput } from '../serve/connection-hub.js';

/** A PostgreSQL store as the host opened it: the store (its one pool) and the journal once open. */
export interface ClusterStore {
  readonly store: Promise<PostgresStore>;
  readonly journal: Promise<PostgresJournal>;
}

/** The hub's view of this host for placement (its id and the sessions it owns), once the store is open; nothing for any other store. */
export function placementSelfOf(postgres: ClusterStore | undefined): Pick<HubInput, 'placementSelf'> {
  if (!postgres) return {};
  let open: PostgresJournal | undefined;
  postgres.journal.then((journal) => (open = journal), () => undefined);
  return { placementSelf: () => (open ? { hostId: open.hostId, load: open.owned() } : undefined) };
}

/**
 * On a PostgreSQL store, tells the host agents how the host's lease stands by its own clock
 * (`standing()`, checked every quarter lease, at most every 500 ms): on a change, and on every
 * look while it is not `held` (agent/lease-fencing.ts acts on it). A timer that fires late (the
 * process was frozen) sees the whole pause at once. `undefined` for any other store.
 */
export function watchLease(postgres: ClusterStore | undefined, hostAgents: () => readonly AnyActorRef[]): { close(): void } | undefined {
  if (!postgres) return undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let last: string = 'held';
  postgres.journal.then((journal) => {
    if (closed) return;
    timer = setInterval(() => {
      const standing = journal.standing();
      if (standing === last && standing === 'held') return;
      last = standing;
      for (const agent of hostAgents()) agent.send({ type: 'host.lease', standing });
    }, Math.max(50, Math.min(500, Math.floor(journal.lease / 4))));
    timer.unref();
  }, () => undefined);
  return {
    close() {
      closed = true;
      if (timer) clearInterval(timer);
    },
  };
}

/**
 * The hub of a cluster member (a PostgreSQL store, the host advertised) takes over the sessions
 * of lost members (takeover.ts, loaded only then): each is sent to `hub` as `hub.takeover`. The
 * loop starts once the store is open; `undefined` for any other store.
 */
export function startTakingOver(postgres: ClusterStore | undefined, hub: AnyActorRef): { close(): Promise<void> } | undefined {
  if (!postgres) return undefined;
  let closed = false;
  const running = Promise.all([postgres.store, postgres.journal, import('../cluster/takeover.js')]).then(([store, journal, { startTakeover }]) =>
    closed ? undefined : startTakeover(store, { hostId: journal.hostId, lease: journal.lease, take: (orphan) => hub.send({ type: 'hub.takeover', ...orphan }) }),
  );
  running.catch(() => undefined);
  return {
    async close() {
      closed = true;
      await (await running.catch(() => undefined))?.close();
    },
  };
}
