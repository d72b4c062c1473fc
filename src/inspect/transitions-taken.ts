/**
 * Which transitions a state machine actor took, read from XState's `@xstate.microstep`
 * inspection events (each carries the transitions of its step), so that a chart lights the
 * edges really taken: a self-transition (`prompting` to `prompting`: the state value does not
 * change), an edge declared with a wildcard (`xstate.done.actor.*`), an eventless step after
 * the event. The live view folds them (live-view-model.ts), the inspector sends them with the
 * snapshot they made (stately-event.ts), and the host keeps each machine's last one for a view
 * served later (src/host/live-actors.ts).
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

/** Follows the microsteps of every machine actor it is given the inspection events of. */
export interface MoveTracker {
  /** Takes one inspection event; for the snapshot that ends a macrostep with a transition taken, the move it made. */
  note(event: InspectionEvent): TakenMove | undefined;
}

interface Pending {
  readonly before: readonly string[];
  readonly transitions: TakenTransition[];
}

/** A tracker with nothing pending (one per stream of inspection events: it must see them all, in order). */
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
          step = { before: leafPaths(snapshotValue(actor)), transitions: [] };
          pending.set(actor, step);
        }
        for (const transition of taken) {
          const read = takenTransition(transition);
          if (read) step.transitions.push(read);
        }
        return undefined;
      }
      if (event.type !== '@xstate.snapshot') return undefined;
      const actor = event.actorRef as AnyActorRef;
      const step = pending.get(actor);
      if (!step) return undefined;
      pending.delete(actor);
      return moveOf(step, leafPaths((event.snapshot as { value?: unknown }).value));
    },
  };
}

/** The state value the actor holds; none yet while its initial state is worked out (XState's development build then throws). */
function snapshotValue(actor: AnyActorRef): unknown {
  try {
    return (actor.getSnapshot() as { value?: unknown } | undefined)?.value;
  } catch {
    return undefined;
  }
}

/** The move of a macrostep, or `undefined` when no transition with a target was taken (actions only). */
function moveOf(step: Pending, after: readonly string[]): TakenMove | undefined {
  if (step.transitions.length === 0) return undefined;
  const left = step.before.find((path) => !after.includes(path));
  const entered = after.find((path) => !step.before.includes(path));
  if (left !== undefined && entered !== undefined) return { from: left, to: entered, transitions: step.transitions };
  // Left and entered again: the leaf inside the first target.
  const target = step.transitions[0]?.targets[0] ?? '';
  const leaf = after.find((path) => path === target || path.startsWith(`${target}.`)) ?? entered ?? left ?? target;
  return { from: left ?? leaf, to: entered ?? leaf, transitions: step.transitions };
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
