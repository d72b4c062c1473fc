/**
 * What `warden serve` does with each accepted connection. For now every connection is served
 * by `host.serve(transport)`: a host agent of its own, whose sessions end with the connection
 * (the journal keeps them; a later connection loads or resumes them). The session hub, which
 * serves every connection on one shared host agent so that sessions outlive connections,
 * replaces {@link ConnectionOwner.attachConnection} and nothing else.
 */
import type { Host } from '../host/host.js';
import type { Transport } from '../jsonrpc/transport.js';
import type { DaemonPeer } from './daemon-listener.js';
import type { ServeSettings } from './serve-settings.js';

/** Session states in which a turn is under way (a SIGTERM lets these finish, up to the drain timeout). */
const busyStates = new Set(['prompting', 'awaitingPermission', 'cancelling', 'recovering', 'reapplying']);

/** Owns the daemon's connections. */
export interface ConnectionOwner {
  /** Serves one accepted connection until it closes. */
  attachConnection(transport: Transport, peer: DaemonPeer): void;
  /** Connections served now. */
  connections(): number;
  /** Resolves once no session has a turn under way, or after `settings.drainTimeoutMs`: `true` when drained in time. */
  drain(): Promise<boolean>;
}

/** A connection owner serving each connection on `host` under `settings`. */
export function createConnectionOwner(host: Host, settings: ServeSettings): ConnectionOwner {
  let live = 0;
  const busy = () => host.tree().children.some((node) => 'type' in node && node.type === 'session' && busyStates.has(node.status));
  return {
    attachConnection(transport) {
      // The hub will take `settings` (idle timeout, unattended policy); one host agent per connection has no use for them.
      const server = host.serve(transport, { drainTimeoutMs: settings.drainTimeoutMs });
      live++;
      const gone = () => {
        live--;
      };
      server.subscribe({ complete: gone, error: gone });
    },
    connections: () => live,
    async drain() {
      const deadline = Date.now() + settings.drainTimeoutMs;
      while (busy()) {
        if (Date.now() >= deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return true;
    },
  };
}
