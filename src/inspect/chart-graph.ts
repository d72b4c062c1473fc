/**
 * A chart as a graph to lay out: the input of ELK's layered algorithm (elkjs), in ELK's JSON
 * graph format, with what each node and edge stands for under `chart` (ELK keeps unknown
 * fields and gives them back with the positions). The same graph is laid out in Node for
 * `warden inspect --export svg` (chart-layout.ts) and in the live view's page (elkjs served
 * by warden itself), and drawn by one script (chart-draw-script.ts) in both.
 *
 * - every state is a node, named by its path (`s:prompting`, `s:outer.inner`); a compound
 *   or parallel state is a box with its children inside; the regions of a parallel state
 *   are its children, drawn dashed; a final state has a double border;
 * - each compound state (the root included) has a small filled circle pointing at its
 *   initial state;
 * - every transition with a target is an edge from the state that declares it to each
 *   target, labelled `EVENT [GUARD]`, `always [GUARD]` or `after DELAY [GUARD]`;
 * - transitions declared on a compound state (the root included: "any state") apply in any
 *   of its states that does not handle the event itself: they leave a dashed "any state"
 *   box inside it (ELK draws no edge from the root, and one from a box to its own children
 *   would cross its border twice);
 * - a transition without a target (it only runs actions) is a line inside its state's box.
 *
 * Text is measured as a monospace font of the sizes below (the drawing uses one), so Node
 * needs no font metrics and the page and the export agree.
 */
import { chartStates, type ChartNode, type ChartTransition } from './chart-model.js';

/** What a node of the graph stands for. */
export interface ChartGraphNodeInfo {
  /** `state`: a state of the chart; `initial`: the marker of a compound state's initial child; `any`: its "any state" box. */
  readonly role: 'state' | 'initial' | 'any';
  /** The state's path (`''` for the root); for `initial` and `any`, the compound state they belong to. */
  readonly path: string;
  /** The state's own name (the last part of its path); `any state` for an `any` box. */
  readonly name: string;
  readonly type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** A child of a parallel state: a region. */
  readonly region: boolean;
  /** Transitions that stay (no target), as labels, drawn inside the box. */
  readonly internal: readonly string[];
}

/** A node of the graph (ELK's `ElkNode`); `x`, `y`, `width`, `height` once laid out, from the graph's origin. */
export interface ChartGraphNode {
  readonly id: string;
  width?: number;
  height?: number;
  x?: number;
  y?: number;
  readonly layoutOptions?: Readonly<Record<string, string>>;
  readonly children?: ChartGraphNode[];
  readonly chart?: ChartGraphNodeInfo;
}

/** What an edge of the graph stands for. */
export interface ChartGraphEdgeInfo {
  /** `transition`: a transition of the chart; `initial`: from a compound state's initial marker to that state. */
  readonly role: 'transition' | 'initial';
  /** The state that declares the transition (`''`: the root). */
  readonly source: string;
  /** The state it goes to. */
  readonly target: string;
  /** `on` (an event), `always`, `after` (a delay). */
  readonly kind: 'on' | 'always' | 'after';
  /** The event type, the delay for `after`, `''` for `always` and initial edges. */
  readonly event: string;
  readonly guard?: string;
  /** The drawn label (`EVENT [GUARD]`). */
  readonly label: string;
}

/** A point of a laid-out edge. */
export interface ChartGraphPoint {
  readonly x: number;
  readonly y: number;
}

/** An edge of the graph (ELK's `ElkExtendedEdge`); `sections` once laid out. */
export interface ChartGraphEdge {
  readonly id: string;
  readonly sources: readonly [string];
  readonly targets: readonly [string];
  /** The label: its text, and the lines it is drawn in (long event names wrap after a dot, and before a guard). */
  readonly labels?: Array<{ readonly text: string; readonly lines: readonly string[]; width: number; height: number; x?: number; y?: number }>;
  sections?: Array<{ readonly startPoint: ChartGraphPoint; readonly endPoint: ChartGraphPoint; readonly bendPoints?: readonly ChartGraphPoint[] }>;
  readonly chart: ChartGraphEdgeInfo;
}

/** The whole graph: the chart's root (ELK's root node), its edges all declared here. */
export interface ChartGraph extends ChartGraphNode {
  readonly children: ChartGraphNode[];
  readonly edges: ChartGraphEdge[];
  readonly layoutOptions: Readonly<Record<string, string>>;
}

/** Text metrics the layout and the drawing share (pixels; a monospace font). */
export const CHART_METRICS = {
  nameFont: 12,
  nameCharWidth: 7.3,
  lineFont: 11,
  lineCharWidth: 6.7,
  lineHeight: 14,
  /** Room for a box's name above its content, and around it. */
  boxTop: 26,
  boxPadding: 12,
  marker: 12,
} as const;

/** ELK's options for every chart: layered, top to bottom, one layout across nesting, coordinates from the root. */
export const CHART_LAYOUT_OPTIONS: Readonly<Record<string, string>> = {
  'elk.algorithm': 'layered',
  'elk.direction': 'DOWN',
  'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
  'elk.json.shapeCoords': 'ROOT',
  'elk.json.edgeCoords': 'ROOT',
  // Nodes placed to keep edges short and straight (more compact than the default here).
  'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
  'elk.layered.spacing.nodeNodeBetweenLayers': '36',
  'elk.spacing.nodeNode': '28',
  'elk.spacing.edgeLabel': '3',
  'elk.spacing.edgeNode': '14',
  'elk.layered.spacing.edgeNodeBetweenLayers': '14',
  'elk.padding': '[top=12,left=12,bottom=12,right=12]',
};

/** The label of a transition: `EVENT [GUARD]`, `always [GUARD]`, `after DELAY [GUARD]`. */
export function transitionLabel(kind: 'on' | 'always' | 'after', event: string, transition: ChartTransition): string {
  const head = kind === 'always' ? 'always' : kind === 'after' ? `after ${event}` : event;
  return transition.guard === undefined ? head : `${head} [${transition.guard}]`;
}

/** The graph of a chart (see the module comment). Paths with dots are safe: node ids are `s:` + path. */
export function chartGraph(chart: ChartNode): ChartGraph {
  const edges: ChartGraphEdge[] = [];
  const known = new Set(chartStates(chart).map((entry) => entry.path));
  const rootChildren = childrenOf(chart, '', edges, known);
  return { id: 'root', layoutOptions: CHART_LAYOUT_OPTIONS, children: rootChildren, edges };
}

/** The node id of a state. */
export function stateNodeId(path: string): string {
  return `s:${path}`;
}

function childrenOf(node: ChartNode, path: string, edges: ChartGraphEdge[], known: ReadonlySet<string>): ChartGraphNode[] {
  const nodes: ChartGraphNode[] = [];
  const states = Object.entries(node.states ?? {});
  if (node.type !== 'parallel' && node.initial !== undefined) {
    const id = `init:${path}`;
    nodes.push({ id, width: CHART_METRICS.marker, height: CHART_METRICS.marker, chart: { role: 'initial', path, name: '', type: 'atomic', region: false, internal: [] } });
    const target = path ? `${path}.${node.initial}` : node.initial;
    edges.push({ id: `e${edges.length}`, sources: [id], targets: [stateNodeId(target)], chart: { role: 'initial', source: path, target, kind: 'on', event: '', label: '' } });
  }
  const own = transitionsOf(node);
  if (own.length > 0 && states.length > 0) {
    // The compound state's own transitions leave its "any state" box.
    const id = `any:${path}`;
    const internal = own.filter((t) => t.transition.targets.length === 0).map((t) => t.label);
    nodes.push({ id, ...boxSize('any state', internal), chart: { role: 'any', path, name: 'any state', type: 'atomic', region: false, internal } });
    addEdges(id, path, own, edges, known);
  }
  for (const [key, child] of states) {
    const childPath = path ? `${path}.${key}` : key;
    nodes.push(stateNode(key, childPath, child, node.type === 'parallel', edges, known));
  }
  return nodes;
}

function stateNode(name: string, path: string, node: ChartNode, region: boolean, edges: ChartGraphEdge[], known: ReadonlySet<string>): ChartGraphNode {
  const id = stateNodeId(path);
  const hasChildren = Object.keys(node.states ?? {}).length > 0;
  const type: ChartGraphNodeInfo['type'] = node.type === 'final' || node.type === 'history' || node.type === 'parallel' ? node.type : hasChildren ? 'compound' : 'atomic';
  const shown = node.type === 'history' ? (node.history === 'deep' ? 'H*' : 'H') : name;
  if (hasChildren) {
    const children = childrenOf(node, path, edges, known);
    const { boxTop, boxPadding } = CHART_METRICS;
    const minWidth = Math.ceil(shown.length * CHART_METRICS.nameCharWidth + 2 * boxPadding);
    return {
      id,
      layoutOptions: {
        'elk.padding': `[top=${boxTop + 4},left=${boxPadding},bottom=${boxPadding},right=${boxPadding}]`,
        'elk.nodeSize.constraints': 'MINIMUM_SIZE',
        'elk.nodeSize.minimum': `(${minWidth}, ${boxTop + 20})`,
      },
      children,
      chart: { role: 'state', path, name: shown, type, region, internal: [] },
    };
  }
  const own = transitionsOf(node);
  addEdges(id, path, own, edges, known);
  const internal = own.filter((t) => t.transition.targets.length === 0).map((t) => t.label);
  return { id, ...boxSize(shown, internal), chart: { role: 'state', path, name: shown, type, region, internal } };
}

interface Labelled {
  readonly kind: 'on' | 'always' | 'after';
  readonly event: string;
  readonly transition: ChartTransition;
  readonly label: string;
}

function transitionsOf(node: ChartNode): Labelled[] {
  const found: Labelled[] = [];
  for (const [event, transitions] of Object.entries(node.on)) {
    for (const transition of transitions) found.push({ kind: 'on', event, transition, label: transitionLabel('on', event, transition) });
  }
  for (const transition of node.always ?? []) found.push({ kind: 'always', event: '', transition, label: transitionLabel('always', '', transition) });
  for (const [delay, transitions] of Object.entries(node.after ?? {})) {
    for (const transition of transitions) found.push({ kind: 'after', event: delay, transition, label: transitionLabel('after', delay, transition) });
  }
  return found;
}

function addEdges(from: string, source: string, transitions: readonly Labelled[], edges: ChartGraphEdge[], known: ReadonlySet<string>): void {
  for (const { kind, event, transition, label } of transitions) {
    for (const target of transition.targets) {
      if (!known.has(target)) continue;
      edges.push({
        id: `e${edges.length}`,
        sources: [from],
        targets: [stateNodeId(target)],
        labels: [labelBox(label)],
        chart: { role: 'transition', source, target, kind, event, ...(transition.guard !== undefined ? { guard: transition.guard } : {}), label },
      });
    }
  }
}

/** Longest line of a label before it wraps, in characters. */
const LABEL_LINE = 28;

/**
 * A label in lines of at most {@link LABEL_LINE} characters where it can break: after a dot
 * (`xstate.done.actor.` / `0.agent`) or a space (before a guard). Its lines joined give it back.
 */
export function labelLines(label: string): string[] {
  const pieces = label.match(/[^.\s]*(?:\.|\s+|$)/gu)?.filter((piece) => piece.length > 0) ?? [label];
  const lines: string[] = [];
  let line = '';
  for (const piece of pieces) {
    if (line.length > 0 && line.length + piece.trimEnd().length > LABEL_LINE) {
      lines.push(line);
      line = '';
    }
    line += piece;
  }
  if (line.length > 0 || lines.length === 0) lines.push(line);
  return lines;
}

function labelBox(label: string): { text: string; lines: string[]; width: number; height: number } {
  const lines = labelLines(label);
  // A trailing space is drawn too (the lines joined are the label): it counts.
  const longest = Math.max(...lines.map((line) => line.length));
  return { text: label, lines, width: Math.ceil(longest * CHART_METRICS.lineCharWidth + 6), height: lines.length * CHART_METRICS.lineHeight };
}

function boxSize(name: string, internal: readonly string[]): { width: number; height: number } {
  const { nameCharWidth, lineCharWidth, lineHeight, boxPadding } = CHART_METRICS;
  const text = Math.max(name.length * nameCharWidth, ...internal.map((line) => line.length * lineCharWidth));
  return { width: Math.max(56, Math.ceil(text + 2 * boxPadding)), height: 30 + internal.length * lineHeight + (internal.length > 0 ? 4 : 0) };
}
