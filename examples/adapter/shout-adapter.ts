/**
 * A complete small adapter: the `shout` CLI (examples/adapter/shout-cli.mjs) as an ACP
 * agent. docs/adapters.md walks through it. Run it:
 *
 *   npx tsx examples/adapter/shout-adapter.ts
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import { fileURLToPath } from 'node:url';
// In a program of your own: from 'acp-warden' and 'acp-warden/adapters'.
import { createAdapterAgent, createHost, type AdapterDefinition, type SessionAdapterOutput } from '../../src/index.js';
import { cliSessionActions, fromCliSession, type CliSessionContext } from '../../src/adapters/index.js';

const action = cliSessionActions<CliSessionContext>();

/**
 * The session adapter: one per ACP session, with its own `shout` process. `fromCliSession`
 * gives it the skeleton every CLI session shares: it waits for the CLI, answers the
 * `session/new` once it runs (this CLI has no handshake), queues a prompt that comes while
 * the CLI (re)starts, fails the prompt in flight if the CLI dies, tells the hang watchdog
 * what the agent owes, and reads and writes its own port. What is left is the mapping.
 */
export const shoutSession = fromCliSession<CliSessionContext>({
  id: 'shoutSession',
  agent: 'shout',
  context: {},
  setupAnswers: (context) => context.startRequests.map((requestId): SessionAdapterOutput => ({ type: 'acp.respond', requestId, result: { sessionId: context.sessionId } })),
  // A prompt is one {"say": ...} line.
  prompt: (_context, request) => ({ writes: [{ say: (request.params.prompt as ContentBlock[]).map((block) => (block.type === 'text' ? block.text : '')).join(' ') }] }),
  guards: {
    // {"done": true}: the answer is complete.
    isDone: ({ event }) => event.type === 'native.message' && (event.message as { done?: boolean }).done === true,
  },
  actions: {
    // {"word": "..."}: one more chunk of the answer.
    shout: action(({ context, event, enqueue }) => {
      const word = event.type === 'native.message' ? (event.message as { word?: string }).word : undefined;
      if (word) enqueue.emit({ type: 'acp.update', sessionId: context.sessionId as string, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${word} ` } } });
    }),
    // The turn ends with the prompt's answer; a cancel ends it at once (the CLI cannot be interrupted).
    endTurn: action(({ context, event, enqueue }) => {
      if (context.prompt) enqueue.emit({ type: 'acp.respond', requestId: context.prompt.requestId, result: { stopReason: event.type === 'session.cancel' ? 'cancelled' : 'end_turn' } });
      enqueue.assign({ prompt: undefined });
    }),
  },
  prompting: {
    'native.message': [{ guard: 'isDone', target: 'ready', actions: 'endTurn' }, { actions: 'shout' }],
    'session.cancel': { target: 'ready', actions: 'endTurn' },
  },
});

/** The definition: what it advertises, how to run it, how it is supervised. */
export const shoutAdapter: AdapterDefinition = {
  name: 'shout',
  agentInfo: { name: 'shout', version: '1.0.0' },
  capabilities: {},
  executable: { name: 'shout', install: 'it ships with the examples' },
  session: shoutSession,
  // The session reads and writes its own port (fromCliSession); the adapter agent relays nothing.
  ownsPort: true,
  command: () => ({ args: [], env: {} }),
  restart: { intensity: 3, period: 10_000, backoff: { minDelay: 100, maxDelay: 1000 } },
};

// Run it under a host, as a program embedding warden would (`warden acp` serves the same host to an editor).
if (import.meta.url === `file://${process.argv[1]}`) {
  const executable = fileURLToPath(new URL('./shout-cli.mjs', import.meta.url));
  const host = createHost({ store: ':memory:', agents: { shout: createAdapterAgent({ definition: shoutAdapter, executable }) } });
  const session = await host.newSession({ agent: 'shout', cwd: process.cwd() });
  const run = session.prompt('adapters make any cli an acp agent');
  for await (const update of run) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') process.stdout.write(update.content.text);
  console.log(`\n(stop reason: ${(await run.result).stopReason})`);
  await host.stop();
}
