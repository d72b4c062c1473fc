/**
 * What `warden serve` does with each accepted connection: it attaches it to the host's hub
 * (`host.hub`), one host agent shared by every connection, so a session outlives the
 * connection that opened it. The daemon's settings become the hub's policies (idle timeout,
 * unattended permissions) the first time a connection is attached. On a PostgreSQL store the hub
 * routes: a session another live host owns is forwarded there (docs/cluster.md, "Routing"), over
 * links authenticated with this daemon's own token (the hosts of a cluster share it), and a new
 * session is placed on another host once this one owns `settings.loadLimit` sessions.
 */
import { clusterRouting } from '../cluster/forwarding.js';
import type { PostgresStore } from '../journal/postgres-store.js';
import type { Transport } from '../jsonrpc/transport.js';
import type { DaemonPeer } from './daemon-listener.js';
import type { ServeSettings } from './serve-settings.js';
import type { HubMaker, ServeHub } from './serve-hub.js';

/** Owns the daemon's connections. */
export interface ConnectionOwner {
  /** Serves one accepted connection until it closes; its sessions go on without it. */
  attachConnection(transport: Transport, peer: DaemonPeer): void;
  /** Connections served now. */
  connections(): number;
  /** Resolves once no prompt is in flight, or after `settings.drainTimeoutMs`: `true` when drained in time. */
  drain(): Promise<boolean>;
  /** Makes the hub now rather than at the first connection: a cluster member takes over lost hosts' sessions from its start. */
  startHub(): void;
}

/** What routing needs on a PostgreSQL store (the host routes on that store only, over its own pool). */
export interface ConnectionOwnerCluster {
  /** The daemon's bearer token: the same on every host of a cluster, it opens their links to each other. */
  readonly token: string;
}

/** A connection owner serving every connection on `host`'s hub under `settings` (routing sessions owned elsewhere when the host's store is PostgreSQL). */
export function createConnectionOwner(host: HubMaker, settings: ServeSettings, cluster?: ConnectionOwnerCluster): ConnectionOwner {
  let hub: ServeHub | undefined;
  const routing = cluster ? { routingOn: (store: Promise<PostgresStore>) => clusterRouting({ store, token: cluster.token, loadLimit: settings.loadLimit }) } : {};
  const hubOf = () =>
    (hub ??= host.hub({ idleTimeoutMs: settings.idleTimeoutMs, maxLiveSessions: settings.maxLiveSessions, unattended: settings.unattended, ...routing }));
  return {
    attachConnection(transport, peer) {
      hubOf().attach(transport, { peer: peerText(peer) });
    },
    // The hub's own list: a connection leaves it when its server stops.
    connections: () => hub?.connections().length ?? 0,
    drain: () => (hub ? hub.drain(settings.drainTimeoutMs) : Promise.resolve(true)),
    startHub: () => void hubOf(),
  };
}

/** How `warden sessions` and the live view name a client: its address, `over HTTP` for the Streamable HTTP endpoint, its User-Agent. */
export function peerText(peer: DaemonPeer): string {
  const where = peer.transport === 'http' ? `${peer.remote} over HTTP` : peer.remote;
  return peer.userAgent ? `${where} (${peer.userAgent})` : where;
}
