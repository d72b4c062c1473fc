/**
 * A permission request nobody answers holds only its own session (issue 31: "never blocking
 * another session"; qwen serve's P1 #11795 is one idle session's unanswered permission blocking
 * every session of the daemon). A real `warden serve` with the demo agent (its tool asks
 * permission in mode ask): one session's turn waits on a permission its client never answers,
 * while other sessions, on the same connection and on another, run turns (and a permission of
 * their own) to their end; then the waiting session's client goes away, and a client that
 * attaches later is asked the same permission and ends the turn.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { waitUntil } from '../support/processes.js';
import { initializeParams, socketClient, startServe, type Frame, type LineClient } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];

describe('warden serve: a permission nobody answers holds only its own session (issue 31)', function () {
  this.timeout(120_000);
  let state: string;
  let cwd: string;

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-permission-isolation-')));
    cwd = join(state, 'project');
    mkdirSync(cwd);
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  const permissionsOf = (client: LineClient, sessionId: string) => client.frames.filter((frame) => frame.method === 'session/request_permission' && frame.params?.sessionId === sessionId);
  const allow = (client: LineClient, request: Frame) => client.send({ id: request.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });

  it('other sessions, on the same connection and on another, run turns and permissions to their end meanwhile; a client attaching later is asked it and ends the turn', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--env', 'DEMO_WORD_DELAY_MS=1'], launched);
    const first = await socketClient(daemon, sockets);
    await first.request(1, 'initialize', initializeParams('permission-isolation-first'));
    const waiting = (await first.request(2, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    const beside = (await first.request(3, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
    first.send({ id: 4, method: 'session/prompt', params: { sessionId: waiting, prompt: [{ type: 'text', text: 'tool' }] } });
    await waitUntil(() => permissionsOf(first, waiting).length === 1, 'the unanswered permission request', 30_000);

    // The same connection, another session: a plain turn, and a turn with its own permission, answered.
    expect((await first.request(5, 'session/prompt', { sessionId: beside, prompt: [{ type: 'text', text: 'hello' }] })).result).to.deep.include({ stopReason: 'end_turn' });
    const besideTool = first.request(6, 'session/prompt', { sessionId: beside, prompt: [{ type: 'text', text: 'tool' }] });
    await waitUntil(() => permissionsOf(first, beside).length === 1, 'the other session\'s permission request', 30_000);
    allow(first, permissionsOf(first, beside)[0]!);
    expect((await besideTool).result).to.deep.include({ stopReason: 'end_turn' });

    // Another connection, sessions of its own.
    const second = await socketClient(daemon, sockets);
    await second.request(1, 'initialize', initializeParams('permission-isolation-second'));
    const others = await Promise.all([0, 1, 2].map(async (index) => (await second.request(10 + index, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string));
    const ends = await Promise.all(others.map((sessionId, index) => second.request(20 + index, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: `hello ${index}` }] })));
    expect(ends.map((end) => end.result?.stopReason)).to.deep.equal(['end_turn', 'end_turn', 'end_turn']);

    // All this time the first turn waited, unanswered.
    expect(first.frames.some((frame) => frame.id === 4 && frame.method === undefined)).to.equal(false);

    // Its client goes away; one that attaches later is asked the same permission and ends the turn.
    first.socket.close();
    await first.closed;
    const third = await socketClient(daemon, sockets);
    await third.request(1, 'initialize', initializeParams('permission-isolation-third'));
    const resumed = await third.request(2, 'session/resume', { sessionId: waiting, cwd, mcpServers: [] });
    expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
    await waitUntil(() => permissionsOf(third, waiting).length === 1, 'the permission asked of the client that attached', 30_000);
    const asked = permissionsOf(third, waiting)[0]!;
    expect(asked.params).to.deep.include({ sessionId: waiting });
    allow(third, asked);
    await waitUntil(() => third.frames.some((frame) => frame.params?.sessionId === waiting && frame.params?.update?._meta?.['acp-warden/turnEnded'] !== undefined), 'the turn to end', 30_000);
    const turnEnded = third.frames.find((frame) => frame.params?.sessionId === waiting && frame.params?.update?._meta?.['acp-warden/turnEnded'] !== undefined);
    expect(turnEnded?.params?.update?._meta?.['acp-warden/turnEnded']).to.deep.equal({ stopReason: 'end_turn' });
    // The agent's words say the tool ran: the allow reached it.
    const said = third.frames.filter((frame) => frame.params?.sessionId === waiting && frame.params?.update?.sessionUpdate === 'agent_message_chunk').map((frame) => frame.params?.update?.content?.text ?? '').join('');
    expect(said).to.contain('I ran the demo tool; it said hello.');
  });
});
