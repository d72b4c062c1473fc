/**
 * The chart of a machine from its config as an inspection stream carries it (the `definition`
 * of an `@xstate.actor` event: the config the machine was written with, made safe), in the
 * shape of chart-model.ts. The live view reads relayed wardens this way, without their code.
 *
 * A config is not the machine: targets are written as XState reads them (a sibling `ready`,
 * a child `.ready`, an id `#session.ready`) and resolved here to paths from the root; a guard
 * is a name, a `{ type }`, or a function the payload turned into `[function name]`.
 */
import type { ChartNode, ChartTransition } from './chart-model.js';

/** A chart read from a config: its root node and the machine id. */
export interface ConfigChart extends ChartNode {
  readonly id: string;
  readonly initial: string;
  readonly states: Readonly<Record<string, ChartNode>>;
}

/**
 * Reads a machine config into a chart; `undefined` when it has no states (a logic that is
 * not a machine). Targets that name no state of the chart are left out.
 */
export function chartOfConfig(config: unknown): ConfigChart | undefined {
  if (!isObject(config) || !isObject(config.states) || Object.keys(config.states).length === 0) return undefined;
  const id = typeof config.id === 'string' ? config.id : '(machine)';
  const ids = new Map<string, string>();
  const paths = new Set<string>();
  collectIds(config, '', ids, paths);
  const root = nodeOf(config, '', { machineId: id, ids, paths });
  const initial = root.initial ?? Object.keys(root.states ?? {})[0] ?? '';
  return { ...root, id, initial, states: root.states ?? {} };
}

interface Scope {
  readonly machineId: string;
  /** `#id` of states with an `id` of their own → their path. */
  readonly ids: ReadonlyMap<string, string>;
  /** Every state's path. */
  readonly paths: ReadonlySet<string>;
}

function collectIds(node: Record<string, unknown>, path: string, ids: Map<string, string>, paths: Set<string>): void {
  if (path !== '') paths.add(path);
  if (path !== '' && typeof node.id === 'string') ids.set(node.id, path);
  if (!isObject(node.states)) return;
  for (const [key, child] of Object.entries(node.states)) {
    if (isObject(child)) collectIds(child, path ? `${path}.${key}` : key, ids, paths);
  }
}

function nodeOf(node: Record<string, unknown>, path: string, scope: Scope): ChartNode {
  const childEntries = isObject(node.states) ? Object.entries(node.states).filter((entry): entry is [string, Record<string, unknown>] => isObject(entry[1])) : [];
  const type = node.type === 'final' || node.type === 'parallel' || node.type === 'history' ? node.type : undefined;
  const on: Record<string, ChartTransition[]> = {};
  if (isObject(node.on)) {
    for (const [event, spec] of Object.entries(node.on)) {
      const transitions = transitionsOf(spec, path, scope);
      if (transitions.length > 0) on[event] = transitions;
    }
  }
  const always = node.always === undefined ? [] : transitionsOf(node.always, path, scope);
  const after: Record<string, ChartTransition[]> = {};
  if (isObject(node.after)) {
    for (const [delay, spec] of Object.entries(node.after)) {
      const transitions = transitionsOf(spec, path, scope);
      if (transitions.length > 0) after[delay] = transitions;
    }
  }
  const firstChild = childEntries[0]?.[0];
  const initial = type === 'parallel' || childEntries.length === 0 ? undefined : typeof node.initial === 'string' && childEntries.some(([key]) => key === node.initial) ? node.initial : firstChild;
  return {
    ...(type ? { type } : {}),
    ...(typeof node.description === 'string' ? { description: node.description } : {}),
    ...(initial !== undefined ? { initial } : {}),
    on,
    ...(always.length > 0 ? { always } : {}),
    ...(Object.keys(after).length > 0 ? { after } : {}),
    ...(childEntries.length > 0
      ? { states: Object.fromEntries(childEntries.map(([key, child]) => [key, nodeOf(child, path ? `${path}.${key}` : key, scope)])) }
      : {}),
  };
}

function transitionsOf(spec: unknown, source: string, scope: Scope): ChartTransition[] {
  const found: ChartTransition[] = [];
  for (const candidate of Array.isArray(spec) ? spec : [spec]) {
    if (candidate === undefined || candidate === null) continue;
    const object: Record<string, unknown> = isObject(candidate) ? candidate : { target: candidate };
    const written = object.target === undefined ? [] : [object.target].flat();
    const targets = written.map((target) => (typeof target === 'string' ? resolveTarget(target, source, scope) : undefined));
    if (targets.some((target) => target !== undefined && !scope.paths.has(target))) continue;
    // A target the chart does not know (a typo the machine would reject): the transition is left out.
    if (targets.some((target) => target === undefined)) continue;
    const guard = guardName(object.guard);
    found.push({
      targets: targets as string[],
      ...(guard !== undefined ? { guard } : {}),
      ...(object.reenter === true ? { reenter: true as const } : {}),
      ...(typeof object.description === 'string' ? { description: object.description } : {}),
    });
  }
  return found;
}

/** A target as XState reads it, from the state `source` that declares it, as a path from the root. */
function resolveTarget(target: string, source: string, scope: Scope): string | undefined {
  if (target.startsWith('#')) {
    const [id = '', ...rest] = target.slice(1).split('.');
    const base = id === scope.machineId ? '' : scope.ids.get(id);
    if (base === undefined) return undefined;
    return [base, ...rest].filter(Boolean).join('.') || undefined;
  }
  if (target.startsWith('.')) return source ? `${source}${target}` : target.slice(1);
  // A sibling: a child of the declaring state's parent (of the root itself, for the root's own `on`).
  const parent = source.includes('.') ? source.slice(0, source.lastIndexOf('.')) : '';
  return source === '' ? target : parent ? `${parent}.${target}` : target;
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') {
    const fn = /^\[function (.*)\]$/u.exec(guard);
    return fn ? (fn[1] && fn[1] !== 'anonymous' && fn[1] !== 'guard' ? fn[1] : 'inline') : guard;
  }
  if (isObject(guard) && typeof guard.type === 'string') return guard.type;
  return 'inline';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
