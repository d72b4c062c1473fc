/** The adapter example of docs/adapters.md works (docs that cannot rot). */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { shoutAdapter } from '../../examples/adapter/shout-adapter.js';
import { agentClientLogic, initialize, newSession, prompt } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';

describe('the example adapter (docs/adapters.md)', function () {
  this.timeout(20_000);

  it('turns the shout CLI into an ACP agent that streams and ends its turns', async () => {
    const executable = fileURLToPath(new URL('../../examples/adapter/shout-cli.mjs', import.meta.url));
    const [editorSide, agentSide] = createMemoryTransportPair();
    const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: createAdapterAgent({ definition: shoutAdapter, executable }) } }).start();
    const client = createActor(agentClientLogic, { input: { transport: editorSide } }).start();
    try {
      await initialize(client);
      const { sessionId } = await newSession(client, { cwd: process.cwd() });
      const run = prompt(client, sessionId, [{ type: 'text', text: 'make it loud' }]);
      let text = '';
      for await (const update of run.updates) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') text += update.content.text;
      expect(await run.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(text).to.equal('MAKE IT LOUD ');
    } finally {
      client.stop();
      server.stop();
    }
  });
});
