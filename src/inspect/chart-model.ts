/**
 * State charts as plain data: one shape for the XState machines (derived from the machine
 * definition, `machine.root`) and for the custom actor logics (port, supervisor, ...), whose
 * charts are declared by hand in chart-catalog.ts. `warden inspect --export json` prints this
 * shape; chart-mermaid.ts draws it.
 *
 * The shape (format `acp-warden.chart/1`), documented in docs/inspect.md, "State charts":
 *
 * ```json
 * { "format": "acp-warden.chart/1", "name": "session", "id": "session", "kind": "machine",
 *   "source": "src/session/session-machine.ts", "description": "…",
 *   "initial": "starting",
 *   "on": { "close": [{ "targets": ["closed"] }] },
 *   "states": {
 *     "starting": { "on": { "ready": [{ "targets": ["ready"] }] } },
 *     "closed": { "type": "final", "on": {} } } }
 * ```
 *
 * A node's `on` maps an event type to its transitions in the order they are tried; each has
 * the `targets` it goes to (paths from the chart's root, joined with dots: `streaming.word`;
 * none for a transition that only runs actions), and its `guard` when it has one. `always`
 * (eventless) and `after` (delayed, keyed by the delay's name or its milliseconds) appear
 * only when the node has them; `states` and `initial` only on compound and parallel nodes.
 * Transitions declared on a compound node (the root included) apply in each of its states
 * that does not handle the event itself, as in XState.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

/** The format tag every exported chart carries. */
export const CHART_FORMAT = 'acp-warden.chart/1';

/** One transition of a chart. */
export interface ChartTransition {
  /** Where it goes: state paths from the chart's root (`streaming.word`). Empty: it runs actions and stays. */
  readonly targets: readonly string[];
  /** The condition, by name (`inline` for an anonymous guard function; free text in declared charts). */
  readonly guard?: string;
  /** The source state is exited and entered again even when the target is inside it. */
  readonly reenter?: true;
  /** What the transition means (a machine's transition `description`; the declared charts have one on most). */
  readonly description?: string;
}

/** One state of a chart (the root is one too). */
export interface ChartNode {
  /** Omitted for atomic and compound states. */
  readonly type?: 'final' | 'parallel' | 'history';
  /** For `history` states. */
  readonly history?: 'shallow' | 'deep';
  readonly description?: string;
  /** The initial child (compound states). */
  readonly initial?: string;
  /** Event type → its transitions, in the order they are tried. */
  readonly on: Readonly<Record<string, readonly ChartTransition[]>>;
  /** Eventless transitions (XState `always`), when there are any. */
  readonly always?: readonly ChartTransition[];
  /** Delayed transitions (XState `after`), keyed by the delay's name or its milliseconds, when there are any. */
  readonly after?: Readonly<Record<string, readonly ChartTransition[]>>;
  /** Child states (compound and parallel states). */
  readonly states?: Readonly<Record<string, ChartNode>>;
}

/** A whole chart: its root node, and what it is a chart of. */
export interface Chart extends ChartNode {
  readonly format: typeof CHART_FORMAT;
  /** The name `warden inspect --export --machine NAME` takes (`session`, `port`, ...). */
  readonly name: string;
  /** The machine's id, or the logic's `config.name` for custom logic. */
  readonly id: string;
  /** `machine`: derived from an XState machine; `declared`: written by hand for custom logic. */
  readonly kind: 'machine' | 'declared';
  /** The module that defines the machine or logic, from the package root. */
  readonly source: string;
  readonly description: string;
  readonly initial: string;
  readonly states: Readonly<Record<string, ChartNode>>;
}

/** What a chart is a chart of (everything but the states). */
export interface ChartAbout {
  readonly name: string;
  readonly source: string;
  readonly description: string;
}

// ---------------------------------------------------------------------------------------
// From an XState machine

/**
 * The chart of an XState machine, read from its definition (`machine.root`): every state,
 * nested ones included, and every transition with its targets and guard. Actions, context
 * and invocations are left out.
 */
export function chartOfMachine(machine: AnyStateMachine, about: ChartAbout): Chart {
  const root = nodeOf(machine.root);
  if (root.initial === undefined || root.states === undefined) {
    throw new Error(`Machine "${machine.id}" has no states: a chart needs a compound root with an initial state.`);
  }
  // The root's own description, if any, gives way to the catalog's.
  const { description: _rootDescription, ...rest } = root;
  return {
    format: CHART_FORMAT,
    name: about.name,
    id: machine.id,
    kind: 'machine',
    source: about.source,
    description: about.description,
    ...rest,
    initial: root.initial,
    states: root.states,
  };
}

type AnyTransitionDefinition = AnyStateNode['transitions'] extends Map<string, Array<infer T>> ? T : never;

function nodeOf(node: AnyStateNode): ChartNode {
  const on: Record<string, ChartTransition[]> = {};
  for (const [eventType, transitions] of node.transitions) {
    // Delayed transitions are listed under `after`, by delay.
    const own = transitions.filter((transition) => !('delay' in transition));
    if (own.length > 0) on[eventType] = own.map(transitionOf);
  }
  const after: Record<string, ChartTransition[]> = {};
  for (const delayed of node.after) {
    const key = String(delayed.delay);
    (after[key] ??= []).push(transitionOf(delayed));
  }
  const childKeys = Object.keys(node.states);
  for (const key of childKeys) {
    // Paths are joined with dots (as XState's own ids are): a dot in a name would make them ambiguous.
    if (key.includes('.')) throw new Error(`State "${key}" of "${node.id}": a state name with a dot cannot be told apart in a chart path; rename it.`);
  }
  const type = node.type === 'final' || node.type === 'parallel' || node.type === 'history' ? node.type : undefined;
  const initial = node.type === 'compound' ? node.initial.target[0]?.key : undefined;
  return {
    ...(type ? { type } : {}),
    ...(node.type === 'history' && node.history ? { history: node.history } : {}),
    ...(node.description ? { description: node.description } : {}),
    ...(initial !== undefined ? { initial } : {}),
    on,
    ...(node.always && node.always.length > 0 ? { always: node.always.map(transitionOf) } : {}),
    ...(Object.keys(after).length > 0 ? { after } : {}),
    ...(childKeys.length > 0 ? { states: Object.fromEntries(childKeys.map((key) => [key, nodeOf(node.states[key] as AnyStateNode)])) } : {}),
  };
}

function transitionOf(transition: AnyTransitionDefinition): ChartTransition {
  const guard = guardName(transition.guard);
  return {
    targets: (transition.target ?? []).map((target: AnyStateNode) => target.path.join('.')),
    ...(guard !== undefined ? { guard } : {}),
    ...(transition.reenter ? { reenter: true as const } : {}),
    ...(typeof transition.description === 'string' ? { description: transition.description } : {}),
  };
}

/** A guard's name: the string, the parameterized object's `type`, a named function's name, else `inline`. */
function guardName(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    // `{ guard: ({ context }) => … }` names the arrow function after the key.
    return guard.name && guard.name !== 'guard' ? guard.name : 'inline';
  }
  if (typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  return 'inline';
}

// ---------------------------------------------------------------------------------------
// Reading a chart

/** One state of a chart, found by walking it. */
export interface ChartStateEntry {
  /** Its path from the root, joined with dots (`streaming.word`). */
  readonly path: string;
  readonly node: ChartNode;
}

/** Every state of a chart, parents before their children, in declaration order (the root excluded). */
export function chartStates(chart: ChartNode): ChartStateEntry[] {
  const entries: ChartStateEntry[] = [];
  const walk = (node: ChartNode, prefix: string): void => {
    for (const [key, child] of Object.entries(node.states ?? {})) {
      const path = prefix ? `${prefix}.${key}` : key;
      entries.push({ path, node: child });
      walk(child, path);
    }
  };
  walk(chart, '');
  return entries;
}

/** One transition of a chart, with where it is declared. */
export interface ChartEdge {
  /** The state that declares it; `''` for the root. */
  readonly source: string;
  /** `on` (an event), `always` (eventless) or `after` (a delay). */
  readonly kind: 'on' | 'always' | 'after';
  /** The event type; the delay for `after`; `''` for `always`. */
  readonly event: string;
  readonly transition: ChartTransition;
}

/** Every transition of a chart, the root's first, then each state's in {@link chartStates} order. */
export function chartEdges(chart: ChartNode): ChartEdge[] {
  const edges: ChartEdge[] = [];
  const add = (source: string, node: ChartNode): void => {
    for (const [event, transitions] of Object.entries(node.on)) {
      for (const transition of transitions) edges.push({ source, kind: 'on', event, transition });
    }
    for (const transition of node.always ?? []) edges.push({ source, kind: 'always', event: '', transition });
    for (const [delay, transitions] of Object.entries(node.after ?? {})) {
      for (const transition of transitions) edges.push({ source, kind: 'after', event: delay, transition });
    }
  };
  add('', chart);
  for (const { path, node } of chartStates(chart)) add(path, node);
  return edges;
}

/**
 * The transitions a state takes for `event` type: its own, else its nearest ancestor's
 * (XState's order), with the state that declares them; `undefined` when none handles it.
 * As in XState, a node's exact event comes before its wildcards (`*`, `xstate.*`), the
 * longer wildcard first.
 */
export function transitionsFor(chart: ChartNode, statePath: string, event: string): { readonly source: string; readonly transitions: readonly ChartTransition[] } | undefined {
  const keys = statePath === '' ? [] : statePath.split('.');
  const chain: Array<{ path: string; node: ChartNode }> = [{ path: '', node: chart }];
  let node: ChartNode | undefined = chart;
  for (let index = 0; index < keys.length; index++) {
    node = node?.states?.[keys[index] as string];
    if (!node) return undefined;
    chain.push({ path: keys.slice(0, index + 1).join('.'), node });
  }
  for (const link of chain.reverse()) {
    const exact = Object.hasOwn(link.node.on, event) ? link.node.on[event] ?? [] : [];
    const wildcards = Object.keys(link.node.on)
      .filter((descriptor) => descriptor !== event && matchesDescriptor(event, descriptor))
      .sort((a, b) => b.length - a.length)
      .flatMap((descriptor) => link.node.on[descriptor] ?? []);
    const transitions = [...exact, ...wildcards];
    if (transitions.length > 0) return { source: link.path, transitions };
  }
  return undefined;
}

/** XState's event descriptor match: the type itself, `*`, or a prefix ending in `.*` (`xstate.*`). */
function matchesDescriptor(event: string, descriptor: string): boolean {
  if (descriptor === event || descriptor === '*') return true;
  if (!descriptor.endsWith('.*')) return false;
  const tokens = descriptor.split('.');
  const eventTokens = event.split('.');
  for (let index = 0; index < tokens.length; index++) {
    if (tokens[index] === '*') return index === tokens.length - 1;
    if (tokens[index] !== eventTokens[index]) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Checking a chart read back from JSON

/** A JSON value that is not a well-formed chart; the message names the path and what is wrong. */
export class ChartFormatError extends Error {
  override readonly name = 'ChartFormatError';
}

/**
 * Reads a chart back from parsed JSON (`JSON.parse` of an export), checking its shape: the
 * format tag, every node's fields, that each `initial` names a child and that every target
 * is a state of the chart. Throws a {@link ChartFormatError} naming the first problem.
 */
export function parseChart(value: unknown): Chart {
  const chart = record(value, '$');
  if (chart.format !== CHART_FORMAT) throw new ChartFormatError(`$.format: expected "${CHART_FORMAT}", got ${JSON.stringify(chart.format)}`);
  for (const field of ['name', 'id', 'source', 'description'] as const) text(chart[field], `$.${field}`);
  if (chart.kind !== 'machine' && chart.kind !== 'declared') throw new ChartFormatError(`$.kind: expected "machine" or "declared", got ${JSON.stringify(chart.kind)}`);
  checkNode(chart, '$');
  if (chart.states === undefined || chart.initial === undefined) throw new ChartFormatError('$: a chart needs `states` and `initial`');
  const parsed = chart as unknown as Chart;
  const paths = new Set(chartStates(parsed).map((entry) => entry.path));
  for (const edge of chartEdges(parsed)) {
    for (const target of edge.transition.targets) {
      if (!paths.has(target)) throw new ChartFormatError(`transition ${edge.event || edge.kind} of "${edge.source || '(root)'}": target "${target}" is not a state of the chart`);
    }
  }
  return parsed;
}

function checkNode(node: Record<string, unknown>, at: string): void {
  if (node.type !== undefined && node.type !== 'final' && node.type !== 'parallel' && node.type !== 'history') {
    throw new ChartFormatError(`${at}.type: expected "final", "parallel" or "history", got ${JSON.stringify(node.type)}`);
  }
  if (node.history !== undefined && node.history !== 'shallow' && node.history !== 'deep') throw new ChartFormatError(`${at}.history: expected "shallow" or "deep"`);
  if (node.description !== undefined) text(node.description, `${at}.description`);
  const on = record(node.on, `${at}.on`);
  for (const [event, transitions] of Object.entries(on)) checkTransitions(transitions, `${at}.on[${JSON.stringify(event)}]`);
  if (node.always !== undefined) checkTransitions(node.always, `${at}.always`);
  if (node.after !== undefined) {
    for (const [delay, transitions] of Object.entries(record(node.after, `${at}.after`))) checkTransitions(transitions, `${at}.after[${JSON.stringify(delay)}]`);
  }
  if (node.states !== undefined) {
    const states = record(node.states, `${at}.states`);
    const keys = Object.keys(states);
    if (keys.length === 0) throw new ChartFormatError(`${at}.states: expected at least one state (leave it out for an atomic state)`);
    for (const key of keys) {
      if (key.length === 0 || key.includes('.')) throw new ChartFormatError(`${at}.states: state names must be non-empty and without dots, got ${JSON.stringify(key)}`);
      checkNode(record(states[key], `${at}.states.${key}`), `${at}.states.${key}`);
    }
    if (node.type !== 'parallel') {
      if (typeof node.initial !== 'string' || !Object.hasOwn(states, node.initial)) {
        throw new ChartFormatError(`${at}.initial: expected the name of one of its states (${keys.join(', ')}), got ${JSON.stringify(node.initial)}`);
      }
    }
  } else if (node.initial !== undefined) {
    throw new ChartFormatError(`${at}.initial: an atomic state has no initial state`);
  }
}

function checkTransitions(value: unknown, at: string): void {
  if (!Array.isArray(value)) throw new ChartFormatError(`${at}: expected an array of transitions`);
  value.forEach((item, index) => {
    const transition = record(item, `${at}[${index}]`);
    if (!Array.isArray(transition.targets) || transition.targets.some((target) => typeof target !== 'string')) {
      throw new ChartFormatError(`${at}[${index}].targets: expected an array of state paths`);
    }
    if (transition.guard !== undefined) text(transition.guard, `${at}[${index}].guard`);
    if (transition.description !== undefined) text(transition.description, `${at}[${index}].description`);
    if (transition.reenter !== undefined && transition.reenter !== true) throw new ChartFormatError(`${at}[${index}].reenter: expected true or nothing`);
  });
}

function record(value: unknown, at: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ChartFormatError(`${at}: expected an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, at: string): string {
  if (typeof value !== 'string') throw new ChartFormatError(`${at}: expected a string, got ${typeof value}`);
  return value;
}
