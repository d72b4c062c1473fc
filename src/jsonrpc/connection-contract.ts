/**
 * The contract of a JSON-RPC connection actor: what it runs on (transport, method table,
 * deadlines), the facts its snapshot shows, the events it accepts, and the events it emits
 * to its owner.
 */
import type { ActorLogic, ActorSystem, Snapshot } from 'xstate';
import type { SHUTDOWN_EVENT } from '../supervision/events.js';
import type { JsonRpcId } from './message.js';
import type { PeerLost, Transport } from './transport.js';

/** Parses (and validates) params; throws to reject them (a zod schema's `parse` fits). */
export type ParamsParser = (params: unknown) => unknown;

/**
 * The methods a connection serves. With `requests`, a request for any other method is
 * answered -32601 by the connection itself, and params failing their parser -32602.
 * Without it, every request is emitted to the owner. Unknown notifications are dropped
 * (reported as `rpc.dropped`), as JSON-RPC and ACP ask.
 */
export interface MethodTable {
  readonly requests?: Readonly<Record<string, ParamsParser | true>>;
  readonly notifications?: Readonly<Record<string, ParamsParser | true>>;
}

/**
 * A request deadline: `none`, a number of ms from sending, or `{ idleMs }`: ms without any
 * message from the peer (a prompt streaming updates never times out; a silent one does).
 */
export type Timeout = 'none' | number | { readonly idleMs: number };

/** Deadlines per method; the default is `none` (prompts can be long). */
export interface TimeoutPolicy {
  readonly default?: Timeout;
  readonly methods?: Readonly<Record<string, Timeout>>;
}

/** What a connection runs on. Only `transport` is required. */
export interface ConnectionInput {
  readonly transport: Transport;
  /** A name for logs and the inspector. */
  readonly name?: string;
  readonly methods?: MethodTable;
  readonly timeouts?: TimeoutPolicy;
  /**
   * Incoming requests left unanswered at which the connection stops reading its transport
   * (when the transport can pause, see `Transport.holdReading`); reading starts again at half
   * as many. Not while a request of ours waits for the peer's answer: that answer arrives on
   * the same input. Default {@link defaultMaxUnansweredRequests}.
   */
  readonly maxUnansweredRequests?: number;
}

/**
 * Incoming requests a connection leaves unanswered before it stops reading: 1024. A peer
 * that pipelines faster than requests are answered (say, through a slow agent) waits, and
 * what warden holds for it stays bounded.
 */
export const defaultMaxUnansweredRequests = 1024;

/** The phase of a connection, its snapshot `value`. */
export type ConnectionPhase = 'open' | 'closed';

/**
 * Plain facts about a connection, updated on lifecycle transitions. Counts that change with
 * every message (requests in flight, unanswered, malformed) are read with
 * {@link connectionStats}: messages do not go through transitions.
 */
export interface ConnectionContext {
  readonly name: string;
}

/** The snapshot of a connection; its output is why it closed. */
export type ConnectionSnapshot = Snapshot<PeerLost> & {
  readonly value: ConnectionPhase;
  readonly context: ConnectionContext;
};

/** Events a connection accepts (most work goes through the functions below). */
export type ConnectionEvent =
  | { readonly type: 'rpc.timeout'; readonly id: JsonRpcId }
  | { readonly type: 'rpc.peerLost'; readonly reason: PeerLost }
  /** The peer sends nothing more but still reads (its writing side closed). */
  | { readonly type: 'rpc.inputEnded'; readonly reason: PeerLost }
  | { readonly type: 'rpc.close'; readonly reason?: PeerLost }
  | { readonly type: typeof SHUTDOWN_EVENT }
  | { readonly type: `xstate.${string}` };

/** Why a message was dropped instead of processed. */
export type DropReason = 'duplicate_request' | 'unmatched_response' | 'late_response' | 'unknown_notification' | 'invalid_notification' | 'invalid_response' | 'peer_error' | 'line_too_long' | 'too_deep';

/** Events a connection emits to its owner, in arrival order. */
export type ConnectionEmitted =
  | { readonly type: 'rpc.request'; readonly id: JsonRpcId; readonly method: string; readonly params: unknown }
  | { readonly type: 'rpc.notification'; readonly method: string; readonly params: unknown }
  | { readonly type: 'rpc.cancelRequested'; readonly id: JsonRpcId }
  | { readonly type: 'rpc.dropped'; readonly reason: DropReason; readonly detail: string }
  /** Our writes to the peer are backed up (it reads slowly) or drained again: producers wait meanwhile. */
  | { readonly type: 'rpc.backpressure'; readonly backedUp: boolean }
  /** The peer will send nothing more (it half-closed), but our answers still reach it. */
  | { readonly type: 'rpc.inputEnded'; readonly reason: PeerLost }
  | { readonly type: 'rpc.closed'; readonly reason: PeerLost };

/** Actor logic of a connection. */
export type ConnectionLogic = ActorLogic<ConnectionSnapshot, ConnectionEvent, ConnectionInput, ActorSystem<any>, ConnectionEmitted>;
