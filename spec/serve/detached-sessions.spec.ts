/**
 * Sessions that outlive their connections, through a real `warden serve --agent demo` (issue
 * 16): the editor's bridge killed mid-turn while the turn goes on in the same agent process; a
 * new connection resuming from the last seq it saw; an observer next to the controller;
 * `warden sessions` listing and closing; the idle timeout stopping an agent nobody is attached
 * to, and the next attach restoring it.
 */
import { expect } from 'chai';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { isAlive, waitUntil } from '../support/processes.js';
import {
  agentText as chunkText,
  bridgeClient as bridgeOf,
  cursorKeys,
  demoAgentsOf,
  initializeParams,
  seqUpdatesOf,
  socketClient as socketOf,
  startServe,
  stateEnv,
  wardenSessions,
  type LineClient,
  type ServeDaemon,
} from '../support/serve-daemon.js';
import { killGroups, wardenMain } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const afterKey = cursorKeys.after;
const initialize = initializeParams('detach-test-editor');

const bridgeClient = (state: string, daemon: ServeDaemon) => bridgeOf(state, daemon, launched);
const socketClient = (daemon: ServeDaemon) => socketOf(daemon, sockets);
/** The session's updates a client got, with their seq (undefined: not journaled). */
const updatesOf = (client: LineClient, sessionId: string) => seqUpdatesOf(client.frames, sessionId);

const words = (count: number) => Array.from({ length: count }, (_, n) => `w${n}`).join(' ');

describe('warden serve: sessions that outlive their connections (issue 16)', function () {
  this.timeout(120_000);
  let state: string;

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-detach-')));
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('kill -9 of the bridge mid-turn: the turn goes on in the same agent; a connection resuming after the last seq it saw gets the rest once, in order, and the turn end', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=15'], launched);
    const editor = bridgeClient(state, daemon);
    await editor.request(1, 'initialize', initialize);
    const sessionId = (await editor.request(2, 'session/new', { cwd: state, mcpServers: [] })).result?.sessionId as string;
    const [agent] = demoAgentsOf(daemon.process.pid);
    editor.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: words(120) }] } });
    await waitUntil(() => chunkText(updatesOf(editor, sessionId)).includes('w5 '), 'the turn to stream');
    process.kill(editor.process.pid as number, 'SIGKILL');
    await editor.exited;
    const seen = updatesOf(editor, sessionId);
    const lastSeen = Math.max(...seen.map((update) => update.seq ?? 0));
    expect(seen.every((update) => typeof update.seq === 'number'), 'every update the editor got carries its seq').to.equal(true);
    expect(chunkText(seen), 'the editor was gone before the turn ended').not.to.include('w119');

    const again = await socketClient(daemon);
    await again.request(1, 'initialize', initialize);
    const resumed = await again.request(2, 'session/resume', { sessionId, cwd: state, mcpServers: [], _meta: { [afterKey]: lastSeen } });
    expect(resumed.error).to.equal(undefined);
    await waitUntil(() => updatesOf(again, sessionId).some((update) => update.turnEnded !== undefined), 'the turn end', 60_000);
    const rest = updatesOf(again, sessionId);
    const seqs = rest.map((update) => update.seq);
    expect(seqs.every((seq) => typeof seq === 'number' && seq > lastSeen), `only what came after seq ${lastSeen}`).to.equal(true);
    expect(seqs, 'each once, in order').to.deep.equal([...new Set(seqs)].sort((a, b) => (a as number) - (b as number)));
    expect(rest.find((update) => update.turnEnded !== undefined)?.turnEnded).to.deep.equal({ stopReason: 'end_turn' });
    const whole = chunkText(seen) + chunkText(rest);
    expect(whole.trim().split(/\s+/u).map((word) => word.replace(/\.$/u, '')).filter((word) => /^w\d+$/u.test(word)), 'no word lost, none twice').to.deep.equal(words(120).split(' '));
    expect(demoAgentsOf(daemon.process.pid), 'the same agent process ran the whole turn').to.deep.equal([agent]);
  });

  it('an observer next to the controller sees its prompt and every update; its own prompt is refused (not_controller); warden sessions lists both, --close closes', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1'], launched);
    const controller = await socketClient(daemon);
    await controller.request(1, 'initialize', initialize);
    const sessionId = (await controller.request(2, 'session/new', { cwd: state, mcpServers: [] })).result?.sessionId as string;
    const observer = await socketClient(daemon);
    await observer.request(1, 'initialize', initialize);
    expect((await observer.request(2, 'session/load', { sessionId, cwd: state, mcpServers: [] })).error).to.equal(undefined);

    const answer = await controller.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'alpha beta gamma' }] });
    expect(answer.result).to.deep.equal({ stopReason: 'end_turn' });
    await waitUntil(() => updatesOf(observer, sessionId).some((update) => update.turnEnded !== undefined), 'the observer to see the turn end', 30_000);
    const watched = updatesOf(observer, sessionId);
    expect(watched.filter((update) => update.kind === 'user_message_chunk').map((update) => update.text).join('')).to.include('alpha beta gamma');
    expect(chunkText(watched)).to.equal(chunkText(updatesOf(controller, sessionId)));
    const refused = await observer.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'me too' }] });
    expect(refused.error?.code).to.equal(-32600);
    expect(refused.error?.data?.reason).to.equal('not_controller');

    const listed = wardenSessions(state, daemon, ['--json']);
    expect(listed.status, listed.stderr).to.equal(0);
    const session = (JSON.parse(listed.stdout) as { sessions: Array<{ sessionId: string; agent?: string; clients: Array<{ role: string }> }> }).sessions.find((entry) => entry.sessionId === sessionId);
    expect(session?.agent).to.equal('demo');
    expect(session?.clients.map((client) => client.role).sort()).to.deep.equal(['controller', 'observer']);
    const table = wardenSessions(state, daemon, []);
    expect(table.stdout).to.include(sessionId).and.to.include('controller').and.to.include('observer');

    const closed = wardenSessions(state, daemon, ['--close', sessionId]);
    expect(closed.status, closed.stderr).to.equal(0);
    expect(closed.stdout).to.equal(`closed ${sessionId}\n`);
    const after = await controller.request(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] });
    expect(after.error, 'a closed session refuses a prompt').not.to.equal(undefined);
  });

  it('warden sessions: nothing listening exits 3 naming warden serve; a wrong token exits 4; no token file exits 2', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite')], launched);
    const run = (args: readonly string[]) => spawnSync(process.execPath, [wardenMain, 'sessions', ...args], { encoding: 'utf8', env: stateEnv(state), timeout: 60_000 });
    const nobody = run(['--connect', 'ws://127.0.0.1:9/acp', '--token-file', daemon.tokenFile]);
    expect(nobody.status).to.equal(3);
    expect(nobody.stderr).to.match(/nothing answers at ws:\/\/127\.0\.0\.1:9\/acp: start the daemon with warden serve/u);
    const wrongToken = join(state, 'wrong-token');
    spawnSync('sh', ['-c', `umask 077; printf 'not-the-token' > ${wrongToken}`]);
    const refused = run(['--connect', daemon.url, '--token-file', wrongToken]);
    expect(refused.status, refused.stderr).to.equal(4);
    expect(refused.stderr).to.include('the token was refused');
    const missing = run(['--connect', daemon.url, '--token-file', join(state, 'no-such-token')]);
    expect(missing.status).to.equal(2);
    expect(missing.stderr).to.include('no token file at');
  });

  it('--idle-timeout: an agent nobody is attached to stops after it; the session is kept, and resuming it starts a new agent process', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--idle-timeout', '1'], launched);
    const first = await socketClient(daemon);
    await first.request(1, 'initialize', initialize);
    const sessionId = (await first.request(2, 'session/new', { cwd: state, mcpServers: [] })).result?.sessionId as string;
    expect((await first.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember me' }] })).result).to.deep.equal({ stopReason: 'end_turn' });
    const [agent] = demoAgentsOf(daemon.process.pid);
    expect(agent).to.be.a('number');
    first.socket.close();
    // Its only session closed on the idle timeout, the agent process serves nothing and is stopped.
    await waitUntil(() => !isAlive(agent), 'the idle agent to stop', 60_000);
    const listed = wardenSessions(state, daemon, ['--json']);
    expect(listed.status, `${listed.stderr}${daemon.stderr()}`).to.equal(0);
    const stored = (JSON.parse(listed.stdout) as { sessions: Array<{ sessionId: string; clients: unknown[] }> }).sessions.find((entry) => entry.sessionId === sessionId);
    expect(stored?.clients).to.deep.equal([]);

    const second = await socketClient(daemon);
    await second.request(1, 'initialize', initialize);
    const resumed = await second.request(2, 'session/load', { sessionId, cwd: state, mcpServers: [] });
    expect(resumed.error).to.equal(undefined);
    expect(updatesOf(second, sessionId).filter((update) => update.kind === 'user_message_chunk').map((update) => update.text).join('')).to.include('remember me');
    expect((await second.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'back again' }] })).result).to.deep.equal({ stopReason: 'end_turn' });
    expect(demoAgentsOf(daemon.process.pid).filter((pid) => pid !== agent)).to.have.length(1);
  });
});
