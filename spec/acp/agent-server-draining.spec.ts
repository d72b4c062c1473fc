/**
 * The ACP agent server when the editor's input ends (EOF) but it still reads: phase
 * `draining`. In process, over a memory pair whose editor end half-closes, the server's clock
 * simulated (the drain timeout and its grace are XState timers).
 */
import { expect } from 'chai';
import { createActor, enqueueActions, setup, SimulatedClock, type AnyActorLogic } from 'xstate';
import { agentServerLogic, drainGaveUpMessage, handlerOf } from '../../src/acp/agent-server.js';
import type { AgentHandlerEvent, AgentHandlerOutput, NativeAgent } from '../../src/protocol/native-agent.js';
import { connectionLogic, createMemoryTransportPair, RpcError, sendRequest, type MemoryTransport } from '../../src/jsonrpc/index.js';

const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

type Script = Partial<Record<string, (event: AgentHandlerEvent) => AgentHandlerOutput[]>>;

/** A handler machine: event type → what it emits; every event it gets is kept in `seen`. */
function scriptedAgent(script: Script, seen: AgentHandlerEvent[], extra: Partial<NativeAgent> = {}): NativeAgent {
  const on: Record<string, unknown> = {};
  for (const type of ['initialize', 'session.new', 'session.prompt', 'session.cancel', 'ext.request', 'client.response', 'client.error', 'test.go']) {
    on[type] = {
      actions: enqueueActions(({ event, enqueue }: { event: AgentHandlerEvent; enqueue: { emit: (output: AgentHandlerOutput) => void } }) => {
        seen.push(event);
        for (const output of script[type]?.(event) ?? []) enqueue.emit(output);
      }),
    };
  }
  const logic = setup({ types: {} as { events: AgentHandlerEvent; emitted: AgentHandlerOutput } }).createMachine({ on: on as never });
  return { logic: logic as AnyActorLogic, agentInfo: { name: 'scripted', version: '0' }, ...extra };
}

const requestIdOf = (event: AgentHandlerEvent) => (event as { requestId: string }).requestId;
const opensS1: Script = { 'session.new': (event) => [{ type: 'acp.respond', requestId: requestIdOf(event), result: { sessionId: 's1' } }] };

function served(agent: NativeAgent, drainTimeoutMs: number, clock: SimulatedClock) {
  const [editorSide, agentSide] = createMemoryTransportPair();
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent, drainTimeoutMs }, clock }).start();
  const editor = createActor(connectionLogic, { input: { transport: editorSide } }).start();
  return { server, editor, endInput: () => (editorSide as MemoryTransport).endInput() };
}

/** A promise's outcome so far, without awaiting it. */
function track(promise: Promise<unknown>): { outcome: { value?: unknown; error?: RpcError } | 'pending' } {
  const tracked: { outcome: { value?: unknown; error?: RpcError } | 'pending' } = { outcome: 'pending' };
  promise.then((value) => (tracked.outcome = { value }), (error: RpcError) => (tracked.outcome = { error }));
  return tracked;
}

describe('ACP agent server: the editor\'s input ends (draining)', () => {
  it('keeps serving what was asked until the drain timeout, then cancels the turn and answers the rest -32603, each once', async () => {
    const clock = new SimulatedClock();
    const seen: AgentHandlerEvent[] = [];
    // A turn that never ends, a cancel it ignores, an extension request it never answers.
    const agent = scriptedAgent({ ...opensS1 }, seen, { cancelGraceMs: 5000, extensions: { requests: ['_slow'] } });
    const { server, editor, endInput } = served(agent, 10_000, clock);
    await sendRequest(editor, 'initialize', { protocolVersion: 1 });
    await sendRequest(editor, 'session/new', { cwd: '/tmp', mcpServers: [] });
    const prompt = track(sendRequest(editor, 'session/prompt', { sessionId: 's1', prompt: [] }));
    const queued = track(sendRequest(editor, 'session/prompt', { sessionId: 's1', prompt: [] }));
    const slow = track(sendRequest(editor, '_slow', {}));
    endInput();
    await settle();
    expect(server.getSnapshot().value).to.equal('draining');

    clock.increment(9999);
    await settle();
    expect([prompt.outcome, queued.outcome, slow.outcome]).to.deep.equal(['pending', 'pending', 'pending']);
    expect(seen.filter((event) => event.type === 'session.cancel')).to.have.length(0);

    clock.increment(1);
    await settle();
    // The drain timeout: the turn is cancelled (the agent hears it), the queued prompt ends cancelled at once.
    expect(seen.filter((event) => event.type === 'session.cancel')).to.have.length(1);
    expect(queued.outcome).to.deep.equal({ value: { stopReason: 'cancelled' } });
    expect(prompt.outcome).to.equal('pending');

    clock.increment(2000);
    await settle();
    expect(prompt.outcome).to.deep.equal({ value: { stopReason: 'cancelled' } });
    const error = (slow.outcome as { error: RpcError }).error;
    expect(error).to.be.instanceOf(RpcError);
    expect({ code: error.code, message: error.message }).to.deep.equal({ code: -32603, message: drainGaveUpMessage });
    await settle();
    expect(server.getSnapshot().status).to.equal('done');
  });

  it('answers a permission the agent asks after EOF cancelled, locally; the turn ends and the server closes before the drain timeout', async () => {
    const clock = new SimulatedClock();
    const seen: AgentHandlerEvent[] = [];
    let turn = '';
    const permission = { sessionId: 's1', toolCall: { toolCallId: 't1', title: 'run it' }, options: [{ optionId: 'yes', name: 'Yes', kind: 'allow_once' }] };
    const agent = scriptedAgent({
      ...opensS1,
      'session.prompt': (event) => {
        turn = requestIdOf(event);
        return [{ type: 'acp.clientRequest', key: 'p1', method: 'session/request_permission', params: permission }];
      },
      'client.response': () => [{ type: 'acp.respond', requestId: turn, result: { stopReason: 'end_turn' } }],
      'client.error': () => [{ type: 'acp.respond', requestId: turn, result: { stopReason: 'end_turn' } }],
    }, seen);
    const { server, editor, endInput } = served(agent, 30_000, clock);
    const asked: string[] = [];
    editor.on('rpc.request', (event: { method: string }) => asked.push(event.method));
    await sendRequest(editor, 'initialize', { protocolVersion: 1 });
    await sendRequest(editor, 'session/new', { cwd: '/tmp', mcpServers: [] });
    const prompt = track(sendRequest(editor, 'session/prompt', { sessionId: 's1', prompt: [] }));
    endInput();
    await settle();
    // The editor never answers (it cannot write any more); no clock time passes.
    expect(prompt.outcome).to.deep.equal({ value: { stopReason: 'end_turn' } });
    const answers = seen.filter((event) => event.type === 'client.response' || event.type === 'client.error');
    expect(answers).to.deep.equal([{ type: 'client.response', key: 'p1', result: { outcome: { outcome: 'cancelled' } } }]);
    await settle();
    expect(server.getSnapshot().status).to.equal('done');
  });

  it('EOF while the agent answers a delegated initialize: what was written behind it is served once it is answered, then the server closes', async () => {
    const clock = new SimulatedClock();
    const seen: AgentHandlerEvent[] = [];
    let initializeKey = '';
    const agent = scriptedAgent({
      ...opensS1,
      initialize: (event) => ((initializeKey = requestIdOf(event)), []),
      'test.go': () => [{ type: 'acp.respond', requestId: initializeKey, result: { agentCapabilities: {} } }],
    }, seen, { delegateInitialize: true });
    const { server, editor, endInput } = served(agent, 30_000, clock);
    const initialized = track(sendRequest(editor, 'initialize', { protocolVersion: 1 }));
    const created = track(sendRequest(editor, 'session/new', { cwd: '/tmp', mcpServers: [] }));
    endInput();
    await settle();
    expect([server.getSnapshot().value, initialized.outcome, created.outcome]).to.deep.equal(['initializing', 'pending', 'pending']);
    handlerOf(server)?.send({ type: 'test.go' } as never);
    await settle();
    expect(initialized.outcome).to.have.property('value');
    expect(created.outcome).to.deep.equal({ value: { sessionId: 's1' } });
    await settle();
    expect(server.getSnapshot().status).to.equal('done');
  });

  it('EOF while a delegated initialize is never answered: at the drain timeout it and what was written behind it are answered -32603, and the server closes', async () => {
    const clock = new SimulatedClock();
    const seen: AgentHandlerEvent[] = [];
    const agent = scriptedAgent({ ...opensS1, initialize: () => [] }, seen, { delegateInitialize: true });
    const { server, editor, endInput } = served(agent, 30_000, clock);
    const initialized = track(sendRequest(editor, 'initialize', { protocolVersion: 1 }));
    const created = track(sendRequest(editor, 'session/new', { cwd: '/tmp', mcpServers: [] }));
    endInput();
    await settle();
    clock.increment(29_999);
    await settle();
    expect([server.getSnapshot().value, initialized.outcome, created.outcome]).to.deep.equal(['initializing', 'pending', 'pending']);
    clock.increment(1);
    await settle();
    for (const request of [initialized, created]) {
      expect(request.outcome).to.have.property('error');
      expect((request.outcome as { error: RpcError }).error.code).to.equal(-32603);
    }
    expect((created.outcome as { error: RpcError }).error.message).to.contain('warden acp is shutting down: the editor closed its input');
    await settle();
    expect(server.getSnapshot().status).to.equal('done');
  });
});
