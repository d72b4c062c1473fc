/**
 * The chart model: charts derived from XState machines (checked against the machine itself
 * and against xstate/graph's directed graph), the JSON shape read back (`parseChart`), and
 * the round trip chart → machine config → chart, nested states included.
 */
import { expect } from 'chai';
import { createMachine, type AnyStateMachine } from 'xstate';
import { toDirectedGraph, type DirectedGraphNode } from 'xstate/graph';
import { demoAgentMachine } from '../../src/acp/demo-agent.js';
import { demoTurnMachine } from '../../src/acp/demo-turn.js';
import { passthroughMachine } from '../../src/adapters/passthrough/machine.js';
import { claudeSessionMachine } from '../../src/adapters/claude/adapter.js';
import { codexSessionMachine } from '../../src/adapters/codex/adapter.js';
import { codexListMachine } from '../../src/adapters/codex/listing.js';
import { sessionMachine, type SessionStateName } from '../../src/session/session-machine.js';
import { allCharts } from '../../src/inspect/chart-catalog.js';
import {
  CHART_FORMAT,
  ChartFormatError,
  chartEdges,
  chartOfMachine,
  chartStates,
  parseChart,
  transitionsFor,
  type Chart,
  type ChartNode,
  type ChartTransition,
} from '../../src/inspect/chart-model.js';
import { kitchenSink } from './chart-support.js';

const about = { name: 'test', source: 'spec/inspect/chart-model.spec.ts', description: 'a test chart' };

/** A machine config built back from a chart: targets as absolute ids, guards and delays by name. */
function machineOf(chart: Chart): AnyStateMachine {
  const transition = (t: ChartTransition) => ({
    target: t.targets.length === 0 ? undefined : t.targets.map((path) => `#${chart.id}.${path}`),
    ...(t.guard === undefined ? {} : { guard: t.guard }),
    ...(t.reenter ? { reenter: true } : {}),
    ...(t.description === undefined ? {} : { description: t.description }),
  });
  const node = (n: ChartNode): Record<string, unknown> => ({
    ...(n.type ? { type: n.type } : {}),
    ...(n.history ? { history: n.history } : {}),
    ...(n.description ? { description: n.description } : {}),
    ...(n.initial === undefined ? {} : { initial: n.initial }),
    on: Object.fromEntries(Object.entries(n.on).map(([event, list]) => [event, list.map(transition)])),
    ...(n.always ? { always: n.always.map(transition) } : {}),
    ...(n.after ? { after: Object.fromEntries(Object.entries(n.after).map(([delay, list]) => [delay, list.map(transition)])) } : {}),
    ...(n.states ? { states: Object.fromEntries(Object.entries(n.states).map(([key, child]) => [key, node(child)])) } : {}),
  });
  return createMachine({ id: chart.id, ...node(chart) } as never);
}

/** Every edge of xstate/graph's directed graph, as `source -event-> target` (targetless edges point at their source). */
function graphEdges(graph: DirectedGraphNode): string[] {
  const own = graph.edges.map((edge) => `${edge.source.path.join('.')} -${edge.label.text}-> ${edge.target.path.join('.')}`);
  return [...own, ...graph.children.flatMap(graphEdges)];
}

describe('chart model', () => {
  describe('from a machine', () => {
    it('has every state of the session machine, and its root transitions', () => {
      const chart = chartOfMachine(sessionMachine, { ...about, name: 'session' });
      const names: SessionStateName[] = ['starting', 'ready', 'prompting', 'awaitingPermission', 'cancelling', 'recovering', 'reapplying', 'closed', 'failed'];
      expect(Object.keys(chart.states)).to.deep.equal(names);
      expect(chart).to.include({ format: CHART_FORMAT, id: 'session', kind: 'machine', initial: 'starting' });
      expect(chart.on).to.deep.equal({
        'agent.restarting': [{ targets: ['recovering'] }],
        'agent.failed': [{ targets: ['failed'] }],
        close: [{ targets: ['closed'] }],
        'setup.reported': [{ targets: [] }],
        'mode.changed': [{ targets: [] }],
        'config.changed': [{ targets: [] }],
        'config.set': [{ targets: [] }],
        'update.reported': [{ targets: [] }],
        'resume.changed': [{ targets: [] }],
        'mode.reported': [{ targets: [] }],
        'config.reported': [{ targets: [] }],
        'owner.changed': [{ targets: [] }],
      });
      expect(chart.states.closed).to.deep.equal({ type: 'final', on: {} });
    });

    it('keeps guarded alternatives in the order XState tries them, and targetless ones', () => {
      const chart = chartOfMachine(sessionMachine, about);
      expect(chart.states.prompting?.on['prompt.settled']).to.deep.equal([
        { targets: ['prompting'], guard: 'anotherInFlight' },
        { targets: ['ready'] },
      ]);
      expect(chart.states.prompting?.on.prompt).to.deep.equal([{ targets: [] }]);
      expect(chart.states.recovering?.on['agent.recovered']).to.deep.equal([{ targets: ['prompting'], guard: 'promptInFlight' }, { targets: ['ready'] }]);
    });

    it('reads eventless and delayed transitions with their guards, and root transitions, of the demo agent and its turns', () => {
      const agent = chartOfMachine(demoAgentMachine, about);
      expect(Object.keys(agent.states)).to.deep.equal(['idle', 'serving']);
      expect(agent.on['session.prompt']).to.deep.equal([{ targets: [], guard: 'sessionBusy' }, { targets: ['serving'] }]);
      expect(agent.states.serving?.on['turn.finished']).to.deep.equal([{ targets: ['idle'], guard: 'lastTurn' }, { targets: [] }]);
      const turn = chartOfMachine(demoTurnMachine, about);
      expect(turn).to.include({ id: 'demoTurn', initial: 'deciding' });
      expect(turn.on).to.deep.equal({ 'turn.cancel': [{ targets: ['cancelled'] }] });
      expect(turn.states.deciding?.always).to.deep.equal([
        { targets: ['streaming'], guard: 'noTool' },
        { targets: ['streaming'], guard: 'planMode' },
        { targets: ['streaming'], guard: 'runsWithoutAsking' },
        { targets: ['streaming'], guard: 'rejectedBefore' },
        { targets: ['awaitingPermission'] },
      ]);
      // The `after` event is not in `on`.
      expect(turn.states.streaming?.after).to.deep.equal({ word: [{ targets: ['streaming'], guard: 'wordsLeft', reenter: true }, { targets: ['done'] }] });
      expect(turn.states.streaming?.on).to.deep.equal({});
      expect(chartStates(turn).map((entry) => entry.path)).to.deep.equal(['deciding', 'awaitingPermission', 'streaming', 'done', 'cancelled']);
    });

    it('nests compound states, with their initial state', () => {
      const chart = chartOfMachine(kitchenSink, about);
      const deep = chart.states.deep as ChartNode;
      expect(deep.initial).to.equal('inner');
      expect(deep.states?.inner?.initial).to.equal('leaf');
      expect(chartStates(chart).map((entry) => entry.path)).to.include.members(['deep', 'deep.inner', 'deep.inner.leaf', 'deep.inner.other-leaf']);
    });

    it('has every edge of xstate/graph\'s directed graph, for every machine in the catalog', () => {
      const machines: Record<string, AnyStateMachine> = {
        session: sessionMachine,
        'claude-session': claudeSessionMachine,
        'codex-session': codexSessionMachine,
        'codex-list': codexListMachine,
        'demo-agent': demoAgentMachine,
        'demo-turn': demoTurnMachine,
        'acp-passthrough': passthroughMachine,
        'kitchen-sink': kitchenSink,
      };
      const charts = [...allCharts().filter((candidate) => candidate.kind === 'machine'), chartOfMachine(kitchenSink, { ...about, name: 'kitchen-sink' })];
      expect(charts.map((chart) => chart.name)).to.deep.equal(Object.keys(machines));
      for (const chart of charts) {
        const machine = machines[chart.name] as AnyStateMachine;
        const ours = new Set(chartEdges(chart).flatMap((edge) => {
          const event = edge.kind === 'after' ? `xstate.after.${edge.event}.${chart.id}${edge.source ? `.${edge.source}` : ''}` : edge.event;
          const targets = edge.transition.targets.length === 0 ? [edge.source] : edge.transition.targets;
          return edge.kind === 'always' ? [] : targets.map((target) => `${edge.source} -${event}-> ${target}`);
        }));
        for (const edge of graphEdges(toDirectedGraph(machine))) expect(ours.has(edge), `${chart.name}: ${edge}`).to.equal(true);
      }
    });

    it('refuses a state name with a dot, which a path could not tell apart', () => {
      const dotted = createMachine({ id: 'dotted', initial: 'a', states: { a: {}, 'b.c': {} } });
      expect(() => chartOfMachine(dotted, about)).to.throw('State "b.c" of "dotted"');
    });

    it('finds the transitions a state takes, its own before its ancestors\'', () => {
      const chart = chartOfMachine(sessionMachine, about);
      expect(transitionsFor(chart, 'recovering', 'agent.restarting')).to.deep.equal({ source: 'recovering', transitions: [{ targets: [] }] });
      expect(transitionsFor(chart, 'ready', 'agent.restarting')).to.deep.equal({ source: '', transitions: [{ targets: ['recovering'] }] });
      expect(transitionsFor(chart, 'ready', 'cancel')).to.equal(undefined);
      expect(transitionsFor(chartOfMachine(kitchenSink, about), 'deep.inner.leaf', 'back')?.source).to.equal('deep');
      const turn = chartOfMachine(demoTurnMachine, about);
      expect(transitionsFor(turn, 'streaming', 'turn.cancel')?.source).to.equal('');
      expect(transitionsFor(turn, 'awaitingPermission', 'turn.cancel')?.source).to.equal('awaitingPermission');
    });
  });

  describe('JSON', () => {
    it('reads every exported chart back as it was', () => {
      for (const chart of [...allCharts(), chartOfMachine(kitchenSink, about)]) {
        const back = parseChart(JSON.parse(JSON.stringify(chart)));
        expect(back, chart.name).to.deep.equal(chart);
      }
    });

    it('round-trips through a machine: chart → machine config → chart, nested states included', () => {
      for (const chart of [...allCharts(), chartOfMachine(kitchenSink, about)]) {
        const again = chartOfMachine(machineOf(chart), chart);
        expect({ ...again, kind: chart.kind }, chart.name).to.deep.equal(chart);
      }
    });

    it('refuses a chart whose target is not one of its states', () => {
      const chart = JSON.parse(JSON.stringify(allCharts()[0])) as { states: { starting: { on: Record<string, unknown> } } };
      chart.states.starting.on.ready = [{ targets: ['nowhere'] }];
      expect(() => parseChart(chart)).to.throw(ChartFormatError, 'target "nowhere" is not a state of the chart');
    });

    it('refuses a compound state whose initial state is not a child, and names the path', () => {
      const sink = JSON.parse(JSON.stringify(chartOfMachine(kitchenSink, about))) as { states: { deep: { initial: string } } };
      sink.states.deep.initial = 'thinking';
      expect(() => parseChart(sink)).to.throw(ChartFormatError, '$.states.deep.initial');
    });

    it('refuses another format, and transitions that are not arrays', () => {
      expect(() => parseChart({ ...allCharts()[0], format: 'acp-warden.chart/2' })).to.throw(ChartFormatError, '$.format');
      const chart = JSON.parse(JSON.stringify(allCharts()[0])) as { on: Record<string, unknown> };
      chart.on.close = { targets: ['closed'] };
      expect(() => parseChart(chart)).to.throw(ChartFormatError, 'expected an array of transitions');
    });
  });
});
