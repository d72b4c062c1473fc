/**
 * A JSON-RPC 2.0 peer as an XState actor, over any line transport, in both directions.
 *
 * - Incoming: each message is classified once; malformed input is answered with the right
 *   error (-32700, -32600, -32601, -32602) and the connection keeps going. Params (or an
 *   answer) nested deeper than `maxParamsDepth` are refused before anyone reads them
 *   (depth-limit.ts). Requests and
 *   notifications are emitted to the owner in arrival order (`rpc.request`,
 *   `rpc.notification`); the owner answers a request later with `respond` / `respondError`,
 *   exactly once.
 * - Outgoing: every request is a pending-request actor, a child of the connection, settled
 *   exactly once: answered, failed (error response), timed out (per-method deadline,
 *   optionally extended by activity), cancelled (`$/cancel_request` sent), or peer lost
 *   (the transport closed: all settle at once, with the exit facts).
 * - Input ended (the peer half-closed: EOF on stdin): nothing more arrives, but the peer still
 *   reads. The connection stays open for the answers it owes (`rpc.inputEnded` to the owner);
 *   requests to the peer, which it can no longer answer, fail at once with
 *   `data.reason: 'input_ended'`.
 *
 * Messages flow through directly (no transition per message); lifecycle (timeouts, peer
 * lost, close) goes through the actor. Pending requests live in a `Map` beside the actor, so
 * that thousands in flight cost the same per request as one: XState would copy a parent's
 *
 * This module is the actor: its logic, closing, and the functions that send and answer.
 * Beside it, one concept per file: the contract (`connection-contract.ts`), the live state
 * (`connection-state.ts`), what arrives from the peer (`connection-incoming.ts`) and the
 * bookkeeping of our requests in flight (`connection-outgoing.ts`).
 */
import { createActor, type AnyActorRef } from 'xstate';
import { resolveNow } from '../supervision/clock.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { CANCEL_REQUEST_METHOD, errorResponse, type JsonRpcId, type JsonRpcMessage } from './message.js';
import { pendingRequestLogic } from './pending-request.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { PeerLost } from './transport.js';
import { defaultMaxUnansweredRequests, type ConnectionEvent, type ConnectionInput, type ConnectionLogic, type ConnectionSnapshot, type Timeout } from './connection-contract.js';
import { holdReading, idKey, keepLive, liveOf, send, summary, type Live, type Outgoing, type Scope } from './connection-state.js';
import { onOversize, receive } from './connection-incoming.js';
import { abandon, inputEndedError, onInputEnded, onTimeout, scheduleTimeout, settle, settleAll, timeoutFor } from './connection-outgoing.js';

export * from './connection-contract.js';

/** Actor logic of a JSON-RPC connection: `createActor(connectionLogic, { input: { transport } })`. */
export const connectionLogic: ConnectionLogic = gracefulShutdown({
  config: { name: 'connection' },
  getInitialSnapshot(scope: Scope, input: ConnectionInput): ConnectionSnapshot {
    if (!input || typeof input.transport?.start !== 'function' || typeof input.transport.send !== 'function') {
      throw new TypeError('Expected the connection input to have a `transport` with start() and send().');
    }
    const live: Live = {
      scope,
      input,
      name: input.name ?? 'connection',
      now: resolveNow(scope.self),
      outgoing: new Map(),
      incoming: new Map(),
      abandoned: new Set(),
      nextId: 1,
      lastActivity: 0,
      malformed: 0,
      closed: undefined,
      inputEnded: undefined,
      maxUnanswered: Math.max(1, input.maxUnansweredRequests ?? defaultMaxUnansweredRequests),
      readingHeld: false,
    };
    keepLive(live);
    return { status: 'active', output: undefined, error: undefined, value: 'open', context: summary(live) };
  },
  start(_snapshot: ConnectionSnapshot, scope: Scope): void {
    const live = liveOf(scope.self);
    live.lastActivity = live.now();
    live.input.transport.start({
      message: (value) => {
        receive(live, value);
        holdReading(live);
      },
      malformed: (preview) => {
        live.malformed += 1;
        live.lastActivity = live.now();
        void preview; // never echoed back: lines can carry credentials
        // We cannot know the id of a line we cannot read: JSON-RPC answers with id null.
        send(live, errorResponse(null, RpcError.parseError()));
      },
      closed: (reason) => scope.self.send({ type: 'rpc.peerLost', reason }),
      inputEnded: (reason) => scope.self.send({ type: 'rpc.inputEnded', reason }),
      oversize: (line) => onOversize(live, line),
      backpressure: (backedUp) => {
        if (!live.closed) scope.emit({ type: 'rpc.backpressure', backedUp });
      },
    });
  },
  transition(snapshot: ConnectionSnapshot, event: ConnectionEvent, scope: Scope): ConnectionSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = liveOf(scope.self);
    switch (event.type) {
      case 'rpc.timeout':
        onTimeout(live, event.id);
        return { ...snapshot, context: summary(live) };
      case 'rpc.peerLost':
        return closeWith(live, event.reason, snapshot);
      case 'rpc.inputEnded':
        onInputEnded(live, event.reason);
        return snapshot;
      case 'rpc.close':
      case SHUTDOWN_EVENT: {
        const reason = (event.type === 'rpc.close' ? event.reason : undefined) ?? { message: `connection ${live.name} closed by its owner` };
        answerOutstanding(live, reason);
        live.input.transport.close();
        return closeWith(live, reason, snapshot);
      }
      case 'xstate.stop': {
        const reason = { message: `connection ${live.name} stopped` };
        answerOutstanding(live, reason);
        live.input.transport.close();
        closeWith(live, reason, snapshot);
        return { ...snapshot, status: 'stopped', value: 'closed', context: summary(live) } as ConnectionSnapshot;
      }
      default:
        return snapshot;
    }
  },
  getPersistedSnapshot(snapshot: ConnectionSnapshot): ConnectionSnapshot {
    return snapshot;
  },
  restoreSnapshot(): ConnectionSnapshot {
    throw new Error('A connection cannot be restored from a persisted snapshot; create a new one over a live transport.');
  },
} as ConnectionLogic);

/** We are closing while the peer is still there: every request it is owed an answer for gets one. */
function answerOutstanding(live: Live, reason: PeerLost): void {
  if (live.closed) return;
  for (const { id, method } of live.incoming.values()) {
    send(live, { jsonrpc: '2.0', id, error: RpcError.because('shutdown', `Internal error: the connection is closing (${reason.message})`, { method }).toErrorObject() });
  }
  live.incoming.clear();
}

function closeWith(live: Live, reason: PeerLost, snapshot: ConnectionSnapshot): ConnectionSnapshot {
  if (live.closed) return snapshot;
  live.closed = reason;
  settleAll(live, reason);
  live.scope.emit({ type: 'rpc.closed', reason });
  return { ...snapshot, status: 'done', output: reason, value: 'closed', context: summary(live) } as ConnectionSnapshot;
}

/** Options of one outgoing request. */
export interface RequestOptions {
  /** Overrides the method's deadline. */
  readonly timeout?: Timeout;
  /** Aborting cancels the request: `$/cancel_request` is sent and the promise rejects -32800. */
  readonly signal?: AbortSignal;
}

/**
 * Sends a request and resolves with its result. Rejects with an {@link RpcError} whose
 * `failure` says how it ended: `error_response`, `timed_out`, `cancelled`, `peer_lost`, or
 * `local` (the connection was already closed). Settles exactly once.
 */
export function sendRequest(connection: AnyActorRef, method: string, params?: unknown, options: RequestOptions = {}): Promise<unknown> {
  const live = liveOf(connection);
  if (live.closed || connection.getSnapshot().status !== 'active') {
    return Promise.reject(RpcError.because('closed', `The connection is closed: ${live.closed?.message ?? 'not running'}`, { method }));
  }
  if (live.inputEnded) return Promise.reject(inputEndedError(live.inputEnded, method));
  if (options.signal?.aborted) return Promise.reject(RpcError.because('aborted', 'Request cancelled', { method }));
  const id = live.nextId++;
  return new Promise<unknown>((resolve, reject) => {
    const ref = createActor(pendingRequestLogic, { parent: connection, id: `request-${id}`, input: { id, method } });
    ref.start();
    const timeout = timeoutFor(live, method, options.timeout);
    const entry: Outgoing = { ref, method, timeout, sentAt: live.now(), resolve, reject };
    live.outgoing.set(id, entry);
    if (options.signal) {
      const signal = options.signal;
      const onAbort = () => cancelRequest(connection, id);
      signal.addEventListener('abort', onAbort, { once: true });
      const cleanup = () => signal.removeEventListener('abort', onAbort);
      ref.subscribe({ complete: cleanup, error: cleanup });
    }
    if (timeout !== 'none') scheduleTimeout(live, id, typeof timeout === 'number' ? timeout : timeout.idleMs);
    holdReading(live); // its answer comes on our input: reading goes on while it is awaited
    // Stored before it is written: an answer can never arrive for an unknown request.
    if (!send(live, params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params })) {
      live.outgoing.delete(id);
      settle(live, id, entry, 'failed');
      holdReading(live);
      reject(RpcError.because('unwritable', `The ${method} request could not be written (params JSON cannot encode?)`, { method }));
    }
  });
}

/** Sends a notification (no answer). Does nothing once the connection is closed. */
export function sendNotification(connection: AnyActorRef, method: string, params?: unknown): void {
  const live = liveOf(connection);
  if (live.closed) return;
  send(live, params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
}

/**
 * Cancels an outgoing request: sends `$/cancel_request`, rejects its promise at once with
 * -32800 (`failure: 'cancelled'`), and drops the peer's late answer quietly.
 */
export function cancelRequest(connection: AnyActorRef, id: JsonRpcId): boolean {
  const live = liveOf(connection);
  const entry = live.outgoing.get(id);
  if (!entry) return false;
  live.outgoing.delete(id);
  abandon(live, id);
  settle(live, id, entry, 'cancelled');
  holdReading(live);
  if (!live.closed) send(live, { jsonrpc: '2.0', method: CANCEL_REQUEST_METHOD, params: { requestId: id } });
  entry.reject(RpcError.because('cancelled', 'Request cancelled', { method: entry.method }));
  return true;
}

/** Result of answering an incoming request. */
export type RespondResult = { readonly ok: true } | { readonly ok: false; readonly reason: 'unknown_request' | 'closed' };

/** Answers an incoming request with a result, exactly once. */
export function respond(connection: AnyActorRef, id: JsonRpcId, result: unknown): RespondResult {
  return answer(connection, id, { jsonrpc: '2.0', id, result: result === undefined ? null : result });
}

/** Answers an incoming request with an error (anything thrown maps through `toRpcError`), exactly once. */
export function respondError(connection: AnyActorRef, id: JsonRpcId, error: unknown): RespondResult {
  return answer(connection, id, { jsonrpc: '2.0', id, error: toRpcError(error).toErrorObject() });
}

function answer(connection: AnyActorRef, id: JsonRpcId, message: JsonRpcMessage): RespondResult {
  const live = liveOf(connection);
  if (live.closed) return { ok: false, reason: 'closed' };
  // Unknown covers both a request never received and one already answered: exactly once.
  const key = idKey(id);
  const request = live.incoming.get(key);
  if (!request) return { ok: false, reason: 'unknown_request' };
  live.incoming.delete(key);
  holdReading(live);
  if (!send(live, message)) {
    // The answer cannot be written (say, a BigInt in the result): the peer still gets one.
    send(live, { jsonrpc: '2.0', id, error: RpcError.internalError('the result could not be written as JSON', { method: request.method }).toErrorObject() });
  }
  return { ok: true };
}

/** Closes the connection: the transport stops, pending requests settle `peer_lost`. */
export function closeConnection(connection: AnyActorRef, reason?: PeerLost): void {
  if (connection.getSnapshot().status === 'active') connection.send(reason ? { type: 'rpc.close', reason } : { type: 'rpc.close' });
}

/**
 * Keeps `tag` with incoming request `id` (the owner's record of it: its own key, its session)
 * until the request is answered; `false` when no such request is owed an answer.
 */
export function tagRequest(connection: AnyActorRef, id: JsonRpcId, tag: unknown): boolean {
  const request = liveOf(connection).incoming.get(idKey(id));
  if (!request) return false;
  request.tag = tag;
  return true;
}

/**
 * The incoming requests owed an answer that the owner tagged ({@link tagRequest}), in the order
 * they came, each with its tag. A live view: answering a request while walking it is safe.
 */
export function* taggedRequests<TTag>(connection: AnyActorRef): Generator<TaggedRequest<TTag>> {
  for (const request of [...liveOf(connection).incoming.values()]) if (request.tag !== undefined) yield { id: request.id, method: request.method, tag: request.tag as TTag };
}

/** An incoming request owed an answer, with its owner's tag. */
export interface TaggedRequest<TTag> {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly tag: TTag;
}

/** The first incoming request owed an answer whose tag `matches` (walked in place: no copy). */
export function findTagged<TTag>(connection: AnyActorRef, matches: (tag: TTag) => boolean): TaggedRequest<TTag> | undefined {
  for (const request of liveOf(connection).incoming.values()) if (request.tag !== undefined && matches(request.tag as TTag)) return request as TaggedRequest<TTag>;
  return undefined;
}

/** Incoming request `id` with its tag (if its owner set one), while it is owed an answer. */
export function incomingRequest<TTag>(connection: AnyActorRef, id: JsonRpcId): Partial<Pick<TaggedRequest<TTag>, 'tag'>> & Omit<TaggedRequest<TTag>, 'tag'> | undefined {
  return liveOf(connection).incoming.get(idKey(id)) as (Partial<Pick<TaggedRequest<TTag>, 'tag'>> & Omit<TaggedRequest<TTag>, 'tag'>) | undefined;
}

/** The tag of incoming request `id`, while it is owed an answer. */
export function requestTag<TTag>(connection: AnyActorRef, id: JsonRpcId): TTag | undefined {
  return incomingRequest<TTag>(connection, id)?.tag;
}

/** Live counts of a connection: outgoing requests in flight, incoming ones unanswered, malformed lines seen. */
export function connectionStats(connection: AnyActorRef): { pending: number; incoming: number; malformed: number } {
  const live = liveOf(connection);
  return { pending: live.outgoing.size, incoming: live.incoming.size, malformed: live.malformed };
}

/** The requests in flight, oldest first: id, method and age (for the inspector and logs). */
export function pendingRequests(connection: AnyActorRef): Array<{ id: JsonRpcId; method: string; ageMs: number }> {
  const live = liveOf(connection);
  const now = live.now();
  return [...live.outgoing.entries()].map(([id, entry]) => ({ id, method: entry.method, ageMs: now - entry.sentAt }));
}
