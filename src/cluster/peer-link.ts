/**
 * A host's link to a peer host of the cluster (docs/cluster.md, "Routing"): one WebSocket to
 * the address the peer advertised (`hosts.advertise`), authenticated with the cluster's shared
 * bearer token, initialized with the capabilities of the client it stands for, speaking raw
 * JSON-RPC as that client would. It knows nothing of sessions: forwarding.ts decides what goes
 * over it and what comes back means.
 *
 * - Requests are written in the order given; those given before the link is initialized wait
 *   for the peer's `initialize` answer and go out then, in order.
 * - `close(failure)` is the one way the link ends (a close of the socket, a failed open or
 *   initialize, two keepalive intervals without a sign of life, or the owner's own close): it is
 *   idempotent, answers every request still waiting through `lost(failure)` (unless it settles it
 *   itself), then calls
 *   `closed(failure)` once.
 * - Reading follows the client's delivery: `hold(true)` pauses the socket (the peer's writes
 *   back up there, as they would towards a slow client connected to it directly).
 */
import type { WebSocket } from 'ws';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';
import { CANCEL_REQUEST_METHOD, classify, notificationMessage, requestMessage, responseMessage } from '../jsonrpc/message.js';
import { WebSocketKeepalive } from '../jsonrpc/websocket-keepalive.js';
import { openBridgeSocket, type BridgeFailure } from '../jsonrpc/bridge-socket.js';

/** The ping interval of a link to a peer host by default: 10 s (a client's is 30 s: `defaultKeepaliveIntervalMs`). */
export const defaultPeerPingIntervalMs = 10_000;

/** Why a peer link ended (a {@link BridgeFailure}, the peer refusing `initialize`, or closed by its owner). */
export type PeerLinkFailure = BridgeFailure | { readonly kind: 'initialize_refused'; readonly error: ErrorObject } | { readonly kind: 'closed_here' };

/** What a link reports, each call in the order its frames came. */
export interface PeerLinkSink {
  /** The peer's answer to a request sent with {@link PeerLink.request} (`key`: the caller's). */
  answered(key: string, answer: { readonly result: unknown } | { readonly error: ErrorObject }): void;
  /** A notification from the peer (`session/update` and others). */
  notified(method: string, params: unknown): void;
  /** A request of the peer (the agent asking the client); answer it with {@link PeerLink.reply} and `id`. */
  asked(id: string | number, method: string, params: unknown): void;
  /**
   * The error a request still waiting gets when the link ends with `failure` (`opened`: whether
   * it was ever initialized); `undefined`: the caller settled that request itself (it is not
   * answered).
   */
  lost(key: string, failure: PeerLinkFailure, opened: boolean): ErrorObject | undefined;
  /** The link ended; every request waiting was answered before. Called once. */
  closed(failure: PeerLinkFailure, opened: boolean): void;
}

/** Options of {@link openPeerLink}. */
export interface PeerLinkOptions {
  /** The peer's advertised address (`ws://HOST:PORT/acp`). */
  readonly url: string;
  /** The cluster's bearer token (every host's token file holds the same). */
  readonly token: string;
  /** The `initialize` params: the client's own (protocol version, capabilities, info). */
  readonly initialize: Record<string, unknown>;
  readonly sink: PeerLinkSink;
  /** Ms between pings; two silent intervals end the link `unanswered` (default {@link defaultPeerPingIntervalMs}; 0: never). */
  readonly pingIntervalMs?: number;
}

/** One open (or opening) link. */
export interface PeerLink {
  /** Sends a request; its answer comes to `sink.answered(key, …)`. */
  request(key: string, method: string, params: unknown): void;
  /** Sends a notification (`session/cancel`). */
  notify(method: string, params: unknown): void;
  /** The caller's key of the request the link sent with JSON-RPC id `id`, while it waits (the peer names it so: relay-link.ts). */
  keyOf(id: string | number): string | undefined;
  /** Sends a request's id of ours for `$/cancel_request` of the request sent with `key`, if it waits. */
  cancelRequest(key: string): void;
  /** Answers a request of the peer. */
  reply(id: string | number, answer: { readonly result: unknown } | { readonly error: ErrorObject }): void;
  /** Pauses (`true`) or resumes reading the peer. */
  hold(held: boolean): void;
  /** Ends the link (`closed_here`); idempotent. */
  close(): void;
}

/** The link's phase: connecting and initializing hold the writes; closed refuses them. */
type Phase = 'opening' | 'open' | 'closed';

const initializeId = 0;

/** Opens a link to a peer host (see the module's doc); failures come through `sink`, never thrown. */
export function openPeerLink(options: PeerLinkOptions): PeerLink {
  const { sink } = options;
  let phase: Phase = 'opening';
  let opened = false;
  let socket: WebSocket | undefined;
  let keepalive: WebSocketKeepalive | undefined;
  let held = false;
  let nextId = initializeId + 1;
  /** Requests sent and not answered: our id → the caller's key. */
  const pending = new Map<number, string>();
  /** The caller's key → our id, for `$/cancel_request`. */
  const idOfKey = new Map<string, number>();
  /** Frames written before the peer answered `initialize`. */
  const queued: string[] = [];

  const write = (frame: string) => {
    if (phase === 'closed') return;
    if (phase === 'opening') return void queued.push(frame);
    socket?.send(frame);
  };
  /** Answers a request the link will never send or get an answer for, as `sink.lost` says. */
  const answerLost = (key: string, failure: PeerLinkFailure) => {
    const error = sink.lost(key, failure, opened);
    if (error) sink.answered(key, { error });
  };
  const close = (failure: PeerLinkFailure) => {
    if (phase === 'closed') return;
    phase = 'closed';
    keepalive?.stop();
    queued.length = 0;
    if (socket && socket.readyState !== socket.CLOSED) {
      // A peer that answers nothing is dropped; one that answers gets the closing handshake.
      if (failure.kind === 'unanswered') socket.terminate();
      else socket.close(1000);
    }
    const waiting = [...pending.values()];
    pending.clear();
    idOfKey.clear();
    for (const key of waiting) answerLost(key, failure);
    sink.closed(failure, opened);
  };
  const onFrame = (text: string) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return; // a host speaks JSON-RPC; anything else is dropped
    }
    const message = classify(parsed);
    if (message.kind === 'invalid') return;
    if (message.kind === 'request') return sink.asked(message.message.id, message.message.method, message.message.params);
    if (message.kind === 'notification') return sink.notified(message.message.method, message.message.params);
    const { id } = message;
    if (id === initializeId && phase === 'opening') {
      if (message.isError) return close({ kind: 'initialize_refused', error: message.error as ErrorObject });
      phase = 'open';
      opened = true;
      for (const frame of queued.splice(0)) socket?.send(frame);
      return;
    }
    if (typeof id !== 'number') return;
    const key = pending.get(id);
    if (key === undefined) return; // answered already (the link's own bookkeeping), dropped
    pending.delete(id);
    idOfKey.delete(key);
    sink.answered(key, message.isError ? { error: message.error as ErrorObject } : { result: message.result });
  };

  void openBridgeSocket(options.url, options.token).then((outcome) => {
    if (!outcome.ok) return close(outcome.failure);
    socket = outcome.socket;
    if (phase === 'closed') return void socket.close(1000); // closed here while it opened
    const open = socket;
    const pingIntervalMs = options.pingIntervalMs ?? defaultPeerPingIntervalMs;
    keepalive = new WebSocketKeepalive(pingIntervalMs, open, () => held, () => close({ kind: 'unanswered', pingIntervalMs }));
    open.on('message', (data: Buffer, isBinary: boolean) => {
      keepalive?.alive();
      if (!isBinary) onFrame(data.toString('utf8'));
    });
    open.on('pong', () => keepalive?.alive());
    open.on('ping', () => keepalive?.alive());
    open.on('error', () => undefined); // the close that follows says what happened
    open.once('close', (code: number, reason: Buffer) => close({ kind: 'closed', code, reason: reason.toString('utf8') }));
    open.send(JSON.stringify(requestMessage(initializeId, 'initialize', options.initialize)));
    keepalive.start();
    if (!held) open.resume(); // openBridgeSocket hands it over paused
  });

  return {
    request(key, method, params) {
      if (phase === 'closed') return answerLost(key, { kind: 'closed_here' });
      const id = nextId++;
      pending.set(id, key);
      idOfKey.set(key, id);
      write(JSON.stringify(requestMessage(id, method, params)));
    },
    notify(method, params) {
      write(JSON.stringify(notificationMessage(method, params)));
    },
    keyOf: (id) => (typeof id === 'number' ? pending.get(id) : undefined),
    cancelRequest(key) {
      const id = idOfKey.get(key);
      if (id !== undefined) write(JSON.stringify(notificationMessage(CANCEL_REQUEST_METHOD, { requestId: id })));
    },
    reply(id, answer) {
      write(JSON.stringify(responseMessage(id, answer)));
    },
    hold(next) {
      if (held === next) return;
      held = next;
      if (!socket || phase === 'closed') return;
      if (next) {
        keepalive?.readingHeld(true);
        socket.pause();
      } else socket.resume();
    },
    close: () => close({ kind: 'closed_here' }),
  };
}
