/**
 * The actors alive under a host (their refs by session id, and when each was started). The live
 * view (src/inspect/live-view.ts) seeds its model from them when it is first served, so the host
 * keeps them from its start without loading the view itself. They are learnt from the actor
 * systems themselves (`follow`: every actor registers with its system when it starts, and leaves
 * it when it stops), so that no inspection observer need be attached before someone observes:
 * an attached observer costs XState an inspection event per event, snapshot and action of every
 * actor, about 6% of a relayed update. Inspection events (`note`) keep them too.
 *
 * Each machine's last move (the transitions its last event took, src/host/transitions-taken.ts)
 * is kept with it, read the same way (`follow` also sees the inspection events XState makes
 * before it looks for observers), so that a view served later lights the transition taken last.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { createMoveTracker, readMove, type RawMove, type TakenMove } from './transitions-taken.js';

/** One actor alive, as first seen. */
export interface LiveActor {
  readonly ref: AnyActorRef;
  /** When it was created (`Date.now()`). */
  readonly at: number;
}

/** A machine's last move, with the event that made it and when. */
export interface LiveMove extends TakenMove {
  readonly event: string;
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
  /** The last move of a machine actor (`undefined`: none with a target seen yet). */
  lastMove(ref: AnyActorRef): LiveMove | undefined;
  /** The move `event` (a snapshot) made, if it made one: for an observer that sees the event after this registry did. */
  moveOf(event: InspectionEvent): TakenMove | undefined;
  /**
   * Follows the actor system of `root` (call it before `root.start()`): each actor is
   * remembered when it starts and forgotten when it stops, with no inspection observer.
   */
  follow(root: AnyActorRef): void;
}

/**
 * What `follow` hooks: XState's registration of an actor with its system (`start` registers,
 * `stop` unregisters). Not public API: a version of XState without it fails `follow` loudly
 * (spec/host/live-actors-follow.spec.ts).
 */
interface SystemRegistry {
  _register(sessionId: string, actorRef: AnyActorRef): string;
  _unregister(actorRef: AnyActorRef): void;
  /** Called with every inspection event, observers or not (it returns at once without any). */
  _sendInspectionEvent(event: InspectionEvent): void;
}

/** `Actor._processingStatus` of a stopped actor (XState emits no snapshot when it stops one). */
const STOPPED = 2;
/** Actors created between two sweeps done by `note`. */
const SWEEP_EVERY = 256;

/** An empty set of live actors. */
export function createLiveActors(): LiveActors {
  const live = new Map<string, LiveActor>();
  const followed = new WeakSet<object>();
  const moves = createMoveTracker();
  // As XState gave them (read only when a view asks): this runs on every event of every actor.
  const lastMoves = new WeakMap<AnyActorRef, { readonly raw: RawMove; readonly event: string; readonly at: number; readonly snapshot: unknown }>();
  const track = (event: InspectionEvent) => {
    const raw = moves.note(event);
    if (raw && event.type === '@xstate.snapshot') lastMoves.set(event.actorRef as AnyActorRef, { raw, event: event.event.type, at: Date.now(), snapshot: event.snapshot });
  };
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
      // A followed system's events were tracked on their way to the observers.
      if (!followed.has((event.actorRef as AnyActorRef).system)) track(event);
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
    lastMove(ref) {
      const last = lastMoves.get(ref);
      const move = last && readMove(last.raw);
      return move && { ...move, event: last.event, at: last.at };
    },
    moveOf(event) {
      if (event.type !== '@xstate.snapshot') return undefined;
      const last = lastMoves.get(event.actorRef as AnyActorRef);
      return last?.snapshot === event.snapshot ? readMove(last.raw) : undefined;
    },
    follow(root) {
      const system = root.system as unknown as SystemRegistry;
      if (followed.has(system)) return;
      if (typeof system._register !== 'function' || typeof system._unregister !== 'function' || typeof system._sendInspectionEvent !== 'function') {
        throw new TypeError('this version of XState has no actor registry in its system (_register/_unregister/_sendInspectionEvent): the live view cannot follow actors');
      }
      followed.add(system);
      const register = system._register;
      const unregister = system._unregister;
      const inspect = system._sendInspectionEvent;
      system._sendInspectionEvent = (event) => {
        track(event);
        inspect(event);
      };
      system._register = (sessionId, actorRef) => {
        if (!live.has(sessionId)) live.set(sessionId, { ref: actorRef, at: Date.now() });
        return register(sessionId, actorRef);
      };
      system._unregister = (actorRef) => {
        live.delete(actorRef.sessionId);
        unregister(actorRef);
      };
    },
  };
}

function isStopped(ref: AnyActorRef): boolean {
  return (ref as unknown as { _processingStatus?: number })._processingStatus === STOPPED;
}
