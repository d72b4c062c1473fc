/**
 * A chart as a Mermaid `stateDiagram-v2`, in a small, fixed subset of its grammar:
 *
 * ```text
 * stateDiagram-v2
 *   %% chart NAME: SOURCE                  the line after the header names the chart
 *   state "LABEL" as ID                     every state, declared before it is used
 *   state "LABEL" as ID {                   a compound state, its children inside
 *   --                                      between the regions of a parallel state
 *   }
 *   ID : EVENT [GUARD]                      a transition that runs actions and stays (atomic states only)
 *   [*] --> ID                              the initial state of the enclosing scope (after its states)
 *   ID --> [*]                              a final state
 *   ID --> ID : LABEL                       a transition, written in the innermost scope holding both ends
 *   classDef anyState STYLE                 the dashed style of the "any state" boxes
 *   class ID anyState
 * ```
 *
 * Transitions declared on a compound state (the root included) are drawn from a dashed
 * "any state" box inside it: they apply in any of its states that does not handle the event
 * itself. (Mermaid cannot draw an edge from the diagram's own root, nor give a composite
 * state a description line.) Labels are `EVENT [GUARD]`, `always [GUARD]` or
 * `after DELAY [GUARD]`; characters Mermaid reads as syntax are written as `#NN;` entities.
 */
import { chartStates, type Chart, type ChartNode, type ChartTransition } from './chart-model.js';

const INDENT = '  ';
/** Words a state id must not be (Mermaid keywords). */
const reserved = new Set(['state', 'note', 'end', 'direction', 'class', 'classDef', 'style', 'click', 'as', 'hide', 'left', 'right', 'of', 'TB', 'BT', 'LR', 'RL', 'default', 'stateDiagram']);

/** The Mermaid `stateDiagram-v2` source of a chart (ends with a newline). */
export function toMermaid(chart: Chart): string {
  const ids = allocateIds(chart);
  const out: Output = {
    lines: ['stateDiagram-v2', `${INDENT}%% chart ${oneLine(chart.name)}: ${oneLine(chart.source)}`],
    ids,
    anyBoxes: [],
    edges: allEdges(chart, ids),
  };
  renderScope(chart, '', 1, out);
  if (out.anyBoxes.length > 0) {
    out.lines.push(`${INDENT}classDef anyState fill:none,stroke-dasharray:4 4`);
    for (const id of out.anyBoxes) out.lines.push(`${INDENT}class ${id} anyState`);
  }
  return `${out.lines.join('\n')}\n`;
}

/** Writes the characters Mermaid would read as syntax in a label as `#NN;` entities, and newlines as spaces. */
export function escapeLabel(text: string): string {
  return oneLine(text).replace(/[#;:"<>{}`\\|%]/gu, (char) => `#${char.charCodeAt(0)};`);
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/gu, ' ');
}

/** The Mermaid id of each state path, and `PATH#any` for the "any state" box of a compound state (`#any` for the root's). */
type Ids = ReadonlyMap<string, string>;

/** What the renderer writes to, and what it writes with. */
interface Output {
  readonly lines: string[];
  readonly ids: Ids;
  /** The ids of the "any state" boxes, styled at the end. */
  readonly anyBoxes: string[];
  readonly edges: readonly Edge[];
}

interface Edge {
  /** The innermost scope holding both ends: a compound state's path, `''` for the root. */
  readonly scope: string;
  readonly from: string;
  readonly to: string;
  readonly label: string;
}

function allocateIds(chart: Chart): Ids {
  const ids = new Map<string, string>();
  const used = new Set<string>();
  const take = (key: string, base: string): void => {
    let id = base.replace(/[^A-Za-z0-9_]/gu, '_');
    if (!/^[A-Za-z_]/u.test(id)) id = `s_${id}`;
    if (reserved.has(id)) id = `${id}_`;
    let candidate = id;
    for (let n = 2; used.has(candidate); n++) candidate = `${id}_${n}`;
    used.add(candidate);
    ids.set(key, candidate);
  };
  // States first, so that they keep their plain names; then the boxes.
  const states = chartStates(chart);
  for (const { path } of states) take(path, path.split('.').join('__'));
  if (hasOwnTransitions(chart)) take('#any', 'any_state');
  for (const { path, node } of states) {
    if (node.states && hasOwnTransitions(node)) take(`${path}#any`, `${path.split('.').join('__')}__any`);
  }
  return ids;
}

function hasOwnTransitions(node: ChartNode): boolean {
  return Object.keys(node.on).length > 0 || (node.always?.length ?? 0) > 0 || Object.keys(node.after ?? {}).length > 0;
}

/**
 * Every targeted transition of the chart as an edge, placed in the innermost scope holding
 * both ends. The source of a compound state's own transition is its "any state" box, which
 * lives inside it; an atomic state lives in its parent's scope.
 */
function allEdges(chart: Chart, ids: Ids): Edge[] {
  const edges: Edge[] = [];
  const seen = new Set<string>();
  const add = (sourceScope: string, from: string, node: ChartNode): void => {
    for (const { transition, label } of ownTransitions(node)) {
      for (const target of transition.targets) {
        const edge = { scope: commonScope(sourceScope, target), from, to: ids.get(target) as string, label };
        const key = `${edge.from}>${edge.to}:${edge.label}`;
        if (seen.has(key)) continue;
        seen.add(key);
        edges.push(edge);
      }
    }
  };
  if (hasOwnTransitions(chart)) add('', ids.get('#any') as string, chart);
  for (const { path, node } of chartStates(chart)) {
    if (!node.states) add(parentOf(path), ids.get(path) as string, node);
    else if (hasOwnTransitions(node)) add(path, ids.get(`${path}#any`) as string, node);
  }
  return edges;
}

function parentOf(path: string): string {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? '' : path.slice(0, dot);
}

/** The longest common prefix of the source's scope and the target's parent: where the edge is written. */
function commonScope(sourceScope: string, target: string): string {
  const a = sourceScope === '' ? [] : sourceScope.split('.');
  const parent = parentOf(target);
  const b = parent === '' ? [] : parent.split('.');
  const common: string[] = [];
  for (let index = 0; index < Math.min(a.length, b.length) && a[index] === b[index]; index++) common.push(a[index] as string);
  return common.join('.');
}

/**
 * Writes the inside of a compound (or parallel) node: its "any state" box, its children's
 * declarations, its initial arrow, its final arrows, and the edges of its scope.
 */
function renderScope(node: ChartNode, path: string, depth: number, out: Output): void {
  const pad = INDENT.repeat(depth);
  const children = Object.entries(node.states ?? {});
  const childPath = (key: string) => (path ? `${path}.${key}` : key);
  if (hasOwnTransitions(node)) {
    const box = out.ids.get(`${path}#any`) as string;
    out.anyBoxes.push(box);
    out.lines.push(`${pad}state "any state" as ${box}`);
    for (const line of stayLines(node)) out.lines.push(`${pad}${box} : ${line}`);
  }
  if (node.type === 'parallel') {
    children.forEach(([key, child], index) => {
      if (index > 0) out.lines.push(`${pad}--`);
      declare(child, childPath(key), key, depth, out);
    });
  } else {
    for (const [key, child] of children) declare(child, childPath(key), key, depth, out);
    if (node.initial !== undefined) out.lines.push(`${pad}[*] --> ${out.ids.get(childPath(node.initial)) as string}`);
  }
  for (const [key, child] of children) {
    if (child.type === 'final') out.lines.push(`${pad}${out.ids.get(childPath(key)) as string} --> [*]`);
  }
  for (const edge of out.edges) {
    if (edge.scope === path) out.lines.push(`${pad}${edge.from} --> ${edge.to} : ${edge.label}`);
  }
}

function declare(node: ChartNode, path: string, key: string, depth: number, out: Output): void {
  const pad = INDENT.repeat(depth);
  const id = out.ids.get(path) as string;
  const label = node.type === 'history' ? `${key} (history${node.history === 'deep' ? ', deep' : ''})` : key;
  if (node.states) {
    out.lines.push(`${pad}state "${escapeLabel(label)}" as ${id} {`);
    renderScope(node, path, depth + 1, out);
    out.lines.push(`${pad}}`);
    return;
  }
  out.lines.push(`${pad}state "${escapeLabel(label)}" as ${id}`);
  for (const line of stayLines(node)) out.lines.push(`${pad}${id} : ${line}`);
}

/** The description lines of a node: its transitions without a target, one per label. */
function stayLines(node: ChartNode): string[] {
  const labels = ownTransitions(node).filter(({ transition }) => transition.targets.length === 0).map(({ label }) => label);
  return [...new Set(labels)];
}

/** A node's transitions with their labels: `on` in order, then `always`, then `after`. */
function ownTransitions(node: ChartNode): Array<{ readonly transition: ChartTransition; readonly label: string }> {
  const out: Array<{ transition: ChartTransition; label: string }> = [];
  for (const [event, transitions] of Object.entries(node.on)) {
    for (const transition of transitions) out.push({ transition, label: transitionLabel(event, transition) });
  }
  for (const transition of node.always ?? []) out.push({ transition, label: transitionLabel('always', transition) });
  for (const [delay, transitions] of Object.entries(node.after ?? {})) {
    const trigger = `after ${/^\d+(\.\d+)?$/u.test(delay) ? `${delay} ms` : delay}`;
    for (const transition of transitions) out.push({ transition, label: transitionLabel(trigger, transition) });
  }
  return out;
}

/** `EVENT [GUARD]`, escaped. Exported for the checker in the tests. */
export function transitionLabel(trigger: string, transition: ChartTransition): string {
  return escapeLabel(transition.guard === undefined ? trigger : `${trigger} [${transition.guard}]`);
}
