/**
 * The hub as the rest of the program sees it: what `createHost(...).hub()` returns
 * (src/runtime/host.ts) and what `warden serve`'s connection owner attaches connections to.
 * Declared here, in serve/, so that serve/ needs nothing from the composition above it.
 */
import type { AnyActorRef } from 'xstate';
import type { Transport } from '../jsonrpc/transport.js';
import type { HubRouting } from '../cluster/forwarding.js';
import type { PostgresStore } from '../journal/postgres-store.js';
import type { hubConnections, HubOptions, HubSessionInfo } from './connection-hub.js';

/** A host's connection hub (see `Host.hub`). */
export interface ServeHub {
  /** Serves one connection; the returned server actor ends when the connection closes (its sessions go on). */
  attach(transport: Transport, info?: { readonly peer?: string }): AnyActorRef;
  /** The sessions the hub runs and the journal keeps, with their clients. */
  sessions(): Promise<HubSessionInfo[]>;
  /** The connections, with their role and cursor in each session they attached. */
  connections(): ReturnType<typeof hubConnections>;
  /** Resolves `true` when no prompt is in flight any more, `false` after `timeoutMs` if some still are. */
  drain(timeoutMs: number): Promise<boolean>;
}

/** Options of `Host.hub`: the hub's own, and its routing made from the host's store. */
export interface HostHubOptions extends HubOptions {
  /**
   * The hub's routing over the cluster, made from the host's PostgreSQL store (its one pool:
   * journal/postgres-store.ts) once the host made it; not called on any other store. `warden
   * serve` routes so (serve/connection-owner.ts); `routing` is used when this is not.
   */
  readonly routingOn?: (store: Promise<PostgresStore>) => HubRouting;
}

/** What makes the hub (a host: `Host.hub`): made on the first call, the same hub after. */
export interface HubMaker {
  hub(options?: HostHubOptions): ServeHub;
}
