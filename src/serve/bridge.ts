/**
 * The stdio ↔ WebSocket bridge of `warden acp --connect`: each line of stdin becomes one text
 * frame to the daemon, each text frame one line of stdout. Messages are not parsed on the way
 * through, except the few needed to know when the editor's requests are all answered (so that
 * the end of stdin does not cut off answers still on their way). It imports neither xstate,
 * nor the host, nor the ACP SDK: an editor waits for it to start.
 */
import type { Readable, Writable } from 'node:stream';
import type { WebSocket } from 'ws';
import { WebSocketKeepalive } from '../jsonrpc/websocket-keepalive.js';
import type { BridgeFailure } from '../jsonrpc/bridge-socket.js';

/** Bytes queued on the socket above which stdin is paused; it resumes at {@link bridgeLowWaterBytes} (stdio's marks). */
export const bridgeHighWaterBytes = 256 * 1024;
/** See {@link bridgeHighWaterBytes}. */
export const bridgeLowWaterBytes = 64 * 1024;

/** Options of {@link pumpBridge}. */
export interface BridgePumpOptions {
  /** After stdin ended, how long answers to the editor's requests are waited for before the socket is closed, ms. */
  readonly drainTimeoutMs: number;
  /** Rewrites a line from the editor before it is sent (`--daemon` adds its agent to `session/new`). */
  readonly rewrite?: (line: string) => string;
  /**
   * Ms between two pings to the daemon (`--keepalive`); two intervals in a row without a
   * sign of life (a pong, a frame, or, while stdin is paused for a full socket, a write
   * completing) end the bridge with {@link BridgeFailure} `unanswered`. `0` never pings.
   */
  readonly pingIntervalMs: number;
}

/**
 * Pumps `input` lines to `socket` frames and frames to `output` lines until the connection
 * ends. Resolves with `undefined` when it ended because the editor's input did (every request
 * answered, or the drain timeout), or with the failure that ended it. Backpressure both ways:
 * stdin is paused while the socket holds {@link bridgeHighWaterBytes}, and the socket is not
 * read while stdout is full. The keepalive pings the daemon every `pingIntervalMs`; an
 * interval during which the socket was paused for stdout does not count against it. The
 * socket may come paused (as openBridgeSocket (jsonrpc/bridge-socket.ts) hands it over): it is resumed here.
 */
export function pumpBridge(socket: WebSocket, input: Readable, output: Writable, options: BridgePumpOptions): Promise<BridgeFailure | undefined> {
  return new Promise((resolve) => {
    /** Ids of the editor's requests not answered yet (JSON text of the id). */
    const outstanding = new Set<string>();
    let pending = '';
    let inputEnded = false;
    let closing = false;
    let inputPaused = false;
    let outputFull = false;
    let unsent = 0;
    let drainTimer: NodeJS.Timeout | undefined;
    let unanswered = false;
    const keepalive = new WebSocketKeepalive(options.pingIntervalMs, socket, () => outputFull, () => {
      unanswered = true;
      socket.terminate(); // no closing handshake with a peer that answers nothing
    });
    const closeNow = () => {
      if (closing) return;
      closing = true;
      clearTimeout(drainTimer);
      keepalive.stop();
      socket.close(1000);
    };
    const maybeDone = () => {
      if (inputEnded && unsent === 0 && outstanding.size === 0) closeNow();
    };
    const sent = () => {
      unsent--;
      // A write completing while the socket is backed up shows the daemon reads (its pong may queue behind ours).
      if (inputPaused) keepalive.alive();
      if (inputPaused && socket.bufferedAmount <= bridgeLowWaterBytes) {
        inputPaused = false;
        input.resume();
      }
      maybeDone();
    };
    const sendLine = (raw: string) => {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line.trim() === '' || closing) return;
      const text = options.rewrite ? options.rewrite(line) : line;
      const id = requestIdOf(text);
      if (id !== undefined) outstanding.add(id);
      unsent++;
      socket.send(text, sent);
      if (!inputPaused && socket.bufferedAmount >= bridgeHighWaterBytes) {
        inputPaused = true;
        input.pause();
      }
    };
    input.setEncoding('utf8');
    input.on('data', (chunk: string) => {
      pending += chunk;
      let newline = pending.indexOf('\n');
      if (newline < 0) return;
      let start = 0;
      while (newline >= 0) {
        sendLine(pending.slice(start, newline));
        start = newline + 1;
        newline = pending.indexOf('\n', start);
      }
      pending = pending.slice(start);
    });
    input.once('end', () => {
      if (pending !== '') sendLine(pending);
      pending = '';
      inputEnded = true;
      drainTimer = setTimeout(closeNow, options.drainTimeoutMs);
      maybeDone();
    });
    input.once('error', () => closeNow());
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      keepalive.alive();
      if (isBinary) return; // ACP over WebSocket is text frames; the daemon sends no other
      const text = data.toString('utf8');
      // A notification (the stream of updates) is never an answer: only the rest is parsed.
      if (outstanding.size > 0 && !text.startsWith('{"jsonrpc":"2.0","method"')) {
        const id = responseIdOf(text);
        if (id !== undefined && outstanding.delete(id)) maybeDone();
      }
      // Frames ws had already parsed still arrive after the pause: one wait for the drain is enough.
      if (!output.write(`${text}\n`) && !outputFull) {
        outputFull = true;
        keepalive.readingHeld(true);
        socket.pause();
        output.once('drain', () => {
          outputFull = false;
          socket.resume();
        });
      }
    });
    output.on('error', () => closeNow()); // the editor is gone: nothing more can be delivered
    socket.on('error', () => undefined); // the close that follows says what happened
    socket.on('pong', () => keepalive.alive());
    socket.on('ping', () => keepalive.alive());
    socket.once('close', (code: number, reason: Buffer) => {
      clearTimeout(drainTimer);
      keepalive.stop();
      input.pause();
      const ended = inputEnded || closing;
      const failure: BridgeFailure | undefined = unanswered ? { kind: 'unanswered', pingIntervalMs: options.pingIntervalMs } : ended ? undefined : { kind: 'closed', code, reason: reason.toString('utf8') };
      // What was read reaches stdout before the caller exits.
      output.write('', () => resolve(failure));
    });
    keepalive.start();
    socket.resume(); // paused since its open (openBridgeSocket): the listeners are on now
  });
}

/** The id of a request line (`method` and `id`), as JSON text; undefined for anything else. */
function requestIdOf(line: string): string | undefined {
  if (!line.includes('"id"') || !line.includes('"method"')) return undefined;
  const message = parsed(line);
  return message && typeof message.method === 'string' && isId(message.id) ? JSON.stringify(message.id) : undefined;
}

/** The id of a response frame (`id` with `result` or `error`, no `method`), as JSON text. */
function responseIdOf(text: string): string | undefined {
  const message = parsed(text);
  return message && message.method === undefined && isId(message.id) ? JSON.stringify(message.id) : undefined;
}

function isId(id: unknown): boolean {
  return typeof id === 'string' || typeof id === 'number';
}

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
