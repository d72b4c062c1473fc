/**
 * `warden serve --max-live-agents N` (issue 32, "Idle sessions hibernate"): past N sessions live
 * on their agents, the least recently used ones with no connection and no turn are hibernated
 * (their agent process stopped, the session kept in the journal) and the next attach resumes
 * them. Claude Code's fake CLI (spec/support/fake-claude.mjs) runs one process per session, so
 * live sessions are live processes here, counted from /proc under the daemon.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebSocket } from 'ws';
import { pathDirectory } from '../support/launch-harness.js';
import { childrenOf, waitUntil } from '../support/processes.js';
import { repo } from '../support/real-agents-harness.js';
import { initializeParams, seqUpdatesOf, socketClient, startServe, wardenSessions, type ListedSession, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = initializeParams('hibernation-test-editor');

describe('warden serve --max-live-agents: idle sessions hibernate, least recently used first (issue 32)', function () {
  this.timeout(180_000);
  let state: string;
  let bin: string;
  let cwd: string;
  let daemon: ServeDaemon;

  const claudes = () => childrenOf(daemon.process.pid as number).filter((child) => child.cmdline.includes(join(bin, 'claude'))).map((child) => child.pid);
  const listed = (): ListedSession[] => {
    const run = wardenSessions(state, daemon, ['--json']);
    expect(run.status, `${run.stderr}${daemon.stderr()}`).to.equal(0);
    return (JSON.parse(run.stdout) as { sessions: ListedSession[] }).sessions;
  };
  const stateOf = (sessionId: string) => listed().find((session) => session.sessionId === sessionId)?.state;

  beforeEach(async () => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-hibernate-')));
    bin = pathDirectory(join(state, 'bin'), { claude: join(repo, 'spec', 'support', 'fake-claude.mjs') });
    cwd = join(state, 'project');
    mkdirSync(cwd);
    daemon = await startServe(state, [
      '--listen', '127.0.0.1:0', '--agent', 'claude', '--store', join(state, 'journal.sqlite'), '--max-live-agents', '2',
      '--env', 'FAKE_CLAUDE_FIXTURE=partial', '--env', 'FAKE_CLAUDE_LOOP=1', '--env', 'FAKE_CLAUDE_DELAY_MS=5',
    ], launched, { env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
  });

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('attached sessions are never hibernated; once detached, the least recently used goes; an attach resumes it with its history and hibernates the next least recently used', async () => {
    const first = await socketClient(daemon, sockets);
    await first.request(1, 'initialize', initialize);
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      const sessionId = (await first.request(10 + n, 'session/new', { cwd, mcpServers: [] })).result?.sessionId as string;
      expect(sessionId, `session ${n}`).to.be.a('string');
      expect((await first.request(20 + n, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: `prompt of session ${n}` }] })).result).to.deep.equal({ stopReason: 'end_turn' });
      ids.push(sessionId);
    }
    const [oldest, middle, newest] = ids as [string, string, string];
    // Three sessions, all attached to the client: over the cap, none hibernated.
    expect(claudes(), 'a Claude process per attached session').to.have.length(3);
    expect(listed().filter((session) => ids.includes(session.sessionId)).map((session) => session.state)).to.not.include('stored');

    first.socket.close();
    await waitUntil(() => stateOf(oldest) === 'stored', 'the least recently used session hibernated', 60_000);
    await waitUntil(() => claudes().length === 2, 'its Claude process stopped', 60_000);
    expect(stateOf(middle), 'the second session stays live').to.not.equal('stored');
    expect(stateOf(newest), 'the newest session stays live').to.not.equal('stored');

    const second = await socketClient(daemon, sockets);
    await second.request(1, 'initialize', initialize);
    expect((await second.request(2, 'session/load', { sessionId: oldest, cwd, mcpServers: [] })).error, 'the hibernated session loads').to.equal(undefined);
    const replayed = seqUpdatesOf(second.frames, oldest).filter((update) => update.kind === 'user_message_chunk').map((update) => update.text).join('');
    expect(replayed, 'its history, from the journal').to.include('prompt of session 1');
    expect((await second.request(3, 'session/prompt', { sessionId: oldest, prompt: [{ type: 'text', text: 'awake again' }] })).result).to.deep.equal({ stopReason: 'end_turn' });
    // Resumed on a new process, it puts the hub over the cap again: the least recently used free session goes.
    await waitUntil(() => stateOf(middle) === 'stored', 'the next least recently used session hibernated', 60_000);
    await waitUntil(() => claudes().length === 2, 'two Claude processes, the cap', 60_000);
    expect(stateOf(oldest)).to.not.equal('stored');
    expect(stateOf(newest)).to.not.equal('stored');
  });
});
