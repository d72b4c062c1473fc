/**
 * Charts as graphs in Node: every chart of the catalog laid out by elkjs and drawn
 * (chart-graph.ts, chart-layout.ts, chart-draw-script.ts, chart-svg.ts), asserted by
 * structure: one box per state with its name, one labelled arrow per transition, nested
 * states inside their parent's box (in the DOM tree and in the geometry), the current state
 * and the last transition marked. And a machine config read back into the same chart
 * (chart-config.ts, what the live view reads from a relayed stream).
 */
import { expect } from 'chai';
import { createMachine } from 'xstate';
import { sessionMachine } from '../../src/session/session-machine.js';
import { allCharts, chartNamed } from '../../src/inspect/chart-catalog.js';
import { chartOfConfig } from '../../src/inspect/chart-config.js';
import type { ChartDrawElement } from '../../src/inspect/chart-draw-script.js';
import { chartGraph, labelLines, transitionLabel } from '../../src/inspect/chart-graph.js';
import { layoutChart } from '../../src/inspect/chart-layout.js';
import { chartEdges, chartOfMachine, chartStates, type Chart } from '../../src/inspect/chart-model.js';
import { chartSvg, drawChart } from '../../src/inspect/chart-svg.js';

/** Every element of a tree, with its ancestors. */
function walk(tree: ChartDrawElement, visit: (element: ChartDrawElement, ancestors: readonly ChartDrawElement[]) => void, ancestors: ChartDrawElement[] = []): void {
  visit(tree, ancestors);
  for (const child of tree.children ?? []) walk(child, visit, [...ancestors, tree]);
}

const classes = (element: ChartDrawElement) => (element.attrs.class ?? '').split(' ');
const hasClass = (element: ChartDrawElement, name: string) => classes(element).includes(name);

function find(tree: ChartDrawElement, predicate: (element: ChartDrawElement) => boolean): ChartDrawElement[] {
  const found: ChartDrawElement[] = [];
  walk(tree, (element) => {
    if (predicate(element)) found.push(element);
  });
  return found;
}

const stateGroups = (tree: ChartDrawElement) => find(tree, (element) => element.tag === 'g' && hasClass(element, 'state'));
const transitionGroups = (tree: ChartDrawElement) => find(tree, (element) => element.tag === 'g' && hasClass(element, 'transition'));
const box = (group: ChartDrawElement) => {
  const rect = group.children?.find((child) => child.tag === 'rect' && hasClass(child, 'box'));
  if (!rect) throw new Error(`no box in ${group.attrs['data-path']}`);
  return { x: Number(rect.attrs.x), y: Number(rect.attrs.y), w: Number(rect.attrs.width), h: Number(rect.attrs.height) };
};

/** A machine with nesting of every kind: compound, parallel with two regions, a final state. */
const nestedMachine = createMachine({
  id: 'nested',
  initial: 'idle',
  on: { reset: '.idle' },
  states: {
    idle: { on: { go: 'working' } },
    working: {
      type: 'parallel',
      on: { stop: 'stopped' },
      states: {
        fetch: { initial: 'waiting', on: { refetch: '.waiting' }, states: { waiting: { on: { data: 'got' } }, got: { type: 'final' } } },
        log: { initial: 'quiet', states: { quiet: { on: { line: { target: 'busy', guard: 'notFull' } } }, busy: { after: { 100: 'quiet' }, on: { halt: '#nested.stopped' } } } },
      },
    },
    stopped: { type: 'final' },
  },
});
const nestedChart = chartOfMachine(nestedMachine, { name: 'nested', source: 'spec', description: 'test' });

describe('charts as graphs (SVG in Node)', function () {
  this.timeout(120_000);

  describe('every chart of the catalog', () => {
    for (const chart of allCharts()) {
      it(`${chart.name}: a box per state with its name, a labelled arrow per transition, children inside their parent`, async () => {
        const laid = await layoutChart(chart);
        const tree = drawChart(laid, { active: [chart.initial] });
        expect(tree.tag).to.equal('svg');
        expect(Number(tree.attrs.width)).to.be.greaterThan(0);

        const states = chartStates(chart);
        const groups = stateGroups(tree);
        expect(groups.map((group) => group.attrs['data-path'])).to.have.members(states.map((entry) => entry.path));
        for (const group of groups) {
          const name = group.children?.find((child) => child.tag === 'text' && hasClass(child, 'name'));
          const path = group.attrs['data-path'] as string;
          const node = states.find((entry) => entry.path === path)?.node;
          expect(name?.text, path).to.equal(node?.type === 'history' ? (node.history === 'deep' ? 'H*' : 'H') : path.split('.').pop());
          const { w, h } = box(group);
          expect(w * h, path).to.be.greaterThan(0);
          if (node?.type === 'final') expect(hasClass(group, 'final'), path).to.equal(true);
        }

        const expected = chartEdges(chart).flatMap((edge) => edge.transition.targets.map((target) => ({
          source: edge.source, target, label: transitionLabel(edge.kind, edge.event, edge.transition),
        })));
        const arrows = transitionGroups(tree);
        expect(arrows.map((arrow) => ({ source: arrow.attrs['data-source'], target: arrow.attrs['data-target'], label: arrow.attrs['data-label'] }))).to.have.deep.members(expected);
        for (const arrow of arrows) {
          const path = arrow.children?.find((child) => child.tag === 'path');
          expect(path?.attrs.d, arrow.attrs['data-label']).to.match(/^M[\d.-]+ [\d.-]+( L[\d.-]+ [\d.-]+)+/u);
          const label = arrow.children?.find((child) => child.tag === 'text' && hasClass(child, 'label'));
          expect(label?.children?.map((line) => line.text).join(''), 'its lines joined').to.equal(arrow.attrs['data-label']);
          expect(Math.max(...(label?.children ?? []).map((line) => (line.text ?? '').trimEnd().length)), 'its longest line').to.be.at.most(Math.max(28, ...(arrow.attrs['data-label'] ?? '').split(/[.\s]/u).map((word) => word.length + 1)));
        }

        // Nested states sit inside their parent's group and inside its box.
        walk(tree, (element, ancestors) => {
          if (element.tag !== 'g' || !hasClass(element, 'state')) return;
          const path = element.attrs['data-path'] as string;
          if (!path.includes('.')) return;
          const parentPath = path.slice(0, path.lastIndexOf('.'));
          const parent = ancestors.filter((ancestor) => hasClass(ancestor, 'state')).pop();
          expect(parent?.attrs['data-path'], path).to.equal(parentPath);
          const inner = box(element);
          const outer = box(parent as ChartDrawElement);
          expect(inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.w <= outer.x + outer.w && inner.y + inner.h <= outer.y + outer.h, `${path} inside ${parentPath}`).to.equal(true);
        });

        // The current state: its class, on it alone.
        expect(stateGroups(tree).filter((group) => hasClass(group, 'current')).map((group) => group.attrs['data-path'])).to.deep.equal([chart.initial]);
      });
    }
  });

  it('nests compound and parallel states: regions dashed, every active state marked, only the leaves current', async () => {
    const tree = drawChart(await layoutChart(nestedChart), { active: ['working.fetch.got', 'working.log.busy'] });
    const byPath = new Map(stateGroups(tree).map((group) => [group.attrs['data-path'], group]));
    expect(classes(byPath.get('working')!)).to.include.members(['parallel', 'active']);
    expect(classes(byPath.get('working.fetch')!)).to.include.members(['compound', 'region', 'active']);
    expect(classes(byPath.get('working.fetch.got')!)).to.include.members(['final', 'current', 'active']);
    expect(classes(byPath.get('working')!)).to.not.include('current');
    expect(stateGroups(tree).filter((group) => hasClass(group, 'current')).map((group) => group.attrs['data-path'])).to.have.members(['working.fetch.got', 'working.log.busy']);
    expect(classes(byPath.get('idle')!)).to.not.include('active');
    // The guard and the delay in the labels; the root's own transition leaves its "any state" box.
    const labels = transitionGroups(tree).map((group) => group.attrs['data-label']);
    expect(labels).to.include.members(['line [notFull]', 'after 100', 'reset', 'stop', 'go', 'data']);
    expect(find(tree, (element) => element.tag === 'g' && hasClass(element, 'any')).map((group) => group.attrs['data-path'])).to.include('');
    // One initial marker per compound state (the root's too), none for the parallel one.
    expect(find(tree, (element) => hasClass(element, 'initial')).map((group) => group.attrs['data-path'])).to.have.members(['', 'working.fetch', 'working.log']);
  });

  it('highlights the last transition: the edge of the event from the state that declares it, and no other', async () => {
    const laid = await layoutChart(chartNamed('session') as Chart);
    const last = (highlight: Parameters<typeof drawChart>[1]) =>
      transitionGroups(drawChart(laid, highlight)).filter((group) => hasClass(group, 'last')).map((group) => `${group.attrs['data-source']} ${group.attrs['data-event']} ${group.attrs['data-target']}`);
    expect(last({ active: ['prompting'], last: { from: 'ready', event: 'prompt', to: 'prompting' } })).to.deep.equal(['ready prompt prompting']);
    // A restart: taken from any state (the root's transition) into recovering.
    expect(last({ active: ['recovering'], last: { from: 'prompting', event: 'agent.restarting', to: 'recovering' } })).to.deep.equal([' agent.restarting recovering']);
    expect(last({ active: ['ready'] })).to.deep.equal([]);
    expect(last({ active: ['ready'], last: { from: 'ready', event: 'no.such.event', to: 'prompting' } })).to.deep.equal([]);
  });

  it('highlights a transition that went on without an event (a microstep): the event\'s edge and the eventless one after it', async () => {
    const laid = await layoutChart(chartNamed('acp-passthrough') as Chart);
    const event = 'xstate.done.actor.0.acpPassthrough.recovering.reattaching';
    const last = transitionGroups(drawChart(laid, { active: ['ready'], last: { from: 'recovering.reattaching', event, to: 'ready' } }))
      .filter((group) => hasClass(group, 'last')).map((group) => `${group.attrs['data-source']} ${group.attrs['data-label']} ${group.attrs['data-target']}`);
    expect(last).to.have.members([`recovering.reattaching ${event} recovering.next`, 'recovering.next always [nothingToReattach] ready']);
  });

  it('writes a standalone SVG document: the style inside, text escaped', async () => {
    const svg = await chartSvg(chartNamed('supervisor') as Chart, { active: ['restarting'] });
    expect(svg.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"')).to.equal(true);
    expect(svg).to.include('<style>');
    expect(svg).to.match(/<g class="state atomic active current" data-path="restarting" data-name="restarting" data-current="true">/u);
    // Guards in words with commas and brackets stay text; nothing unescaped leaks into markup.
    const guarded = chartGraph({ initial: 'a', on: {}, states: { a: { on: { 'x<y': [{ targets: ['b'], guard: 'a & "b"' }] } }, b: { on: {} } } });
    const { graphSvg } = await import('../../src/inspect/chart-svg.js');
    const { layoutGraph } = await import('../../src/inspect/chart-layout.js');
    const text = graphSvg(await layoutGraph(guarded));
    expect(text).to.include('data-label="x&#60;y [a &#38; &#34;b&#34;]"');
    expect(text).to.match(/<tspan [^>]*>x&#60;y \[a &#38; &#34;b&#34;\]<\/tspan>/u);
    expect(text).to.not.include('x<y');
  });

  it('wraps long labels after a dot or before a guard, its lines giving the label back', () => {
    expect(labelLines('prompt')).to.deep.equal(['prompt']);
    expect(labelLines('xstate.done.actor.0.acpPassthrough.recovering.reattaching')).to.deep.equal(['xstate.done.actor.0.', 'acpPassthrough.recovering.', 'reattaching']);
    expect(labelLines('reapply.answered [lastReapplyAnsweredWithPrompt]')).to.deep.equal(['reapply.answered ', '[lastReapplyAnsweredWithPrompt]']);
  });

  describe('a machine config read back (what a relayed stream carries)', () => {
    const shape = (chart: Chart | ReturnType<typeof chartOfConfig>) => ({
      states: chartStates(chart!).map((entry) => `${entry.path}${entry.node.type ? ` (${entry.node.type})` : ''}`),
      edges: chartEdges(chart!).map((edge) => `${edge.source} ${edge.kind} ${edge.event} -> ${edge.transition.targets.join(',')}${edge.transition.guard ? ` [${edge.transition.guard}]` : ''}`),
    });

    it('the session config gives the chart of the session machine', () => {
      expect(shape(chartOfConfig(JSON.parse(JSON.stringify(sessionMachine.config))))).to.deep.equal(shape(chartNamed('session') as Chart));
    });

    it('nested, parallel, ids, relative targets, guards and delays as the machine reads them', () => {
      expect(shape(chartOfConfig(JSON.parse(JSON.stringify(nestedMachine.config))))).to.deep.equal(shape(nestedChart));
    });
  });
});
