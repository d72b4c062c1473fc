/**
 * The daemon stopped or killed during a turn, then `warden serve` again on the same store
 * (issue 16), with Claude Code (the fake CLI, found by its bare name on the daemon's PATH) as
 * its agent:
 *
 * - SIGTERM mid-turn: the turn drains, the daemon exits 0; the next daemon lists the session
 *   (`warden sessions`), a `session/resume` after the last seq the client had seen when the
 *   signal came replays exactly what the journal kept after it (what that client got during
 *   the drain), and a following prompt works on a respawned agent, resumed on its side
 *   (`--resume=<id>`) with the journaled mode re-applied before the prompt;
 * - SIGKILL mid-turn: no agent process (nor its group) is left; on the next daemon a resume
 *   after the last seq seen gets the end of the turn the kill cut (`turnEnded` with a
 *   `shutdown` error, journaled by the restore), its `session/load` has every update the
 *   client had seen, under the same seqs, and the session takes a prompt again.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { pathDirectory } from '../support/launch-harness.js';
import { childrenOf, expectGroupGone, waitUntil } from '../support/processes.js';
import { leftovers, repo } from '../support/real-agents-harness.js';
import {
  agentText,
  cursorKeys,
  initializeParams,
  lastSeqOf,
  listedSessions,
  seqUpdatesOf,
  socketClient,
  startServe,
  type LineClient,
  type ServeDaemon,
} from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = initializeParams('daemon-restart-test-editor');

/** One JSON line of FAKE_CLAUDE_CONTROL_LOG / FAKE_CLAUDE_ARGV_LOG. */
type ControlLine = { pid: number; subtype?: string; mode?: string; type?: string };
const jsonLines = <T>(file: string): T[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as T) : []);

describe('warden serve stopped or killed mid-turn, then started again on the same store (issue 16)', function () {
  this.timeout(180_000);
  let state: string;
  let bin: string;
  let controlLog: string;
  let argvLog: string;
  let cwd: string;

  const start = () => startServe(state, [
    '--listen', '127.0.0.1:0', '--agent', 'claude', '--store', join(state, 'journal.sqlite'),
    // A line every 150 ms, then 3 s of silence before each turn's result: the signal surely comes mid-turn.
    '--env', 'FAKE_CLAUDE_FIXTURE=partial', '--env', 'FAKE_CLAUDE_LOOP=1', '--env', 'FAKE_CLAUDE_DELAY_MS=150', '--env', 'FAKE_CLAUDE_STALL_MS=3000',
    '--env', `FAKE_CLAUDE_CONTROL_LOG=${controlLog}`, '--env', `FAKE_CLAUDE_ARGV_LOG=${argvLog}`,
  ], launched, { env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });

  /** The daemon's fake claude processes. */
  const claudes = (daemon: ServeDaemon) => childrenOf(daemon.process.pid as number).filter((child) => child.cmdline.includes(join(bin, 'claude'))).map((child) => child.pid);

  /** A client on `daemon` with a claude session in mode acceptEdits, its prompt `hi` streaming: the session, and the client once the first text delta came. */
  async function turnUnderWay(daemon: ServeDaemon): Promise<{ client: LineClient; sessionId: string }> {
    const client = await socketClient(daemon, sockets);
    await client.request(1, 'initialize', initialize);
    const created = await client.request(2, 'session/new', { cwd, mcpServers: [] });
    const sessionId = created.result?.sessionId as string;
    expect(sessionId, JSON.stringify(created)).to.be.a('string');
    expect((await client.request(3, 'session/set_mode', { sessionId, modeId: 'acceptEdits' })).error).to.equal(undefined);
    client.send({ id: 4, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hi' }] } });
    await waitUntil(() => agentText(seqUpdatesOf(client.frames, sessionId)).length > 0, 'the first text delta', 60_000);
    return { client, sessionId };
  }

  /** A prompt on the restarted daemon ends normally, on a new claude started with --resume, which got mode acceptEdits before the prompt. */
  async function promptsAgain(client: LineClient, daemon: ServeDaemon, sessionId: string, before: readonly number[]): Promise<void> {
    const answer = await client.request(10, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect(answer.result, `${JSON.stringify(answer)}\n${daemon.stderr()}`).to.deep.equal({ stopReason: 'end_turn' });
    const [respawned] = claudes(daemon);
    expect(respawned, 'a claude under the new daemon').to.be.a('number');
    expect(before, 'a new process').not.to.include(respawned);
    const started = jsonLines<{ pid: number; args: string[] }>(argvLog).find((line) => line.pid === respawned);
    expect(started?.args.some((arg) => arg.startsWith('--resume=')), `resumed on the agent side: ${JSON.stringify(started)}`).to.equal(true);
    const control = jsonLines<ControlLine>(controlLog).filter((line) => line.pid === respawned);
    const firstPrompt = control.findIndex((line) => line.type === 'user');
    const modes = control.slice(0, firstPrompt).filter((line) => line.subtype === 'set_permission_mode').map((line) => line.mode);
    expect(firstPrompt, JSON.stringify(control)).to.be.above(0);
    expect(modes.at(-1), `the journaled mode, re-applied before the prompt: ${JSON.stringify(control)}`).to.equal('acceptEdits');
  }

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-daemon-restart-')));
    bin = pathDirectory(join(state, 'bin'), { claude: join(repo, 'spec', 'support', 'fake-claude.mjs') });
    controlLog = join(state, 'control.ndjson');
    argvLog = join(state, 'argv.ndjson');
    cwd = join(state, 'project');
    mkdirSync(cwd);
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('SIGTERM mid-turn, then warden serve again: listed; resume after the last seq seen at the signal gives exactly what the journal kept after it; the next prompt works, mode re-applied', async () => {
    const first = await start();
    const { client, sessionId } = await turnUnderWay(first);
    const agents = claudes(first);
    expect(agents).to.have.length(1);
    const lastSeen = lastSeqOf(seqUpdatesOf(client.frames, sessionId));
    process.kill(first.process.pid as number, 'SIGTERM');
    await waitUntil(() => client.frames.some((frame) => frame.id === 4), 'the prompt to be answered during the drain', 60_000);
    expect(client.frames.find((frame) => frame.id === 4)?.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(await first.exited, first.stderr()).to.equal(0);
    for (const pid of agents) await expectGroupGone(pid, 20_000);
    const all = seqUpdatesOf(client.frames, sessionId);
    const drained = all.filter((update) => (update.seq ?? 0) > lastSeen);
    expect(drained, 'the turn went on after the signal').not.to.deep.equal([]);
    expect(agentText(all)).to.equal('Hello from the fake Anthropic server.');

    const second = await start();
    const listed = listedSessions(state, second).find((session) => session.sessionId === sessionId);
    expect(listed, JSON.stringify(listedSessions(state, second))).to.deep.include({ agent: 'claude', state: 'stored', clients: [] });
    const again = await socketClient(second, sockets);
    await again.request(1, 'initialize', initialize);
    const resumed = await again.request(2, 'session/resume', { sessionId, cwd, mcpServers: [], _meta: { [cursorKeys.after]: lastSeen } });
    expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
    // The replay comes before the answer to the resume: the rest of the turn, its end, then what
    // the restore journaled (the respawned agent's commands, the journaled mode re-applied).
    const replayed = seqUpdatesOf(again.frames.slice(0, again.frames.indexOf(resumed)), sessionId);
    const seqs = replayed.map((update) => update.seq as number);
    expect(seqs.every((seq) => seq > lastSeen), `only what came after seq ${lastSeen}: ${seqs.join(',')}`).to.equal(true);
    expect(seqs, 'each once, in order').to.deep.equal([...new Set(seqs)].sort((a, b) => a - b));
    const end = replayed.findIndex((update) => update.turnEnded !== undefined);
    expect(replayed[end]?.turnEnded, 'the turn end, for a client that did not send the prompt').to.deep.equal({ stopReason: 'end_turn' });
    expect(replayed.slice(0, end).map(({ seq, update }) => ({ seq, update })), 'the rest of the turn: what the first client got after that seq').to.deep.equal(drained.map(({ seq, update }) => ({ seq, update })));
    expect(replayed.slice(end + 1).filter((update) => update.kind === 'current_mode_update').map((update) => (update.update as { currentModeId?: string }).currentModeId)).to.deep.equal(['acceptEdits']);
    const loader = await socketClient(second, sockets);
    await loader.request(1, 'initialize', initialize);
    const loaded = await loader.request(2, 'session/load', { sessionId, cwd, mcpServers: [] });
    const kept = seqUpdatesOf(loader.frames.slice(0, loader.frames.indexOf(loaded)), sessionId).filter((update) => (update.seq ?? 0) > lastSeen);
    expect(replayed.map(({ seq, update }) => ({ seq, update })), 'exactly what the journal kept after that seq').to.deep.equal(kept.map(({ seq, update }) => ({ seq, update })));
    await promptsAgain(again, second, sessionId, agents);
  });

  it('SIGKILL mid-turn, then warden serve again: no agent left; a resume after the last seq seen gets the cut turn\'s end (shutdown); the journal has every update the client saw; the session takes a prompt', async () => {
    const first = await start();
    const { client, sessionId } = await turnUnderWay(first);
    const agents = claudes(first);
    expect(agents).to.have.length(1);
    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;
    // The orphan reaper takes the agent's process group down: nothing of this test's is left.
    for (const pid of agents) await expectGroupGone(pid, 20_000);
    await waitUntil(() => leftovers(state).length === 0, `no process of the killed daemon left: ${leftovers(state).map((row) => row.cmdline).join('; ')}`, 20_000);
    const seen = seqUpdatesOf(client.frames, sessionId);

    const second = await start();
    expect(listedSessions(state, second).map((session) => session.sessionId)).to.include(sessionId);
    const again = await socketClient(second, sockets);
    await again.request(1, 'initialize', initialize);
    const lastSeen = lastSeqOf(seen);
    const resumed = await again.request(2, 'session/resume', { sessionId, cwd, mcpServers: [], _meta: { [cursorKeys.after]: lastSeen } });
    expect(resumed.error, JSON.stringify(resumed)).to.equal(undefined);
    // The turn the kill cut never ended on its agent: the restore ends it in the journal, as a drain that gives up would.
    const replayed = seqUpdatesOf(again.frames.slice(0, again.frames.indexOf(resumed)), sessionId);
    expect(replayed.every((update) => (update.seq ?? 0) > lastSeen), 'only what came after the last seq seen').to.equal(true);
    const cut = replayed.filter((update) => update.turnEnded !== undefined);
    expect(cut.map((update) => (update.turnEnded as { error?: { data?: { reason?: string } } }).error?.data?.reason), JSON.stringify(replayed)).to.deep.equal(['shutdown']);
    expect(replayed[0]?.turnEnded, 'the cut turn ends before the restored session says anything').to.equal(cut[0]?.turnEnded);

    const loader = await socketClient(second, sockets);
    await loader.request(1, 'initialize', initialize);
    const loaded = await loader.request(2, 'session/load', { sessionId, cwd, mcpServers: [] });
    expect(loaded.error, JSON.stringify(loaded)).to.equal(undefined);
    const history = seqUpdatesOf(loader.frames.slice(0, loader.frames.indexOf(loaded)), sessionId);
    const bySeq = new Map(history.map((update) => [update.seq, update.update]));
    expect(seen.map(({ seq, update }) => ({ seq, update })), 'what the killed daemon sent is in the journal, under the same seqs').to.deep.equal(seen.map(({ seq }) => ({ seq, update: bySeq.get(seq) })));
    expect(history.filter((update) => update.kind === 'user_message_chunk').map((update) => update.text)).to.deep.equal(['hi']);
    expect(history.filter((update) => update.turnEnded !== undefined), 'the cut turn ended once').to.have.length(1);
    await promptsAgain(again, second, sessionId, agents);
  });
});
