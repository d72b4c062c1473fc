import type { AnyActorRef } from 'xstate';

/**
 * Replies owed by an actor to callers who sent it a command. A command still in the
 * actor's mailbox when the actor ends is dropped by XState without a trace; the actor
 * settles every reply still registered here when it ends, so no caller waits forever.
 */
export class PendingReplies<TValue> {
  readonly #byActor = new WeakMap<AnyActorRef, Set<(value: TValue) => void>>();

  /** Registers `settle` for `actor`; returns the function to call instead (it unregisters). */
  register<TReply extends TValue>(actor: AnyActorRef, settle: (value: TReply) => void): (value: TReply) => void {
    let set = this.#byActor.get(actor);
    if (!set) {
      set = new Set();
      this.#byActor.set(actor, set);
    }
    const entry = settle as (value: TValue) => void;
    set.add(entry);
    const owner = set;
    return (value: TReply) => {
      if (!owner.delete(entry)) return; // already settled
      settle(value);
    };
  }

  /** Settles every reply still owed by `actor` with `value`. */
  settleAll(actor: AnyActorRef, value: TValue): void {
    const set = this.#byActor.get(actor);
    if (!set) return;
    this.#byActor.delete(actor);
    for (const settle of [...set]) {
      set.delete(settle); // the registered wrapper becomes a no-op
      settle(value);
    }
  }
}
