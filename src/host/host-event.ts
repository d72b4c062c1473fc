/**
 * What a host tells its program (`host.on`), in a file of its own: the host (host.ts) publishes
 * these and the log (host-log.ts) describes them, so neither has to import the other.
 */
import type { SupervisionEvent } from '../supervision/events.js';
import type { HostSessionEvent } from './host-agent.js';

/** What a host tells its program (`host.on`). */
export type HostEvent =
  | HostSessionEvent
  | (SupervisionEvent & { readonly agent: string })
  /** A message from the editor (or the program) that was not served: bad JSON-RPC, an unknown notification, an answer nobody asked for. */
  | { readonly type: 'protocol.dropped'; readonly peer: 'editor'; readonly reason: string; readonly detail: string };
