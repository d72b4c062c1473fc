/**
 * The demo agent: its modes, rejected tools and sessions served side by side, on the machine
 * itself with a SimulatedClock for the word delays (issue 14); and sessions it does not know
 * (a host that restarted resumes or loads the sessions it journaled), through our agent
 * server, driven by our ACP client.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { createActor, SimulatedClock, type AnyActorRef } from 'xstate';
import { agentClientLogic, initialize, loadSession, newSession, prompt, resumeSession } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { demoAgent, demoAgentMachine } from '../../src/acp/demo-agent.js';
import type { AgentEventContext, AgentHandlerOutput } from '../../src/protocol/native-agent.js';
import { schemaOf } from '../../src/acp/schemas.js';
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

// ---------------------------------------------------------------------------------------
// The machine alone: events in, emitted outputs recorded, words on a SimulatedClock.

const wordDelayMs = 10;
const eventContext: AgentEventContext = { protocolVersion: 1, clientCapabilities: {}, clientInfo: undefined };

/** The demo agent's machine on a simulated clock, with everything it emits in order. */
function machine() {
  const clock = new SimulatedClock();
  const agent = createActor(demoAgentMachine, { input: { wordDelayMs }, clock });
  const out: AgentHandlerOutput[] = [];
  agent.on('*', (event) => out.push(event as AgentHandlerOutput));
  agent.start();
  actors.push(agent);
  let requests = 0;
  const request = (type: string, params: Record<string, unknown>) => {
    const requestId = `r${++requests}`;
    agent.send({ type, requestId, method: type, params, context: eventContext } as never);
    return requestId;
  };
  const answerOf = (requestId: string) => out.find((entry) => (entry.type === 'acp.respond' || entry.type === 'acp.error') && entry.requestId === requestId);
  return {
    agent,
    out,
    request,
    answerOf,
    newSession(): string {
      const id = request('session.new', { cwd: '/work', mcpServers: [] });
      return ((answerOf(id) as { result: { sessionId: string } }).result).sessionId;
    },
    prompt: (sessionId: string, text: string) => request('session.prompt', { sessionId, prompt: [{ type: 'text', text }] }),
    /** Lets simulated time pass, word by word, until `done()` or `limit` words' worth of time. */
    advance(done: () => boolean, limit = 400) {
      for (let step = 0; step < limit && !done(); step++) clock.increment(wordDelayMs);
    },
    updatesOf: (sessionId: string) => out.filter((entry): entry is Extract<AgentHandlerOutput, { type: 'acp.update' }> => entry.type === 'acp.update' && entry.sessionId === sessionId).map((entry) => entry.update),
    permissionRequests: () => out.filter((entry): entry is Extract<AgentHandlerOutput, { type: 'acp.clientRequest' }> => entry.type === 'acp.clientRequest'),
    answerPermission(key: string, result: unknown) {
      agent.send({ type: 'client.response', key, result });
    },
  };
}

type Machine = ReturnType<typeof machine>;

const toolStatuses = (updates: SessionUpdate[]) => updates.filter((update) => update.sessionUpdate === 'tool_call' || update.sessionUpdate === 'tool_call_update').map((update) => `${update.sessionUpdate}:${(update as { status?: string }).status}`);
const toolText = (updates: SessionUpdate[]) => updates.filter((update) => update.sessionUpdate === 'tool_call_update').map((update) => ((update as { content?: Array<{ content: { text: string } }> }).content ?? []).map((item) => item.content.text).join('')).join('');
const stopReasonOf = (m: Machine, requestId: string) => (m.answerOf(requestId) as { result?: { stopReason?: string } } | undefined)?.result?.stopReason;

/** A tool prompt in a fresh session answered with `result`; what came of it. */
function toolTurnAnswered(result: unknown) {
  const m = machine();
  const sessionId = m.newSession();
  const run = m.prompt(sessionId, 'please run the tool');
  const [ask] = m.permissionRequests();
  expect(ask?.method).to.equal('session/request_permission');
  m.answerPermission(ask!.key, result);
  m.advance(() => m.answerOf(run) !== undefined);
  const updates = m.updatesOf(sessionId);
  return { m, sessionId, updates, stopReason: stopReasonOf(m, run), said: said(updates) };
}

describe('demo agent: modes (issue 14)', () => {
  afterEach(() => {
    for (const actor of actors.splice(0)) actor.stop();
  });

  it('mode auto runs the tool without asking: no permission request, the tool call reports completed', () => {
    const m = machine();
    const sessionId = m.newSession();
    const mode = m.request('session.setMode', { sessionId, modeId: 'auto' });
    expect(m.answerOf(mode)).to.deep.include({ type: 'acp.respond' });
    const run = m.prompt(sessionId, 'please run the tool');
    m.advance(() => m.answerOf(run) !== undefined);
    expect(m.permissionRequests()).to.deep.equal([]);
    const updates = m.updatesOf(sessionId);
    expect(toolStatuses(updates)).to.deep.equal(['tool_call:in_progress', 'tool_call_update:completed']);
    expect(toolText(updates)).to.equal('demo tool: hello from the tool');
    expect(said(updates)).to.include('I ran the demo tool');
    expect(stopReasonOf(m, run)).to.equal('end_turn');
  });

  it('mode ask asks before running the tool; nothing runs until the answer, allow_once completes it', () => {
    const m = machine();
    const sessionId = m.newSession();
    const run = m.prompt(sessionId, 'please run the tool');
    m.advance(() => false, 50);
    expect(m.permissionRequests()).to.have.length(1);
    expect(toolStatuses(m.updatesOf(sessionId))).to.deep.equal(['tool_call:pending']);
    expect(said(m.updatesOf(sessionId))).to.equal('');
    const [ask] = m.permissionRequests();
    const options = (ask!.params as { options: Array<{ kind: string }> }).options.map((option) => option.kind);
    expect(options).to.deep.equal(['allow_once', 'allow_always', 'reject_once', 'reject_always']);
    m.answerPermission(ask!.key, { outcome: { outcome: 'selected', optionId: 'allow' } });
    m.advance(() => m.answerOf(run) !== undefined);
    expect(toolStatuses(m.updatesOf(sessionId))).to.deep.equal(['tool_call:pending', 'tool_call_update:completed']);
    expect(stopReasonOf(m, run)).to.equal('end_turn');
  });

  it('back in mode ask after auto, it asks again', () => {
    const m = machine();
    const sessionId = m.newSession();
    m.request('session.setMode', { sessionId, modeId: 'auto' });
    const first = m.prompt(sessionId, 'tool');
    m.advance(() => m.answerOf(first) !== undefined);
    m.request('session.setMode', { sessionId, modeId: 'ask' });
    m.prompt(sessionId, 'tool again');
    expect(m.permissionRequests()).to.have.length(1);
  });

  it('mode plan runs no tool and asks nothing: a plan entry says what it would run, no tool call, and the answer says so', () => {
    const m = machine();
    const sessionId = m.newSession();
    const created = m.out.find((entry) => entry.type === 'acp.respond') as { result: { modes: { availableModes: Array<{ id: string }> } } };
    expect(created.result.modes.availableModes.map((mode) => mode.id)).to.deep.equal(['ask', 'auto', 'plan']);
    m.request('session.setMode', { sessionId, modeId: 'plan' });
    const run = m.prompt(sessionId, 'please run the tool');
    m.advance(() => m.answerOf(run) !== undefined);
    expect(m.permissionRequests()).to.deep.equal([]);
    const updates = m.updatesOf(sessionId);
    expect(toolStatuses(updates)).to.deep.equal([]);
    const plan = updates.find((update) => update.sessionUpdate === 'plan') as { entries: Array<{ content: string; status: string }> } | undefined;
    expect(plan?.entries).to.deep.equal([{ content: 'Run the demo tool: demo-tool --greet', priority: 'medium', status: 'pending' }]);
    expect(said(updates)).to.include('In mode plan I only say what I would do');
    expect(schemaOf('SessionNotification').safeParse({ sessionId, update: plan }).success).to.equal(true);
    expect(stopReasonOf(m, run)).to.equal('end_turn');
  });

  it('an unknown mode is refused with -32602 naming the modes; the session keeps its mode', () => {
    const m = machine();
    const sessionId = m.newSession();
    const bad = m.request('session.setMode', { sessionId, modeId: 'yolo' });
    const answer = m.answerOf(bad) as { type: string; error: { code: number; message: string } };
    expect(answer.type).to.equal('acp.error');
    expect(answer.error.code).to.equal(-32602);
    expect(answer.error.message).to.include('ask, auto, plan');
    m.prompt(sessionId, 'tool');
    expect(m.permissionRequests()).to.have.length(1);
  });
});

describe('demo agent: a rejected tool (issue 14)', () => {
  afterEach(() => {
    for (const actor of actors.splice(0)) actor.stop();
  });

  for (const [how, result, text] of [
    ['reject_once', { outcome: { outcome: 'selected', optionId: 'reject' } }, 'you rejected it'],
    ['reject_always', { outcome: { outcome: 'selected', optionId: 'reject-always' } }, 'you rejected it'],
    ['a cancelled permission', { outcome: { outcome: 'cancelled' } }, 'the permission request was cancelled'],
    ['an option it never offered', { outcome: { outcome: 'selected', optionId: 'bogus' } }, 'you rejected it'],
  ] as const) {
    it(`${how}: the tool call reports failed with a short reason, never completed, and the answer says so`, () => {
      const { updates, stopReason, said: answer } = toolTurnAnswered(result);
      expect(toolStatuses(updates)).to.deep.equal(['tool_call:pending', 'tool_call_update:failed']);
      expect(toolText(updates)).to.match(/^demo tool: not run, /u);
      expect(answer).to.include(`I did not run the demo tool: ${text}`);
      expect(answer).to.not.include('I ran the demo tool');
      expect(stopReason).to.equal('end_turn');
    });
  }

  it('a permission request the client failed: the tool call fails, the turn ends', () => {
    const m = machine();
    const sessionId = m.newSession();
    const run = m.prompt(sessionId, 'tool');
    const [ask] = m.permissionRequests();
    m.agent.send({ type: 'client.error', key: ask!.key, error: { code: -32603, message: 'editor trouble' } });
    m.advance(() => m.answerOf(run) !== undefined);
    expect(toolStatuses(m.updatesOf(sessionId))).to.deep.equal(['tool_call:pending', 'tool_call_update:failed']);
    expect(said(m.updatesOf(sessionId))).to.include('the permission request failed');
  });

  it('reject_always holds for the session: the next tool prompt does not ask and fails; another session still asks', () => {
    const { m, sessionId } = toolTurnAnswered({ outcome: { outcome: 'selected', optionId: 'reject-always' } });
    const next = m.prompt(sessionId, 'the tool once more');
    m.advance(() => m.answerOf(next) !== undefined);
    expect(m.permissionRequests()).to.have.length(1);
    expect(toolStatuses(m.updatesOf(sessionId))).to.deep.equal(['tool_call:pending', 'tool_call_update:failed', 'tool_call:pending', 'tool_call_update:failed']);
    const other = m.newSession();
    m.prompt(other, 'tool');
    expect(m.permissionRequests()).to.have.length(2);
  });

  it('allow_always holds for the session: the next tool prompt runs without asking', () => {
    const { m, sessionId } = toolTurnAnswered({ outcome: { outcome: 'selected', optionId: 'allow-always' } });
    const next = m.prompt(sessionId, 'the tool once more');
    m.advance(() => m.answerOf(next) !== undefined);
    expect(m.permissionRequests()).to.have.length(1);
    expect(toolStatuses(m.updatesOf(sessionId)).slice(-2)).to.deep.equal(['tool_call:in_progress', 'tool_call_update:completed']);
  });

  it('a cancel while the permission is out: the tool call fails, the prompt ends cancelled, a late answer changes nothing', () => {
    const m = machine();
    const sessionId = m.newSession();
    const run = m.prompt(sessionId, 'tool');
    const [ask] = m.permissionRequests();
    m.agent.send({ type: 'session.cancel', sessionId, requestId: run, context: eventContext });
    expect(stopReasonOf(m, run)).to.equal('cancelled');
    m.answerPermission(ask!.key, { outcome: { outcome: 'selected', optionId: 'allow' } });
    m.advance(() => false, 50);
    expect(toolStatuses(m.updatesOf(sessionId))).to.deep.equal(['tool_call:pending', 'tool_call_update:failed']);
    expect(m.agent.getSnapshot().value).to.equal('idle');
  });

  it('the tool call ids differ from turn to turn, so a history of several tool turns stays unambiguous', () => {
    const m = machine();
    const sessionId = m.newSession();
    m.request('session.setMode', { sessionId, modeId: 'auto' });
    for (const text of ['tool one', 'tool two']) {
      const run = m.prompt(sessionId, text);
      m.advance(() => m.answerOf(run) !== undefined);
    }
    const ids = m.updatesOf(sessionId).filter((update) => update.sessionUpdate === 'tool_call').map((update) => (update as { toolCallId: string }).toolCallId);
    expect(new Set(ids).size).to.equal(2);
  });
});

describe('demo agent: sessions served concurrently (issue 14)', () => {
  afterEach(() => {
    for (const actor of actors.splice(0)) actor.stop();
  });

  it('two sessions prompted at once stream interleaved, word by word, and both end', () => {
    const m = machine();
    const a = m.newSession();
    const b = m.newSession();
    const runA = m.prompt(a, 'alpha');
    const runB = m.prompt(b, 'bravo');
    expect(m.answerOf(runB), 'the second session is not refused').to.equal(undefined);
    m.advance(() => m.answerOf(runA) !== undefined && m.answerOf(runB) !== undefined);
    const chunks = m.out.filter((entry) => entry.type === 'acp.update' && entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => (entry as { sessionId: string }).sessionId);
    // Each word delay streams one word of each session.
    expect(chunks.slice(0, 6)).to.deep.equal([a, b, a, b, a, b]);
    expect(stopReasonOf(m, runA)).to.equal('end_turn');
    expect(stopReasonOf(m, runB)).to.equal('end_turn');
    expect(said(m.updatesOf(a))).to.equal('You said: alpha. This is the acp-warden demo agent, answering word by word.');
    expect(said(m.updatesOf(b))).to.equal('You said: bravo. This is the acp-warden demo agent, answering word by word.');
  });

  it('a session waiting for permission does not block another: it streams and ends meanwhile', () => {
    const m = machine();
    const a = m.newSession();
    const b = m.newSession();
    const runA = m.prompt(a, 'run the tool');
    const runB = m.prompt(b, 'hello');
    m.advance(() => m.answerOf(runB) !== undefined);
    expect(stopReasonOf(m, runB)).to.equal('end_turn');
    expect(m.answerOf(runA), 'A still waits for its permission').to.equal(undefined);
    expect(m.agent.getSnapshot().value).to.equal('serving');
    const [ask] = m.permissionRequests();
    expect((ask!.params as { sessionId: string }).sessionId).to.equal(a);
    m.answerPermission(ask!.key, { outcome: { outcome: 'selected', optionId: 'allow' } });
    m.advance(() => m.answerOf(runA) !== undefined);
    expect(stopReasonOf(m, runA)).to.equal('end_turn');
    expect(m.agent.getSnapshot().value).to.equal('idle');
  });

  it('permissions out in two sessions at once: each answer reaches its own session\'s turn', () => {
    const m = machine();
    const a = m.newSession();
    const b = m.newSession();
    const runA = m.prompt(a, 'tool');
    const runB = m.prompt(b, 'tool');
    const asks = m.permissionRequests();
    expect(asks.map((ask) => (ask.params as { sessionId: string }).sessionId)).to.deep.equal([a, b]);
    // Answered in the other order: B rejected, then A allowed.
    m.answerPermission(asks[1]!.key, { outcome: { outcome: 'selected', optionId: 'reject' } });
    m.answerPermission(asks[0]!.key, { outcome: { outcome: 'selected', optionId: 'allow' } });
    m.advance(() => m.answerOf(runA) !== undefined && m.answerOf(runB) !== undefined);
    expect(toolStatuses(m.updatesOf(a))).to.deep.equal(['tool_call:pending', 'tool_call_update:completed']);
    expect(toolStatuses(m.updatesOf(b))).to.deep.equal(['tool_call:pending', 'tool_call_update:failed']);
  });

  it('cancel ends only its own session\'s prompt; the other streams on to the end', () => {
    const m = machine();
    const a = m.newSession();
    const b = m.newSession();
    const runA = m.prompt(a, 'alpha');
    const runB = m.prompt(b, 'bravo');
    m.advance(() => false, 3);
    m.agent.send({ type: 'session.cancel', sessionId: a, requestId: runA, context: eventContext });
    expect(stopReasonOf(m, runA)).to.equal('cancelled');
    expect(m.answerOf(runB)).to.equal(undefined);
    const saidByA = said(m.updatesOf(a));
    m.advance(() => m.answerOf(runB) !== undefined);
    expect(stopReasonOf(m, runB)).to.equal('end_turn');
    expect(said(m.updatesOf(b))).to.equal('You said: bravo. This is the acp-warden demo agent, answering word by word.');
    expect(said(m.updatesOf(a)), 'nothing more from the cancelled turn').to.equal(saidByA);
  });

  it('one prompt at a time per session: a second one while the first runs is refused, the first goes on', () => {
    const m = machine();
    const a = m.newSession();
    const first = m.prompt(a, 'one');
    const second = m.prompt(a, 'two');
    expect(m.answerOf(second)).to.deep.include({ type: 'acp.error' });
    expect((m.answerOf(second) as { error: { code: number } }).error.code).to.equal(-32603);
    m.advance(() => m.answerOf(first) !== undefined);
    expect(said(m.updatesOf(a))).to.equal('You said: one. This is the acp-warden demo agent, answering word by word.');
    const third = m.prompt(a, 'three');
    m.advance(() => m.answerOf(third) !== undefined);
    expect(stopReasonOf(m, third)).to.equal('end_turn');
  });

  it('a finished, cancelled or refused turn leaves nothing behind: no child actor, no turn entry', () => {
    const m = machine();
    const sessions = Array.from({ length: 20 }, () => m.newSession());
    const runs = sessions.map((sessionId, index) => m.prompt(sessionId, index % 2 === 0 ? 'hello' : 'run the tool'));
    expect(Object.keys(m.agent.getSnapshot().children)).to.have.length(20);
    for (const [index, ask] of m.permissionRequests().entries()) m.answerPermission(ask.key, { outcome: { outcome: 'selected', optionId: index % 2 === 0 ? 'allow' : 'reject' } });
    m.agent.send({ type: 'session.cancel', sessionId: sessions[0]!, requestId: runs[0]!, context: eventContext });
    m.advance(() => runs.every((run) => m.answerOf(run) !== undefined));
    expect(runs.map((run) => stopReasonOf(m, run))).to.deep.equal(['cancelled', ...Array.from({ length: 19 }, () => 'end_turn')]);
    const snapshot = m.agent.getSnapshot();
    expect(Object.keys(snapshot.children)).to.deep.equal([]);
    expect(snapshot.context.turns).to.deep.equal({});
    expect(snapshot.value).to.equal('idle');
    // Everything it said on the way conforms to the ACP schema.
    for (const entry of m.out) {
      if (entry.type === 'acp.update') expect(schemaOf('SessionNotification').safeParse({ sessionId: entry.sessionId, update: entry.update }).success, JSON.stringify(entry.update)).to.equal(true);
      if (entry.type === 'acp.clientRequest') expect(schemaOf('RequestPermissionRequest').safeParse(entry.params).success, JSON.stringify(entry.params)).to.equal(true);
    }
  });

  it('load after concurrent turns replays each session\'s own history', () => {
    const m = machine();
    const a = m.newSession();
    const b = m.newSession();
    const runA = m.prompt(a, 'alpha');
    const runB = m.prompt(b, 'bravo');
    m.advance(() => m.answerOf(runA) !== undefined && m.answerOf(runB) !== undefined);
    const before = m.out.length;
    m.request('session.load', { sessionId: a, cwd: '/work', mcpServers: [] });
    const replayed = m.out.slice(before).filter((entry) => entry.type === 'acp.update') as Array<{ sessionId: string; update: SessionUpdate }>;
    expect(replayed.map((entry) => entry.sessionId)).to.deep.equal([a, a]);
    expect(said(replayed.map((entry) => entry.update))).to.equal('You said: alpha. This is the acp-warden demo agent, answering word by word.');
  });
});
