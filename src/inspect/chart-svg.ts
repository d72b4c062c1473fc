/**
 * A chart as a standalone SVG file, made in Node without a browser: the graph laid out by
 * elkjs (chart-layout.ts) and drawn by the same script the live view's page runs
 * (chart-draw-script.ts), its element tree written as escaped markup with the style inside.
 */
import { CHART_DRAW_SCRIPT, CHART_SVG_CSS, type ChartDrawElement, type ChartDrawOptions, type ChartHighlight } from './chart-draw-script.js';
import type { ChartGraph } from './chart-graph.js';
import { layoutChart } from './chart-layout.js';
import type { Chart } from './chart-model.js';

type DrawChart = (graph: ChartGraph, highlight?: ChartHighlight, options?: ChartDrawOptions) => ChartDrawElement;

/** The drawing function, from its source (it closes over nothing: it sees only its arguments). */
export const drawChart: DrawChart = new Function(`'use strict';${CHART_DRAW_SCRIPT}\nreturn drawChart;`)() as DrawChart;

/** A laid-out graph as SVG markup (an XML document: declaration, then the `<svg>`). */
export function graphSvg(graph: ChartGraph, highlight: ChartHighlight = {}, options: ChartDrawOptions = {}): string {
  const tree = drawChart(graph, highlight, { style: CHART_SVG_CSS, ...options });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${markup(tree)}\n`;
}

/**
 * A chart as SVG: laid out, drawn, `highlight` marking the states it is in and its last
 * transition (none by default: a chart at rest).
 *
 * @example
 * ```ts
 * const svg = await chartSvg(chartNamed('session')!, { active: ['ready'] });
 * ```
 */
export async function chartSvg(chart: Chart, highlight: ChartHighlight = {}): Promise<string> {
  return graphSvg(await layoutChart(chart), highlight, { name: chart.name, idPrefix: `chart-${chart.name}` });
}

function markup(element: ChartDrawElement, depth = 0): string {
  const attrs = Object.entries(element.attrs).map(([key, value]) => ` ${key}="${escapeXml(value)}"`).join('');
  const indent = '  '.repeat(depth);
  if (element.text !== undefined) return `${indent}<${element.tag}${attrs}>${escapeXml(element.text)}</${element.tag}>`;
  if (!element.children || element.children.length === 0) return `${indent}<${element.tag}${attrs}/>`;
  return `${indent}<${element.tag}${attrs}>\n${element.children.map((child) => markup(child, depth + 1)).join('\n')}\n${indent}</${element.tag}>`;
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/gu, (char) => `&#${char.charCodeAt(0)};`);
}
