/**
 * The live view's model: inspection events in `@statelyai/inspect`'s format folded into the
 * tree, the session charts, the pending requests and the timeline, with bounded memory.
 * Events are built here as `warden acp --inspect` sends them (see src/inspect/inspector.ts).
 */
import { expect } from 'chai';
import { sessionMachine } from '../../src/session/session-machine.js';
import { portChart, supervisorChart } from '../../src/inspect/chart-catalog.js';
import { chartOf, createLiveViewModel, type LiveActorView, type LiveViewModel } from '../../src/inspect/live-view-model.js';

const T0 = 1_800_000_000_000;

/** An `@xstate.actor` event. */
function actor(sessionId: string, name: string, parentId?: string, at = T0, definition?: unknown) {
  return { type: '@xstate.actor', sessionId, name, parentId, createdAt: String(at), _version: '0.7.2', id: null, rootId: 'x:0', definition: JSON.stringify(definition ?? { id: name }), snapshot: { status: 'active' } };
}

/** An `@xstate.snapshot` event. */
function snapshot(sessionId: string, snap: Record<string, unknown>, at = T0, type = 'x') {
  return { type: '@xstate.snapshot', sessionId, createdAt: String(at), _version: '0.7.2', id: null, rootId: 'x:0', snapshot: { status: 'active', ...snap }, event: { type } };
}

/** An `@xstate.event` event. */
function sent(sessionId: string, event: Record<string, unknown>, at = T0) {
  return { type: '@xstate.event', sessionId, createdAt: String(at), _version: '0.7.2', id: null, rootId: 'x:0', sourceId: undefined, event };
}

const supervisorContext = (name: string, strategy = 'rest_for_one', dynamic = false) => ({ name, strategy, dynamic, specs: 2, active: 2, restarts: 0, restartsInWindow: 0 });
const portContext = (pid?: number, startedAt?: number) => ({ command: ['demo-agent'], cwd: '/tmp', linesIn: 0, ...(pid === undefined ? {} : { pid, startedAt }) });

/** A host in one source: server x:0 › agent:demo x:1 › supervisor `agent` x:2 › port x:3. */
function hostWithPort(model: LiveViewModel, source = 's') {
  model.apply(source, actor('x:0', 'x:0'));
  model.apply(source, snapshot('x:0', { value: 'ready', context: { name: 'editor', sessions: 0 } }));
  model.apply(source, actor('x:1', 'agent:demo', 'x:0'));
  model.apply(source, actor('x:2', 'agent', 'x:1'));
  model.apply(source, snapshot('x:2', { value: 'running', context: supervisorContext('demo agent') }));
  model.apply(source, actor('x:3', 'port', 'x:2', T0 + 10));
  model.apply(source, snapshot('x:3', { value: 'starting', context: portContext() }, T0 + 10));
  model.apply(source, snapshot('x:3', { value: 'running', context: portContext(4242, T0 + 20) }, T0 + 20));
}

function find(nodes: readonly LiveActorView[], label: string): LiveActorView | undefined {
  for (const node of nodes) {
    if (node.label === label) return node;
    const found = find(node.children, label);
    if (found) return found;
  }
  return undefined;
}

describe('live view model', () => {
  describe('the tree', () => {
    it('nests actors under their parents, named by their id or their context, kinds told by their snapshots', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      const view = model.view(T0 + 100);
      expect(view.sources).to.have.length(1);
      const [root] = view.sources[0]?.roots ?? [];
      expect(root?.label).to.equal('editor'); // unnamed root: its context's name
      const supervisor = find(view.sources[0]?.roots ?? [], 'agent');
      expect(supervisor).to.deep.include({ kind: 'supervisor', status: 'active', state: 'running', detail: 'demo agent, rest_for_one', restarts: 0 });
      const port = find(view.sources[0]?.roots ?? [], 'port');
      expect(port).to.deep.include({ kind: 'port', pid: 4242, startedAt: T0 + 20, state: 'running', restarts: 0 });
      expect(port?.key).to.equal('s/x:3');
    });

    it('puts starts of agent processes, charts and static supervisors on the timeline, not of every actor', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      model.apply('s', actor('x:4', 'terminals', 'x:0'));
      model.apply('s', snapshot('x:4', { value: 'running', context: supervisorContext('terminals', 'one_for_one', true) }));
      const entries = model.view().timeline.map((entry) => `${entry.kind} ${entry.subject}: ${entry.text}`);
      expect(entries).to.deep.equal([
        'start editor › agent:demo › agent: started: demo agent, rest_for_one',
        'start editor › agent:demo › agent › port: started (pid 4242)',
      ]);
    });
  });

  describe('restarts', () => {
    it('a connection hub (warden serve): its clients, their role and cursor in each session, in its detail', () => {
      const model = createLiveViewModel();
      model.apply('s', actor('x:0', 'x:0'));
      const clients = [
        { connectionId: 'c1', peer: '127.0.0.1:50000', sessions: [{ sessionId: 'demo-1', role: 'controller', delivered: 42, state: 'live' }] },
        { connectionId: 'c2', peer: undefined, sessions: [{ sessionId: 'demo-1', role: 'observer', delivered: 7, state: 'behind' }] },
        { connectionId: 'c3', peer: undefined, sessions: [] },
      ];
      model.apply('s', snapshot('x:0', { context: { connections: 3, sessions: 1, clients } }));
      const [hub] = model.view(T0 + 1).sources[0]?.roots ?? [];
      expect(hub?.detail).to.equal('127.0.0.1:50000 (c1): demo-1 controller at seq 42; c2: demo-1 observer behind at seq 7; c3: no session');
    });

    it('a crashed port and its next incarnation: the exit with its reason, then the restart with its count and new pid', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      model.apply('s', snapshot('x:3', { status: 'error', error: { name: 'PortError', message: 'Agent process was killed with SIGKILL: demo-agent\n  at …' } }, T0 + 30));
      model.apply('s', actor('x:5', 'port', 'x:2', T0 + 40));
      model.apply('s', snapshot('x:5', { value: 'running', context: portContext(4343, T0 + 41) }, T0 + 41));
      const view = model.view(T0 + 50);
      const supervisor = find(view.sources[0]?.roots ?? [], 'agent');
      // The dead incarnation gives way to the new one, which keeps its exit as the last.
      expect(supervisor?.children.map((child) => child.sessionId)).to.deep.equal(['x:5']);
      expect(supervisor?.children[0]).to.deep.include({ pid: 4343, restarts: 1, status: 'active', exit: 'Agent process was killed with SIGKILL: demo-agent' });
      const [exit, restart] = view.timeline.slice(-2);
      expect(exit).to.deep.include({ kind: 'exit', severity: 'error', text: 'exited: Agent process was killed with SIGKILL: demo-agent' });
      expect(restart).to.deep.include({ kind: 'restart', severity: 'warn', subject: 'editor › agent:demo › agent › port', text: 'restarted (pid 4343): restart 1 after Agent process was killed with SIGKILL: demo-agent' });
    });

    it('counts every incarnation: a third port is restart 2', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      for (const [index, sessionId] of ['x:5', 'x:6'].entries()) {
        const previous = index === 0 ? 'x:3' : 'x:5';
        model.apply('s', snapshot(previous, { status: 'error', error: { message: 'killed' } }));
        model.apply('s', actor(sessionId, 'port', 'x:2'));
        model.apply('s', snapshot(sessionId, { value: 'running', context: portContext(5000 + index, T0) }));
      }
      expect(find(model.view().sources[0]?.roots ?? [], 'port')).to.deep.include({ sessionId: 'x:6', restarts: 2 });
    });

    it('a view started late takes past restarts and the last exit from the actor event', () => {
      const model = createLiveViewModel();
      model.apply('s', actor('x:2', 'agent'));
      model.apply('s', { ...actor('x:9', 'port', 'x:2'), restarts: 3, lastExit: 'error: PortError: hung' });
      expect(find(model.view().sources[0]?.roots ?? [], 'port')).to.deep.include({ restarts: 3, exit: 'error: PortError: hung' });
    });
  });

  describe('ends', () => {
    it('a supervisor over its restart intensity is an escalation; what it ran is shown stopped', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      model.apply('s', snapshot('x:2', { status: 'done', value: 'stopped', context: supervisorContext('demo agent'), output: { kind: 'shutdown', detail: 'reached_max_restart_intensity' } }, T0 + 60));
      const view = model.view(T0 + 70);
      expect(view.timeline.at(-1)).to.deep.include({ kind: 'escalation', severity: 'error', text: 'restart intensity exceeded: gave up (shutdown (reached_max_restart_intensity))' });
      expect(find(view.sources[0]?.roots ?? [], 'port')).to.deep.include({ status: 'stopped', endedAt: T0 + 60, exit: 'stopped with agent' });
    });

    it('a child whose own end comes after its parent\'s gets its own reason', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      model.apply('s', snapshot('x:2', { status: 'done', value: 'stopped', context: supervisorContext('demo agent'), output: { kind: 'shutdown' } }, T0 + 60));
      model.apply('s', snapshot('x:3', { status: 'done', value: 'exited', context: portContext(4242, T0), output: { kind: 'shutdown', detail: { reason: { kind: 'stopped', code: 0, signal: null } } } }, T0 + 61));
      expect(find(model.view().sources[0]?.roots ?? [], 'port')).to.deep.include({ status: 'done', exit: 'shutdown (stopped, code 0)' });
      expect(model.view().timeline.at(-1)?.text).to.equal('exited: shutdown (stopped, code 0)');
    });
  });

  describe('sessions', () => {
    it('a session machine: its chart from its definition, its state and facts, its recoveries and failure on the timeline', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      model.apply('s', actor('x:7', 'session:demo-1', 'x:0', T0, JSON.parse(JSON.stringify(sessionMachine.config))));
      model.apply('s', snapshot('x:7', { value: 'starting', context: { sessionId: 'demo-1', agent: 'demo', restarts: 0 } }));
      model.apply('s', snapshot('x:7', { value: 'ready', context: { sessionId: 'demo-1', agent: 'demo', restarts: 0 } }));
      model.apply('s', sent('x:7', { type: 'agent.restarting', restarts: 1 }));
      model.apply('s', snapshot('x:7', { value: 'recovering', context: { sessionId: 'demo-1', agent: 'demo', restarts: 1 } }));
      model.apply('s', sent('x:7', { type: 'agent.failed', reason: 'more than 3 restarts in 60000 ms' }));
      model.apply('s', snapshot('x:7', { status: 'done', value: 'failed', context: { sessionId: 'demo-1', agent: 'demo', restarts: 1, failure: 'more than 3 restarts in 60000 ms' } }));
      const view = model.view();
      expect(view.machines).to.have.length(1);
      expect(view.machines[0]).to.deep.include({ label: 'session:demo-1', chart: 'session', state: 'failed', status: 'done', sessionId: 'demo-1', agent: 'demo', restarts: 1, failure: 'more than 3 restarts in 60000 ms' });
      expect(view.charts.session?.states.map((state) => state.name)).to.include.members(['ready', 'recovering', 'failed']);
      const told = view.timeline.filter((entry) => entry.kind === 'session').map((entry) => entry.text);
      expect(told).to.deep.equal(['agent process restarting (restart 1)', 'failed: more than 3 restarts in 60000 ms']);
    });

    it('a session on a store several hosts share: its owner host and epoch from its chart, following it when it moves; nothing where the store has no owners', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      const config = JSON.parse(JSON.stringify(sessionMachine.config)) as unknown;
      const context = { sessionId: 'pg-1', agent: 'demo', restarts: 0 };
      model.apply('s', actor('x:7', 'session:pg-1', 'x:0', T0, config));
      model.apply('s', snapshot('x:7', { value: 'ready', context: { ...context, owner: { hostId: 'host-a', hostName: 'box-a', epoch: 1, here: true } } }));
      const owned = (view = model.view()) => view.machines.find((machine) => machine.sessionId === 'pg-1');
      expect(owned()?.owner).to.deep.equal({ hostId: 'host-a', hostName: 'box-a', epoch: 1, here: true });
      // Another host took it: its chart names the new owner (a fenced write tells its id and epoch), then fails.
      model.apply('s', snapshot('x:7', { value: 'ready', context: { ...context, owner: { hostId: 'host-b', epoch: 2, here: false } } }, T0 + 1, 'owner.changed'));
      expect(owned()?.owner).to.deep.equal({ hostId: 'host-b', epoch: 2, here: false });
      model.apply('s', snapshot('x:7', { status: 'done', value: 'failed', context: { ...context, owner: { hostId: 'host-b', epoch: 2, here: false }, failure: 'this host lost it: host host-b owns it now (epoch 2)' } }, T0 + 2, 'agent.failed'));
      expect(owned()).to.deep.include({ state: 'failed', status: 'done', owner: { hostId: 'host-b', epoch: 2, here: false } });
      // A lost lease learns the new owner's machine only.
      model.apply('s', actor('x:8', 'session:pg-2', 'x:0', T0, config));
      model.apply('s', snapshot('x:8', { value: 'failed', context: { sessionId: 'pg-2', agent: 'demo', owner: { hostName: 'box-b', here: false } } }));
      expect(model.view().machines.find((machine) => machine.sessionId === 'pg-2')?.owner).to.deep.equal({ hostName: 'box-b', here: false });
      // SQLite: no owner in the context, none in the view; parts that are not what they should be are left out.
      model.apply('s', actor('x:9', 'session:lite-1', 'x:0', T0, config));
      model.apply('s', snapshot('x:9', { value: 'ready', context: { sessionId: 'lite-1', agent: 'demo', restarts: 0, owner: undefined } }));
      model.apply('s', actor('x:10', 'session:odd-1', 'x:0', T0, config));
      model.apply('s', snapshot('x:10', { value: 'ready', context: { sessionId: 'odd-1', agent: 'demo', owner: { hostId: 7, epoch: '3', here: true } } }));
      model.apply('s', actor('x:11', 'session:odd-2', 'x:0', T0, config));
      model.apply('s', snapshot('x:11', { value: 'ready', context: { sessionId: 'odd-2', agent: 'demo', owner: { hostId: 'host-c', epoch: Number.NaN } } }));
      const view = model.view();
      expect(view.machines.find((machine) => machine.sessionId === 'lite-1')).not.to.have.property('owner');
      expect(view.machines.find((machine) => machine.sessionId === 'odd-1')).not.to.have.property('owner');
      expect(view.machines.find((machine) => machine.sessionId === 'odd-2')?.owner).to.deep.equal({ hostId: 'host-c', here: true });
      // And the view is JSON: what /state.json and /events send.
      expect(JSON.parse(JSON.stringify(view)).machines.find((machine: { sessionId?: string }) => machine.sessionId === 'pg-1').owner).to.deep.equal({ hostId: 'host-b', epoch: 2, here: false });
    });

    it('the session chart: every state, final ones marked, where each event leads, the transitions from anywhere', () => {
      const chart = chartOf(sessionMachine.config);
      expect(chart?.id).to.equal('session');
      expect(chart?.initial).to.equal('starting');
      expect(chart?.states.map((state) => state.name)).to.deep.equal(['starting', 'ready', 'prompting', 'awaitingPermission', 'cancelling', 'recovering', 'reapplying', 'closed', 'failed']);
      expect(chart?.states.filter((state) => state.final).map((state) => state.name)).to.deep.equal(['closed', 'failed']);
      expect(chart?.states.find((state) => state.name === 'ready')?.transitions).to.deep.equal([{ event: 'prompt', target: 'prompting' }]);
      // Both guarded branches of prompt.settled, each once; actions-only transitions left out.
      expect(chart?.states.find((state) => state.name === 'prompting')?.transitions).to.deep.equal([
        { event: 'permission.asked', target: 'awaitingPermission' },
        { event: 'cancel', target: 'cancelling' },
        { event: 'prompt.settled', target: 'prompting' },
        { event: 'prompt.settled', target: 'ready' },
      ]);
      expect(chart?.anywhere).to.deep.equal([
        { event: 'agent.restarting', target: 'recovering' },
        { event: 'agent.failed', target: 'failed' },
        { event: 'close', target: 'closed' },
      ]);
    });

    it('follows the machine on its graph: the states it is in, the transition it took last (a restart lights recovering)', () => {
      const model = createLiveViewModel();
      model.apply('s', actor('x:7', 'session:demo-1', undefined, T0, JSON.parse(JSON.stringify(sessionMachine.config))));
      const machine = () => model.view().machines[0];
      expect(machine()).to.deep.include({ active: ['starting'] });
      expect(machine()?.last).to.equal(undefined);
      model.apply('s', snapshot('x:7', { value: 'starting', context: { sessionId: 'demo-1' } }, T0, 'xstate.init'));
      model.apply('s', snapshot('x:7', { value: 'ready', context: { sessionId: 'demo-1' } }, T0 + 1, 'ready'));
      expect(machine()).to.deep.include({ active: ['ready'], last: { from: 'starting', event: 'ready', to: 'ready', at: T0 + 1 } });
      // An event that changes nothing leaves the last transition as it was.
      model.apply('s', snapshot('x:7', { value: 'ready', context: { sessionId: 'demo-1' } }, T0 + 2, 'mode.changed'));
      expect(machine()?.last).to.deep.include({ event: 'ready' });
      model.apply('s', snapshot('x:7', { value: 'recovering', context: { sessionId: 'demo-1' } }, T0 + 3, 'agent.restarting'));
      expect(machine()).to.deep.include({ active: ['recovering'], last: { from: 'ready', event: 'agent.restarting', to: 'recovering', at: T0 + 3 } });
      // Nested and parallel values: every leaf, as paths.
      model.apply('s', snapshot('x:7', { value: { working: { fetch: 'got', log: 'busy' } }, context: { sessionId: 'demo-1' } }, T0 + 4, 'go'));
      expect(machine()).to.deep.include({ active: ['working.fetch.got', 'working.log.busy'], last: { from: 'recovering', event: 'go', to: 'working.fetch.got', at: T0 + 4 } });
      // The graph of the whole chart, for the page to lay out: asked apart, once (it never changes).
      expect(model.view().charts.session).to.not.have.property('graph');
      expect(model.graph('nothing')).to.equal(undefined);
      const graph = model.graph('session');
      expect(graph?.children.filter((node) => node.chart?.role === 'state').map((node) => node.chart?.path)).to.deep.equal(['starting', 'ready', 'prompting', 'awaitingPermission', 'cancelling', 'recovering', 'reapplying', 'closed', 'failed']);
      expect(graph?.edges.some((edge) => edge.chart.source === '' && edge.chart.event === 'agent.restarting' && edge.chart.target === 'recovering')).to.equal(true);
    });

    it('ports and supervisors on their declared charts: their phase current, the transition last taken lit, after the state machines', () => {
      const model = createLiveViewModel({ machines: [sessionMachine.config], declared: { port: portChart, supervisor: supervisorChart } });
      model.apply('s', actor('x:2', 'agent', undefined));
      model.apply('s', snapshot('x:2', { value: 'running', context: supervisorContext('demo agent') }));
      model.apply('s', actor('x:7', 'session:demo-1', 'x:2', T0, JSON.parse(JSON.stringify(sessionMachine.config))));
      model.apply('s', actor('x:3', 'port', 'x:2', T0 + 10));
      model.apply('s', snapshot('x:3', { value: 'starting', context: portContext() }, T0 + 10, 'xstate.init'));
      model.apply('s', snapshot('x:3', { value: 'running', context: portContext(4242, T0 + 20) }, T0 + 20, 'port.internal.spawned'));
      const { machines, charts } = model.view();
      expect(machines.map((row) => [row.kind, row.label, row.chart, row.state])).to.deep.equal([
        ['machine', 'session:demo-1', 'session', 'starting'],
        ['supervisor', 'agent', 'declared:supervisor', 'running'],
        ['port', 'port', 'declared:port', 'running'],
      ]);
      expect(machines[2]).to.deep.include({ active: ['running'], last: { from: 'starting', event: 'port.internal.spawned', to: 'running', at: T0 + 20 } });
      expect(charts['declared:port']?.states.map((state) => state.name)).to.deep.equal(['starting', 'running', 'stopping', 'exited']);
      expect(model.graph('declared:supervisor')?.edges.some((edge) => edge.chart.source === 'running' && edge.chart.target === 'restarting')).to.equal(true);
      // Without declared charts they stay in the tree only.
      const plain = createLiveViewModel();
      hostWithPort(plain);
      expect(plain.view().machines).to.deep.equal([]);
    });

    it('a chart known ahead is drawn even when the definition did not come', () => {
      const model = createLiveViewModel({ machines: [sessionMachine.config] });
      model.apply('s', actor('x:7', 'session:demo-1', undefined, T0, { id: 'session', states: {} }));
      model.apply('s', snapshot('x:7', { value: 'ready', context: { sessionId: 'demo-1' } }));
      expect(model.view().charts.session?.states).to.have.length(9);
    });
  });

  describe('pending requests', () => {
    it('lists requests not answered, oldest first, with the connection they went out on; an answered one is gone', () => {
      const model = createLiveViewModel();
      hostWithPort(model);
      model.apply('s', actor('x:8', 'connection', 'x:0'));
      model.apply('s', snapshot('x:8', { value: 'open', context: { name: 'agent' } }));
      model.apply('s', actor('x:9', 'request-2', 'x:8'));
      model.apply('s', snapshot('x:9', { value: 'sent', context: { id: 2, method: 'session/prompt', sentAt: T0 + 5 } }));
      model.apply('s', actor('x:10', 'request-1', 'x:8'));
      model.apply('s', snapshot('x:10', { value: 'sent', context: { id: 1, method: 'initialize', sentAt: T0 + 1 } }));
      let view = model.view();
      expect(view.pending.map((request) => [request.method, request.requestId, request.sentAt, request.via])).to.deep.equal([
        ['initialize', '1', T0 + 1, 'editor › connection'],
        ['session/prompt', '2', T0 + 5, 'editor › connection'],
      ]);
      // Requests are not drawn in the tree.
      expect(find(view.sources[0]?.roots ?? [], 'request-1')).to.equal(undefined);
      model.apply('s', snapshot('x:10', { status: 'done', value: 'settled', context: { id: 1, method: 'initialize', sentAt: T0 + 1 } }));
      view = model.view();
      expect(view.pending.map((request) => request.method)).to.deep.equal(['session/prompt']);
    });
  });

  describe('sources and memory', () => {
    it('two streams with the same session ids stay apart; a closed stream is shown stopped, then dropped', () => {
      const model = createLiveViewModel({ retainEndedMs: 1000 });
      model.open('a', 'stream 1', T0);
      model.open('b', 'stream 2', T0);
      hostWithPort(model, 'a');
      hostWithPort(model, 'b');
      expect(model.view().sources.map((source) => find(source.roots, 'port')?.key)).to.deep.equal(['a/x:3', 'b/x:3']);
      model.close('a', T0 + 100);
      let view = model.view();
      expect(view.sources[0]).to.deep.include({ connected: false });
      expect(find(view.sources[0]?.roots ?? [], 'port')?.status).to.equal('stopped');
      expect(view.timeline.at(-1)).to.deep.include({ kind: 'stream', text: 'disconnected', subject: 'stream 1' });
      model.prune(T0 + 500);
      expect(model.view().sources).to.have.length(2);
      model.prune(T0 + 1200);
      view = model.view();
      expect(view.sources.map((source) => source.id)).to.deep.equal(['b']);
      expect(find(view.sources[0]?.roots ?? [], 'port')?.status).to.equal('active');
    });

    it('keeps the last maxTimeline entries, at most maxActors actors, and counts what it did not keep', () => {
      const model = createLiveViewModel({ maxTimeline: 5, maxActors: 10 });
      model.apply('s', actor('x:0', 'root'));
      for (let index = 1; index <= 20; index++) {
        model.apply('s', actor(`x:${index}`, `port-${index}`, 'x:0'));
        model.apply('s', snapshot(`x:${index}`, { value: 'running', context: portContext(index, T0) }));
      }
      model.apply('s', 'not an event');
      model.apply('s', { type: '@something.else', sessionId: 'x:1' });
      const view = model.view();
      expect(view.timeline).to.have.length(5);
      expect(view.timeline.at(-1)?.text).to.equal('started (pid 9)');
      expect(view.sources[0]?.roots[0]?.children).to.have.length(9);
      expect(view.dropped).to.deep.equal({ actors: 11, events: 2 });
    });

    it('drops ended actors after retainEndedMs, and the oldest ended ones at once when near maxActors', () => {
      const model = createLiveViewModel({ retainEndedMs: 10_000, maxActors: 20 });
      model.apply('s', actor('x:0', 'root'));
      for (let index = 1; index <= 19; index++) {
        model.apply('s', actor(`x:${index}`, `worker-${index}`, 'x:0'));
        if (index <= 10) model.apply('s', snapshot(`x:${index}`, { status: 'done', output: { kind: 'normal' } }, T0 + index));
      }
      const version = model.version;
      model.prune(T0 + 100);
      expect(model.version).to.not.equal(version);
      // 20 actors, budget 90 % of 20: the two oldest ended ones go now.
      expect(model.view().sources[0]?.roots[0]?.children.map((child) => child.label).slice(0, 2)).to.deep.equal(['worker-3', 'worker-4']);
      model.prune(T0 + 20_000);
      expect(model.view().sources[0]?.roots[0]?.children).to.have.length(9);
    });

    it('an actor seen first through a snapshot (a stream that reconnected) is shown as a root', () => {
      const model = createLiveViewModel();
      model.apply('s', snapshot('x:40', { value: 'running', context: portContext(77, T0) }));
      expect(model.view().sources[0]?.roots[0]).to.deep.include({ key: 's/x:40', kind: 'port', pid: 77 });
      // An end of an actor never seen is not made up.
      model.apply('s', snapshot('x:41', { status: 'done', output: { kind: 'normal' } }));
      expect(model.view().sources[0]?.roots).to.have.length(1);
    });
  });
});
