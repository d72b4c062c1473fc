/**
 * Counts the actors one prompt crosses, from the inspection stream of a host: a `createHost`
 * with the fake Claude Code CLI (spec/support/fake-claude.mjs) or the fake Codex CLI
 * (fake-codex.mjs), each replaying its `hello` fixture, as its default agent, one session,
 * one warm-up prompt (Claude; Codex's session/new waits for its thread), then the measured prompt.
 *
 * Most sends on the prompt path come from callbacks, not from inside an actor, so the
 * inspection events carry no `sourceRef` and a causal chain cannot be followed; what is
 * counted instead is every actor that received an event in the window of each direction:
 * down, from the turn's first event to the port's `port.write` (the prompt's line for the
 * CLI); up, from the adapter's first `native.message` of the turn (a line of the CLI) to
 * the agent server's next event (it writes the `session/update`). The editor's connection
 * (`connection` and its `request-*` children) and the port are the two ends, not counted.
 */
import { fileURLToPath } from 'node:url';
import type { ActorRefLike, InspectionEvent } from 'xstate';
import { createHost } from '../../src/index.js';

const fakes = {
  claude: { command: fileURLToPath(new URL('./fake-claude.mjs', import.meta.url)), env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_LOOP: '1' }, warmUp: true },
  // The fake app-server replays one turn; its `session/new` already waited for it to start and open the thread.
  codex: { command: fileURLToPath(new URL('./fake-codex.mjs', import.meta.url)), env: { FAKE_CODEX_FIXTURE: 'hello' }, warmUp: false },
} as const;

/** What one prompt's path measured. */
export interface PromptPath {
  /** Actor ids that received an event between the editor's request and the port's write, in order of first receipt. */
  readonly down: readonly string[];
  /** Actor ids that received an event between the CLI's first line and the agent server, in order of first receipt. */
  readonly up: readonly string[];
  /** Events delivered to actors over the whole turn (`xstate.*` lifecycle events excluded). */
  readonly events: number;
}

interface Delivery {
  readonly to: string;
  readonly type: string;
}

const isEnd = (id: string) => id === 'connection' || id === 'port' || /^request-/.test(id);
const idOf = (ref: ActorRefLike) => (ref as { id?: string }).id || ref.sessionId;
/** Session ids vary from run to run; the kind of actor is what is compared. */
const kindOf = (id: string) => id.replace(/^session:.*/, 'session:<id>');

function recipients(deliveries: readonly Delivery[], from: number, to: number): string[] {
  const seen: string[] = [];
  for (const delivery of deliveries.slice(from, to)) {
    const kind = kindOf(delivery.to);
    if (!isEnd(delivery.to) && !seen.includes(kind)) seen.push(kind);
  }
  return seen;
}

/** Runs the measurement for `agent` (about a second; starts and stops one fake CLI). */
export async function measurePromptPath(agent: keyof typeof fakes = 'claude'): Promise<PromptPath> {
  let recording = false;
  const deliveries: Delivery[] = [];
  const host = createHost({
    store: ':memory:',
    defaultAgent: agent,
    agentOptions: { agentCommand: fakes[agent].command, env: fakes[agent].env },
    inspect: {
      next: (event: InspectionEvent) => {
        if (recording && event.type === '@xstate.event' && !event.event.type.startsWith('xstate.')) deliveries.push({ to: idOf(event.actorRef), type: event.event.type });
      },
    },
    permission: () => ({ outcome: 'cancelled' }),
  });
  try {
    const session = await host.newSession({ cwd: process.cwd() });
    if (fakes[agent].warmUp) await session.prompt('hello').result; // warm-up: the CLI is up and initialized
    recording = true;
    const run = session.prompt('hello');
    for await (const _update of run) {
      // drained: the updates are what the up path carries
    }
    await run.result;
    recording = false;
    const written = deliveries.findIndex((delivery) => delivery.to === 'port' && delivery.type === 'port.write');
    const firstLine = deliveries.findIndex((delivery) => delivery.type === 'native.message');
    const server = deliveries.findIndex((delivery, index) => index > firstLine && delivery.to === deliveries[0]?.to);
    if (written < 0 || firstLine < 0 || server < 0) throw new Error(`the prompt's path was not seen whole: ${deliveries.map((delivery) => `${delivery.to}:${delivery.type}`).join(', ')}`);
    return { down: recipients(deliveries, 0, written), up: recipients(deliveries, firstLine, server + 1), events: deliveries.length };
  } finally {
    await host.stop();
  }
}
