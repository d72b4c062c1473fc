/**
 * A pending outgoing request as an actor, a child of its connection, so that the inspector
 * shows every request in flight with its method and age:
 * `sent` → `answered` | `failed` | `timedOut` | `cancelled` | `peerLost`.
 *
 * It holds no resources and decides nothing: the connection settles it (the promise of the
 * caller lives in the connection). It is minimal custom logic, not a machine, because a
 * busy connection creates thousands of them.
 */
import type { ActorLogic, ActorSystem, Snapshot } from 'xstate';
import type { JsonRpcId } from './message.js';

/** How a request ended. */
export type RequestOutcome = 'answered' | 'failed' | 'timedOut' | 'cancelled' | 'peerLost';

/** The phase of a pending request, its snapshot `value`. */
export type PendingRequestPhase = 'sent' | RequestOutcome;

/** Plain facts about a request in flight. */
export interface PendingRequestContext {
  readonly id: JsonRpcId;
  readonly method: string;
  /** When it was sent, in epoch ms. */
  readonly sentAt: number;
}

/** The snapshot of a pending-request actor; its output is the outcome. */
export type PendingRequestSnapshot = Snapshot<RequestOutcome> & {
  readonly value: PendingRequestPhase;
  readonly context: PendingRequestContext;
};

/** The one event a pending request receives from its connection. */
export type PendingRequestEvent = { readonly type: 'request.settle'; readonly outcome: RequestOutcome } | { readonly type: `xstate.${string}` };

/** Input of a pending-request actor. */
export interface PendingRequestInput {
  readonly id: JsonRpcId;
  readonly method: string;
}

/** Actor logic of a pending request. */
export const pendingRequestLogic: ActorLogic<PendingRequestSnapshot, PendingRequestEvent, PendingRequestInput, ActorSystem<any>> = {
  config: { name: 'pendingRequest' },
  getInitialSnapshot(_scope, input) {
    return {
      status: 'active',
      output: undefined,
      error: undefined,
      value: 'sent',
      context: { id: input.id, method: input.method, sentAt: Date.now() },
    };
  },
  transition(snapshot, event) {
    if (snapshot.status !== 'active' || event.type !== 'request.settle') return snapshot;
    return { ...snapshot, status: 'done', value: event.outcome, output: event.outcome } as PendingRequestSnapshot;
  },
  getPersistedSnapshot(snapshot) {
    return snapshot;
  },
};
