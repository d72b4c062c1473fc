/**
 * The actors alive under a host, remembered from its inspection events at next to no cost
 * (their refs by session id, and when each was created). The live view (src/inspect/live-view.ts)
 * seeds its model from them when it is first served, so the host keeps them from its start
 * without loading the view itself.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';

/** One actor alive, as first seen. */
export interface LiveActor {
  readonly ref: AnyActorRef;
  /** When it was created (`Date.now()`). */
  readonly at: number;
}

/** The actors alive now. */
export interface LiveActors {
  /**
   * Takes one inspection event into account. Every so many actors created, the stopped ones
   * are forgotten: their session ids are returned (usually none).
   */
  note(event: InspectionEvent): readonly string[];
  /** Forgets actors that stopped without a word (stopped by their parent); returns their session ids. */
  sweep(): readonly string[];
  /** The actors alive now, the first created first. */
  values(): IterableIterator<LiveActor>;
}

/** `Actor._processingStatus` of a stopped actor (XState emits no snapshot when it stops one). */
const STOPPED = 2;
/** Actors created between two sweeps done by `note`. */
const SWEEP_EVERY = 256;

/** An empty set of live actors. */
export function createLiveActors(): LiveActors {
  const live = new Map<string, LiveActor>();
  let added = 0;
  const sweep = (): string[] => {
    const forgotten: string[] = [];
    for (const [sessionId, { ref }] of live) {
      if (!isStopped(ref)) continue;
      live.delete(sessionId);
      forgotten.push(sessionId);
    }
    return forgotten;
  };
  return {
    note(event) {
      switch (event.type) {
        case '@xstate.actor':
          live.set(event.actorRef.sessionId, { ref: event.actorRef as AnyActorRef, at: Date.now() });
          return ++added % SWEEP_EVERY === 0 ? sweep() : [];
        case '@xstate.snapshot':
          if ((event.snapshot as { status?: string }).status !== 'active') live.delete(event.actorRef.sessionId);
          return [];
        default:
          return [];
      }
    },
    sweep,
    values: () => live.values(),
  };
}

function isStopped(ref: AnyActorRef): boolean {
  return (ref as unknown as { _processingStatus?: number })._processingStatus === STOPPED;
}
