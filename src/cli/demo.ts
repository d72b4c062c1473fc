/**
 * `warden demo`, until the host lands: (1) a supervised actor tree with faults injected, its
 * events printed as they happen: an "agent" subtree (rest_for_one: a flaky process and its
 * connection) that crashes, is restarted with backoff, gives up when its restart intensity
 * is exceeded, and is restarted by the root (escalation); (2) an ACP conversation with the
 * built-in demo agent, both roles in this process: a streamed answer, a tool behind a
 * permission request, a cancelled prompt.
 */
import { createActor, setup } from 'xstate';
import {
  agentClientLogic,
  agentServerLogic,
  createMemoryTransportPair,
  createSupervisor,
  demoAgent,
  describeExit,
  initialize,
  newSession,
  prompt,
  shutdown,
  supervisionTree,
  type SupervisionEvent,
  type SupervisionTreeNode,
} from '../index.js';

/** A stand-in for an agent CLI: it crashes after `crashAfter` ms. */
const flakyProcess = setup({
  types: {} as { input: { crashAfter: number }; context: { crashAfter: number } },
  delays: { crashAfter: ({ context }) => context.crashAfter },
  actions: {
    crash: () => {
      throw new Error('agent process died (simulated kill -9)');
    },
  },
}).createMachine({
  id: 'flakyProcess',
  context: ({ input }) => ({ crashAfter: input.crashAfter }),
  initial: 'running',
  states: { running: { after: { crashAfter: { actions: 'crash' } } } },
});

/** A stand-in for the JSON-RPC connection that lives on top of the process. */
const connection = setup({}).createMachine({ id: 'connection', initial: 'open', states: { open: {} } });

export interface DemoOptions {
  /** Where to print (the demo is not `warden acp`, so stdout is allowed). */
  readonly write: (line: string) => void;
  /** How long the demo runs before a graceful shutdown, in ms. */
  readonly durationMs?: number;
}

/** Runs the demo and resolves when the tree has shut down. */
export async function runDemo({ write, durationMs = 4000 }: DemoOptions): Promise<void> {
  const started = Date.now();
  const agent = createSupervisor({
    name: 'agent',
    strategy: 'rest_for_one',
    intensity: 2,
    period: 2000,
    children: [
      {
        id: 'process',
        start: { logic: flakyProcess, inputFor: ({ restarts }) => ({ crashAfter: 300 + restarts * 100 }) },
        backoff: { minDelay: 100, maxDelay: 400, jitter: 0.2 },
      },
      { id: 'connection', start: { logic: connection } },
    ],
  });
  const root = createSupervisor({ name: 'host', intensity: 5, period: 10_000, children: [{ id: 'agent', start: { logic: agent } }] });
  const actor = createActor(root, { id: 'host' });
  actor.on('*', (event: SupervisionEvent) => write(formatEvent(event, Date.now() - started)));
  write('warden demo: a supervised agent that keeps crashing (Ctrl-C to stop early)\n');
  actor.start();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  write('\nsupervision tree before shutdown:');
  write(formatTree(supervisionTree(actor)));
  const reason = await shutdown(actor);
  write(`\nhost exited: ${describeExit(reason)}`);
  await runConversation(write);
}

/** Part two: our ACP client side talks to the demo agent served by our agent side. */
async function runConversation(write: (line: string) => void): Promise<void> {
  write('\nan ACP conversation with the built-in demo agent (both roles in this process):');
  const [editorSide, agentSide] = createMemoryTransportPair();
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: demoAgent({ wordDelayMs: 25 }) } }).start();
  const client = createActor(agentClientLogic, {
    input: {
      transport: editorSide,
      handler: {
        permission: (request) => {
          write(`  [the agent asks permission: ${request.toolCall.title}; the policy allows it]`);
          return { outcome: 'selected', optionId: request.options.find((option) => option.kind === 'allow_once')?.optionId ?? 'allow' };
        },
      },
    },
  }).start();
  try {
    const info = await initialize(client);
    write(`  connected to ${info.agentInfo?.title ?? info.agentInfo?.name}, protocol ${info.protocolVersion}`);
    const { sessionId } = await newSession(client, { cwd: process.cwd() });
    for (const [text, cancelAfterMs] of [['hello', undefined], ['please run the tool', undefined], ['a long answer that gets cancelled', 150]] as const) {
      write(`  > ${text}`);
      const run = prompt(client, sessionId, [{ type: 'text', text }]);
      if (cancelAfterMs !== undefined) setTimeout(() => run.cancel(), cancelAfterMs);
      let said = '';
      for await (const update of run.updates) {
        if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') said += update.content.text;
        if (update.sessionUpdate === 'tool_call_update') write(`  [tool ${update.status}]`);
      }
      write(`  < ${said}`);
      write(`  (stop reason: ${(await run.result).stopReason})`);
    }
  } finally {
    client.stop();
    server.stop();
  }
}

/** One line per supervision event. */
export function formatEvent(event: SupervisionEvent, elapsedMs: number): string {
  const time = `${String(elapsedMs).padStart(5)} ms`;
  const where = `${event.supervisor}`;
  switch (event.type) {
    case 'child.started':
      return `${time}  ${where}: started ${event.childId} (incarnation ${event.incarnation})`;
    case 'child.exited':
      return `${time}  ${where}: ${event.childId} exited: ${describeExit(event.reason)} -> ${event.action}`;
    case 'child.restarting':
      return `${time}  ${where}: ${event.childId} restarts in ${event.delay} ms (attempt ${event.attempt + 1})`;
    case 'child.restarted':
      return `${time}  ${where}: restarted ${event.childId} (restart #${event.restarts})`;
    case 'child.startFailed':
      return `${time}  ${where}: ${event.childId} failed to start`;
    case 'intensity.exceeded':
      return `${time}  ${where}: more than ${event.intensity} restarts in ${event.period} ms: giving up`;
    case 'supervisor.shutdown':
      return `${time}  ${where}: shut down (${describeExit(event.reason)})`;
  }
}

/** The tree as indented lines. */
export function formatTree(node: SupervisionTreeNode, depth = 0): string {
  const pad = '  '.repeat(depth + 1);
  const facts = [node.type, node.status, `restarts ${node.restarts}`];
  if (node.strategy) facts.push(node.strategy);
  if (node.pid !== undefined) facts.push(`pid ${node.pid}`);
  const lines = [`${pad}${node.id} (${facts.join(', ')})`];
  for (const child of node.children ?? []) lines.push(formatTree(child, depth + 1));
  return lines.join('\n');
}
