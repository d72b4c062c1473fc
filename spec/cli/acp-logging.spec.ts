/**
 * What `warden acp` writes on stderr at its default level (warn) (issue 14, "Also"): an
 * orderly session (initialize, session/new, a prompt, the editor closing stdin) writes
 * nothing, for the demo agent, Claude Code and Codex (the fakes found by name on the PATH);
 * an agent process that really crashes is still a warning.
 */
import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchWarden, pathWithFakeAgents, stopWardens, type LaunchedWarden } from '../support/acp-editor.js';
import { childrenOf, isAlive, waitUntil } from '../support/processes.js';

describe('warden acp: an orderly stop logs nothing at the default level, a crash still warns', function () {
  this.timeout(60_000);
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-logging-')));
    path = pathWithFakeAgents(dir);
  });

  afterEach(async () => {
    await stopWardens();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The agent processes warden runs (its direct children but the orphan reaper). */
  const agentsOf = (warden: LaunchedWarden) => childrenOf(warden.process.pid as number).filter((child) => !child.cmdline.includes('acp-warden-orphan-reaper')).map((child) => child.pid);

  async function newSessionAndPrompt(warden: LaunchedWarden): Promise<string> {
    const { sessionId } = await warden.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    const answer = await warden.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(answer.stopReason).to.equal('end_turn');
    return sessionId;
  }

  for (const agent of ['demo', 'claude', 'codex']) {
    it(`--agent ${agent}: initialize, session/new, a prompt, stdin closed: exit 0 and stderr is empty`, async () => {
      const warden = await launchWarden(['--agent', agent, '--store', ':memory:', '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CODEX_FIXTURE=hello', '--env', 'DEMO_WORD_DELAY_MS=1'], { PATH: path });
      await newSessionAndPrompt(warden);
      const agents = agentsOf(warden);
      expect(agents, 'an agent process ran').to.have.length.greaterThan(0);
      expect(await warden.close()).to.equal(0);
      expect(warden.stderr()).to.equal('');
      for (const pid of agents) await waitUntil(() => !isAlive(pid), `agent process ${pid} to be gone`, 20_000);
    });
  }

  it('--agent claude: a CLI that dies mid-turn is a warning (and the orderly stop after it adds none)', async () => {
    const warden = await launchWarden(['--agent', 'claude', '--on-crash', 'fail', '--store', ':memory:', '--env', 'FAKE_CLAUDE_FIXTURE=hello', '--env', 'FAKE_CLAUDE_CRASH_AFTER=1'], { PATH: path });
    const { sessionId } = await warden.request<{ sessionId: string }>('session/new', { cwd: dir, mcpServers: [] });
    const crashed = await warden.failure('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(crashed.data?.reason).to.equal('agent_crashed');
    await waitUntil(() => /WARN .*SIGKILL/u.test(warden.stderr()), 'the crash in the log', 20_000);
    const atCrash = warden.stderr();
    const next = await warden.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(next.stopReason).to.equal('end_turn');
    expect(await warden.close()).to.equal(0);
    expect(warden.stderr()).to.equal(atCrash);
  });

  it('--agent demo: the agent process killed from outside is a warning', async () => {
    const warden = await launchWarden(['--agent', 'demo', '--store', ':memory:', '--env', 'DEMO_WORD_DELAY_MS=1'], { PATH: path });
    const sessionId = await newSessionAndPrompt(warden);
    const [agent] = agentsOf(warden);
    process.kill(agent as number, 'SIGKILL');
    await waitUntil(() => /WARN .*SIGKILL/u.test(warden.stderr()), 'the crash in the log', 20_000);
    await waitUntil(() => agentsOf(warden).some((pid) => pid !== agent), 'the restarted agent process', 20_000);
    const answer = await warden.request<{ stopReason: string }>('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(answer.stopReason).to.equal('end_turn');
    expect(await warden.close()).to.equal(0);
  });
  it('--log-file on a device that fills up (/dev/full): reported once on stderr, the log goes on there, the session is served and warden exits 0', async () => {
    const warden = await launchWarden(['--agent', 'demo', '--store', ':memory:', '--log-file', '/dev/full', '--log-level', 'debug', '--env', 'DEMO_WORD_DELAY_MS=1'], { PATH: path });
    const sessionId = await newSessionAndPrompt(warden);
    const agents = agentsOf(warden);
    expect(await warden.close()).to.equal(0);
    const stderr = warden.stderr();
    expect(stderr.match(/cannot write the log file/gu), stderr).to.have.length(1);
    expect(stderr).to.match(/^warden acp: --log-file: cannot write the log file \/dev\/full: ENOSPC: .*the log goes to stderr from now on$/mu);
    // The JSON lines (the format of the file) follow on stderr: the session's events are there.
    const logged = stderr.split('\n').filter((line) => line.startsWith('warden acp: {')).map((line) => JSON.parse(line.slice('warden acp: '.length)) as { type: string; sessionId?: string });
    expect(logged.filter((event) => event.sessionId === sessionId).map((event) => event.type)).to.include.members(['session.opened', 'session.state']);
    for (const pid of agents) await waitUntil(() => !isAlive(pid), `agent process ${pid} to be gone`, 20_000);
  });
});
