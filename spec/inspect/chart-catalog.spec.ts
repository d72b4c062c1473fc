/**
 * Keeping the declared charts honest: each custom logic is run for real (a port against
 * spec/support/fake-cli.mjs, supervisors with the test workers, a connection and its pending
 * requests over an in-memory pair, the ACP agent server and client talking to each other),
 * its snapshots are recorded from XState's inspection stream, and every phase it shows and
 * every phase change (from, event, to) must be declared in its chart. Each group also checks
 * that its runs went through the transitions that matter, so that a scenario that stopped
 * exercising them fails too. The declarations are typed against the logics' phase and event
 * types; the type tests at the end show that a phase left out or an unknown event is refused.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor, SimulatedClock, type AnyActorLogic, type AnyActorRef } from 'xstate';
import { agentClientLogic, initialize, newSession, prompt } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { demoAgent } from '../../src/acp/demo-agent.js';
import {
  agentClientChart,
  agentServerChart,
  allCharts,
  chartNamed,
  chartNames,
  connectionChart,
  declareChart,
  pendingRequestChart,
  portChart,
  supervisorChart,
} from '../../src/inspect/chart-catalog.js';
import type { Chart } from '../../src/inspect/chart-model.js';
import { cancelRequest, closeConnection, connectionLogic, createMemoryTransportPair, type MemoryTransport, respond, respondError, RpcError, sendRequest, type ConnectionEmitted } from '../../src/jsonrpc/index.js';
import { pendingRequestLogic } from '../../src/jsonrpc/pending-request.js';
import { portLogic, type PortInput } from '../../src/port/port.js';
import { createSupervisor, SHUTDOWN_EVENT, startChild, terminateChild, whichChildren, type ChildSpec, type SupervisorOptions } from '../../src/supervision/index.js';
import { cannotStart, trappingWorker, worker } from '../support/children.js';
import { waitUntil } from '../support/processes.js';
import { checkTrace, traceRecorder, type TraceStep } from './chart-support.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Checks every trace against the chart; returns the union of the transitions seen. */
function checkAll(chart: Chart, traces: ReadonlyArray<readonly [string, readonly TraceStep[]]>): Set<string> {
  const seen = new Set<string>();
  for (const [what, steps] of traces) {
    expect(steps.length, `${what}: snapshots recorded`).to.be.greaterThan(0);
    for (const transition of checkTrace(chart, steps, what)) seen.add(transition);
  }
  return seen;
}

describe('chart catalog', () => {
  it('has a unique name per chart, and finds each by name', () => {
    expect(new Set(chartNames()).size).to.equal(allCharts().length);
    expect(chartNames().slice(0, 4)).to.deep.equal(['session', 'port', 'pending-request', 'supervisor']);
    for (const name of chartNames()) expect(chartNamed(name)?.name).to.equal(name);
    expect(chartNamed('nope')).to.equal(undefined);
  });

  describe('the port chart, against real processes', function () {
    this.timeout(30_000);

    /** Runs a port against the fake CLI until it ends; returns its snapshots. */
    async function run(what: string, input: Partial<PortInput>, drive: (port: AnyActorRef) => Promise<void> | void = () => {}): Promise<[string, TraceStep[]]> {
      const recorder = traceRecorder();
      const port = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli], ...input }, inspect: recorder.inspect });
      const ended = new Promise<void>((resolve) => port.subscribe({ complete: () => resolve(), error: () => resolve() }));
      port.start();
      if (port.getSnapshot().status === 'active') await drive(port);
      await ended;
      const steps = recorder.steps(port);
      // A start that throws leaves no inspected snapshot: take the one it ended with.
      if (steps.length === 0) steps.push({ event: 'xstate.init', value: port.getSnapshot().value, status: port.getSnapshot().status });
      return [what, steps];
    }
    const request = (port: AnyActorRef, method: string, params: unknown = {}) => port.send({ type: 'port.write', message: { jsonrpc: '2.0', id: 1, method, params } });
    const firstMessage = (port: AnyActorRef) => new Promise<void>((resolve) => {
      const subscription = port.on('port.message', () => {
        subscription.unsubscribe();
        resolve();
      });
    });

    it('declares every phase and phase change a port goes through', async () => {
      const traces = [
        await run('asked to stop', {}, async (port) => {
          const answered = firstMessage(port);
          request(port, 'echo', { hello: 1 });
          await answered;
          port.send({ type: 'port.busy', busy: true });
          port.send({ type: 'port.heartbeat' });
          port.send({ type: 'port.injectLine', line: '{"jsonrpc":"2.0","method":"injected"}' });
          port.send({ type: SHUTDOWN_EVENT });
        }),
        await run('crashes', {}, (port) => request(port, 'crash')),
        await run('exits 0 on its own', {}, (port) => request(port, 'exit', { code: 0 })),
        await run('hangs while busy', { watchdog: { idleMs: 150, startupMs: 150 } }, (port) => {
          port.send({ type: 'port.busy', busy: true });
          request(port, 'hang');
        }),
        await run('ignores end of input', { args: [fakeCli, '--ignore-eof'], shutdown: { stdinGraceMs: 50, killAfterMs: 100 } }, async (port) => {
          await waitUntil(() => port.getSnapshot().value === 'running', 'running');
          port.send({ type: SHUTDOWN_EVENT });
        }),
        await run('stopped at once', {}, async (port) => {
          await waitUntil(() => port.getSnapshot().value === 'running', 'running');
          port.stop();
        }),
        await run('prints a line over the limit', { maxLineBytes: 1024 }, (port) => request(port, 'huge', { bytes: 8192 })),
        await run('closes its input', { command: '/bin/sh', args: ['-c', 'exec 0<&-; exec "$0" "$@"', process.execPath, fakeCli, '--ignore-eof', '--banner', '{"ready":true}'], shutdown: { stdinGraceMs: 50, killAfterMs: 100 } }, async (port) => {
          await firstMessage(port);
          await waitUntil(() => {
            port.send({ type: 'port.write', line: '{"jsonrpc":"2.0","method":"ping"}' });
            return port.getSnapshot().context.stdinClosed;
          }, 'stdin closed');
          port.send({ type: SHUTDOWN_EVENT });
        }),
        await run('cannot be spawned', { command: '/nonexistent/agent-cli' }),
      ];
      const seen = checkAll(portChart, traces);
      expect(traces.at(-1)?.[1].map((step) => `${step.value}/${step.status}`), 'a start that fails ends while starting').to.deep.equal(['starting/error']);
      expect([...seen]).to.include.members([
        'starting -port.internal.spawned-> running',
        'running -supervisor.shutdown-> stopping',
        'stopping -port.internal.closed-> exited',
        'stopping -port.internal.shutdownStep-> stopping',
        'running -port.internal.closed-> exited',
        'running -xstate.stop-> exited',
        'running -port.internal.watchdog-> running',
        'running -port.internal.kill-> running',
        'running -port.internal.stdinClosed-> running',
        'running -port.write-> running',
        'running -port.heartbeat-> running',
        'running -port.injectLine-> running',
      ]);
    });
  });

  describe('the supervisor chart', () => {
    /** Runs a supervisor on a simulated clock through `drive`; returns its snapshots. */
    async function run(what: string, options: SupervisorOptions, drive: (sup: AnyActorRef, clock: SimulatedClock) => Promise<void> | void): Promise<[string, TraceStep[]]> {
      const recorder = traceRecorder();
      const clock = new SimulatedClock();
      const sup = createActor(createSupervisor(options), { clock, inspect: recorder.inspect, id: 'sup' });
      sup.subscribe({ error: () => {} });
      sup.start();
      await drive(sup, clock);
      await settle();
      return [what, recorder.steps(sup)];
    }
    const crash = (sup: AnyActorRef, id: string) => whichChildren(sup).find((row) => row.id === id)?.ref?.send({ type: 'crash' });
    const plain = (id: string): ChildSpec => ({ id, start: { logic: worker } });
    const trapping = (id: string, stopDelay: number | 'never', shutdown = 10_000): ChildSpec => ({ id, start: { logic: trappingWorker, input: { stopDelay } }, shutdown });

    it('declares every phase and phase change its snapshots show', async () => {
      const traces = [
        await run('one_for_one restarts at once, then stops with nothing to wait for', { strategy: 'one_for_one', children: [plain('a'), plain('b')] }, (sup) => {
          crash(sup, 'a');
          sup.send({ type: SHUTDOWN_EVENT });
        }),
        await run('one_for_all stops a trapping sibling before the restart', { strategy: 'one_for_all', children: [plain('a'), trapping('b', 100)] }, (sup, clock) => {
          crash(sup, 'a');
          clock.increment(100);
          sup.send({ type: SHUTDOWN_EVENT });
          clock.increment(100);
        }),
        await run('over intensity with a trapping child left', { strategy: 'one_for_one', intensity: 1, period: 5000, children: [plain('a'), trapping('b', 50)] }, (sup, clock) => {
          crash(sup, 'a');
          crash(sup, 'a');
          clock.increment(50);
        }),
        await run('over intensity with nothing left to stop', { strategy: 'one_for_one', intensity: 0, period: 5000, children: [plain('a')] }, (sup) => {
          crash(sup, 'a');
        }),
        await run('a child that ignores its shutdown is killed', { children: [trapping('a', 'never', 50)] }, (sup, clock) => {
          sup.send({ type: SHUTDOWN_EVENT });
          clock.increment(50);
        }),
        await run('a shutdown in the middle of a restart', { strategy: 'one_for_all', children: [plain('a'), trapping('b', 100)] }, (sup, clock) => {
          crash(sup, 'a');
          sup.send({ type: SHUTDOWN_EVENT });
          clock.increment(100);
        }),
        await run('a child that cannot start at init', { children: [trapping('a', 20), { id: 'b', start: { logic: cannotStart as AnyActorLogic } }] }, async (_sup, clock) => {
          await settle();
          clock.increment(20);
        }),
        await run('a delayed restart', { strategy: 'one_for_one', children: [{ ...plain('a'), backoff: { minDelay: 100, maxDelay: 100, jitter: 0 } }] }, (sup, clock) => {
          crash(sup, 'a');
          clock.increment(100);
          sup.stop();
        }),
        await run('commands while running', { strategy: 'one_for_one', children: [trapping('a', 30)] }, async (sup, clock) => {
          const started = startChild(sup, plain('b'));
          await started;
          const terminated = terminateChild(sup, 'a');
          clock.increment(30);
          await terminated;
          sup.stop();
        }),
      ];
      const seen = checkAll(supervisorChart, traces);
      expect([...seen]).to.include.members([
        'running -supervisor.child.exit-> running',
        'running -supervisor.child.exit-> restarting',
        'restarting -supervisor.child.exit-> running',
        'running -supervisor.child.exit-> shuttingDown',
        'running -supervisor.child.exit-> stopped',
        'shuttingDown -supervisor.child.exit-> stopped',
        'running -supervisor.shutdown-> stopped',
        'running -supervisor.shutdown-> shuttingDown',
        'shuttingDown -supervisor.child.shutdownTimeout-> stopped',
        'restarting -supervisor.shutdown-> shuttingDown',
        'running -supervisor.init.failed-> shuttingDown',
        'running -supervisor.child.restart-> running',
        'running -xstate.stop-> stopped',
        'running -supervisor.startChild-> running',
        'running -supervisor.terminateChild-> running',
      ]);
    });
  });

  describe('the connection and pending-request charts', () => {
    it('declare every phase and phase change of a connection and of each request it sends', async () => {
      const recorder = traceRecorder();
      const runs: Array<[string, AnyActorRef]> = [];
      const open = (what: string, answer: (message: { id: number; method: string }, peer: AnyActorRef) => void) => {
        const [ours, theirs] = createMemoryTransportPair();
        const connection = createActor(connectionLogic, { input: { transport: ours }, inspect: recorder.inspect }).start();
        const peer = createActor(connectionLogic, { input: { transport: theirs } }).start();
        peer.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => answer({ id: event.id as number, method: event.method }, peer));
        runs.push([what, connection]);
        return { connection, peer };
      };
      const outcome = (promise: Promise<unknown>) => promise.then(() => 'answered', (error: RpcError) => error.failure ?? 'error');

      const a = open('answered, failed, timed out, cancelled', (message, peer) => {
        if (message.method === 'ok') respond(peer, message.id, { ok: true });
        if (message.method === 'bad') respondError(peer, message.id, RpcError.invalidParams('no'));
      });
      const results = [await outcome(sendRequest(a.connection, 'ok')), await outcome(sendRequest(a.connection, 'bad'))];
      results.push(await outcome(sendRequest(a.connection, 'slow', {}, { timeout: 30 })));
      const abort = new AbortController();
      const cancelled = outcome(sendRequest(a.connection, 'slow', {}, { signal: abort.signal }));
      abort.abort();
      results.push(await cancelled);
      const byId = outcome(sendRequest(a.connection, 'slow'));
      await settle();
      cancelRequest(a.connection, 5);
      results.push(await byId);
      closeConnection(a.connection);

      // The peer's transport closes under it (a process that died), nothing answered.
      const [ours, theirs] = createMemoryTransportPair();
      theirs.start({ message: () => {}, malformed: () => {}, closed: () => {} });
      const b = createActor(connectionLogic, { input: { transport: ours }, inspect: recorder.inspect }).start();
      runs.push(['the peer goes away', b]);
      const lost = outcome(sendRequest(b, 'slow'));
      await settle();
      theirs.close();
      results.push(await lost);

      const c = open('shut down', () => {});
      c.connection.send({ type: SHUTDOWN_EVENT });
      const d = open('stopped', () => {});
      d.connection.stop();
      await settle();

      expect(results).to.deep.equal(['answered', 'error_response', 'timed_out', 'cancelled', 'cancelled', 'peer_lost']);
      const connections = checkAll(connectionChart, runs.map(([what, ref]) => [what, recorder.steps(ref)] as const));
      expect([...connections]).to.include.members(['open -rpc.close-> closed', 'open -rpc.peerLost-> closed', `open -${SHUTDOWN_EVENT}-> closed`, 'open -xstate.stop-> closed', 'open -rpc.timeout-> open']);
      const requests = recorder.actors().filter((ref) => (ref as unknown as { logic: unknown }).logic === pendingRequestLogic);
      expect(requests).to.have.length(6);
      const settled = checkAll(pendingRequestChart, requests.map((ref) => [`request ${ref.id}`, recorder.steps(ref)] as const));
      expect([...settled].sort()).to.deep.equal(['answered', 'cancelled', 'failed', 'peerLost', 'timedOut'].map((to) => `sent -request.settle-> ${to}`));
    });
  });

  describe('the ACP agent server and client charts', () => {
    it('declare every phase and phase change of both sides of a session', async () => {
      const recorder = traceRecorder();
      const pair = () => {
        const [editorSide, agentSide] = createMemoryTransportPair();
        const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: demoAgent({ wordDelayMs: 1 }) }, inspect: recorder.inspect }).start();
        const client = createActor(agentClientLogic, { input: { transport: editorSide }, inspect: recorder.inspect }).start();
        return { server, client };
      };
      const done = (ref: AnyActorRef) => waitUntil(() => ref.getSnapshot().status !== 'active', `${ref.id} ended`);

      // A whole session, then the client goes away.
      const first = pair();
      await initialize(first.client);
      const { sessionId } = await newSession(first.client, { cwd: process.cwd() });
      const run = prompt(first.client, sessionId, [{ type: 'text', text: 'hello' }]);
      expect(await run.result).to.deep.include({ stopReason: 'end_turn' });
      first.client.send({ type: SHUTDOWN_EVENT });
      await done(first.server);

      // The editor leaves before initialize; a server shut down; both stopped at once.
      const second = pair();
      second.client.send({ type: 'client.closed', reason: { message: 'gone' } });
      await done(second.server);
      const third = pair();
      await initialize(third.client);
      third.server.send({ type: SHUTDOWN_EVENT });
      await done(third.server);
      await done(third.client);
      const fourth = pair();
      fourth.server.stop();
      fourth.client.stop();

      const servers = checkAll(agentServerChart, [first, second, third, fourth].map((side, index) => [`server ${index + 1}`, recorder.steps(side.server)] as const));
      const clients = checkAll(agentClientChart, [first, second, third, fourth].map((side, index) => [`client ${index + 1}`, recorder.steps(side.client)] as const));
      expect([...servers]).to.include.members([
        'awaitingInitialize -acp.sync-> ready',
        'ready -acp.closed-> closing',
        'closing -acp.finish-> closed',
        'awaitingInitialize -acp.closed-> closing',
        `ready -${SHUTDOWN_EVENT}-> closing`,
        'awaitingInitialize -xstate.stop-> closed',
      ]);
      expect([...clients]).to.include.members([
        'connected -client.sync-> ready',
        `ready -${SHUTDOWN_EVENT}-> closed`,
        'connected -client.closed-> closed',
        'ready -client.closed-> closed',
        'connected -xstate.stop-> closed',
      ]);
    });

    it('declare the draining phase: the editor\'s input ends while a prompt runs, and the prompt still ends end_turn', async () => {
      const recorder = traceRecorder();
      const [editorSide, agentSide] = createMemoryTransportPair();
      const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: demoAgent({ wordDelayMs: 1 }) }, inspect: recorder.inspect }).start();
      const client = createActor(agentClientLogic, { input: { transport: editorSide }, inspect: recorder.inspect }).start();
      await initialize(client);
      const { sessionId } = await newSession(client, { cwd: process.cwd() });
      const run = prompt(client, sessionId, [{ type: 'text', text: 'hello' }]);
      (editorSide as MemoryTransport).endInput();
      expect(await run.result).to.deep.include({ stopReason: 'end_turn' });
      await waitUntil(() => server.getSnapshot().status !== 'active', 'the server to end');
      client.stop();
      const servers = checkAll(agentServerChart, [['server', recorder.steps(server)] as const]);
      expect([...servers]).to.include.members(['ready -acp.inputEnded-> draining', 'draining -acp.drained-> closing', 'closing -acp.finish-> closed']);
      const connections = recorder.actors().filter((ref) => (ref as unknown as { logic: unknown }).logic === connectionLogic);
      const transitions = checkAll(connectionChart, connections.map((ref) => [`connection ${ref.id}`, recorder.steps(ref)] as const));
      expect([...transitions]).to.include('open -rpc.inputEnded-> open');
    });
  });

  describe('declarations are typed against their logic', () => {
    it('refuses a phase left out, an unknown phase, an unknown event and an unknown target', () => {
      type Phase = 'on' | 'off';
      type Event = 'flip' | `xstate.${string}`;
      const about = { name: 'switch', id: 'switch', source: 'spec', description: 'a switch' };
      const ok = declareChart<Phase, Event>({ ...about, initial: 'off', states: { off: { on: { flip: 'on' } }, on: { on: { flip: 'off', 'xstate.stop': 'off' } } } });
      expect(ok.states.on?.on.flip).to.deep.equal([{ targets: ['off'] }]);
      // @ts-expect-error: the phase `on` is left out
      declareChart<Phase, Event>({ ...about, initial: 'off', states: { off: {} } });
      // @ts-expect-error: `broken` is no phase
      declareChart<Phase, Event>({ ...about, initial: 'off', states: { off: {}, on: {}, broken: {} } });
      // @ts-expect-error: `flop` is no event of the logic
      declareChart<Phase, Event>({ ...about, initial: 'off', states: { off: { on: { flop: 'on' } }, on: {} } });
      // @ts-expect-error: `dimmed` is no phase to go to
      declareChart<Phase, Event>({ ...about, initial: 'off', states: { off: { on: { flip: 'dimmed' } }, on: {} } });
      // @ts-expect-error: the initial state must be a phase
      declareChart<Phase, Event>({ ...about, initial: 'dimmed', states: { off: {}, on: {} } });
    });
  });
});
