/**
 * One Streamable HTTP connection on `warden serve` (`Acp-Connection-Id`) as a {@link Transport}:
 * the same hub connection a WebSocket is (connection-owner.ts), only its messages travel in
 * HTTP requests. What the client POSTs is delivered to the connection as if read from a socket;
 * what the connection sends is routed to one of its SSE streams (http-sse-stream.ts). Two kinds
 * of client are served: those of the ACP transport RFD, which read everything from the one
 * connection stream (GET with `Acp-Connection-Id`), and the SDK's `createHttpStream`, which
 * also opens one stream per session (GET with `Acp-Session-Id` too):
 *
 * - a message concerning a session (a request or notification whose `params.sessionId` names
 *   it; the answer to a client's request that named it: `session/prompt`, `session/load`,
 *   `session/resume`, ...) goes to that session's stream while the client holds it open, else
 *   to the connection's stream. When the client opens a session's stream, the messages of that
 *   session still waiting on the connection's move to it, ahead of the next ones; when it lets
 *   go, those still waiting move back. So a session's messages keep their order, and the answer
 *   to a request comes after every update it caused;
 * - everything else (the answer to `session/new`, `session/list`, extension requests) goes to
 *   the connection's stream; the answer to `initialize` is the body of its POST.
 *
 * What waits on a stream with no receiver is sent when one comes. Flow control: the bytes
 * queued on every stream plus those written to the sockets and not sent yet are this
 * connection's output; over {@link stdioHighWaterBytes} the sink hears `backpressure(true)`
 * (the hub then pauses this connection's cursors, never the session), at
 * {@link stdioLowWaterBytes} `false`. `holdReading` makes POSTs wait, unanswered, until the
 * hold ends.
 *
 * The client is gone (the sink hears `closed`) when it DELETEs the connection, when the
 * connection's own event stream, once opened, closes (the SDK's client ends its connection
 * when that stream ends), or when it shows no sign of life for two keepalive intervals in a
 * row (no request, no stream open, or its streams backed up and none of it read).
 */
import type { ServerResponse } from 'node:http';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import { stdioHighWaterBytes, stdioLowWaterBytes } from '../jsonrpc/stdio-transport.js';
import type { PeerLost, Transport, TransportSink } from '../jsonrpc/transport.js';
import { SseStream, type SseStreamEvents } from './http-sse-stream.js';

/** Session streams one connection may hold open at a time: as the SDK's server. */
export const maxSessionStreams = 1024;

/** Options of an {@link HttpConnection}. */
export interface HttpConnectionOptions {
  /** The `Acp-Connection-Id` the client names it by. */
  readonly connectionId: string;
  /** The keepalive interval, ms: an SSE comment on every open stream, and the silence judged. 0: neither. */
  readonly pingIntervalMs: number;
  /** Called once when the connection ends, whichever side ended it (the endpoint forgets its id). */
  readonly ended: (connectionId: string) => void;
}

/** What opening a stream gave: `conflict` when it already has a receiver, `limit` when too many session streams are open. */
export type StreamOpening = 'open' | 'conflict' | 'limit' | 'closed';

/** A POST waiting while the connection holds its reading (or before it started). */
interface HeldPost {
  readonly value: unknown;
  readonly settle: (delivered: boolean) => void;
}

/** One Streamable HTTP connection: a {@link Transport} for the hub, request handlers for the endpoint. */
export class HttpConnection implements Transport {
  readonly connectionId: string;
  readonly #pingIntervalMs: number;
  readonly #ended: (connectionId: string) => void;
  #sink: TransportSink | undefined;
  #closed = false;
  #connectionHold = false;
  #held: HeldPost[] = [];
  readonly #connectionStream: SseStream;
  readonly #sessionStreams = new Map<string, SseStream>();
  /** The session each request the client posted named (answers go to its stream); none: the connection's. */
  readonly #routes = new Map<string, string | undefined>();
  /** The initialize POST waiting for its answer, by the id key of its request. */
  #initializeWaiter: { readonly key: string; readonly resolve: (answer: JsonRpcMessage | undefined) => void } | undefined;
  #backedUp = false;
  #timer: NodeJS.Timeout | undefined;
  /** Signs of life since the last keepalive tick: a request, some output read. */
  #heard = true;
  #silentTicks = 0;

  constructor(options: HttpConnectionOptions) {
    this.connectionId = options.connectionId;
    this.#pingIntervalMs = options.pingIntervalMs;
    this.#ended = options.ended;
    this.#connectionStream = new SseStream(this.#streamEvents(() => this.#lost({ message: "the HTTP client's connection event stream (GET) closed: the client is gone" })));
    if (this.#pingIntervalMs > 0) {
      this.#timer = setInterval(() => this.#tick(), this.#pingIntervalMs);
      this.#timer.unref();
    }
  }

  // --- Transport ---

  start(sink: TransportSink): void {
    this.#sink = sink;
    this.#release();
  }

  send(message: JsonRpcMessage): void {
    if (this.#closed) return;
    const json = JSON.stringify(message); // throws for what JSON cannot encode: the connection answers for it
    if (!('method' in message)) {
      const key = idKey(message.id);
      const session = key === undefined ? undefined : this.#routes.get(key);
      if (key !== undefined) this.#routes.delete(key);
      const waiter = this.#initializeWaiter;
      if (waiter && key === waiter.key) {
        this.#initializeWaiter = undefined;
        return waiter.resolve(message);
      }
      return this.#streamFor(session).push(json, session);
    }
    const session = sessionIdOf(message);
    this.#streamFor(session).push(json, session);
  }

  holdReading(held: boolean): void {
    this.#connectionHold = held;
    this.#release();
  }

  close(): void {
    this.#end(undefined);
  }

  // --- the endpoint's side ---

  /** Whether the connection has ended (its id is then unknown: 404). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Any request naming this connection arrived: the client is alive. */
  heard(): void {
    this.#heard = true;
  }

  /**
   * Delivers the connection's `initialize` request and resolves with its answer (undefined when
   * the connection ended first): the body of the POST that opened the connection.
   */
  initialize(request: unknown, id: string | number): Promise<JsonRpcMessage | undefined> {
    return new Promise((resolve) => {
      this.#initializeWaiter = { key: idKey(id) as string, resolve };
      void this.post(request, undefined).then((delivered) => {
        if (delivered) return;
        this.#initializeWaiter = undefined;
        resolve(undefined);
      });
    });
  }

  /**
   * Delivers one posted JSON value (any value: the connection answers what is not a message);
   * resolves once it is delivered (it waits while the connection holds its reading), `false`
   * when the connection ended first. `sessionHeader` is the POST's `Acp-Session-Id`.
   */
  post(value: unknown, sessionHeader: string | undefined): Promise<boolean> {
    this.heard();
    if (this.#closed) return Promise.resolve(false);
    const request = requestParts(value);
    if (request) this.#routes.set(request.key, request.sessionId ?? sessionHeader);
    return new Promise((settle) => {
      this.#held.push({ value, settle });
      this.#release();
    });
  }

  /** Makes `response` the receiver of the connection's stream (no `sessionId`) or of a session's. */
  openStream(sessionId: string | undefined, response: ServerResponse): StreamOpening {
    this.heard();
    if (this.#closed) return 'closed';
    if (sessionId === undefined) return this.#connectionStream.attach(response) ? 'open' : 'conflict';
    if (this.#sessionStreams.has(sessionId)) return 'conflict';
    if (this.#sessionStreams.size >= maxSessionStreams) return 'limit';
    const stream = new SseStream(this.#streamEvents(() => {
      // The client let go of the session's stream: what still waits on it goes on the connection's, in order.
      if (this.#sessionStreams.get(sessionId) === stream) this.#sessionStreams.delete(sessionId);
      this.#connectionStream.pushAll(stream.takeQueued());
    }));
    this.#sessionStreams.set(sessionId, stream);
    stream.pushAll(this.#connectionStream.takeQueued(sessionId));
    stream.attach(response);
    return 'open';
  }

  /** The client is gone (its DELETE, its initialize POST abandoned): the connection ends, its sessions go on without it. */
  clientGone(message: string): void {
    this.#lost({ message });
  }

  // --- inside ---

  #streamEvents(receiverLost: () => void): SseStreamEvents {
    return { changed: () => this.#measure(), progressed: () => this.heard(), receiverLost };
  }

  /** A session's stream while the client holds it open (the only time one exists), else the connection's. */
  #streamFor(sessionId: string | undefined): SseStream {
    return (sessionId === undefined ? undefined : this.#sessionStreams.get(sessionId)) ?? this.#connectionStream;
  }

  /** Delivers the held POSTs in order while the connection neither holds its reading nor is unstarted. */
  #release(): void {
    while (this.#held.length > 0 && this.#sink && !this.#connectionHold && !this.#closed) {
      const next = this.#held.shift() as HeldPost;
      this.#sink.message(next.value);
      next.settle(true);
    }
  }

  /** Sums this connection's output and tells the sink when it crosses a water mark. */
  #measure(): void {
    if (this.#closed) return;
    let bytes = this.#connectionStream.pendingBytes;
    for (const stream of this.#sessionStreams.values()) bytes += stream.pendingBytes;
    if (!this.#backedUp && bytes >= stdioHighWaterBytes) {
      this.#backedUp = true;
      this.#sink?.backpressure?.(true);
    } else if (this.#backedUp && bytes <= stdioLowWaterBytes) {
      this.#backedUp = false;
      this.heard();
      this.#sink?.backpressure?.(false);
    }
  }

  #tick(): void {
    const streams = [this.#connectionStream, ...this.#sessionStreams.values()];
    for (const stream of streams) stream.keepalive();
    const reading = streams.some((stream) => stream.hasReceiver) && !this.#backedUp;
    this.#silentTicks = this.#heard || reading ? 0 : this.#silentTicks + 1;
    this.#heard = false;
    if (this.#silentTicks >= 2) {
      this.#lost({
        message: `the HTTP client showed no sign of life for two keepalive intervals ${this.#pingIntervalMs} ms apart (no request, no event stream open or read)`,
        exit: { pingIntervalMs: this.#pingIntervalMs },
      });
    }
  }

  /** The client is gone: the sink hears why. */
  #lost(reason: PeerLost): void {
    if (this.#closed) return;
    this.#end(reason);
  }

  /** Ends the connection once: every stream ended (what was queued written first), waiting POSTs let go. */
  #end(reason: PeerLost | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#connectionStream.end();
    for (const stream of this.#sessionStreams.values()) stream.end();
    this.#sessionStreams.clear();
    this.#routes.clear();
    for (const post of this.#held.splice(0)) post.settle(false);
    this.#initializeWaiter?.resolve(undefined);
    this.#initializeWaiter = undefined;
    this.#ended(this.connectionId);
    if (reason) this.#sink?.closed(reason);
  }
}

/** A JSON-RPC id as a map key: strings and numbers apart (`1` is not `"1"`). */
function idKey(id: unknown): string | undefined {
  if (typeof id === 'string') return `s:${id}`;
  if (typeof id === 'number') return `n:${id}`;
  return undefined;
}

/** The `params.sessionId` of a request or notification, if it names one. */
function sessionIdOf(message: { readonly params?: unknown }): string | undefined {
  const params = message.params;
  if (typeof params !== 'object' || params === null) return undefined;
  const sessionId = (params as { sessionId?: unknown }).sessionId;
  return typeof sessionId === 'string' ? sessionId : undefined;
}

/** A posted value that is a request: its id key and the session it names. */
function requestParts(value: unknown): { key: string; sessionId: string | undefined } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const message = value as { method?: unknown; id?: unknown; params?: unknown };
  if (typeof message.method !== 'string') return undefined;
  const key = idKey(message.id);
  return key === undefined ? undefined : { key, sessionId: sessionIdOf(message) };
}
