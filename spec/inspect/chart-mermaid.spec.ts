/**
 * The Mermaid export: every chart parses with the hand-written checker of the
 * stateDiagram-v2 subset (chart-mermaid-checker.ts), and the diagram says the same as the
 * chart: the same states under the same parents, the same initial and final states, every
 * transition as an edge (or, when it stays, as a description line of its state), nothing more.
 */
import { expect } from 'chai';
import { allCharts } from '../../src/inspect/chart-catalog.js';
import { escapeLabel, toMermaid, transitionLabel } from '../../src/inspect/chart-mermaid.js';
import { chartEdges, chartOfMachine, chartStates, type Chart, type ChartNode } from '../../src/inspect/chart-model.js';
import { parseMermaid, pathOf, type MermaidDiagram } from './chart-mermaid-checker.js';
import { kitchenSink } from './chart-support.js';

/** Checks that `diagram` draws exactly `chart`. */
function expectSameChart(chart: Chart, diagram: MermaidDiagram): void {
  const boxes = [...diagram.states.values()].filter((state) => diagram.classes.get(state.id) === 'anyState');
  const idOf = new Map<string, string>();
  for (const state of diagram.states.values()) {
    if (!boxes.includes(state)) idOf.set(pathOf(diagram, state.id).replace(/ \(history(, deep)?\)$/u, ''), state.id);
  }
  const entries = chartStates(chart);
  expect([...idOf.keys()].sort(), `${chart.name}: states`).to.deep.equal(entries.map((entry) => entry.path).sort());
  const nodeAt = (path: string): ChartNode => (path === '' ? chart : (entries.find((entry) => entry.path === path) as { node: ChartNode }).node);
  const scopeId = (path: string) => (path === '' ? '' : (idOf.get(path) as string));
  const boxOf = (path: string) => boxes.find((box) => box.parent === scopeId(path))?.id;

  // Initial and final states, scope by scope.
  for (const path of ['', ...entries.map((entry) => entry.path)]) {
    const node = nodeAt(path);
    if (node.initial !== undefined && node.type !== 'parallel') {
      expect(diagram.initials.get(scopeId(path)), `${chart.name}: initial of "${path}"`).to.equal(idOf.get(path ? `${path}.${node.initial}` : node.initial));
    }
  }
  expect([...diagram.finals].sort(), `${chart.name}: finals`).to.deep.equal(entries.filter((entry) => entry.node.type === 'final').map((entry) => idOf.get(entry.path)).sort());

  // Every transition, and nothing else.
  const edges = new Set<string>();
  const descriptions = new Set<string>();
  for (const edge of chartEdges(chart)) {
    const node = nodeAt(edge.source);
    const from = node.states ? boxOf(edge.source) : idOf.get(edge.source);
    expect(from, `${chart.name}: the source of ${edge.event} on "${edge.source}"`).to.be.a('string');
    const trigger = edge.kind === 'on' ? edge.event : edge.kind === 'always' ? 'always' : `after ${/^\d+$/u.test(edge.event) ? `${edge.event} ms` : edge.event}`;
    const label = transitionLabel(trigger, edge.transition);
    if (edge.transition.targets.length === 0) descriptions.add(`${from as string} : ${label}`);
    for (const target of edge.transition.targets) edges.add(`${from as string} --> ${idOf.get(target) as string} : ${label}`);
  }
  const drawnEdges = diagram.edges.map((edge) => `${edge.from} --> ${edge.to} : ${edge.label}`);
  expect(new Set(drawnEdges), `${chart.name}: edges`).to.deep.equal(edges);
  expect(drawnEdges, `${chart.name}: each edge once`).to.have.length(edges.size);
  const drawnDescriptions = [...diagram.states.values()].flatMap((state) => state.descriptions.map((text) => `${state.id} : ${text}`));
  expect(new Set(drawnDescriptions), `${chart.name}: transitions that stay`).to.deep.equal(descriptions);
  // A box exactly where a compound state (or the root) has transitions of its own.
  const withOwn = ['', ...entries.filter((entry) => entry.node.states).map((entry) => entry.path)].filter((path) => {
    const node = nodeAt(path);
    return Object.keys(node.on).length > 0 || node.always !== undefined || node.after !== undefined;
  });
  expect(boxes.map((box) => box.parent).sort(), `${chart.name}: any-state boxes`).to.deep.equal(withOwn.map(scopeId).sort());
}

describe('chart export: Mermaid', () => {
  for (const chart of allCharts()) {
    it(`draws the ${chart.name} chart exactly, in the checked subset of stateDiagram-v2`, () => {
      const text = toMermaid(chart);
      const diagram = parseMermaid(text);
      expect(diagram.comments[0]).to.equal(`chart ${chart.name}: ${chart.source}`);
      expectSameChart(chart, diagram);
    });
  }

  it('draws nested, parallel and history states, delays, and names Mermaid would misread', () => {
    const chart = chartOfMachine(kitchenSink, { name: 'kitchen-sink', source: 'spec/inspect/chart-support.ts', description: 'everything' });
    const text = toMermaid(chart);
    const diagram = parseMermaid(text);
    expectSameChart(chart, diagram);
    // `end` and `state` are keywords; `other-leaf` is no id; the region separator is there.
    expect(text).to.contain('state "end" as end_\n').and.contain('state "state" as state_\n').and.contain('state "other-leaf" as deep__inner__other_leaf\n');
    expect(text).to.match(/\n {4}--\n/u);
    expect(text).to.contain('any_state --> deep__inner__leaf : x #34;quoted#34; #35;1\n');
    expect(text).to.contain('state_ --> par : after soon [#123;odd#125; #60;guard#62;]\n');
    expect(text).to.contain('state_ --> end_ : after 250 ms\n');
    expect(text).to.contain('deep__any : a#58;b#59;c\n');
  });

  it('writes each edge in the innermost scope that holds both ends', () => {
    const diagram = parseMermaid(toMermaid(chartOfMachine(kitchenSink, { name: 'k', source: 's', description: 'd' })));
    const scopeOf = (from: string, to: string) => diagram.edges.find((edge) => edge.from === from && edge.to === to)?.scope;
    expect(scopeOf('par__left__off', 'par__left__on')).to.equal('par__left');
    expect(scopeOf('deep__inner__leaf', 'par__left__on')).to.equal('');
    expect(scopeOf('deep__any', 'end_')).to.equal('');
  });

  it('escapes what Mermaid reads as syntax, and nothing else', () => {
    expect(escapeLabel('session.prompt [wantsTool]')).to.equal('session.prompt [wantsTool]');
    expect(escapeLabel('a: "b"; #c {d} <e> 5%')).to.equal('a#58; #34;b#34;#59; #35;c #123;d#125; #60;e#62; 5#37;');
    expect(escapeLabel('two\nlines')).to.equal('two lines');
  });

  describe('the checker', () => {
    const valid = 'stateDiagram-v2\n  state "a" as a\n  state "b" as b {\n    state "c" as c\n    [*] --> c\n  }\n  [*] --> a\n  a --> b : go\n';

    it('accepts the subset', () => {
      const diagram = parseMermaid(valid);
      expect(diagram.edges).to.deep.equal([{ from: 'a', to: 'b', label: 'go', scope: '' }]);
      expect(diagram.initials.get('b')).to.equal('c');
    });

    const broken: Array<[string, string, string]> = [
      ['an unclosed composite', `${valid}  state "d" as d {\n`, 'unbalanced braces'],
      ['an indent that is not the scope\'s', valid.replace('  }\n', '  }\n    [*] --> a\n'), 'expected an indent of 2 spaces'],
      ['a stray closing brace', `${valid}  }\n`, 'closing brace without'],
      ['an undeclared state', valid.replace('a --> b', 'a --> z'), 'z is used before it is declared'],
      ['a raw colon in a label', valid.replace(': go', ': go: now'), 'raw character'],
      ['a description on a composite', `${valid}  b : go\n`, 'composite state (b) cannot have a description'],
      ['an edge into another scope', valid.replace('    [*] --> c\n', '    [*] --> c\n    c --> a : out\n'), 'a is not inside the scope b'],
      ['a keyword as id', valid.replace('as a\n', 'as end\n'), 'Mermaid keyword'],
      ['another header', valid.replace('stateDiagram-v2', 'stateDiagram'), 'header'],
      ['an unknown statement', `${valid}  note right of a : hi\n`, 'not a statement'],
      ['a second initial state', valid.replace('  [*] --> a\n', '  [*] --> a\n  [*] --> a\n'), 'second initial'],
    ];
    for (const [what, text, message] of broken) {
      it(`refuses ${what}`, () => {
        expect(() => parseMermaid(text)).to.throw(message);
      });
    }
  });
});
