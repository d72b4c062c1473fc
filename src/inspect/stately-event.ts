/**
 * Inspection events in `@statelyai/inspect`'s format, made safe: what the WebSocket
 * inspector sends (inspector.ts) and the live view folds (live-view.ts). Its own module so
 * that a host that never inspects does not load the library or ws (warden acp's startup).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { StatelyInspectionEvent } from '@statelyai/inspect';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { inspectionPayload, type PayloadLimits } from './inspection-payload.js';
import type { TakenMove } from '../host/transitions-taken.js';

/**
 * The event format version of the installed `@statelyai/inspect` (every event carries it):
 * the library stamps its package version, read here without loading the library (and ws).
 */
const FORMAT_VERSION: string = (() => {
  const entry = createRequire(import.meta.url).resolve('@statelyai/inspect');
  return (JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version;
})();

/**
 * One XState inspection event as `@statelyai/inspect` sends it, payloads made safe
 * (`inspectionPayload`): what `connectInspector` sends and the live view folds. Microsteps
 * and actions give `undefined` (the inspector does not show them).
 *
 * Shaped as the library's own XState observer shapes them: an actor is named by its id
 * (`port`, `session demo-1`; the machine id when the actor has none of its own), a
 * machine's definition is its config; a machine snapshot is sent as its `toJSON()` (state
 * value, context, status, error, output: not the machine around it).
 *
 * `move`, for a snapshot, is what its event did (`MoveTracker` of transitions-taken.ts): sent
 * as the snapshot event's `taken` (acp-warden's own field: the library has no place for the
 * transitions taken), so a live view relaying the stream lights the edges really taken.
 */
export function statelyEventOf(event: InspectionEvent, limits: PayloadLimits = {}, at: number = Date.now(), move?: TakenMove): StatelyInspectionEvent | undefined {
  const safe = (value: unknown) => inspectionPayload(value, limits);
  const base = { sessionId: event.actorRef.sessionId, createdAt: String(at), _version: FORMAT_VERSION };
  switch (event.type) {
    case '@xstate.actor': {
      const actorRef = event.actorRef as AnyActorRef;
      const config = (actorRef as unknown as { logic?: { config?: unknown } }).logic?.config;
      const machineId = isMachineConfig(config) ? config.id : undefined;
      const name = actorRef.id === actorRef.sessionId && machineId ? machineId : actorRef.id;
      return {
        ...base,
        type: '@xstate.actor',
        name,
        id: null as never,
        rootId: event.rootId,
        parentId: parentSessionId(actorRef),
        definition: JSON.stringify(isMachineConfig(config) ? safe(config) : { id: name }),
        snapshot: (safe(plainSnapshot(actorRef.getSnapshot())) ?? { status: 'active' }) as never,
      };
    }
    case '@xstate.snapshot':
      return { ...base, type: '@xstate.snapshot', id: null as never, rootId: event.rootId, snapshot: safe(plainSnapshot(event.snapshot)) as never, event: safe(event.event) as never, ...(move ? { taken: move } : {}) };
    case '@xstate.event':
      return { ...base, type: '@xstate.event', id: null as never, rootId: event.rootId, sourceId: event.sourceRef?.sessionId, event: safe(event.event) as never };
    default:
      return undefined; // microsteps and actions: not shown by the inspector
  }
}

/** A machine's snapshot without the machine (`toJSON()`); other snapshots as they are. */
function plainSnapshot(snapshot: unknown): unknown {
  const toJSON = (snapshot as { toJSON?: unknown } | undefined)?.toJSON;
  return typeof toJSON === 'function' ? (toJSON as () => unknown).call(snapshot) : snapshot;
}

function isMachineConfig(config: unknown): config is { id?: string; states?: unknown } {
  return typeof config === 'object' && config !== null && 'states' in config;
}

/** The parent's session id of an actor, as the inspector links them (for tests and the live view). */
export function parentSessionId(actor: AnyActorRef): string | undefined {
  return (actor as unknown as { _parent?: AnyActorRef })._parent?.sessionId;
}
