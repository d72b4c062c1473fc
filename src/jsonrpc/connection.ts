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
 * `children` object on every spawn and stop.
 */
import { createActor, type ActorLogic, type ActorScope, type ActorSystem, type AnyActorRef, type Snapshot } from 'xstate';
import { resolveNow } from '../supervision/clock.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { maxParamsDepth, nestsDeeperThan } from './depth-limit.js';
import { CANCEL_REQUEST_METHOD, classify, describeMessage, errorResponse, type Classified, type JsonRpcId, type JsonRpcMessage } from './message.js';
import { pendingRequestLogic, type RequestOutcome } from './pending-request.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { OversizeLine, PeerLost, Transport } from './transport.js';
import { ErrorCodes } from './error-codes.js';

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
export type DropReason = 'unmatched_response' | 'late_response' | 'unknown_notification' | 'invalid_notification' | 'invalid_response' | 'peer_error' | 'line_too_long' | 'too_deep';

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

type Scope = ActorScope<ConnectionSnapshot, ConnectionEvent, ActorSystem<any>, ConnectionEmitted>;

interface Outgoing {
  readonly ref: AnyActorRef;
  readonly method: string;
  readonly timeout: Timeout;
  readonly sentAt: number;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: RpcError) => void;
}

interface Live {
  readonly scope: Scope;
  readonly input: ConnectionInput;
  readonly name: string;
  readonly now: () => number;
  readonly outgoing: Map<JsonRpcId, Outgoing>;
  /** Incoming requests owed a response, by id key. */
  readonly incoming: Map<string, { readonly id: JsonRpcId; readonly method: string }>;
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
const abandonedLimit = 1024;
const CANCEL_REQUEST = CANCEL_REQUEST_METHOD;

function idKey(id: JsonRpcId): string {
  return typeof id === 'number' ? `n${id}` : `s${id}`;
}

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
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, value: 'open', context: summary(live) };
  },
  start(_snapshot: ConnectionSnapshot, scope: Scope): void {
    const live = lives.get(scope.self) as Live;
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
    const live = lives.get(scope.self) as Live;
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

function summary(live: Live): ConnectionContext {
  return { name: live.name };
}

/** Writes a message; `false` when it cannot be written (a value JSON cannot encode, a transport fault). */
function send(live: Live, message: JsonRpcMessage): boolean {
  try {
    live.input.transport.send(message);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------
// Incoming

function receive(live: Live, value: unknown): void {
  if (live.closed) return;
  live.lastActivity = live.now();
  const verdict = classify(value);
  const emit = live.scope.emit;
  if (verdict.kind !== 'invalid' && nestsDeeperThan(verdict.kind === 'response' ? (verdict.isError ? verdict.error : verdict.result) : verdict.message.params, maxParamsDepth)) {
    refuseTooDeep(live, verdict);
    return;
  }
  switch (verdict.kind) {
    case 'response':
      onResponse(live, verdict.id, verdict.isError, verdict.isError ? verdict.error : verdict.result);
      return;
    case 'request': {
      const { id, method, params } = verdict.message;
      const key = idKey(id);
      if (live.incoming.has(key)) {
        send(live, { jsonrpc: '2.0', id, error: RpcError.invalidRequest(`request id ${JSON.stringify(id)} is already in use`).toErrorObject() });
        return;
      }
      const parsed = parseParams(live.input.methods?.requests, method, params);
      if (parsed.kind === 'unknown') {
        send(live, { jsonrpc: '2.0', id, error: RpcError.methodNotFound(method).toErrorObject() });
        return;
      }
      if (parsed.kind === 'invalid') {
        send(live, { jsonrpc: '2.0', id, error: parsed.error.toErrorObject() });
        return;
      }
      live.incoming.set(key, { id, method });
      emit({ type: 'rpc.request', id, method, params: parsed.params });
      return;
    }
    case 'notification': {
      const { method, params } = verdict.message;
      if (method === CANCEL_REQUEST) {
        const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
        if ((typeof requestId === 'string' || typeof requestId === 'number') && live.incoming.has(idKey(requestId))) {
          emit({ type: 'rpc.cancelRequested', id: requestId });
        }
        return;
      }
      const parsed = parseParams(live.input.methods?.notifications, method, params);
      if (parsed.kind === 'unknown') {
        emit({ type: 'rpc.dropped', reason: 'unknown_notification', detail: method });
        return;
      }
      if (parsed.kind === 'invalid') {
        emit({ type: 'rpc.dropped', reason: 'invalid_notification', detail: `${method}: ${parsed.error.message}` });
        return;
      }
      emit({ type: 'rpc.notification', method, params: parsed.params });
      return;
    }
    case 'invalid':
      if (verdict.respond) {
        send(live, { jsonrpc: '2.0', id: verdict.id, error: verdict.error.toErrorObject() });
      } else {
        emit({ type: 'rpc.dropped', reason: verdict.id === null ? 'peer_error' : 'invalid_response', detail: `${verdict.error.message} (${describeMessage(value)})` });
      }
      return;
  }
}

/**
 * A message nested deeper than {@link maxParamsDepth}, refused before anything else reads it
 * (nearly everything after the parse recurses): a request is answered -32602 by its id; an
 * answer to one of our requests fails that request; a notification is dropped and reported.
 */
function refuseTooDeep(live: Live, verdict: Exclude<Classified, { kind: 'invalid' }>): void {
  const detail = `nested deeper than ${maxParamsDepth} levels of objects and arrays, the limit of every message, so it was refused unread`;
  if (verdict.kind === 'response') {
    const entry = live.outgoing.get(verdict.id);
    if (!entry) {
      live.scope.emit({ type: 'rpc.dropped', reason: 'too_deep', detail: `an answer (id ${JSON.stringify(verdict.id)}) nobody waits for: ${detail}` });
      return;
    }
    live.outgoing.delete(verdict.id);
    settle(live, verdict.id, entry, 'failed');
    entry.reject(RpcError.because('too_deep', `The answer to ${entry.method} was not read: its ${verdict.isError ? 'error' : 'result'} is ${detail}`, { maxDepth: maxParamsDepth, method: entry.method }, { code: ErrorCodes.InternalError, failure: 'local' }));
    return;
  }
  const { method } = verdict.message;
  if (verdict.kind === 'notification') {
    live.scope.emit({ type: 'rpc.dropped', reason: 'too_deep', detail: `${method}: its params are ${detail}` });
    return;
  }
  send(live, errorResponse(verdict.message.id, RpcError.because('too_deep', `Invalid params: ${method}: the params are ${detail}; send flatter JSON`, { maxDepth: maxParamsDepth, method })));
}

/**
 * A line over the transport's limit, dropped unread: a request is answered -32600 by its id
 * (when its start or end showed it; else with id null), naming the limit; an answer to one of
 * our requests fails that request; a notification is dropped and reported.
 */
function onOversize(live: Live, line: OversizeLine): void {
  if (live.closed) return;
  try {
    answerOversize(live, line);
  } finally {
    holdReading(live);
  }
}

function answerOversize(live: Live, line: OversizeLine): void {
  live.lastActivity = live.now();
  live.malformed += 1;
  const { id, kind, method } = line.envelope;
  const detail = `a message of ${line.bytes} bytes is over the limit of ${line.limit} bytes per line, so it was dropped unread`;
  const details = { bytes: line.bytes, limitBytes: line.limit, ...(method ? { method } : {}) };
  if (kind === 'response' && id !== null) {
    const entry = live.outgoing.get(id);
    if (!entry) {
      live.scope.emit({ type: 'rpc.dropped', reason: 'line_too_long', detail: `an answer (id ${JSON.stringify(id)}) nobody waits for: ${detail}` });
      return;
    }
    live.outgoing.delete(id);
    settle(live, id, entry, 'failed');
    entry.reject(RpcError.because('line_too_long', `The answer to ${entry.method} was not read: ${detail}`, { ...details, method: entry.method }, { code: ErrorCodes.InternalError, failure: 'local' }));
    return;
  }
  if (kind === 'notification' || kind === 'response') {
    live.scope.emit({ type: 'rpc.dropped', reason: 'line_too_long', detail: `${method ?? 'an answer without id'}: ${detail}` });
    return;
  }
  send(live, { jsonrpc: '2.0', id, error: RpcError.because('line_too_long', `Invalid request: ${method ? `${method}: ` : ''}${detail}`, details).toErrorObject() });
}

type ParsedParams = { readonly kind: 'ok'; readonly params: unknown } | { readonly kind: 'unknown' } | { readonly kind: 'invalid'; readonly error: RpcError };

/** Checks `params` of `method` against a method table (no table: anything goes). */
function parseParams(table: Readonly<Record<string, ParamsParser | true>> | undefined, method: string, params: unknown): ParsedParams {
  if (!table) return { kind: 'ok', params };
  const parser = Object.hasOwn(table, method) ? table[method] : undefined;
  if (parser === undefined) return { kind: 'unknown' };
  if (parser === true) return { kind: 'ok', params };
  try {
    return { kind: 'ok', params: parser(params) };
  } catch (error) {
    return { kind: 'invalid', error: toRpcError(asParamsError(error)) };
  }
}

/** A thrown parser error is an invalid-params error, whatever its class. */
function asParamsError(error: unknown): unknown {
  if (error instanceof RpcError) return error;
  if (typeof error === 'object' && error !== null && Array.isArray((error as { issues?: unknown }).issues)) return error;
  return RpcError.invalidParams(error instanceof Error ? error.message : String(error));
}

function onResponse(live: Live, id: JsonRpcId, isError: boolean, payload: unknown): void {
  const entry = live.outgoing.get(id);
  if (!entry) {
    if (live.abandoned.delete(id)) return; // the answer to a request we stopped waiting for
    live.scope.emit({ type: 'rpc.dropped', reason: 'unmatched_response', detail: `no request with id ${JSON.stringify(id)} is pending` });
    return;
  }
  live.outgoing.delete(id);
  if (isError) {
    settle(live, id, entry, 'failed');
    entry.reject(RpcError.fromErrorObject(payload));
  } else {
    settle(live, id, entry, 'answered');
    entry.resolve(payload);
  }
}

// ---------------------------------------------------------------------------------------
// Outgoing

function settle(live: Live, id: JsonRpcId, entry: Outgoing, outcome: RequestOutcome): void {
  if (entry.timeout !== 'none') live.scope.system.scheduler.cancel(live.scope.self, `timeout:${id}`);
  entry.ref.send({ type: 'request.settle', outcome });
}

function abandon(live: Live, id: JsonRpcId): void {
  live.abandoned.add(id);
  if (live.abandoned.size > abandonedLimit) {
    const oldest = live.abandoned.values().next().value as JsonRpcId;
    live.abandoned.delete(oldest);
  }
}

function timeoutFor(live: Live, method: string, override: Timeout | undefined): Timeout {
  return override ?? live.input.timeouts?.methods?.[method] ?? live.input.timeouts?.default ?? 'none';
}

function scheduleTimeout(live: Live, id: JsonRpcId, delay: number): void {
  const self = live.scope.self;
  const due: ConnectionEvent = { type: 'rpc.timeout', id };
  live.scope.system.scheduler.schedule(self, self, due, Math.max(0, delay), `timeout:${id}`);
}

function onTimeout(live: Live, id: JsonRpcId): void {
  const entry = live.outgoing.get(id);
  if (!entry || typeof entry.timeout !== 'object' && typeof entry.timeout !== 'number') return;
  if (typeof entry.timeout === 'object') {
    // An idle deadline: any message from the peer since then moves it.
    const quiet = live.now() - Math.max(live.lastActivity, entry.sentAt);
    if (quiet < entry.timeout.idleMs) {
      scheduleTimeout(live, id, entry.timeout.idleMs - quiet);
      return;
    }
  }
  live.outgoing.delete(id);
  abandon(live, id);
  const ms = typeof entry.timeout === 'number' ? entry.timeout : entry.timeout.idleMs;
  settle(live, id, entry, 'timedOut');
  holdReading(live);
  entry.reject(RpcError.because('timeout', 'Request cancelled', { method: entry.method, timeoutMs: ms }));
}

/** The error of a request to a peer whose input ended: it can never answer. */
function inputEndedError(reason: PeerLost, method: string): RpcError {
  return RpcError.because('input_ended', `The peer can no longer answer ${method}: ${reason.message}`, { method });
}

/** The peer sends nothing more: what we asked it fails now; what it asked us is still answered. */
function onInputEnded(live: Live, reason: PeerLost): void {
  if (live.closed || live.inputEnded) return;
  live.inputEnded = reason;
  const entries = [...live.outgoing];
  live.outgoing.clear();
  for (const [id, entry] of entries) {
    settle(live, id, entry, 'peerLost');
    entry.reject(inputEndedError(reason, entry.method));
  }
  live.scope.emit({ type: 'rpc.inputEnded', reason });
}

function settleAll(live: Live, reason: PeerLost): void {
  const entries = [...live.outgoing];
  live.outgoing.clear();
  live.incoming.clear();
  for (const [id, entry] of entries) {
    // Through settle, so that each request's deadline timer goes with it.
    settle(live, id, entry, 'peerLost');
    const error = RpcError.because('peer_lost', `The peer is gone: ${reason.message}`, { method: entry.method, exit: reason.exit });
    entry.reject(error);
  }
}

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

function liveOf(connection: AnyActorRef): Live {
  const live = lives.get(connection);
  if (!live) throw new TypeError(`Expected a JSON-RPC connection actor, got actor "${connection.id}".`);
  return live;
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
  if (!live.closed) send(live, { jsonrpc: '2.0', method: CANCEL_REQUEST, params: { requestId: id } });
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

/**
 * Stops reading the transport while {@link Live.maxUnanswered} incoming requests are
 * unanswered, until half as many are; never while a request of ours is outstanding (its
 * answer is on the same input: a prompt waiting on a permission answer must get it).
 */
function holdReading(live: Live): void {
  if (live.closed) return;
  const unanswered = live.incoming.size;
  const hold = live.outgoing.size === 0 && (live.readingHeld ? unanswered > live.maxUnanswered / 2 : unanswered >= live.maxUnanswered);
  if (hold === live.readingHeld) return;
  live.readingHeld = hold;
  live.input.transport.holdReading?.(hold);
}

/** Closes the connection: the transport stops, pending requests settle `peer_lost`. */
export function closeConnection(connection: AnyActorRef, reason?: PeerLost): void {
  if (connection.getSnapshot().status === 'active') connection.send(reason ? { type: 'rpc.close', reason } : { type: 'rpc.close' });
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
