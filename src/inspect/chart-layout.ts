/**
 * Lays a chart's graph out in Node with elkjs (the bundled build: ELK's Java compiled to
 * JavaScript, run in this thread, no worker), for `warden inspect --export svg`. The live
 * view's page runs the same build, served by warden (live-view-server.ts), on the same graph.
 * elkjs loads only when a layout is asked for: `warden acp` never loads it.
 */
import { chartGraph, type ChartGraph } from './chart-graph.js';
import type { ChartNode } from './chart-model.js';

/** The part of elkjs's API used here. */
interface ElkLayouter {
  layout(graph: unknown): Promise<unknown>;
}

let elk: Promise<ElkLayouter> | undefined;

/** One ELK instance for the process, made on first use. */
function layouter(): Promise<ElkLayouter> {
  elk ??= import('elkjs/lib/elk.bundled.js').then((module) => {
    // A CommonJS module: its `module.exports` (the constructor) is the default export.
    const Elk = (module as unknown as { default: new () => ElkLayouter }).default;
    return new Elk();
  });
  return elk;
}

/**
 * Lays out a chart's graph (chart-graph.ts): the graph comes back with every node's `x`,
 * `y`, `width`, `height` and every edge's `sections` and label positions, all from the
 * graph's origin. The graph given is not changed.
 */
export async function layoutGraph(graph: ChartGraph): Promise<ChartGraph> {
  const laid = (await (await layouter()).layout(structuredClone(graph))) as ChartGraph;
  return laid;
}

/** {@link chartGraph} then {@link layoutGraph}. */
export function layoutChart(chart: ChartNode): Promise<ChartGraph> {
  return layoutGraph(chartGraph(chart));
}
