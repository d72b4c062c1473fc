/**
 * The read gate of an actor system: closed while the editor's output is backed up (it reads
 * slower than the agents write) and the agent server's handler has no journal to deliver
 * from, so that whatever feeds it stops reading: each port stops reading its agent's stdout
 * (the agent blocks on a full pipe). Opened again once the output drained. The last resort:
 * the host agent (`warden acp`, `createHost`) delivers through cursors over its journal and
 * pauses only its own delivery (`deliveryGateOf`, src/session/subscriber.ts), so under it this
 * gate stays open and the agents go on. One gate per actor system (a host's whole tree),
 * found with {@link readGateOf}: nothing has to be threaded through the supervisors and
 * adapters that build the ports. The class is also the delivery gate's.
 */
import type { AnyActorRef } from 'xstate';

type System = AnyActorRef['system'];

/** Closed by whoever holds it (each backed-up output), open when nobody does. */
export class ReadGate {
  readonly #holders = new Set<unknown>();
  readonly #listeners = new Set<(open: boolean) => void>();

  /** Whether readers may read. */
  get open(): boolean {
    return this.#holders.size === 0;
  }

  /** Closes the gate on behalf of `holder` (idempotent). */
  hold(holder: unknown): void {
    const wasOpen = this.open;
    this.#holders.add(holder);
    if (wasOpen) this.#tell(false);
  }

  /** Lets go of `holder`'s hold; the gate opens when nobody holds it. */
  release(holder: unknown): void {
    if (!this.#holders.delete(holder) || !this.open) return;
    this.#tell(true);
  }

  /** Calls `listener(open)` on every change; returns the unsubscribe function. */
  subscribe(listener: (open: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once the gate is open (at once when it is). */
  whenOpen(): Promise<void> {
    if (this.open) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.subscribe((open) => {
        if (!open) return;
        stop();
        resolve();
      });
    });
  }

  /**
   * A deadline that runs only while the gate is open: `expired` resolves once it has been open
   * for `ms` in all. For a reader waiting on an answer that cannot come while the gate holds
   * its reading back (a slow editor is no fault of the agent). `cancel` stops it.
   */
  openDeadline(ms: number): { readonly expired: Promise<void>; cancel(): void } {
    let left = ms;
    let since = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let fire: () => void = () => {};
    const expired = new Promise<void>((resolve) => {
      fire = resolve;
    });
    const pause = () => {
      if (timer === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      left = Math.max(0, left - (Date.now() - since));
    };
    const run = () => {
      if (timer !== undefined) return;
      since = Date.now();
      timer = setTimeout(() => {
        timer = undefined;
        stop();
        fire();
      }, left);
    };
    const stop = this.subscribe((open) => (open ? run() : pause()));
    if (this.open) run();
    return {
      expired,
      cancel: () => {
        pause();
        stop();
      },
    };
  }

  #tell(open: boolean): void {
    for (const listener of [...this.#listeners]) listener(open);
  }
}

const gates = new WeakMap<System, ReadGate>();

/** The read gate of `system` (an actor's `system`, or an actor scope's), made on first use. */
export function readGateOf(system: System): ReadGate {
  let gate = gates.get(system);
  if (!gate) {
    gate = new ReadGate();
    gates.set(system, gate);
  }
  return gate;
}
