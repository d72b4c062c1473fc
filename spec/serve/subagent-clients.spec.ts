/**
 * Subagent sessions behind `warden serve` (issue 30; docs/serve.md, "Subagent sessions"): a
 * real daemon hosting spec/support/subagent-agent.mjs (a v1 agent that runs a child session
 * the way claude-agent-acp 0.101.0 does, only for a client that advertised `subagents`). A v2
 * client (subagents are its baseline) over HTTP makes the daemon tell its agents `subagents`;
 * it controls a session whose task runs a child, watched over WebSocket by a v1 client that
 * asked for subagents and one that did not. Those that take subagents get the announcement on
 * the parent and the child's updates under the child's id; the other one gets the parent's own
 * updates only. `session/list` shows the child under its parent to those that take subagents.
 * A client that loads the child gets its history alone, then its live updates. A daemon none of
 * whose clients asks never tells its agents: its clients get what they got before.
 */
import { client as v2Client } from '@agentclientprotocol/sdk/experimental/v2';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WebSocket } from 'ws';
import { waitUntil } from '../support/processes.js';
import { socketClient, startServe, type Frame, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const subagentAgent = fileURLToPath(new URL('../support/subagent-agent.mjs', import.meta.url));

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly sessionId?: string; readonly state?: unknown; readonly [key: string]: unknown };
}

/** What a client was shown, as `<sessionId> <kind>` lines (an announcement with its child), without the turn's bookkeeping. */
const linesOf = (updates: ReadonlyArray<{ sessionId?: string; update?: { sessionUpdate?: string; sessionId?: unknown } }>) =>
  updates
    .filter(({ update }) => !['available_commands_update', 'user_message', 'user_message_chunk', 'state_update', 'config_option_update', 'session_info_update', 'replay_complete'].includes(update?.sessionUpdate ?? ''))
    .map(({ sessionId, update }) => `${sessionId} ${update?.sessionUpdate}${update?.sessionUpdate === 'subagent_update' ? ` ${String(update.sessionId)}` : ''}`);

const v1Updates = (frames: readonly Frame[]) => frames.filter((frame) => frame.method === 'session/update').map((frame) => frame.params as { sessionId?: string; update?: { sessionUpdate?: string; sessionId?: unknown } });

describe('warden serve: subagent sessions for v1 and v2 clients', function () {
  this.timeout(60_000);
  const launched: ChildProcess[] = [];
  const sockets: WebSocket[] = [];
  let state: string;
  let cwd: string;
  let daemon: ServeDaemon;

  before(async () => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-serve-subagents-')));
    cwd = join(state, 'project');
    mkdirSync(cwd);
    daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--store', join(state, 'journal.sqlite'), '--agent', `acp:${process.execPath} ${subagentAgent} --log ${join(state, 'agent.log')}`], launched);
  });
  after(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  const initializes = () =>
    (existsSync(join(state, 'agent.log')) ? readFileSync(join(state, 'agent.log'), 'utf8') : '')
      .trim()
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { method: string; params: { clientCapabilities?: Record<string, unknown> } })
      .filter((request) => request.method === 'initialize');

  it('a daemon whose clients do not ask: the agent is never told, and a v1 client gets the child\'s words in the parent, as without subagents', async () => {
    const quiet = join(state, 'quiet');
    mkdirSync(quiet);
    const plainDaemon = await startServe(quiet, ['--listen', '127.0.0.1:0', '--store', join(quiet, 'journal.sqlite'), '--agent', `acp:${process.execPath} ${subagentAgent} --log ${join(quiet, 'agent.log')}`], launched);
    const client = await socketClient(plainDaemon, sockets);
    await client.request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'v1-plain', version: '1' } });
    const sessionId = (await client.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    expect((await client.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'task: look at the files' }] })).result?.stopReason).to.equal('end_turn');
    const seen = v1Updates(client.frames).filter((update) => update.sessionId === sessionId && update.update?.sessionUpdate === 'agent_message_chunk');
    expect(seen.map((update) => (update.update as { content?: { text?: string } }).content?.text).join('')).to.equal('child: looked at the files. done');
    expect(v1Updates(client.frames).every((update) => update.sessionId === sessionId)).to.equal(true);
    const told = readFileSync(join(quiet, 'agent.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { method: string; params: { clientCapabilities?: Record<string, unknown> } });
    for (const request of told.filter(({ method }) => method === 'initialize')) expect(request.params.clientCapabilities).to.not.have.property('subagents');
    plainDaemon.process.kill('SIGTERM');
    await plainDaemon.exited;
  });

  it('the agent is told once a client takes subagents; the v2 controller and the v1 observer that asked get the child under its id, the v1 observer that did not gets the parent\'s updates only; the child is listed under its parent', async () => {
    // Before any client: the daemon's own initialize (if the agent started yet), without subagents.
    for (const early of initializes()) expect(early.params.clientCapabilities).to.not.have.property('subagents');

    const updates: Notified[] = [];
    const app = v2Client({ name: 'serve-subagents-spec' }).onNotification('session/update', ({ params }) => {
      updates.push(params as unknown as Notified);
    });
    const connection = app.connect(createHttpStream(daemon.url.replace(/^ws/u, 'http'), { headers: { Authorization: `Bearer ${daemon.token}` } }) as never);
    expect((await connection.agent.request('initialize', { protocolVersion: 2, info: { name: 'serve-subagents-spec', version: '1' }, capabilities: {} })).protocolVersion).to.equal(2);
    const active = await connection.agent.buildSession(cwd).start();
    const parent = active.sessionId;
    // The agent that ran no session was started again, told `subagents`.
    expect(initializes().at(-1)?.params.clientCapabilities).to.deep.include({ subagents: {} });

    const asking = await socketClient(daemon, sockets);
    await asking.request(1, 'initialize', { protocolVersion: 1, clientCapabilities: { subagents: {} }, clientInfo: { name: 'v1-subagents', version: '1' } });
    const plain = await socketClient(daemon, sockets);
    await plain.request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'v1-plain', version: '1' } });
    for (const observer of [asking, plain]) expect((await observer.request(2, 'session/resume', { sessionId: parent, cwd, mcpServers: [] })).error).to.equal(undefined);

    await active.prompt('task: look at the files');
    await active.readTextUntilIdle();
    const child = `${parent}-child-1`;
    const expected = [`${parent} subagent_update ${child}`, `${child} agent_message_chunk`, `${child} tool_call`, `${child} tool_call_update`, `${parent} subagent_update ${child}`, `${parent} agent_message_chunk`];
    // v2 shows a tool call's creation as an upsert. Over HTTP each session's messages keep their order, not the order across sessions (the child's may come after the parent's idle).
    const v2Expected = expected.map((line) => (line === `${child} tool_call` ? `${child} tool_call_update` : line));
    await waitUntil(() => linesOf(updates).length >= v2Expected.length, 'the child\'s updates at the v2 controller');
    for (const id of [parent, child]) expect(linesOf(updates).filter((line) => line.startsWith(`${id} `))).to.deep.equal(v2Expected.filter((line) => line.startsWith(`${id} `)));
    await waitUntil(() => linesOf(v1Updates(asking.frames)).includes(`${parent} agent_message_chunk`), 'the observer that asked to see the answer');
    expect(linesOf(v1Updates(asking.frames))).to.deep.equal(expected);
    await waitUntil(() => linesOf(v1Updates(plain.frames)).includes(`${parent} agent_message_chunk`), 'the observer that did not ask to see the answer');
    expect(linesOf(v1Updates(plain.frames))).to.deep.equal([`${parent} agent_message_chunk`]);

    const listedBy = async (client: typeof asking, id: number) => ((await client.request(id, 'session/list', {})).result?.sessions as Array<{ sessionId: string; _meta?: Record<string, unknown> }>).map((session) => `${session.sessionId}${session._meta?.['acp-warden/parentSessionId'] ? ` < ${String(session._meta['acp-warden/parentSessionId'])}` : ''}`);
    expect((await listedBy(asking, 3)).sort()).to.deep.equal([parent, `${child} < ${parent}`].sort());
    expect(await listedBy(plain, 3)).to.deep.equal([parent]);

    // A client of the child alone: its load replays the child's updates only, then the answer; the child's next words reach it live.
    const ofChild = await socketClient(daemon, sockets);
    await ofChild.request(1, 'initialize', { protocolVersion: 1, clientCapabilities: { subagents: {} }, clientInfo: { name: 'v1-child', version: '1' } });
    const loaded = await ofChild.request(2, 'session/load', { sessionId: child, cwd, mcpServers: [] });
    expect(loaded.error).to.equal(undefined);
    expect((loaded.result?._meta as Record<string, unknown> | undefined)?.['acp-warden/replayComplete']).to.not.equal(undefined);
    expect(linesOf(v1Updates(ofChild.frames))).to.deep.equal([`${child} agent_message_chunk`, `${child} tool_call`, `${child} tool_call_update`]);
    await active.prompt('continue');
    await active.readTextUntilIdle();
    await waitUntil(() => linesOf(v1Updates(ofChild.frames)).length === 4, 'the child\'s next words');
    expect(linesOf(v1Updates(ofChild.frames)).at(-1)).to.equal(`${child} agent_message_chunk`);
    connection.close();
  });
});
