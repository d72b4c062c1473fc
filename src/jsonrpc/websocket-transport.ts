import type { RawData, WebSocket } from 'ws';
import { malformedPreviewChars, oversizeHeadBytes, oversizeTailBytes } from '../port/line-framer.js';
import { scanEnvelope } from './envelope-scan.js';
import type { JsonRpcMessage } from './message.js';
import { defaultStdioMaxLineBytes, stdioHighWaterBytes, stdioLowWaterBytes } from './stdio-transport.js';
import { HeldInput } from './held-input.js';
import { messageText } from './json-text.js';
import { defaultHandshakeTimeoutMs } from './websocket-handshake.js';
import { defaultKeepaliveIntervalMs, WebSocketKeepalive } from './websocket-keepalive.js';
import { readUpgradeRefusal } from './websocket-refusal.js';
import type { PeerLost, Transport, TransportSink } from './transport.js';

/** How often {@link webSocketTransport} pings its peer by default: every 30 s. */
export const defaultWebSocketPingIntervalMs = defaultKeepaliveIntervalMs;

/**
 * Bytes a frame may have beyond the message limit and still be read (then answered by its id
 * and dropped): 1 MiB. A bigger frame is refused by `ws` itself (close code 1009, unanswered).
 */
const oversizeSlackBytes = 1024 * 1024;

/** The longest timer delay Node keeps (2^31-1 ms); a longer one fires at once. */
const maxTimerMs = 2 ** 31 - 1;

/**
 * The `maxPayload` to give `ws` (`new WebSocketServer({ maxPayload })`, `new WebSocket(url, { maxPayload })`)
 * for sockets served by {@link webSocketTransport} with this `maxLineBytes`: the limit plus
 * 1 MiB, so that `ws` hands over a frame a little over the limit (the transport answers it by
 * its id) and refuses, with close code 1009, one far over it instead of buffering it.
 */
export function webSocketMaxPayload(maxLineBytes: number = defaultStdioMaxLineBytes): number {
  return maxLineBytes + oversizeSlackBytes;
}

/** Options of {@link webSocketTransport}. */
export interface WebSocketTransportOptions {
  /**
   * Longest message read, in bytes of its text frame; a longer one is answered by its id and
   * dropped. Default {@link defaultStdioMaxLineBytes} (64 MiB, as stdio). Give `ws` a
   * `maxPayload` of at least {@link webSocketMaxPayload} of it.
   */
  readonly maxLineBytes?: number;
  /**
   * Ms between two pings; a peer that shows no sign of life for two intervals in a row (no
   * pong, no frame, nothing of ours read while our output is backed up) is closed as lost: a
   * half-open TCP connection never says so itself. `0` turns the keepalive off. Default
   * {@link defaultWebSocketPingIntervalMs}.
   */
  readonly pingIntervalMs?: number;
}

/**
 * A transport over one WebSocket (the `ws` package's, open or still connecting): one JSON-RPC
 * message per **text** frame, both ways. It mirrors {@link stdioTransport}:
 *
 * - A text frame that is not JSON is `malformed` (the connection answers -32700); a binary
 *   frame is `malformed` too (ACP over WebSocket is text frames), and so answered -32700.
 * - A frame over `maxLineBytes` is reported `oversize` with the envelope read from its first
 *   4 KiB and last 256 bytes (the connection answers a request by its id, -32600).
 * - Flow control: once {@link stdioHighWaterBytes} wait to be sent (the socket's
 *   `bufferedAmount` and the transport's own queue: ws is handed messages only below that
 *   mark), reading stops and the sink hears `backpressure(true)`; at
 *   {@link stdioLowWaterBytes} both go on. The connection's `holdReading` holds the frames
 *   read, unparsed, up to 1 MiB, then pauses the socket.
 * - The peer closing, the socket failing, or the keepalive finding the peer gone is the peer
 *   lost (`closed`, with the close code and reason in `exit`). There is no half-close.
 * - `close()` closes with code 1000 after what was sent before; nothing more is delivered.
 *
 * @example
 * ```ts
 * import { WebSocketServer } from 'ws';
 * import { createActor } from 'xstate';
 * import { connectionLogic, webSocketMaxPayload, webSocketTransport } from 'acp-warden/jsonrpc';
 *
 * const server = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: webSocketMaxPayload() });
 * server.on('connection', (socket) => {
 *   createActor(connectionLogic, { input: { transport: webSocketTransport(socket) } }).start();
 * });
 * ```
 */
export function webSocketTransport(socket: WebSocket, options: WebSocketTransportOptions = {}): Transport {
  const limit = checkedInteger(options.maxLineBytes ?? defaultStdioMaxLineBytes, 'maxLineBytes', 1, Number.MAX_SAFE_INTEGER);
  const pingIntervalMs = checkedInteger(options.pingIntervalMs ?? defaultWebSocketPingIntervalMs, 'pingIntervalMs', 0, maxTimerMs);
  let sink: TransportSink | undefined;
  let closed = false;
  /** Why the socket failed, kept for the close that follows (ws always closes after an error). */
  let failure: string | undefined;
  // Input is read only when neither the backed-up output nor the connection holds it (as stdio).
  let outputBackedUp = false;
  // Messages not handed to ws yet: sent before the socket opened, or while ws holds the high-water
  // mark. ws then gets small writes, each one's completion showing the peer reads (keepalive).
  let waiting: Array<{ readonly text: string; readonly bytes: number }> = [];
  let waitingBytes = 0;
  const held = new HeldInput<{ readonly data: Buffer; readonly isBinary: boolean }>((frame) => frame.data.length, (frame) => deliver(frame.data, frame.isBinary));
  const pausedForInput = () => held.full;
  const keepalive = new WebSocketKeepalive(pingIntervalMs, socket, pausedForInput, () => {
    socket.terminate();
    finish({ message: `the WebSocket peer answered neither of two pings ${pingIntervalMs} ms apart (no pong, nothing else either): a half-open connection, its host or network gone`, exit: { pingIntervalMs } });
  });
  const applyReading = () => {
    if (closed) return;
    const inputHeld = pausedForInput();
    keepalive.readingHeld(inputHeld);
    if (outputBackedUp || inputHeld) socket.pause();
    else socket.resume();
  };
  const setBackedUp = (backedUp: boolean) => {
    outputBackedUp = backedUp;
    applyReading();
    sink?.backpressure?.(backedUp);
  };
  const finish = (reason: PeerLost) => {
    if (closed) return;
    closed = true;
    keepalive.stop();
    held.clear();
    waiting = [];
    sink?.closed(reason);
  };
  /** One callback for every frame sent (not a closure each: a stream of updates is many frames). */
  const written = () => {
    if (closed) return;
    if (outputBackedUp) keepalive.alive();
    pump();
    if (outputBackedUp && socket.bufferedAmount + waitingBytes <= stdioLowWaterBytes) setBackedUp(false);
  };
  /** Hands waiting messages to ws while it holds less than the high-water mark. */
  const pump = () => {
    while (waiting.length > 0 && socket.readyState === socket.OPEN && socket.bufferedAmount < stdioHighWaterBytes) {
      const next = waiting.shift() as { text: string; bytes: number };
      waitingBytes -= next.bytes;
      socket.send(next.text, written);
    }
  };
  const write = (text: string) => {
    if (waiting.length === 0 && socket.readyState === socket.OPEN && socket.bufferedAmount < stdioHighWaterBytes) socket.send(text, written);
    else {
      const bytes = Buffer.byteLength(text);
      waiting.push({ text, bytes });
      waitingBytes += bytes;
    }
    if (!outputBackedUp && socket.bufferedAmount + waitingBytes >= stdioHighWaterBytes) setBackedUp(true);
  };
  const deliver = (data: Buffer, isBinary: boolean) => {
    if (!sink || closed) return; // a frame parsed after the transport closed (released from the hold) is no news
    if (isBinary) {
      sink.malformed(`<a binary frame of ${data.length} bytes: ACP over WebSocket is one JSON-RPC message per text frame>`);
      return;
    }
    if (data.length > limit) {
      const head = data.subarray(0, oversizeHeadBytes).toString('utf8');
      const tail = data.subarray(Math.max(0, data.length - oversizeTailBytes)).toString('utf8');
      if (sink.oversize) sink.oversize({ bytes: data.length, limit, envelope: scanEnvelope(head, tail) });
      else sink.malformed(`<a frame of ${data.length} bytes, over the limit>`);
      return;
    }
    const text = data.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      sink.malformed(text.slice(0, malformedPreviewChars));
      return;
    }
    sink.message(value);
  };
  const onMessage = (raw: RawData, isBinary: boolean) => {
    keepalive.alive();
    if (closed) return;
    if (held.take({ data: bufferOf(raw), isBinary }) && held.full) applyReading();
  };
  const onHeard = () => keepalive.alive();
  const onOpen = () => {
    if (closed) return;
    applyReading(); // a pause asked while connecting did nothing
    pump();
    keepalive.start();
  };
  const onError = (error: Error) => {
    failure ??= failureOf(error);
  };
  const onClose = (code: number, reason: Buffer) => finish(closeReason(code, reason.toString('utf8'), failure));
  return {
    start(target) {
      sink = target;
      socket.on('message', onMessage);
      socket.on('pong', onHeard);
      socket.on('ping', onHeard);
      socket.on('error', onError);
      socket.on('close', onClose);
      if (socket.readyState === socket.CONNECTING) socket.once('open', onOpen);
      else if (socket.readyState === socket.OPEN) {
        keepalive.start();
        applyReading(); // a socket handed over paused (connectWebSocketTransport) is read from now on
      }
      else queueMicrotask(() => finish({ message: 'the WebSocket was already closed' }));
    },
    send(message: JsonRpcMessage) {
      if (closed) return;
      write(messageText(message)); // throws for what JSON cannot encode: the connection answers for it
    },
    holdReading(hold: boolean) {
      held.setHold(hold);
      applyReading();
    },
    close() {
      if (closed) return;
      closed = true;
      keepalive.stop();
      held.clear();
      socket.off('message', onMessage);
      // Read on: the peer's closing frame completes the handshake (ws otherwise waits 30 s for it).
      socket.resume();
      if (socket.readyState === socket.OPEN) {
        // What was sent before goes out before the closing frame (ws drops the socket if the peer takes over 30 s).
        for (const { text } of waiting) socket.send(text);
        socket.close(1000);
      } else if (socket.readyState === socket.CONNECTING) socket.terminate();
      waiting = [];
    },
  };
}

/** Why {@link connectWebSocketTransport} could not open its connection. */
export type WebSocketConnectFailure =
  /** Nothing answered: refused, no such socket file or host, or another socket error (`code`: the system's, or `ERROR`). */
  | { readonly kind: 'unreachable'; readonly code: string; readonly message: string }
  /** The server answered the upgrade with an HTTP error (say 401, 403, 404); `body` is its start. */
  | { readonly kind: 'refused'; readonly status: number; readonly body: string }
  /** The opening handshake did not complete within `handshakeTimeoutMs`. */
  | { readonly kind: 'timeout'; readonly timeoutMs: number };

/** Options of {@link connectWebSocketTransport}: the transport's, and the upgrade request's. */
export interface WebSocketConnectOptions extends WebSocketTransportOptions {
  /** Headers of the upgrade request (`Authorization: Bearer …`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** How long the opening handshake may take, ms. Default 10 s. */
  readonly handshakeTimeoutMs?: number;
}

/** What {@link connectWebSocketTransport} resolves with: the transport, or why there is none (never a rejection). */
export type WebSocketConnectResult = { readonly ok: true; readonly transport: Transport } | { readonly ok: false; readonly failure: WebSocketConnectFailure };

/**
 * The client side of {@link webSocketTransport}: opens a WebSocket to `url` (`ws://`, `wss://`
 * or `ws+unix://`) and resolves, once it is open, with a transport over it; a connection
 * that cannot be opened is a {@link WebSocketConnectFailure} value, typed so that a command
 * can tell "nothing listens" from "refused" from "too slow". `ws` is loaded here, on first
 * use, so that importing this module does not load it. The socket's `maxPayload` is
 * {@link webSocketMaxPayload} of `maxLineBytes`; no compression is negotiated.
 *
 * @example
 * ```ts
 * const opened = await connectWebSocketTransport('ws://127.0.0.1:8767/acp', { headers: { Authorization: `Bearer ${token}` } });
 * if (!opened.ok) throw new Error(opened.failure.kind);
 * const connection = createActor(connectionLogic, { input: { transport: opened.transport } }).start();
 * ```
 */
export async function connectWebSocketTransport(url: string, options: WebSocketConnectOptions = {}): Promise<WebSocketConnectResult> {
  const { headers = {}, handshakeTimeoutMs = defaultHandshakeTimeoutMs, ...transportOptions } = options;
  const timeoutMs = checkedInteger(handshakeTimeoutMs, 'handshakeTimeoutMs', 1, maxTimerMs);
  const maxPayload = webSocketMaxPayload(transportOptions.maxLineBytes);
  const { WebSocket } = await import('ws');
  return new Promise((resolve) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, { headers: { ...headers }, perMessageDeflate: false, maxPayload, handshakeTimeout: timeoutMs });
    } catch (error) {
      resolve({ ok: false, failure: { kind: 'unreachable', code: 'EINVAL', message: (error as Error).message } });
      return;
    }
    let settled = false;
    const settle = (result: WebSocketConnectResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const onError = (error: NodeJS.ErrnoException) => {
      // ws's own handshake timer: its error has no code, only this message.
      if (error.code === undefined && /handshake has timed out/u.test(error.message)) settle({ ok: false, failure: { kind: 'timeout', timeoutMs } });
      else settle({ ok: false, failure: { kind: 'unreachable', code: error.code ?? 'ERROR', message: error.message } });
    };
    // Kept after the settle: ws reports the socket's later errors here too (the transport's own listener comes with its start).
    socket.on('error', onError);
    socket.once('unexpected-response', (_request, response) => readUpgradeRefusal(socket, response, (failure) => settle({ ok: false, failure })));
    socket.once('open', () => {
      // Frames the server sent with its 101 (ws's upgrade head) are parsed on the next tick,
      // before whoever awaits this promise has started the transport: held until start().
      socket.pause();
      settle({ ok: true, transport: webSocketTransport(socket, transportOptions) });
    });
  });
}

/** What the peer's close tells, for the `peer_lost` error of every pending request. */
function closeReason(code: number, reason: string, failure: string | undefined): PeerLost {
  const exit = { closeCode: code, closeReason: reason, ...(failure ? { error: failure } : {}) };
  if (failure) return { message: `the WebSocket failed: ${failure}`, exit };
  if (code === 1006) return { message: 'the WebSocket connection was lost (code 1006: it ended without a closing frame)', exit };
  return { message: `the WebSocket was closed (code ${code}${reason ? `: ${reason.slice(0, 123)}` : ''})`, exit };
}

/** What a socket error says, for people: ws's own errors name the close code it sent. */
function failureOf(error: Error): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') return 'a frame over the maxPayload ws was given, refused unread with close code 1009';
  return typeof code === 'string' ? `${error.message} (${code})` : error.message;
}

/** A received frame as one Buffer, whatever the socket's `binaryType`. */
function bufferOf(raw: RawData): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}

/** An option that must be an integer within bounds: a TypeError naming it otherwise. */
function checkedInteger(value: number, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`webSocketTransport: ${name} must be an integer from ${min} to ${max}, got ${String(value)}.`);
  }
  return value;
}
