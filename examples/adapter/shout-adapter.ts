/**
 * A complete small adapter: the `shout` CLI (examples/adapter/shout-cli.mjs) as an ACP
 * agent. docs/adapters.md walks through it. Run it:
 *
 *   npx tsx examples/adapter/shout-adapter.ts
 */
import type { ContentBlock } from '@agentclientprotocol/sdk';
import { fileURLToPath } from 'node:url';
import { enqueueActions, setup } from 'xstate';
// In a program of your own: from 'acp-warden'.
import { createAdapterAgent, createHost, type AdapterDefinition, type AgentRequestEvent, type SessionAdapterEvent, type SessionAdapterOutput } from '../../src/index.js';

/** The session adapter: one per ACP session, with its own `shout` process. */
export const shoutSession = setup({
  types: {} as {
    context: { sessionId?: string; start?: string; prompt?: string };
    events: SessionAdapterEvent;
    emitted: SessionAdapterOutput;
  },
}).createMachine({
  id: 'shoutSession',
  context: {},
  initial: 'waiting',
  on: {
    // Remember the session/new to answer; the CLI needs no handshake, so answer once it runs.
    'adapter.start': { actions: enqueueActions(({ event, enqueue }) => enqueue.assign({ sessionId: event.sessionId, start: event.requestId })) },
  },
  states: {
    waiting: {
      on: {
        'port.started': {
          target: 'ready',
          actions: enqueueActions(({ context, enqueue }) => {
            if (context.start) enqueue.emit({ type: 'acp.respond', requestId: context.start, result: { sessionId: context.sessionId } });
            enqueue.assign({ start: undefined });
          }),
        },
      },
    },
    ready: {
      on: {
        'session.prompt': {
          target: 'shouting',
          actions: enqueueActions(({ event, enqueue }) => {
            const request = event as AgentRequestEvent;
            const text = (request.params.prompt as ContentBlock[]).map((block) => (block.type === 'text' ? block.text : '')).join(' ');
            enqueue.assign({ prompt: request.requestId });
            enqueue.emit({ type: 'port.write', message: { say: text } });
          }),
        },
      },
    },
    shouting: {
      on: {
        'native.message': [
          {
            // {"done": true}: the answer is complete.
            guard: ({ event }) => (event.message as { done?: boolean }).done === true,
            target: 'ready',
            actions: enqueueActions(({ context, enqueue }) => {
              enqueue.emit({ type: 'acp.respond', requestId: context.prompt as string, result: { stopReason: 'end_turn' } });
              enqueue.assign({ prompt: undefined });
            }),
          },
          {
            // {"word": "..."}: one more chunk of the answer.
            actions: enqueueActions(({ context, event, enqueue }) => {
              const word = (event.message as { word?: string }).word;
              if (word) enqueue.emit({ type: 'acp.update', sessionId: context.sessionId as string, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${word} ` } } });
            }),
          },
        ],
        // The CLI cannot be interrupted: a cancel ends the prompt at once (ACP: "cancelled").
        'session.cancel': {
          target: 'ready',
          actions: enqueueActions(({ context, enqueue }) => {
            enqueue.emit({ type: 'acp.respond', requestId: context.prompt as string, result: { stopReason: 'cancelled' } });
          }),
        },
      },
    },
  },
});

/** The definition: what it advertises, how to run it, how it is supervised. */
export const shoutAdapter: AdapterDefinition = {
  name: 'shout',
  agentInfo: { name: 'shout', version: '1.0.0' },
  capabilities: {},
  executable: { name: 'shout', install: 'it ships with the examples' },
  session: shoutSession,
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
