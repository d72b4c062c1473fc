/**
 * The live state of one connection actor, kept beside it in a `WeakMap` keyed by its ref:
 * the requests in flight each way, counters, and whether reading is held. With the two
 * things every part of the connection does with it: write a message, and hold or resume
 * reading when too many requests are unanswered.
 */
import type { ActorScope, ActorSystem, AnyActorRef } from 'xstate';
import type { JsonRpcId, JsonRpcMessage } from './message.js';
import type { RpcError } from './rpc-error.js';
import type { PeerLost } from './transport.js';
import type { ConnectionContext, ConnectionEmitted, ConnectionEvent, ConnectionInput, ConnectionSnapshot, Timeout } from './connection-contract.js';

/** The actor scope a connection's logic runs in. */
export type Scope = ActorScope<ConnectionSnapshot, ConnectionEvent, ActorSystem<any>, ConnectionEmitted>;

/** One request of ours in flight. */
export interface Outgoing {
  readonly ref: AnyActorRef;
  readonly method: string;
  readonly timeout: Timeout;
  readonly sentAt: number;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: RpcError) => void;
}

/**
 * An incoming request owed a response. `tag`: what the connection's owner keeps of it, set by
 * {@link tagRequest} (connection.ts): the owner holds no second map of the requests it serves,
 * and a request answered is gone from both at once.
 */
export interface IncomingRequest {
  readonly id: JsonRpcId;
  readonly method: string;
  /** The params as they came (a reference, not a copy): a second copy of the request is told from another request by them. */
  readonly params: unknown;
  tag: unknown;
}

/** The live state of one connection actor. */
export interface Live {
  readonly scope: Scope;
  readonly input: ConnectionInput;
  readonly name: string;
  readonly now: () => number;
  readonly outgoing: Map<JsonRpcId, Outgoing>;
  /** Incoming requests owed a response, by id key. */
  readonly incoming: Map<string, IncomingRequest>;
  /** Ids we stopped waiting for (cancelled, timed out): their late answers are dropped quietly. */
  readonly abandoned: Set<JsonRpcId>;
  nextId: number;
  lastActivity: number;
  malformed: number;
  closed: PeerLost | undefined;
  /** Why the peer sends nothing more, once its input ended (the connection stays open for our answers). */
  inputEnded: PeerLost | undefined;
  /** See {@link ConnectionInput.maxUnansweredRequests}. */
  readonly maxUnanswered: number;
  /** Whether we asked the transport to stop reading (too many requests unanswered). */
  readingHeld: boolean;
}

const lives = new WeakMap<AnyActorRef, Live>();

/** Keeps `live` as the live state of its connection actor. */
export function keepLive(live: Live): void {
  lives.set(live.scope.self, live);
}

/** The live state of a connection actor; throws for an actor that is not one. */
export function liveOf(connection: AnyActorRef): Live {
  const live = lives.get(connection);
  if (!live) throw new TypeError(`Expected a JSON-RPC connection actor, got actor "${connection.id}".`);
  return live;
}

/** The key of a request id in the `incoming` map (a number and a string never collide). */
export function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n${id}` : `s${id}`;
}

/** The snapshot's context. */
export function summary(live: Live): ConnectionContext {
  return { name: live.name };
}

/** Writes a message; `false` when it cannot be written (a value JSON cannot encode, a transport fault). */
export function send(live: Live, message: JsonRpcMessage): boolean {
  try {
    live.input.transport.send(message);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops reading the transport while {@link Live.maxUnanswered} incoming requests are
 * unanswered, until half as many are; never while a request of ours is outstanding (its
 * answer is on the same input: a prompt waiting on a permission answer must get it).
 */
export function holdReading(live: Live): void {
  if (live.closed) return;
  const unanswered = live.incoming.size;
  const hold = live.outgoing.size === 0 && (live.readingHeld ? unanswered > live.maxUnanswered / 2 : unanswered >= live.maxUnanswered);
  if (hold === live.readingHeld) return;
  live.readingHeld = hold;
  live.input.transport.holdReading?.(hold);
}
