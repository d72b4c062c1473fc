/**
 * Both ACP roles in one process: our client side drives the built-in demo agent served by
 * our agent side, over an in-memory JSON-RPC pair.
 *
 *   npx tsx examples/acp-conversation.ts
 *
 * Prints the streamed answer of one prompt, a tool call behind a permission request (the
 * policy allows it), and a prompt cancelled half way.
 */
import { createActor } from 'xstate';
// In a program of your own: 'acp-warden' (demoAgent), 'acp-warden/acp' (the two ACP sides)
// and 'acp-warden/jsonrpc' (the transports).
import { demoAgent } from '../src/index.js';
import { agentClientLogic, agentServerLogic, initialize, newSession, prompt } from '../src/acp/index.js';
import { createMemoryTransportPair } from '../src/jsonrpc/index.js';

const [editorSide, agentSide] = createMemoryTransportPair();
const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: demoAgent({ wordDelayMs: 30 }) } }).start();
const client = createActor(agentClientLogic, {
  input: {
    transport: editorSide,
    handler: {
      permission: (request) => {
        // Once, never "always" (for Claude Code an always-allow switches the session to accepting edits).
        const once = request.options.find((option) => option.kind === 'allow_once');
        console.log(`\n[permission asked: ${request.toolCall.title}; ${once ? 'allowing once' : 'no allow-once option, declining'}]`);
        return once ? { outcome: 'selected', optionId: once.optionId } : { outcome: 'cancelled' };
      },
    },
  },
}).start();

const info = await initialize(client);
console.log(`connected to ${info.agentInfo?.title ?? info.agentInfo?.name} (protocol ${info.protocolVersion})`);
const { sessionId } = await newSession(client, { cwd: process.cwd() });

async function show(text: string, cancelAfterMs?: number): Promise<void> {
  console.log(`\n> ${text}`);
  const run = prompt(client, sessionId, [{ type: 'text', text }]);
  if (cancelAfterMs !== undefined) setTimeout(() => run.cancel(), cancelAfterMs);
  for await (const update of run.updates) {
    if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') process.stdout.write(update.content.text);
    if (update.sessionUpdate === 'tool_call') process.stdout.write(`[tool: ${update.title}] `);
    if (update.sessionUpdate === 'tool_call_update') process.stdout.write(`[tool ${update.status}] `);
  }
  console.log(`\n(stop reason: ${(await run.result).stopReason})`);
}

await show('hello there');
await show('please run the tool');
await show('this answer will be cut short', 200);
server.stop();
client.stop();
