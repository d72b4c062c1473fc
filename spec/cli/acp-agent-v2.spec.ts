/**
 * `warden acp --agent acp:<a v2 agent> --agent-protocol v2`, end to end (issue 30, S8): the
 * SDK's v1 client is the editor, warden speaks v2 to a real v2 peer (spec/support/v2-agent.mjs:
 * the SDK's v2 agent app behind its protocol router), and the editor gets what a v1 agent
 * would give it: the text, the tool call created then updated, the permission asked as v1 and
 * its answer taken by the agent, `end_turn`; the agent's error of an error `idle`; `cancelled`;
 * and after a kill -9 of the agent, warden restarts it and re-attaches the session with
 * `session/resume` (no replay); a `session/load` (after a close) replays warden's journal to the
 * editor and resumes the agent's session again (the agent's own replay, `session/resume` with
 * `replayFrom`, is what warden's client sends for a load: spec/acp/agent-client-v2.spec.ts);
 * the next turn works. One warden for the lot; another with `--agent-protocol auto` in front of
 * the SDK's v1 agent goes on in v1.
 */
import { client, methods, type RequestPermissionRequest } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive, waitUntil } from '../support/processes.js';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf, wardenMain as main } from '../support/warden-process.js';

const v2Agent = fileURLToPath(new URL('../support/v2-agent.mjs', import.meta.url));
const v1Agent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

interface Update {
  sessionId: string;
  update: { sessionUpdate: string; toolCallId?: string; status?: string; content?: { type: string; text?: string } };
}

type Editor = { request(method: string, params: unknown): Promise<unknown>; notify(method: string, params: unknown): Promise<void> };

const textOf = (updates: Update[], sessionId: string) =>
  updates
    .filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk')
    .map((entry) => entry.update.content?.text ?? '')
    .join('');

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome, 'the request should have failed').to.not.equal(undefined);
  return outcome as { code: number; message: string; data?: Record<string, unknown> };
}

describe('warden acp driving an ACP v2 agent (--agent-protocol v2; the SDK v1 client as the editor)', function () {
  this.timeout(60_000);
  const launched: ChildProcess[] = [];
  const updates: Update[] = [];
  const permissions: RequestPermissionRequest[] = [];
  let dir: string;
  let log: string;
  let editor: Editor;
  let stderr: () => string;

  /** The requests the agent processes received, as they logged them. */
  const received = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { pid: number; method: string; params: Record<string, unknown> });

  before(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-acp-v2-')));
    log = join(dir, 'requests.ndjson');
    const agent = `acp:${process.execPath} ${v2Agent} --state-dir ${join(dir, 'state')} --log ${log}`;
    // --on-crash fail: its kill -9 case tests the crash's failure itself (the default would continue the turn).
    const child = spawn(process.execPath, [main, 'acp', '--agent', agent, '--agent-protocol', 'v2', '--on-crash', 'fail', '--store', join(dir, 'journal.sqlite')], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    launched.push(child);
    stderr = stderrOf(child);
    void exitCodeOf(child);
    const app = client({ name: 'v1-editor' })
      .onNotification(methods.client.session.update, ({ params }) => {
        updates.push(params as unknown as Update);
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => {
        permissions.push(params);
        return { outcome: { outcome: 'selected' as const, optionId: 'allow' } };
      });
    editor = connectOverStdio(app, child) as unknown as Editor;
    const answer = (await editor.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'v1-editor', version: '1' } })) as Record<string, unknown>;
    expect(answer.protocolVersion, stderr()).to.equal(1);
  });

  after(async () => {
    const pids = [...new Set(received().map((request) => request.pid))];
    await killGroups(launched);
    for (const pid of pids) await waitUntil(() => !isAlive(pid), `v2 agent ${pid} to be gone`, 20_000);
    rmSync(dir, { recursive: true, force: true });
  });

  const newSession = async () => ((await editor.request(methods.agent.session.new, { cwd: dir, mcpServers: [] })) as { sessionId: string }).sessionId;
  const promptOf = (sessionId: string, text: string) => editor.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }) as Promise<{ stopReason: string }>;

  it('warden offered the agent v2 and speaks it: a turn gives the editor its text and end_turn', async () => {
    expect(received()[0]).to.deep.include({ method: 'initialize' });
    expect(received()[0]?.params.protocolVersion).to.equal(2);
    const sessionId = await newSession();
    expect(await promptOf(sessionId, 'hello')).to.deep.equal({ stopReason: 'end_turn' });
    expect(textOf(updates, sessionId)).to.equal('Hello from v2');
  });

  it("a tool call created then updated, the agent's permission request asked of the editor as v1 and answered", async () => {
    const sessionId = await newSession();
    expect(await promptOf(sessionId, 'tool')).to.deep.equal({ stopReason: 'end_turn' });
    const tools = updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate.startsWith('tool_call')).map((entry) => entry.update);
    expect(tools[0]?.sessionUpdate).to.equal('tool_call');
    expect(tools.slice(1).every((update) => update.sessionUpdate === 'tool_call_update')).to.equal(true);
    expect(tools.at(-1)?.status).to.equal('completed');
    const asked = permissions.find((request) => request.sessionId === sessionId);
    expect(asked?.toolCall.toolCallId).to.equal(tools[0]?.toolCallId);
    expect(asked?.options.map((option) => option.optionId)).to.deep.equal(['allow', 'reject']);
    expect(textOf(updates, sessionId)).to.equal('allowed');
  });

  it("a turn the agent ends idle with an error: the editor's prompt gets the agent's error", async () => {
    const sessionId = await newSession();
    const error = await rejection(promptOf(sessionId, 'fail'));
    expect(error).to.deep.include({ code: -32050, message: 'the model is over its quota' });
  });

  it('cancel: the turn ends cancelled', async () => {
    const sessionId = await newSession();
    const running = promptOf(sessionId, 'slow');
    await waitUntil(() => textOf(updates, sessionId) === 'working', 'the slow turn to start');
    await editor.notify(methods.agent.session.cancel, { sessionId });
    expect(await running).to.deep.equal({ stopReason: 'cancelled' });
  });

  it('kill -9 of the agent mid-turn: warden restarts it and resumes the session; closed and loaded, the journal replays to the editor and the agent is resumed again; the next turn works', async () => {
    const sessionId = await newSession();
    expect(await promptOf(sessionId, 'hello')).to.deep.equal({ stopReason: 'end_turn' });
    const crashed = await rejection(promptOf(sessionId, 'die'));
    expect(crashed.data?.reason).to.equal('agent_crashed');
    const resumes = () => received().filter((request) => request.method === 'session/resume' && request.params.sessionId === sessionId);
    await waitUntil(() => resumes().length === 1, 'the restarted agent to resume the session');
    expect(resumes()[0]?.params.replayFrom).to.equal(undefined);
    // Closed, then loaded: the session is opened again, and the agent asked for its history.
    await editor.request(methods.agent.session.close, { sessionId });
    await editor.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
    // The editor's history is warden's journal, replayed to it; the agent is resumed (v2: session/resume without replay).
    expect(textOf(updates, sessionId).split('Hello from v2')).to.have.length(3); // twice: the turn, then its replay (the restart notices between)
    expect(resumes().map((request) => request.params.replayFrom ?? null)).to.deep.equal([null, null]);
    expect(await promptOf(sessionId, 'hello')).to.deep.equal({ stopReason: 'end_turn' });
    expect(textOf(updates, sessionId).split('Hello from v2')).to.have.length(4);
    expect(received().map((request) => request.method)).to.not.include('session/load');
  });
});

describe('warden acp with --agent-protocol auto in front of a v1 agent (the SDK v1 agent)', function () {
  this.timeout(60_000);
  const launched: ChildProcess[] = [];
  let dir: string;

  after(async () => {
    // The agent's pid, from its log lines ("[sdk-agent PID] ...").
    const pids = [...new Set([...readFileSync(join(dir, 'agent.log'), 'utf8').matchAll(/\[sdk-agent (\d+)\]/gu)].map((match) => Number(match[1])))];
    await killGroups(launched);
    for (const pid of pids) await waitUntil(() => !isAlive(pid), `sdk agent ${pid} to be gone`, 20_000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the agent answers 1: warden goes on in v1, a turn ends end_turn', async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-acp-auto-')));
    const log = join(dir, 'agent.log');
    const agent = `acp:${process.execPath} ${v1Agent} --log ${log}`;
    const child = spawn(process.execPath, [main, 'acp', '--agent', agent, '--agent-protocol', 'auto', '--store', ':memory:'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    launched.push(child);
    const stderr = stderrOf(child);
    void exitCodeOf(child);
    const updates: Update[] = [];
    const app = client({ name: 'v1-editor' }).onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as unknown as Update);
    });
    const editor = connectOverStdio(app, child) as unknown as Editor;
    await editor.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'v1-editor', version: '1' } });
    const { sessionId } = (await editor.request(methods.agent.session.new, { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const answer = (await editor.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello' }] })) as { stopReason: string };
    expect(answer.stopReason, stderr()).to.equal('end_turn');
    expect(textOf(updates, sessionId)).to.not.equal('');
    // Offered 2 (in both shapes), answered 1 by the SDK's v1 agent.
    expect(readFileSync(log, 'utf8')).to.contain('initialize protocolVersion=2');
  });
});
