/**
 * The daemon's life (issue 16): SIGTERM lets the running turn finish and exits 0 with nothing
 * left; SIGKILL leaves no agent behind (the orphan reaper) and a new `warden serve` on the same
 * store (and the same Unix socket path, whose stale file it removes) lists the earlier session;
 * `warden acp --daemon` starts one daemon when none answers and reuses it (with `--token-file
 * PATH`, its serve.log beside PATH), and two bridges racing to start one end on the same daemon.
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectGroupGone, isAlive, processesWhere, waitUntil } from '../support/processes.js';
import { answerText, demoAgentsOf, sdkOverWebSocket, startServe, stateEnv } from '../support/serve-daemon.js';
import { exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const initializeParams = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'lifecycle-test-editor', version: '1' } };

describe('warden serve: stop, kill, restart, --daemon (issue 16)', function () {
  this.timeout(120_000);
  let state: string;

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-daemon-')));
  });

  afterEach(async () => {
    // Daemons started by --daemon are nobody's child here: found by the socket path, which is this test's own.
    for (const pid of processesWhere((cmdline) => cmdline.includes(state) && cmdline.includes(' serve '))) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
      await expectGroupGone(pid, 20_000);
    }
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  it('SIGTERM mid-turn: the turn finishes (end_turn), then the daemon exits 0 and its process group and agent are gone', async () => {
    const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=20'], launched);
    const sdk = sdkOverWebSocket(daemon);
    try {
      await sdk.agent.request(methods.agent.initialize, initializeParams);
      const { sessionId } = (await sdk.agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] })) as { sessionId: string };
      const agents = demoAgentsOf(daemon.process.pid);
      expect(agents).to.have.length(1);
      const words = Array.from({ length: 60 }, (_, n) => `w${n}`).join(' ');
      const turn = sdk.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: words }] });
      await waitUntil(() => answerText(sdk.updates, sessionId).length > 0, 'the turn to stream');
      process.kill(daemon.process.pid as number, 'SIGTERM');
      expect(await turn).to.deep.equal({ stopReason: 'end_turn' });
      expect(answerText(sdk.updates, sessionId)).to.include('w59');
      expect(await daemon.exited).to.equal(0);
      await expectGroupGone(daemon.process.pid, 20_000);
      for (const pid of agents) await waitUntil(() => !isAlive(pid), `demo agent ${pid} to be gone`, 20_000);
    } finally {
      sdk.close();
    }
  });

  it('SIGKILL: no agent is left; warden serve again on the same store and Unix socket (its stale file removed) lists the earlier session', async () => {
    const args = ['--listen', `unix:${join(state, 'warden.sock')}`, '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1'];
    const first = await startServe(state, args, launched);
    const sdk = sdkOverWebSocket(first);
    let sessionId: string;
    try {
      await sdk.agent.request(methods.agent.initialize, initializeParams);
      ({ sessionId } = (await sdk.agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] })) as { sessionId: string });
      await sdk.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'remember this' }] });
    } finally {
      sdk.close();
    }
    const orphans = demoAgentsOf(first.process.pid);
    expect(orphans).to.have.length(1);
    process.kill(first.process.pid as number, 'SIGKILL');
    await first.exited;
    for (const pid of orphans) await waitUntil(() => !isAlive(pid), `the demo agent ${pid} to die with its daemon (orphan reaper)`, 20_000);
    expect(existsSync(join(state, 'warden.sock')), 'the killed daemon left its socket file').to.equal(true);
    const second = await startServe(state, args, launched);
    const again = sdkOverWebSocket(second);
    try {
      await again.agent.request(methods.agent.initialize, initializeParams);
      const listed = (await again.agent.request(methods.agent.session.list, {})) as { sessions: Array<{ sessionId: string; title: string | null }> };
      expect(listed.sessions.map(({ sessionId: id, title }) => ({ sessionId: id, title }))).to.deep.equal([{ sessionId, title: 'remember this' }]);
      await again.agent.request(methods.agent.session.load, { sessionId, cwd: state, mcpServers: [] });
      expect(answerText(again.updates, sessionId)).to.include('You said: remember this.');
    } finally {
      again.close();
    }
  });

  it('a second warden serve on a live address exits 3 (address in use) and the first keeps serving', async () => {
    const args = ['--listen', `unix:${join(state, 'warden.sock')}`, '--agent', 'demo', '--store', ':memory:'];
    const first = await startServe(state, args, launched);
    const second = spawn(process.execPath, [wardenMain, 'serve', ...args], { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env: stateEnv(state) });
    launched.push(second);
    const stderr = stderrOf(second);
    expect(await exitCodeOf(second)).to.equal(3);
    expect(stderr()).to.include('the address is in use');
    expect(isAlive(first.process.pid)).to.equal(true);
  });

  describe('warden acp --agent demo --daemon', () => {
    /** `warden acp --agent demo --daemon` on this test's socket, piping one initialize; resolves with its exit status and output. */
    const once = (socket: string, more: readonly string[] = []) => {
      const child = spawn(process.execPath, [wardenMain, 'acp', '--agent', 'demo', '--daemon', '--listen', `unix:${socket}`, '--store', join(state, 'journal.sqlite'), ...more], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: stateEnv(state) });
      launched.push(child);
      let stdout = '';
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      const stderr = stderrOf(child);
      child.stdin?.end(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams })}\n`);
      return exitCodeOf(child).then((code) => ({ code, stdout, stderr: stderr() }));
    };
    const daemons = () => processesWhere((cmdline) => cmdline.includes(state) && cmdline.includes(' serve '));

    it('starts one daemon when none answers (detached, its log in serve.log), and reuses it the second time', async () => {
      const socket = join(state, 'd.sock');
      const first = await once(socket);
      expect(first.code, first.stderr).to.equal(0);
      expect(JSON.parse(first.stdout.trim()).result.agentInfo.name).to.equal('acp-warden-demo');
      const started = daemons();
      expect(started).to.have.length(1);
      // Detached: a process group of its own, outliving the bridge that started it.
      expect(readFileSync(`/proc/${started[0]}/stat`, 'utf8').split(') ')[1]?.split(' ')[2]).to.equal(String(started[0]));
      expect(readFileSync(join(state, 'acp-warden', 'serve.log'), 'utf8')).to.include('listening on');
      const second = await once(socket);
      expect(second.code, second.stderr).to.equal(0);
      expect(daemons()).to.deep.equal(started);
    });

    it('--token-file PATH: the daemon it starts logs to serve.log beside PATH, with its pid, and nothing in the default state directory (issue 28, defect 5)', async () => {
      const socket = join(state, 'own.sock');
      const tokenFile = join(state, 'elsewhere', 'token');
      const first = await once(socket, ['--token-file', tokenFile]);
      expect(first.code, first.stderr).to.equal(0);
      const started = daemons();
      expect(started).to.have.length(1);
      const log = readFileSync(join(state, 'elsewhere', 'serve.log'), 'utf8');
      expect(log).to.include(`token file ${tokenFile}`);
      // Where docs/serve.md says to find the pid for `kill <pid>`.
      expect(/listening on \S+ \(pid (\d+)\)/u.exec(log)?.[1]).to.equal(String(started[0]));
      expect(existsSync(join(state, 'acp-warden', 'serve.log')), 'a serve.log in the default state directory').to.equal(false);
    });

    it('two bridges racing to start a daemon: one daemon is left, both bridges are answered by it', async () => {
      const socket = join(state, 'race.sock');
      const [a, b] = await Promise.all([once(socket), once(socket)]);
      expect(a.code, a.stderr).to.equal(0);
      expect(b.code, b.stderr).to.equal(0);
      expect(JSON.parse(a.stdout.trim()).id).to.equal(1);
      expect(JSON.parse(b.stdout.trim()).id).to.equal(1);
      await waitUntil(() => daemons().length === 1, 'the losing daemon to exit', 20_000);
    });
  });
});
