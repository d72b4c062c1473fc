/**
 * warden's agent client driving an agent over ACP v2 (issue 30, S8), against a real v2 peer:
 * spec/support/v2-agent.mjs, built on the SDK's own v2 agent app behind the SDK's protocol
 * router, run as a subprocess over stdio. What the client's callers get is v1's shapes, as
 * from a v1 agent: the text, the tool call created then updated, the permission asked as v1
 * and its answer taken by the agent, `end_turn` at the session's `idle` (not at the prompt's
 * `{ messageId }`), the agent's error from an error `idle`, `cancelled`, and a load as
 * `session/resume` with `replayFrom`. `auto` against a v1 agent (the SDK's v1 reference agent)
 * goes on in v1, also when the agent refuses version 2 (-32022: asked again in v1).
 */
import type { RequestPermissionRequest, SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, agentInfo, cancelPrompt, initialize, loadSession, newSession, prompt, resumeSession, type AgentProtocol, type ClientHandler } from '../../src/acp/agent-client.js';
import { V2_PERMISSION_META_KEY } from '../../src/acp/v2-agent-permission.js';
import { portTransport } from '../../src/jsonrpc/port-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { portLogic } from '../../src/port/port.js';
import { spawnedPid } from '../support/port-pid.js';
import { expectGroupGone } from '../support/processes.js';

const v2Agent = fileURLToPath(new URL('../support/v2-agent.mjs', import.meta.url));
const v1Agent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

interface Harness {
  readonly client: AnyActorRef;
  readonly port: AnyActorRef;
  readonly dir: string;
  readonly log: string;
}

const permissions: RequestPermissionRequest[] = [];

function startAgent(script: string, protocol: AgentProtocol, handler: ClientHandler, extra: string[] = []): Harness {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-client-')));
  const log = join(dir, 'requests.ndjson');
  const port = createActor(portLogic, { input: { command: process.execPath, args: [script, '--log', log, ...extra] } });
  port.subscribe({ error: () => {} });
  port.start();
  const client = createActor(agentClientLogic, { input: { transport: portTransport(port), handler, protocol } });
  client.start();
  return { client, port, dir, log };
}

async function stopAgent({ client, port, dir }: Harness): Promise<void> {
  const pid = await spawnedPid(port);
  if (client.getSnapshot().status === 'active') client.stop();
  if (port.getSnapshot().status === 'active') port.stop();
  await expectGroupGone(pid);
  rmSync(dir, { recursive: true, force: true });
}

/** The requests the agent received, as it logged them. */
const received = (log: string) =>
  readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { method: string; params: Record<string, unknown> });

async function collect(run: { updates: AsyncIterable<SessionUpdate> }): Promise<SessionUpdate[]> {
  const updates: SessionUpdate[] = [];
  for await (const update of run.updates) updates.push(update);
  return updates;
}

const text = (updates: SessionUpdate[]) =>
  updates
    .filter((update) => update.sessionUpdate === 'agent_message_chunk')
    .map((update) => (update as { content: { text?: string } }).content.text ?? '')
    .join('');

const textPrompt = (value: string) => [{ type: 'text', text: value }];

describe('ACP client side driving an SDK v2 agent (protocol v2)', function () {
  this.timeout(20_000);
  let agent: Harness;
  let cwd: string;

  before(async () => {
    agent = startAgent(v2Agent, 'v2', {
      permission: (request) => {
        permissions.push(request);
        return { outcome: 'selected', optionId: 'allow' };
      },
    });
    cwd = agent.dir;
    const answer = await initialize(agent.client);
    expect(answer.protocolVersion).to.equal(2);
  });
  after(async () => stopAgent(agent));

  it('initialize offers 2 in both shapes; the v2 answer is kept in v1 terms (load and resume served, the agent named)', () => {
    const [init] = received(agent.log);
    expect(init?.method).to.equal('initialize');
    expect(init?.params).to.include({ protocolVersion: 2 });
    expect(init?.params.info).to.deep.include({ name: 'acp-warden' });
    const answer = agentInfo(agent.client);
    expect(answer?.agentInfo).to.deep.include({ name: 'v2-agent' });
    expect(answer?.agentCapabilities).to.deep.include({ loadSession: true });
    expect(answer?.agentCapabilities?.sessionCapabilities).to.deep.include({ resume: {}, close: {} });
  });

  it("a turn: the text of the agent's message, end_turn at the session's idle (after the prompt's messageId)", async () => {
    const { sessionId } = await newSession(agent.client, { cwd });
    const run = prompt(agent.client, sessionId, textPrompt('hello'));
    const [result, updates] = await Promise.all([run.result, collect(run)]);
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(text(updates)).to.equal('Hello from v2');
    // The user's message as v1 chunks with its messageId; no state_update reaches a v1 caller.
    expect(updates.map((update) => update.sessionUpdate)).to.deep.equal(['user_message_chunk', 'agent_message_chunk', 'agent_message_chunk']);
    expect((updates[0] as { messageId?: string }).messageId).to.match(/^user-/u);
  });

  it('a tool call created then updated with its content chunks, a permission asked in v1 shape and answered, end_turn', async () => {
    const { sessionId } = await newSession(agent.client, { cwd });
    permissions.splice(0);
    const run = prompt(agent.client, sessionId, textPrompt('tool'));
    const [result, updates] = await Promise.all([run.result, collect(run)]);
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    const tools = updates.filter((update) => update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update') as Array<SessionUpdate & { toolCallId: string; status?: string; content?: unknown[] }>;
    expect(tools.map((update) => update.sessionUpdate)).to.deep.equal(['tool_call', 'tool_call_update', 'tool_call_update', 'tool_call_update']);
    expect(tools[0]).to.deep.include({ title: 'List the files', kind: 'execute', status: 'in_progress' });
    expect(tools[2]?.content).to.have.length(2);
    expect(tools[3]).to.deep.include({ status: 'completed' });
    expect(permissions).to.have.length(1);
    const [asked] = permissions;
    expect(asked?.toolCall.toolCallId).to.equal(tools[0]?.toolCallId);
    expect(asked?.toolCall.title).to.equal('Run ls?');
    expect(asked?.options.map((option) => option.optionId)).to.deep.equal(['allow', 'reject']);
    expect(asked?._meta?.[V2_PERMISSION_META_KEY]).to.deep.equal({ title: 'Run ls?', description: 'The agent wants to list the files', subject: 'tool_call' });
    expect(text(updates)).to.equal('allowed');
  });

  it("a turn ending idle with an error: the prompt rejects with the agent's error", async () => {
    const { sessionId } = await newSession(agent.client, { cwd });
    const run = prompt(agent.client, sessionId, textPrompt('fail'));
    const error = await run.result.then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).to.be.instanceOf(RpcError);
    expect(error).to.deep.include({ code: -32050, message: 'the model is over its quota', data: { kind: 'quota' } });
  });

  it('cancel: session/cancel, the turn ends cancelled', async () => {
    const { sessionId } = await newSession(agent.client, { cwd });
    const run = prompt(agent.client, sessionId, textPrompt('slow'));
    for await (const update of run.updates) if (update.sessionUpdate === 'agent_message_chunk') break;
    cancelPrompt(agent.client, sessionId);
    expect(await run.result).to.deep.equal({ stopReason: 'cancelled' });
  });

  it('a load is session/resume replaying from the start (the history as v1 updates); a resume is session/resume without replay', async () => {
    const { sessionId } = await newSession(agent.client, { cwd });
    await prompt(agent.client, sessionId, textPrompt('hello')).result;
    const { replayed } = await loadSession(agent.client, { sessionId, cwd });
    expect(text(replayed)).to.equal('Hello from v2');
    await resumeSession(agent.client, { sessionId, cwd });
    const resumes = received(agent.log).filter((request) => request.method === 'session/resume' && request.params.sessionId === sessionId);
    expect(resumes.map((request) => request.params.replayFrom ?? null)).to.deep.equal([{ type: 'start' }, null]);
    expect(received(agent.log).map((request) => request.method)).to.not.include('session/load');
  });
});

describe('ACP client side with protocol auto against an SDK v1 agent', function () {
  this.timeout(20_000);

  it('the agent answers 1: the connection goes on in v1 (a turn ends with its prompt answer)', async () => {
    const agent = startAgent(v1Agent, 'auto', {});
    try {
      const answer = await initialize(agent.client);
      expect(answer.protocolVersion).to.equal(1);
      const { sessionId } = await newSession(agent.client, { cwd: agent.dir });
      const run = prompt(agent.client, sessionId, textPrompt('hello'));
      const [result, updates] = await Promise.all([run.result, collect(run)]);
      expect(result.stopReason).to.equal('end_turn');
      expect(text(updates)).to.not.equal('');
    } finally {
      await stopAgent(agent);
    }
  });

  it('the agent refuses 2 (-32022): asked again with a v1 initialize, the connection is v1 with the client fs it serves', async () => {
    const agent = startAgent(v1Agent, 'auto', {}, ['--refuse-v2']);
    try {
      const answer = await initialize(agent.client);
      expect(answer.protocolVersion).to.equal(1);
      const asked = readFileSync(agent.log, 'utf8').split('\n').filter((line) => line.includes('initialize'));
      expect(asked.map((line) => /protocolVersion=(\d+)/u.exec(line)?.[1])).to.deep.equal(['2', '1']);
      const { sessionId } = await newSession(agent.client, { cwd: agent.dir });
      writeFileSync(join(agent.dir, 'note.txt'), 'served');
      const run = prompt(agent.client, sessionId, textPrompt(`read ${join(agent.dir, 'note.txt')}`));
      const [result, updates] = await Promise.all([run.result, collect(run)]);
      expect(result.stopReason).to.equal('end_turn');
      expect(text(updates)).to.equal('read: served');
    } finally {
      await stopAgent(agent);
    }
  });
});
