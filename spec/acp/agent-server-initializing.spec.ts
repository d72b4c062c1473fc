/**
 * The agent server's `initializing` phase: an agent that delegates initialize answers it
 * when it pleases; what the editor pipelined behind initialize waits for that answer and is
 * then served in order, refused as uninitialized if the agent refuses initialize, refused as
 * shutting down if the server shuts down first.
 */
import { expect } from 'chai';
import { assign, createMachine, emit, enqueueActions, type AnyActorRef } from 'xstate';
import { handlerOf } from '../../src/acp/agent-server.js';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { SHUTDOWN_EVENT } from '../../src/supervision/events.js';
import { errorOf, start, type Editor } from '../support/raw-editor.js';

/** A delegating agent that holds `initialize` until the test sends `test.answer` (or `test.refuse`). */
function slowInitializer(): NativeAgent {
  return {
    agentInfo: { name: 'slow-initializer', version: '1' },
    capabilities: {},
    delegateInitialize: true,
    logic: createMachine({
      types: {} as { context: { initialize: string | undefined; created: number } },
      context: { initialize: undefined, created: 0 },
      on: {
        initialize: { actions: assign({ initialize: ({ event }) => (event as unknown as { requestId: string }).requestId }) },
        'test.answer': {
          actions: emit(({ context }) => ({ type: 'acp.respond', requestId: context.initialize, result: { agentCapabilities: { sessionCapabilities: { list: {} } } } }) as never),
        },
        'test.refuse': {
          actions: emit(({ context }) => ({ type: 'acp.error', requestId: context.initialize, error: { code: -32603, message: 'the agent behind failed to start' } }) as never),
        },
        'session.new': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            enqueue.assign({ created: context.created + 1 });
            enqueue.emit({ type: 'acp.respond', requestId: (event as unknown as { requestId: string }).requestId, result: { sessionId: `s${context.created + 1}` } } as never);
          }),
        },
        'session.list': {
          actions: emit(({ context, event }) => ({
            type: 'acp.respond',
            requestId: (event as unknown as { requestId: string }).requestId,
            result: { sessions: Array.from({ length: context.created }, (_, index) => ({ sessionId: `s${index + 1}`, cwd: '/work' })) },
          }) as never),
        },
      },
    }),
  };
}

const agentOf = (editor: Editor) => handlerOf(editor.server) as AnyActorRef;
/** Until the server says `initializing` (initialize and what follows it are in). */
async function initializing(editor: Editor): Promise<void> {
  for (let tries = 0; tries < 2000 && editor.server.getSnapshot().value !== 'initializing'; tries++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(editor.server.getSnapshot().value).to.equal('initializing');
  // The requests written after initialize arrive over the same ordered transport: one more turn for them.
  await new Promise((resolve) => setImmediate(resolve));
}
const init = { protocolVersion: 1, clientCapabilities: {} };

describe('ACP agent server: requests pipelined behind a delegated initialize', () => {
  const editors: Editor[] = [];
  afterEach(() => {
    for (const editor of editors.splice(0)) editor.server.stop();
  });

  function editorFor(): Editor {
    const editor = start(slowInitializer());
    editors.push(editor);
    return editor;
  }

  it('wait for the answer to initialize, then are served in the order they came', async () => {
    const editor = editorFor();
    const order: string[] = [];
    const initialized = editor.request('initialize', init).then((result) => (order.push('initialize'), result));
    const created = editor.request('session/new', { cwd: '/work', mcpServers: [] }).then((result) => (order.push('session/new'), result));
    const listed = editor.request('session/list', {}).then((result) => (order.push('session/list'), result));
    await initializing(editor);
    expect(order).to.deep.equal([]);
    agentOf(editor).send({ type: 'test.answer' });
    expect(await initialized).to.have.nested.property('agentCapabilities.sessionCapabilities.list');
    expect(await created).to.deep.equal({ sessionId: 's1' });
    // session/list reached the agent after session/new: it lists the session.
    expect(await listed).to.deep.equal({ sessions: [{ sessionId: 's1', cwd: '/work' }] });
    expect(order).to.deep.equal(['initialize', 'session/new', 'session/list']);
  });

  it('are refused as uninitialized (-32600) when the agent refuses initialize, and a new initialize can follow', async () => {
    const editor = editorFor();
    const refusedInit = errorOf(editor.request('initialize', init));
    const refused = errorOf(editor.request('session/new', { cwd: '/work', mcpServers: [] }));
    await initializing(editor);
    agentOf(editor).send({ type: 'test.refuse' });
    expect((await refusedInit).message).to.contain('the agent behind failed to start');
    const error = await refused;
    expect(error.code).to.equal(-32600);
    expect(error.message).to.contain("ACP connection must be initialized before 'session/new'");
    expect(editor.server.getSnapshot().value).to.equal('awaitingInitialize');
    const again = editor.request('initialize', init);
    await initializing(editor);
    agentOf(editor).send({ type: 'test.answer' });
    await again;
    expect(await editor.request('session/new', { cwd: '/work', mcpServers: [] })).to.deep.equal({ sessionId: 's1' });
  });

  it('are refused as shutting down (-32603, reason shutdown) when the server shuts down first', async () => {
    const editor = editorFor();
    const initialized = errorOf(editor.request('initialize', init));
    const waiting = errorOf(editor.request('session/new', { cwd: '/work', mcpServers: [] }));
    await initializing(editor);
    editor.server.send({ type: SHUTDOWN_EVENT });
    const error = await waiting;
    expect(error.code).to.equal(-32603);
    expect(error.data).to.deep.equal({ reason: 'shutdown' });
    expect((await initialized).code).to.equal(-32603);
  });
});
