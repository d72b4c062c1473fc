/**
 * The demo agent and sessions it does not know (a host that restarted resumes or loads the
 * sessions it journaled), through our agent server, driven by our ACP client.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, initialize, loadSession, newSession, prompt, resumeSession } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';

const actors: AnyActorRef[] = [];

async function connect() {
  const [editorSide, agentSide] = createMemoryTransportPair();
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: demoAgent({ wordDelayMs: 1 }) } }).start();
  const client = createActor(agentClientLogic, { input: { transport: editorSide } }).start();
  actors.push(client, server);
  return { client, init: await initialize(client) };
}

async function run(client: AnyActorRef, sessionId: string, text: string) {
  const handle = prompt(client, sessionId, [{ type: 'text', text }]);
  const updates: SessionUpdate[] = [];
  for await (const update of handle.updates) updates.push(update);
  return { updates, result: await handle.result };
}

const said = (updates: SessionUpdate[]) => updates.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => (update as { content: { text: string } }).content.text).join('');

describe('demo agent: resume and load of sessions it does not know', () => {
  afterEach(() => {
    for (const actor of actors.splice(0)) actor.stop();
  });

  it('advertises loadSession and sessionCapabilities.resume', async () => {
    const { init } = await connect();
    expect(init.agentCapabilities).to.deep.include({ loadSession: true });
    expect(init.agentCapabilities?.sessionCapabilities).to.have.property('resume');
  });

  it('session/resume of an unknown id opens an empty session under that id, in the default mode and model; prompts are served', async () => {
    const { client } = await connect();
    const setup = await resumeSession(client, { sessionId: 'demo-journaled', cwd: '/work', mcpServers: [] });
    expect((setup.modes as { currentModeId: string }).currentModeId).to.equal('ask');
    expect((setup.configOptions as Array<{ currentValue: string }>)[0]?.currentValue).to.equal('demo-fast');
    const { updates, result } = await run(client, 'demo-journaled', 'hello again');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(said(updates)).to.equal('You said: hello again. This is the acp-warden demo agent, answering word by word.');
  });

  it('session/load of an unknown id replays nothing (there is nothing: the host replays its journal); of a known one, its history', async () => {
    const { client } = await connect();
    const unknown = await loadSession(client, { sessionId: 'demo-from-journal', cwd: '/work', mcpServers: [] });
    expect(unknown.response).to.have.property('modes');
    expect(unknown.replayed.filter((update) => update.sessionUpdate.endsWith('_message_chunk'))).to.deep.equal([]);
    await run(client, 'demo-from-journal', 'first');
    const known = await loadSession(client, { sessionId: 'demo-from-journal', cwd: '/work', mcpServers: [] });
    expect(known.replayed.map((update) => update.sessionUpdate)).to.deep.equal(['user_message_chunk', 'agent_message_chunk']);
  });

  it('session/new after a resume of demo-1 does not hand out demo-1 again', async () => {
    const { client } = await connect();
    await resumeSession(client, { sessionId: 'demo-1', cwd: '/work', mcpServers: [] });
    const { sessionId } = await newSession(client, { cwd: '/work' });
    expect(sessionId).to.match(/^demo-/u).and.not.equal('demo-1');
  });
});
