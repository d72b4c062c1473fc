/**
 * Which transitions a state machine actor took, read from XState's `@xstate.microstep`
 * inspection events (each carries the transitions of its step), so that a chart lights the
 * edges really taken: a self-transition (`prompting` to `prompting`: the state value does not
 * change), an edge declared with a wildcard (`xstate.done.actor.*`), an eventless step after
 * the event. The host keeps each machine's last one for a view served later (live-actors.ts);
 * the live view folds them (src/inspect/live-view-model.ts) and the inspector sends them with
 * the snapshot they made (src/inspect/stately-event.ts). Here, not in src/inspect/, because the
 * host uses it and never imports the inspection layer.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';

/** One transition taken, in chart terms: paths from the chart's root, joined with dots. */
export interface TakenTransition {
  /** The state that declares it (`''`: the root). */
  readonly source: string;
  /** Its event descriptor as declared (`prompt`, `xstate.done.actor.*`, `*`); `''` for `always`; `xstate.after.DELAY.ID` for `after`. */
  readonly event: string;
  readonly targets: readonly string[];
}

/** What one event did to a machine: the leaf it left, the one it entered (the same for a self-transition), and the transitions taken. */
export interface TakenMove {
  readonly from: string;
  readonly to: string;
  readonly transitions: readonly TakenTransition[];
}

/** What one macrostep of a machine did, as XState gave it: read into a move by {@link readMove} only when someone looks. */
export interface RawMove {
  /** The state value it started from. */
  readonly before: unknown;
  /** The state value it ended in. */
  readonly after: unknown;
  /** Each microstep's transition definitions. */
  readonly steps: readonly (readonly unknown[])[];
}

/** Follows the microsteps of every machine actor it is given the inspection events of. */
export interface MoveTracker {
  /** Takes one inspection event; for the snapshot that ends a macrostep with a transition with a target taken, what it did. */
  note(event: InspectionEvent): RawMove | undefined;
}

interface Pending {
  readonly before: unknown;
  readonly steps: (readonly unknown[])[];
}

/**
 * A tracker with nothing pending (one per stream of inspection events: it must see them all,
 * in order). It keeps references only: the host runs one on every event of every actor.
 */
export function createMoveTracker(): MoveTracker {
  // Keyed by the actor: a machine's actions may make another actor step in the middle of its own macrostep.
  const pending = new WeakMap<AnyActorRef, Pending>();
  return {
    note(event) {
      if (event.type === '@xstate.microstep') {
        const taken = (event as { _transitions?: unknown })._transitions;
        if (!Array.isArray(taken) || taken.length === 0) return undefined;
        const actor = event.actorRef as AnyActorRef;
        let step = pending.get(actor);
        if (!step) {
          // Until the macrostep ends, the actor still holds the snapshot it started from.
          step = { before: snapshotValue(actor), steps: [] };
          pending.set(actor, step);
        }
        step.steps.push(taken);
        return undefined;
      }
      if (event.type !== '@xstate.snapshot') return undefined;
      const actor = event.actorRef as AnyActorRef;
      const step = pending.get(actor);
      if (!step) return undefined;
      pending.delete(actor);
      // Actions only (no target): not a move, the last one stands.
      if (!step.steps.some((taken) => taken.some(hasTarget))) return undefined;
      return { before: step.before, after: (event.snapshot as { value?: unknown }).value, steps: step.steps };
    },
  };
}

function hasTarget(transition: unknown): boolean {
  const target = (transition as { target?: unknown } | null)?.target;
  return Array.isArray(target) && target.length > 0;
}

/** The state value the actor holds; none yet while its initial state is worked out (XState's development build then throws). */
function snapshotValue(actor: AnyActorRef): unknown {
  try {
    return (actor.getSnapshot() as { value?: unknown } | undefined)?.value;
  } catch {
    return undefined;
  }
}

/** The move of a macrostep in chart terms, or `undefined` when no transition with a target was taken (actions only). */
export function readMove(raw: RawMove): TakenMove | undefined {
  const transitions = raw.steps.flatMap((step) => step.map(takenTransition).filter((read): read is TakenTransition => read !== undefined));
  if (transitions.length === 0) return undefined;
  const before = leafPaths(raw.before);
  const after = leafPaths(raw.after);
  const left = before.find((path) => !after.includes(path));
  const entered = after.find((path) => !before.includes(path));
  if (left !== undefined && entered !== undefined) return { from: left, to: entered, transitions };
  // Left and entered again: the leaf inside the first target.
  const target = transitions[0]?.targets[0] ?? '';
  const leaf = after.find((path) => path === target || path.startsWith(`${target}.`)) ?? entered ?? left ?? target;
  return { from: left ?? leaf, to: entered ?? leaf, transitions };
}

/** A transition definition of XState (source and target state nodes) in chart terms; `undefined` without a target. */
function takenTransition(transition: unknown): TakenTransition | undefined {
  if (typeof transition !== 'object' || transition === null) return undefined;
  const { source, target, eventType } = transition as { source?: { path?: unknown }; target?: unknown; eventType?: unknown };
  if (!Array.isArray(target) || target.length === 0) return undefined;
  const pathOf = (node: unknown) => {
    const path = (node as { path?: unknown } | undefined)?.path;
    return Array.isArray(path) ? path.join('.') : '';
  };
  return { source: pathOf(source), event: typeof eventType === 'string' ? eventType : '', targets: target.map(pathOf) };
}

/** The leaf states of a state value, as paths: `ready` → [`ready`]; `{ a: 'b', c: { d: 'e' } }` → [`a.b`, `c.d.e`]. */
export function leafPaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix ? `${prefix}.${value}` : value];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  const paths = Object.entries(value).flatMap(([key, child]) => leafPaths(child, prefix ? `${prefix}.${key}` : key));
  // A compound state whose value is `{}` (not entered yet): the state itself.
  return paths.length > 0 ? paths : prefix ? [prefix] : [];
}

/** A move as sent over an inspection stream, read back; `undefined` unless it has the shape. */
export function parseTakenMove(value: unknown): TakenMove | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { from, to, transitions } = value as Record<string, unknown>;
  if (typeof from !== 'string' || typeof to !== 'string' || !Array.isArray(transitions)) return undefined;
  const read: TakenTransition[] = [];
  for (const entry of transitions.slice(0, 50)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { source, event, targets } = entry as Record<string, unknown>;
    if (typeof source !== 'string' || typeof event !== 'string' || !Array.isArray(targets)) continue;
    read.push({ source, event, targets: targets.filter((target): target is string => typeof target === 'string') });
  }
  return { from, to, transitions: read };
}
