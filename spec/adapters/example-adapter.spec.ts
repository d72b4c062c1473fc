/** The adapter example of docs/adapters.md works (docs that cannot rot). */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef, type InspectionEvent } from 'xstate';
import { shoutAdapter } from '../../examples/adapter/shout-adapter.js';
import { agentClientLogic, initialize, newSession, prompt } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { boundPort } from '../../src/adapters/port-link.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { expectGroupGone, waitUntil } from '../support/processes.js';

const executable = fileURLToPath(new URL('../../examples/adapter/shout-cli.mjs', import.meta.url));

describe('the example adapter (docs/adapters.md)', function () {
  this.timeout(60_000);
  let stop: () => void = () => {};
  const groups = new Set<number>();

  afterEach(async () => {
    stop();
    for (const pgid of groups) await expectGroupGone(pgid);
    groups.clear();
  });

  /** The shout agent served to an editor over a memory pair; its session adapters and CLIs seen through inspection. */
  function serve() {
    const [editorSide, agentSide] = createMemoryTransportPair();
    const sessions = new Set<AnyActorRef>();
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as { machine?: { id?: string }; context?: { pid?: unknown } };
      const actor = event.actorRef as AnyActorRef;
      if (snapshot.machine?.id === 'shoutSession') sessions.add(actor);
      if (actor.id === 'port' && typeof snapshot.context?.pid === 'number') groups.add(snapshot.context.pid);
    };
    const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: createAdapterAgent({ definition: shoutAdapter, executable }) }, inspect }).start();
    const client = createActor(agentClientLogic, { input: { transport: editorSide } }).start();
    stop = () => {
      client.stop();
      server.stop();
    };
    return { client, sessions };
  }

  it('turns the shout CLI into an ACP agent that streams and ends its turns', async () => {
    const { client } = serve();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd: process.cwd() });
    const run = prompt(client, sessionId, [{ type: 'text', text: 'make it loud' }]);
    let text = '';
    for await (const update of run.updates) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') text += update.content.text;
    expect(await run.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(text).to.equal('MAKE IT LOUD ');
  });

  it('its session adapter owns its port, as Claude and Codex do: bound to the CLI, killed mid-prompt the prompt fails naming it, and the restarted CLI serves the next one', async () => {
    const { client, sessions } = serve();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd: process.cwd() });
    const [session] = [...sessions];
    expect(session, 'the shout session adapter').to.not.equal(undefined);
    const first = boundPort(session as AnyActorRef);
    expect(first, 'the port the session adapter reads and writes itself').to.not.equal(undefined);

    const words = Array.from({ length: 200 }, (_, n) => `word${n}`).join(' ');
    const run = prompt(client, sessionId, [{ type: 'text', text: words }]);
    const result = run.result.catch((error: unknown) => error);
    let chunks = 0;
    for await (const update of run.updates) {
      if (update.sessionUpdate !== 'agent_message_chunk') continue;
      chunks += 1;
      if (chunks === 1) process.kill(first?.getSnapshot().context.pid as number, 'SIGKILL');
    }
    const failed = await result;
    expect(failed).to.be.instanceOf(RpcError);
    expect(((failed as RpcError).data as { reason: string; exit: unknown }).reason).to.equal('agent_crashed');
    expect(((failed as RpcError).data as { exit: unknown }).exit).to.deep.equal({ kind: 'signaled', signal: 'SIGKILL' });

    // Sent while the CLI restarts (or once it is back): answered by the new CLI, through the new port.
    const next = prompt(client, sessionId, [{ type: 'text', text: 'back again' }]);
    let text = '';
    for await (const update of next.updates) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') text += update.content.text;
    expect(await next.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(text).to.equal('BACK AGAIN ');
    await waitUntil(() => boundPort(session as AnyActorRef) !== undefined && boundPort(session as AnyActorRef) !== first, 'the session bound to the restarted port');
  });
});
