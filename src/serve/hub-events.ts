/** What a connection hub receives (connection-hub.ts). */
import type { AgentHandlerEvent, AgentHandlerOutput } from '../protocol/native-agent.js';
import type { ReadGate } from '../port/read-gate.js';

export type HubEvent =
  /**
   * A connection's agent started: the hub serves its client from now on (`deliver`: the line to
   * its agent server's handling of outputs; `gate`: its delivery gate).
   */
  | { readonly type: 'hub.connect'; readonly connectionId: string; readonly deliver: (output: AgentHandlerOutput) => void; readonly gate: ReadGate; readonly peer: string | undefined }
  /** The connection closed: its sessions go on without it. */
  | { readonly type: 'hub.disconnect'; readonly connectionId: string }
  /** What the connection's client sent (through its agent server). */
  | { readonly type: 'hub.client'; readonly connectionId: string; readonly event: AgentHandlerEvent }
  /** A connection's cursor for a session reads on (its subscriber's schedule). */
  | { readonly type: 'hub.step'; readonly connectionId: string; readonly sessionId: string }
  /** A session had no connection for the idle timeout: its agent is stopped (the journal keeps it). */
  | { readonly type: 'hub.idle'; readonly sessionId: string }
  /** A permission request waited for a controller past the unattended timeout: it is denied. */
  | { readonly type: 'hub.unattended'; readonly key: string }
  /** The daemon stops: turns may finish up to the drain timeout. */
  | { readonly type: 'hub.drain' }
  /** A session whose host was lost (cluster/takeover.ts): this hub's host agent claims and resumes it. */
  | { readonly type: 'hub.takeover'; readonly sessionId: string; readonly previousOwner: string; readonly handedOver: boolean }
  /** A journal read answered by a promise carries on in the hub's own turn. */
  | { readonly type: 'hub.continue'; readonly run: () => void };
