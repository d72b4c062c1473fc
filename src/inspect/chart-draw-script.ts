/**
 * How a laid-out chart graph (chart-graph.ts, positions by ELK) is drawn: one function,
 * `drawChart(graph, highlight, options)`, written as plain browser JavaScript and shipped as a
 * string, so that the live view's page (live-view-script.ts puts it in its script) and
 * `warden inspect --export svg` (chart-svg.ts runs it in Node) draw exactly the same thing.
 *
 * It returns the SVG as a tree of plain objects (`{ tag, attrs, children, text }`), which
 * the page turns into DOM nodes (text as text, never as markup) and chart-svg.ts into
 * escaped markup. Classes, for the style sheet and for tests:
 *
 * - `g.state` per node of the chart, nested as the states are: `compound`, `parallel`,
 *   `region` (a child of a parallel state), `final`, `history`, `atomic`; `active` on every
 *   state the machine is in (the current leaf and its ancestors), `current` on the leaf;
 *   `g.initial` the initial markers, `g.any` the "any state" boxes;
 *   `data-path` the state's path, `data-name` its name;
 * - `g.transition` per edge, `data-event`, `data-source`, `data-target`, `data-label`; `last`
 *   on the transition taken last; `g.initial-edge` from an initial marker.
 */

import type { TakenTransition } from '../host/transitions-taken.js';

/** The SVG element tree `drawChart` returns. */
export interface ChartDrawElement {
  readonly tag: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children?: readonly ChartDrawElement[];
  readonly text?: string;
}

/** What to highlight: the states the machine is in, and the transition it took last. */
export interface ChartHighlight {
  /** The leaf states the machine is in, as paths (`prompting`, `outer.inner`); several in parallel states. */
  readonly active?: readonly string[];
  /**
   * The last transition: from the leaf it left, by the event, to the leaf it entered; with
   * `transitions`, the transitions taken (transitions-taken.ts), whose edges are lit exactly.
   */
  readonly last?: { readonly from: string; readonly event: string; readonly to: string; readonly transitions?: readonly TakenTransition[] };
}

/** Options of `drawChart`. */
export interface ChartDrawOptions {
  /** Prefix of the ids inside the SVG (its arrow marker): unique per chart on a page. */
  readonly idPrefix?: string;
  /** Put the style sheet in the SVG (a standalone file); the page has it in its own. */
  readonly style?: string;
  /** The chart's name, for `data-chart` and the accessible label. */
  readonly name?: string;
}

/** The style of a drawn chart; light and dark from `prefers-color-scheme`. */
export const CHART_SVG_CSS = `
.chart-graph { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; --c-ink: #1d2430; --c-muted: #667085; --c-line: #98a2b3; --c-box: #ffffff; --c-area: #f3f5f8; --c-active: #fff4cc; --c-current: #ffd24d; --c-hot: #b35900; --c-last: #2459c9; }
@media (prefers-color-scheme: dark) {
  .chart-graph { --c-ink: #e3e8f0; --c-muted: #97a1b3; --c-line: #5b6679; --c-box: #1b2029; --c-area: #222834; --c-active: #3d3300; --c-current: #8a6d00; --c-hot: #f0a03c; --c-last: #79a3ff; }
}
.chart-graph .bg { fill: var(--c-box); }
.chart-graph .state > rect.box { fill: var(--c-box); stroke: var(--c-line); stroke-width: 1.2; }
.chart-graph .state.compound > rect.box, .chart-graph .state.parallel > rect.box { fill: var(--c-area); }
.chart-graph .state.region > rect.box { fill: none; stroke-dasharray: 5 3; }
.chart-graph .state.final > rect.inner { fill: none; stroke: var(--c-line); stroke-width: 1.2; }
.chart-graph .state.active > rect.box { stroke: var(--c-hot); stroke-width: 2; }
.chart-graph .state.active.compound > rect.box, .chart-graph .state.active.parallel > rect.box { fill: var(--c-active); }
.chart-graph .state.current > rect.box { fill: var(--c-current); stroke: var(--c-hot); stroke-width: 3; }
.chart-graph .any > rect.box { fill: none; stroke: var(--c-muted); stroke-dasharray: 4 4; }
.chart-graph text { fill: var(--c-ink); }
.chart-graph text.name { font-size: 12px; font-weight: 600; }
.chart-graph .any text.name { font-weight: normal; font-style: italic; fill: var(--c-muted); }
.chart-graph text.internal, .chart-graph text.label { font-size: 11px; }
.chart-graph text.internal { fill: var(--c-muted); }
.chart-graph .initial > circle { fill: var(--c-ink); }
.chart-graph .transition > path, .chart-graph .initial-edge > path { fill: none; stroke: var(--c-line); stroke-width: 1.2; }
.chart-graph .arrow { fill: var(--c-line); }
.chart-graph .transition > rect.label-bg { fill: var(--c-box); opacity: .85; }
.chart-graph .transition:hover > path { stroke: var(--c-last); }
.chart-graph .transition:hover > text.label { fill: var(--c-last); }
.chart-graph .transition.last > path { stroke: var(--c-last); stroke-width: 2.6; }
.chart-graph .transition.last > text.label { fill: var(--c-last); font-weight: 700; }
.chart-graph .arrow.last { fill: var(--c-last); }
`;

/**
 * The drawing function's source (see the module comment). It defines `drawChart` in the
 * scope it is evaluated in, and uses nothing but its arguments.
 */
export const CHART_DRAW_SCRIPT = String.raw`
function drawChart(graph, highlight, options) {
  highlight = highlight || {};
  options = options || {};
  var prefix = options.idPrefix || 'chart';
  var active = highlight.active || [];
  var nameFont = 12, lineFont = 11, lineHeight = 14, pad = 12;

  function node(tag, attrs, children, text) {
    var element = { tag: tag, attrs: attrs || {} };
    if (children && children.length) element.children = children;
    if (text !== undefined) element.text = String(text);
    return element;
  }
  function num(value) { return String(Math.round(value * 10) / 10); }
  function within(path, ancestor) { return path === ancestor || path.indexOf(ancestor + '.') === 0; }
  function isActive(path) { for (var i = 0; i < active.length; i++) if (within(active[i], path)) return true; return false; }
  function isCurrent(path) { return active.indexOf(path) >= 0; }

  // The edges of the last transition. When the view knows the transitions taken (the
  // microsteps of an acp-warden stream), exactly their edges: by the state that declares
  // each, its event descriptor as declared (a wildcard included) and its targets, so a
  // self-transition and an eventless step after the event are lit too. Otherwise found from
  // the event: its edge from the state that declares it (the deepest one holding the leaf it
  // left, then the most specific descriptor: XState's choice) into the leaf entered; or, when
  // the event led on through eventless transitions, its edge and the "always" edge that went
  // on from where it led into the leaf entered.
  var lastEdges = [];
  if (highlight.last) {
    var last = highlight.last;
    var transitions = (graph.edges || []).filter(function (edge) { return edge.chart && edge.chart.role === 'transition'; });
    var depthOf = function (path) { return path === '' ? 0 : path.split('.').length; };
    // Whether a transition of kind 'on', 'always' or 'after' is declared for this event type
    // (a delayed transition's event is xstate.after.DELAY.STATE_ID).
    var declares = function (info, type) {
      if (info.kind === 'always') return type === '';
      if (info.kind === 'after') return String(type).indexOf('xstate.after.' + info.event + '.') === 0;
      return info.event === type;
    };
    // XState's wildcards: '*' matches any event, 'a.b.*' any event whose first parts are a and b.
    var matches = function (descriptor, type) {
      if (descriptor === type || descriptor === '*') return true;
      if (descriptor.slice(-2) !== '.*') return false;
      var want = descriptor.split('.'), got = String(type).split('.');
      for (var i = 0; i < want.length; i++) {
        if (want[i] === '*') return i === want.length - 1;
        if (want[i] !== got[i]) return false;
      }
      return true;
    };
    if (last.transitions && last.transitions.length) {
      lastEdges = transitions.filter(function (edge) {
        var info = edge.chart;
        return last.transitions.some(function (taken) {
          return taken.source === info.source && (taken.targets || []).indexOf(info.target) >= 0 && declares(info, taken.event);
        });
      });
    }
    if (!lastEdges.length) {
      var byEvent = transitions.filter(function (edge) {
        var info = edge.chart;
        if (info.kind === 'always') return false;
        if (info.kind === 'after' && !declares(info, last.event)) return false;
        if (info.kind === 'on' && !matches(info.event, last.event)) return false;
        return info.source === '' || within(last.from, info.source);
      });
      // A state that declares the event itself tries no wildcard (XState's choice), else the longest wildcard first.
      var rank = function (edge) {
        var info = edge.chart;
        return depthOf(info.source) * 1000 + (info.kind !== 'on' || info.event === last.event ? 999 : info.event.length);
      };
      var best = function (edges) {
        var found = null;
        edges.forEach(function (edge) { if (!found || rank(edge) > rank(found)) found = edge; });
        return found;
      };
      var direct = best(byEvent.filter(function (edge) { return within(last.to, edge.chart.target); }));
      if (direct) lastEdges = [direct];
      else {
        byEvent.some(function (first) {
          var via = first.chart.target;
          var then = best(transitions.filter(function (edge) {
            return edge.chart.kind === 'always' && (within(via, edge.chart.source) || within(edge.chart.source, via)) && within(last.to, edge.chart.target);
          }));
          if (then) lastEdges = [first, then];
          return !!then;
        });
      }
    }
  }

  function drawNode(item) {
    var info = item.chart || { role: 'state', path: '', name: item.id, type: 'atomic', internal: [] };
    var x = item.x || 0, y = item.y || 0, w = item.width || 0, h = item.height || 0;
    if (info.role === 'initial') {
      return node('g', { 'class': 'initial', 'data-path': info.path }, [node('circle', { cx: num(x + w / 2), cy: num(y + h / 2), r: num(w / 2) })]);
    }
    var compound = item.children && item.children.length > 0;
    var classes = [info.role === 'any' ? 'any' : 'state'];
    if (info.role === 'state') {
      classes.push(info.type);
      if (info.region) classes.push('region');
      if (isActive(info.path)) classes.push('active');
      if (isCurrent(info.path)) classes.push('current');
    }
    var parts = [node('rect', { 'class': 'box', x: num(x), y: num(y), width: num(w), height: num(h), rx: info.type === 'history' ? num(h / 2) : '6' })];
    if (info.type === 'final') parts.push(node('rect', { 'class': 'inner', x: num(x + 3), y: num(y + 3), width: num(w - 6), height: num(h - 6), rx: '4' }));
    parts.push(compound
      ? node('text', { 'class': 'name', x: num(x + pad), y: num(y + 6 + nameFont) }, [], info.name)
      : node('text', { 'class': 'name', x: num(x + w / 2), y: num(y + 8 + nameFont), 'text-anchor': 'middle' }, [], info.name));
    (info.internal || []).forEach(function (line, index) {
      parts.push(node('text', { 'class': 'internal', x: num(x + pad), y: num(y + 30 + index * lineHeight + lineFont - 2) }, [], line));
    });
    (item.children || []).forEach(function (child) { parts.push(drawNode(child)); });
    var attrs = { 'class': classes.join(' '), 'data-path': info.path, 'data-name': info.name };
    if (info.role === 'state') attrs['data-current'] = isCurrent(info.path) ? 'true' : 'false';
    return node('g', attrs, parts);
  }

  function drawEdge(edge) {
    var info = edge.chart || {};
    var d = '';
    (edge.sections || []).forEach(function (section) {
      var points = [section.startPoint].concat(section.bendPoints || [], [section.endPoint]);
      d += points.map(function (p, i) { return (i === 0 ? 'M' : 'L') + num(p.x) + ' ' + num(p.y); }).join(' ') + ' ';
    });
    var isLast = lastEdges.indexOf(edge) >= 0;
    var parts = [node('path', { d: d.trim(), 'marker-end': 'url(#' + prefix + (isLast ? '-arrow-last' : '-arrow') + ')' })];
    (edge.labels || []).forEach(function (label) {
      if (label.x === undefined) return;
      parts.push(node('rect', { 'class': 'label-bg', x: num(label.x), y: num(label.y), width: num(label.width), height: num(label.height), rx: '2' }));
      var lines = label.lines && label.lines.length ? label.lines : [label.text];
      parts.push(node('text', { 'class': 'label', x: num(label.x + 3), y: num(label.y + lineFont) }, lines.map(function (line, index) {
        return node('tspan', { x: num(label.x + 3), dy: index === 0 ? '0' : String(lineHeight) }, [], line);
      })));
    });
    if (info.role === 'initial') return node('g', { 'class': 'initial-edge', 'data-target': info.target }, parts);
    return node('g', {
      'class': 'transition' + (isLast ? ' last' : ''), 'data-event': info.event, 'data-kind': info.kind,
      'data-source': info.source, 'data-target': info.target, 'data-label': info.label, 'data-last': isLast ? 'true' : 'false'
    }, parts);
  }

  function arrow(id, last) {
    return node('marker', { id: id, viewBox: '0 0 10 10', refX: '9', refY: '5', markerWidth: '8', markerHeight: '8', orient: 'auto-start-reverse' },
      [node('path', { 'class': 'arrow' + (last ? ' last' : ''), d: 'M0 0 L10 5 L0 10 z' })]);
  }

  var width = graph.width || 0, height = graph.height || 0;
  var defs = [arrow(prefix + '-arrow', false), arrow(prefix + '-arrow-last', true)];
  var children = [];
  if (options.style) children.push(node('style', {}, [], options.style));
  children.push(node('defs', {}, defs));
  children.push(node('rect', { 'class': 'bg', x: '0', y: '0', width: num(width), height: num(height) }));
  children.push(node('g', { 'class': 'states' }, (graph.children || []).map(drawNode)));
  children.push(node('g', { 'class': 'transitions' }, (graph.edges || []).map(drawEdge)));
  var attrs = { xmlns: 'http://www.w3.org/2000/svg', 'class': 'chart-graph', viewBox: '0 0 ' + num(width) + ' ' + num(height), width: num(width), height: num(height), role: 'img' };
  if (options.name) { attrs['data-chart'] = options.name; attrs['aria-label'] = 'state chart ' + options.name; }
  return node('svg', attrs, children);
}
`;
