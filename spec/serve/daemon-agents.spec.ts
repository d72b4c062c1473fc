/**
 * Claude Code and Codex (the fake CLIs of spec/support, replaying recorded transcripts) as the
 * agents of a real `warden serve` (issue 16): one daemon, both agents found by their bare names
 * on its PATH, a session of each (`_meta["acp-warden/agent"]` chooses). The client goes away
 * mid-turn (kill -9 of its bridge; its WebSocket closed), a new connection resumes with
 * `_meta["acp-warden/after"]` = the last seq it saw, and gets every update after it once, in
 * order, then the turn's end (the `turnEnded` session_info_update); checked against the
 * journal's whole history (`session/load` by a third client).
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { pathDirectory } from '../support/launch-harness.js';
import { childrenOf, expectGroupGone, groupMembers, waitUntil } from '../support/processes.js';
import { repo } from '../support/real-agents-harness.js';
import {
  agentText,
  bridgeClient,
  cursorKeys,
  initializeParams,
  lastSeqOf,
  seqUpdatesOf,
  socketClient,
  startServe,
  type LineClient,
  type SeqUpdate,
  type ServeDaemon,
} from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = initializeParams('daemon-agents-test-editor');

/** The daemon's agent processes running `name` from the test's bin directory. */
const agentsNamed = (daemon: ServeDaemon, bin: string, name: string) => childrenOf(daemon.process.pid as number).filter((child) => child.cmdline.includes(join(bin, name))).map((child) => child.pid);

/** Seqs of `updates`, checked to be journaled (each carries a number). */
function seqsOf(updates: readonly SeqUpdate[]): number[] {
  expect(updates.every((update) => typeof update.seq === 'number'), `every update carries its seq: ${JSON.stringify(updates)}`).to.equal(true);
  return updates.map((update) => update.seq as number);
}

/**
 * What a client resuming after `lastSeen` got, checked: only later seqs, each once, in order,
 * ending with the turn's end `end_turn`; and, with what the first client saw, exactly the
 * journal's history as a `session/load` replays it (the turn end included, under the seq of
 * the turn's journaled stop).
 */
async function expectTheRest(daemon: ServeDaemon, sessionId: string, cwd: string, seen: readonly SeqUpdate[], resumed: LineClient): Promise<SeqUpdate[]> {
  const lastSeen = lastSeqOf(seen);
  await waitUntil(() => seqUpdatesOf(resumed.frames, sessionId).some((update) => update.turnEnded !== undefined), 'the turn end on the resumed connection', 60_000);
  const rest = seqUpdatesOf(resumed.frames, sessionId);
  const restSeqs = seqsOf(rest);
  expect(restSeqs.every((seq) => seq > lastSeen), `only what came after seq ${lastSeen}: ${restSeqs.join(',')}`).to.equal(true);
  expect(restSeqs, 'each once, in order').to.deep.equal([...new Set(restSeqs)].sort((a, b) => a - b));
  expect(rest.at(-1)?.turnEnded, 'the last update is the turn end').to.deep.equal({ stopReason: 'end_turn' });

  const loader = await socketClient(daemon, sockets);
  await loader.request(1, 'initialize', initialize);
  expect((await loader.request(2, 'session/load', { sessionId, cwd, mcpServers: [] })).error).to.equal(undefined);
  // The prompt is in the history a load replays; the clients that resumed did not ask for it.
  const history = seqUpdatesOf(loader.frames, sessionId).filter((update) => update.kind !== 'user_message_chunk');
  const seenSeqs = seqsOf(seen);
  expect([...seenSeqs, ...restSeqs], 'what the editor saw, then the rest: the whole history, nothing twice').to.deep.equal(seqsOf(history));
  expect([...seen, ...rest].map((update) => update.update), 'the same updates as the journal has').to.deep.equal(history.map((update) => update.update));
  return rest;
}

describe('warden serve with Claude Code and Codex (fake CLIs) as its agents: detach mid-turn, resume from the cursor (issue 16)', function () {
  this.timeout(180_000);
  let state: string;
  let bin: string;
  let daemon: ServeDaemon;
  /** The sessions' working directory. */
  let cwd: string;

  beforeEach(async () => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-daemon-agents-')));
    bin = pathDirectory(join(state, 'bin'), { claude: join(repo, 'spec', 'support', 'fake-claude.mjs'), codex: join(repo, 'spec', 'support', 'fake-codex.mjs') });
    cwd = join(state, 'project');
    mkdirSync(cwd);
    daemon = await startServe(state, [
      '--listen', '127.0.0.1:0', '--agent', 'claude', '--store', join(state, 'journal.sqlite'),
      // Claude: the partial-messages transcript (two text deltas), a line every 150 ms, then 3 s of
      // silence before each turn's result (the turn is surely still running when the test cuts in),
      // as many turns as prompted.
      '--env', 'FAKE_CLAUDE_FIXTURE=partial', '--env', 'FAKE_CLAUDE_LOOP=1', '--env', 'FAKE_CLAUDE_DELAY_MS=150', '--env', 'FAKE_CLAUDE_STALL_MS=3000',
      // Codex: its text streams, then the model is silent 3 s before turn/completed.
      '--env', 'FAKE_CODEX_FIXTURE=hello', '--env', 'FAKE_CODEX_STALL_MS=3000',
    ], launched, { env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('claude: kill -9 of the bridge once text streams; a connection resuming after the last seq seen gets the rest once, in order, and the turn end; the next prompt works', async () => {
    const editor = bridgeClient(state, daemon, launched);
    expect((await editor.request(1, 'initialize', initialize)).error).to.equal(undefined);
    const created = await editor.request(2, 'session/new', { cwd, mcpServers: [] });
    const sessionId = created.result?.sessionId as string;
    expect(sessionId, JSON.stringify(created)).to.be.a('string');
    const [claude] = agentsNamed(daemon, bin, 'claude');
    expect(claude, 'the fake claude under the daemon').to.be.a('number');
    editor.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hi' }] } });
    await waitUntil(() => agentText(seqUpdatesOf(editor.frames, sessionId)).length > 0, 'the first text delta', 60_000);
    process.kill(editor.process.pid as number, 'SIGKILL');
    await editor.exited;
    const seen = seqUpdatesOf(editor.frames, sessionId);
    expect(seen.some((update) => update.turnEnded !== undefined) || editor.frames.some((frame) => frame.id === 3), 'the bridge was killed before the turn ended').to.equal(false);

    const again = await socketClient(daemon, sockets);
    await again.request(1, 'initialize', initialize);
    expect((await again.request(2, 'session/resume', { sessionId, cwd, mcpServers: [], _meta: { [cursorKeys.after]: lastSeqOf(seen) } })).error).to.equal(undefined);
    const rest = await expectTheRest(daemon, sessionId, cwd, seen, again);
    expect(agentText(seen) + agentText(rest)).to.equal('Hello from the fake Anthropic server.');
    expect(agentsNamed(daemon, bin, 'claude'), 'the same claude process ran the whole turn').to.deep.equal([claude]);

    const next = await again.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect(next.result, JSON.stringify(next)).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('codex: the WebSocket closed while the turn runs; a connection resuming after the last seq seen gets the rest once, in order, and the turn end', async () => {
    const editor = await socketClient(daemon, sockets);
    await editor.request(1, 'initialize', initialize);
    const created = await editor.request(2, 'session/new', { cwd, mcpServers: [], _meta: { 'acp-warden/agent': 'codex' } });
    const sessionId = created.result?.sessionId as string;
    expect(sessionId, JSON.stringify(created)).to.be.a('string');
    editor.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'say hi' }] } });
    await waitUntil(() => agentText(seqUpdatesOf(editor.frames, sessionId)) === 'Hello from the fake OpenAI server.', 'the text to stream', 60_000);
    editor.socket.close();
    await editor.closed;
    const [codex] = agentsNamed(daemon, bin, 'codex');
    expect(codex, 'the fake codex under the daemon').to.be.a('number');
    const seen = seqUpdatesOf(editor.frames, sessionId);
    expect(seen.some((update) => update.turnEnded !== undefined) || editor.frames.some((frame) => frame.id === 3), 'the socket closed before the turn ended').to.equal(false);

    const again = await socketClient(daemon, sockets);
    await again.request(1, 'initialize', initialize);
    expect((await again.request(2, 'session/resume', { sessionId, cwd, mcpServers: [], _meta: { [cursorKeys.after]: lastSeqOf(seen) } })).error).to.equal(undefined);
    const rest = await expectTheRest(daemon, sessionId, cwd, seen, again);
    expect(agentText(rest), 'no text twice').to.equal('');
    expect(agentsNamed(daemon, bin, 'codex'), 'the same codex process ran the whole turn').to.deep.equal([codex]);
  });

  it('both agents in one daemon: their processes are the daemon\'s children in groups of their own, gone with it', async () => {
    const client = await socketClient(daemon, sockets);
    await client.request(1, 'initialize', initialize);
    for (const [id, agent] of [[2, 'claude'], [3, 'codex']] as const) {
      const created = await client.request(id, 'session/new', { cwd, mcpServers: [], _meta: { 'acp-warden/agent': agent } });
      expect(created.error, JSON.stringify(created)).to.equal(undefined);
    }
    const agents = [...agentsNamed(daemon, bin, 'claude'), ...agentsNamed(daemon, bin, 'codex')];
    expect(agents).to.have.length(2);
    for (const pid of agents) expect(groupMembers(pid), `agent ${pid} leads a process group of its own`).to.include(pid);
    process.kill(daemon.process.pid as number, 'SIGTERM');
    expect(await daemon.exited).to.equal(0);
    for (const pid of agents) await expectGroupGone(pid, 20_000);
  });
});
