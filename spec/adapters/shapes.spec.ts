/**
 * The seed's other adapter shapes are expressible: a definition without `command` gives its
 * sessions no port of their own, and the session adapter runs one-shot processes itself
 * (here a port per prompt, as an invoked child that ends with the prompt).
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { createActor, enqueueActions, setup } from 'xstate';
import { agentClientLogic, initialize, newSession, prompt } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import type { AgentRequestEvent } from '../../src/protocol/native-agent.js';
import type { AdapterDefinition, SessionAdapterEvent, SessionAdapterOutput } from '../../src/adapters/adapter.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import type { PortExit } from '../../src/port/port-exit.js';
import { portLogic } from '../../src/port/port.js';

const oneShotSession = setup({
  types: {} as { context: { sessionId?: string; prompt?: string; text?: string }; events: SessionAdapterEvent; emitted: SessionAdapterOutput },
  actors: { port: portLogic },
}).createMachine({
  id: 'oneShot',
  context: {},
  initial: 'ready',
  states: {
    ready: {
      on: {
        // No CLI to wait for: the session is ready at once.
        'adapter.start': { actions: enqueueActions(({ event, enqueue }) => {
          enqueue.assign({ sessionId: event.sessionId });
          enqueue.emit({ type: 'acp.respond', requestId: event.requestId, result: { sessionId: event.sessionId } });
        }) },
        'session.prompt': {
          target: 'running',
          actions: enqueueActions(({ event, enqueue }) => {
            const request = event as AgentRequestEvent;
            enqueue.assign({ prompt: request.requestId, text: (request.params.prompt as ContentBlock[]).map((block) => (block.type === 'text' ? block.text : '')).join(' ') });
          }),
        },
      },
    },
    running: {
      // One process for this prompt: it ends with the prompt (and is stopped if the session is).
      invoke: {
        src: 'port',
        input: ({ context }) => ({ command: process.execPath, args: ['-e', `process.exit(${context.text === 'fail' ? 1 : 0})`], parse: 'text' as const }),
        onDone: {
          target: 'ready',
          actions: enqueueActions(({ context, event, enqueue }) => {
            const code = ((event.output as PortExit).reason as { code: number }).code;
            enqueue.emit({ type: 'acp.update', sessionId: context.sessionId as string, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `one-shot process exited with code ${code}` } } });
            enqueue.emit({ type: 'acp.respond', requestId: context.prompt as string, result: { stopReason: 'end_turn' } });
          }),
        },
        onError: {
          target: 'ready',
          actions: enqueueActions(({ context, enqueue }) => {
            enqueue.emit({ type: 'acp.error', requestId: context.prompt as string, error: { code: -32603, message: 'the one-shot process failed' } });
          }),
        },
      },
    },
  },
});

const oneShotAdapter: AdapterDefinition = {
  name: 'one-shot',
  agentInfo: { name: 'one-shot', version: '0' },
  capabilities: {},
  executable: { name: 'node', install: 'it is Node' },
  session: oneShotSession,
  // No `command`: the session has no port of its own.
};

describe('adapter shapes', function () {
  this.timeout(20_000);

  it('one-shot: no session port, a process per prompt', async () => {
    const [editorSide, agentSide] = createMemoryTransportPair();
    const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: createAdapterAgent({ definition: oneShotAdapter, executable: process.execPath }) } }).start();
    const client = createActor(agentClientLogic, { input: { transport: editorSide } }).start();
    try {
      await initialize(client);
      const { sessionId } = await newSession(client, { cwd: process.cwd() });
      const ok = prompt(client, sessionId, [{ type: 'text', text: 'hello' }]);
      const said: string[] = [];
      for await (const update of ok.updates) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') said.push(update.content.text);
      expect(await ok.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(said).to.deep.equal(['one-shot process exited with code 0']);
      // A one-shot process that fails (exit 1) fails its prompt; the session goes on.
      const failed = prompt(client, sessionId, [{ type: 'text', text: 'fail' }]);
      expect(await failed.result.catch((error: Error) => error.message)).to.equal('the one-shot process failed');
      const again = prompt(client, sessionId, [{ type: 'text', text: 'again' }]);
      expect(await again.result).to.deep.equal({ stopReason: 'end_turn' });
    } finally {
      client.stop();
      server.stop();
    }
  });
});
