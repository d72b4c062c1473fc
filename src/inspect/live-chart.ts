/**
 * Charts as the live view keeps them: a machine's chart read from its config (or a chart
 * declared for a custom logic, chart-catalog.ts) as its top-level states with the events that
 * leave them, for a page without its layout, and the whole chart as a graph for the page to
 * lay out.
 */
import { chartOfConfig } from './chart-config.js';
import type { ChartNode } from './chart-model.js';
import { chartGraph, type ChartGraph } from './chart-graph.js';

/** A transition of a chart: `event` leads to state `target`. */
export interface LiveTransition {
  readonly event: string;
  readonly target: string;
}

/** A machine's chart: its top-level states and their transitions. */
export interface LiveChartView {
  readonly id: string;
  readonly initial?: string;
  readonly states: ReadonlyArray<{ readonly name: string; readonly final: boolean; readonly transitions: readonly LiveTransition[] }>;
  /** Transitions taken from any state (the machine's own `on`). */
  readonly anywhere: readonly LiveTransition[];
}

/** A chart as the model keeps it: what the view lists, and its graph (served apart: it does not change). */
export interface LiveChartDefinition extends LiveChartView {
  /** The whole chart, nested states included, as a graph for the page to lay out (chart-graph.ts). */
  readonly graph: ChartGraph;
}

/** A chart the view can be given: an id, an initial state and the states (a machine's read from its config, or a declared one). */
export interface LiveChartSource extends ChartNode {
  readonly id: string;
  readonly initial: string;
  readonly states: Readonly<Record<string, ChartNode>>;
}

/**
 * The chart of a machine config: its whole chart as a graph for the page (nested states
 * included, chart-config.ts then chart-graph.ts), and, for a page without its layout, its
 * top-level states, each with the events that leave it and where they lead, and the
 * transitions of the machine's own `on` (taken from any state; those without a target are
 * left out of these lists).
 */
export function chartOf(config: unknown): LiveChartDefinition | undefined {
  const chart = chartOfConfig(config);
  return chart && liveChart(chart);
}

/** A chart as the view keeps it (see {@link chartOf}); a declared one (chart-catalog.ts) too. */
export function liveChart(chart: LiveChartSource): LiveChartDefinition {
  return {
    id: chart.id,
    initial: chart.initial,
    states: Object.entries(chart.states).map(([name, node]) => ({ name, final: node.type === 'final', transitions: transitionsOf(node.on) })),
    anywhere: transitionsOf(chart.on),
    graph: chartGraph(chart),
  };
}

function transitionsOf(on: ChartNode['on']): LiveTransition[] {
  const found: LiveTransition[] = [];
  for (const [event, transitions] of Object.entries(on)) {
    for (const transition of transitions) {
      for (const target of transition.targets) {
        // A path from the root: its top-level state's name.
        const name = target.split('.')[0] ?? target;
        if (!found.some((seen) => seen.event === event && seen.target === name)) found.push({ event, target: name });
      }
    }
  }
  return found;
}
