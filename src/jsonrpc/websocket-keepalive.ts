/**
 * The keepalive of a WebSocket, either end: a half-open TCP connection (the peer's host or
 * network gone without a FIN) never says so itself, so it is pinged and judged by whether it
 * shows life. Used by `webSocketTransport` and by the stdio bridge of
 * `warden acp --connect`, which loads nothing else of this folder (it must start fast).
 */
import type { WebSocket } from 'ws';

/** The default ping interval of both ends: 30 s. */
export const defaultKeepaliveIntervalMs = 30_000;

/**
 * The keepalive: a ping every interval; at each tick, the peer should have shown life since
 * the last one: a pong or any frame, or (while our output is backed up and reading is paused,
 * so its pong cannot be read) some of our output read. Two silent intervals in a row and it
 * is lost: one alone may be this process's own stall (a pong waiting, unread, while a long
 * task ran); the pong is read before the next tick. An interval during which the connection
 * held our reading does not count against the peer (it waits for our answers).
 */
export class WebSocketKeepalive {
  readonly #intervalMs: number;
  readonly #socket: WebSocket;
  /** Whether the connection holds our reading now (the socket is paused for it). */
  readonly #heldNow: () => boolean;
  readonly #lost: () => void;
  #timer: NodeJS.Timeout | undefined;
  #alive = true;
  /** The connection held our reading at some point of this interval. */
  #excused = false;
  /** Silent intervals in a row. */
  #silent = 0;

  /**
   * @param intervalMs ms between two pings; `0`: none, and the peer is never judged
   * @param socket the `ws` socket pinged (only while open)
   * @param heldNow whether our reading of the socket is paused now for a reason of ours (the peer's pong cannot be read)
   * @param lost called once, at the second silent interval in a row; the keepalive stops then
   */
  constructor(intervalMs: number, socket: WebSocket, heldNow: () => boolean, lost: () => void) {
    this.#intervalMs = intervalMs;
    this.#socket = socket;
    this.#heldNow = heldNow;
    this.#lost = lost;
  }

  /** Starts pinging (the socket is open); again is nothing. */
  start(): void {
    if (this.#intervalMs === 0 || this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref(); // the socket keeps the process alive, not its keepalive
    this.#ping();
  }

  /** A frame, a pong or a ping arrived; or some of our backed-up output was read. */
  alive(): void {
    this.#alive = true;
  }

  /** The connection holds our reading (`true`): the peer's pong cannot be read meanwhile. */
  readingHeld(held: boolean): void {
    if (held) this.#excused = true;
  }

  /** Stops pinging and judging; idempotent. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    // Judged after the poll phase: a pong that arrived while this process was busy is read first.
    setImmediate(() => {
      if (!this.#timer) return;
      this.#silent = this.#alive || this.#excused || this.#heldNow() ? 0 : this.#silent + 1;
      if (this.#silent >= 2) {
        this.stop();
        return this.#lost();
      }
      this.#alive = false;
      this.#excused = this.#heldNow();
      this.#ping();
    });
  }

  #ping(): void {
    if (this.#socket.readyState === this.#socket.OPEN) this.#socket.ping();
  }
}
