/**
 * Input a transport read while the connection held its reading (`Transport.holdReading`):
 * kept unparsed, in order, up to {@link heldInputBytes}, and handed on once the hold ends.
 * Shared by the stdio and WebSocket transports, which differ only in what a piece of input
 * is (a chunk of bytes, a frame) and in how they pause their source when it is full.
 */

/** Input read while the connection holds, unparsed, before the source is paused: an editor that goes away leaves at most this much behind. */
export const heldInputBytes = 1024 * 1024;

/** The held input of one transport. */
export class HeldInput<T> {
  #items: T[] = [];
  #bytes = 0;
  #releasing = false;
  /** Whether the connection holds the reading now. */
  #hold = false;

  /** `sizeOf`: an item's bytes; `deliver`: parses it (it may hold the reading again). */
  constructor(private readonly sizeOf: (item: T) => number, private readonly deliver: (item: T) => void) {}

  /** Whether the connection holds the reading now. */
  get held(): boolean {
    return this.#hold;
  }

  /** Whether the source should pause: held, with {@link heldInputBytes} kept already. */
  get full(): boolean {
    return this.#hold && this.#bytes >= heldInputBytes;
  }

  /** Input read: delivered now, or kept (while held, or behind input kept before it). Returns whether it was kept. */
  take(item: T): boolean {
    if (!this.#hold && this.#items.length === 0) {
      this.deliver(item);
      return false;
    }
    this.#items.push(item);
    this.#bytes += this.sizeOf(item);
    return true;
  }

  /** The connection holds or lets go; letting go delivers what was kept, until it holds again. */
  setHold(hold: boolean): void {
    this.#hold = hold;
    if (!hold) this.release(false);
  }

  /**
   * Delivers what was kept, in order, until the connection holds again (or at once all of it,
   * with `ignoreHold`: the input ended) or `stop()` says to.
   */
  release(ignoreHold: boolean, stop: () => boolean = () => false): void {
    if (this.#releasing) return; // re-entered from an item being parsed: the loop below goes on
    this.#releasing = true;
    try {
      while (this.#items.length > 0 && (ignoreHold || !this.#hold) && !stop()) {
        const item = this.#items.shift() as T;
        this.#bytes -= this.sizeOf(item);
        this.deliver(item);
      }
    } finally {
      this.#releasing = false;
    }
  }

  /** Forgets what was kept (the transport closed). */
  clear(): void {
    this.#items = [];
    this.#bytes = 0;
  }
}
