/**
 * Our ACP agent side over this process's stdio, serving the demo agent: the peer that the
 * official SDK's client drives in the interop tests (`node --import tsx spec/support/warden-agent.ts`).
 */
import { createActor } from 'xstate';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { stdioTransport } from '../../src/jsonrpc/stdio-transport.js';

const agent = demoAgent({ wordDelayMs: Number(process.env.DEMO_WORD_DELAY_MS ?? 5) });
// An auth method to authenticate with, so that the SDK client exercises `authenticate` too.
const served = { ...agent, authMethods: [{ id: 'demo-key', name: 'Demo key', description: 'Accepts anyone' }] };
const server = createActor(agentServerLogic, { input: { transport: stdioTransport(), agent: served } });
server.subscribe({
  complete: () => process.exit(0),
  error: (error) => {
    process.stderr.write(`warden-agent failed: ${String(error)}\n`);
    process.exit(1);
  },
});
server.start();
