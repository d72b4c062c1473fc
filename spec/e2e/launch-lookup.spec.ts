/**
 * Launching agents as an editor does (issue 14): `warden acp --agent NAME` with the agent
 * found by its bare name on the PATH the editor gives warden (no --agent-command, no absolute
 * path), or through its documented variable; and `warden agents`, run with the same
 * environment, agreeing with it. The agents are the fakes of spec/support (a fake `claude`
 * replaying a recorded transcript, the SDK's reference ACP agent), each reachable ONLY
 * through a temp directory that is the whole PATH.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launch, type EditorSession } from '../support/editor.js';
import { nodeCommand, pathDirectory } from '../support/launch-harness.js';
import { descendants, expectNoLeftovers, repo, wardenMain } from '../support/real-agents-harness.js';
import { memoryLimitMethod } from '../../src/port/memory-limit.js';
import { cpuLimitMethod } from '../../src/port/cpu-limit.js';

const fakeClaude = join(repo, 'spec', 'support', 'fake-claude.mjs');
const sdkAgentModule = join(repo, 'spec', 'support', 'sdk-agent.mjs');

interface AgentRow {
  name: string;
  installed: boolean;
  path: string | null;
  version: string | null;
  problem: string | null;
}

/** `warden agents [--json]` through the real entry point, with exactly `env`. */
function wardenAgents(env: Record<string, string>, json: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('node', [wardenMain, 'agents', ...(json ? ['--json'] : [])], { cwd: repo, env, timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)));
  });
}

const rowOf = async (env: Record<string, string>, name: string): Promise<AgentRow> => {
  const table = JSON.parse(await wardenAgents(env, true)) as AgentRow[];
  return table.find((row) => row.name === name) as AgentRow;
};

describe('launching agents as an editor does: the agent found on the PATH warden was started with', function () {
  this.timeout(120_000);
  let base: string;
  let project: string;
  /** The SDK's reference ACP agent as an executable (sdk-agent.mjs has no x bit). */
  let sdkAgent: string;
  const running: EditorSession[] = [];

  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-launch-')));
    project = join(base, 'project');
    mkdirSync(project);
    sdkAgent = nodeCommand(join(base, 'sdk-agent'), sdkAgentModule);
  });

  afterEach(async () => {
    for (const session of running.splice(0)) await session.close();
    // Nothing warden started may outlive it (every process here has HOME under `base`).
    await expectNoLeftovers(base);
    rmSync(base, { recursive: true, force: true });
  });

  /** The editor's environment: PATH is `bin` alone, HOME and TMPDIR under the temp directory. */
  const editorEnv = (bin: string, extra: Record<string, string> = {}): Record<string, string> => ({ PATH: bin, HOME: base, TMPDIR: base, ...extra });

  /** `node --import tsx src/cli/main.ts acp <args>` (node from the PATH), initialized, one session. */
  async function start(env: Record<string, string>, args: string[]): Promise<{ editor: EditorSession; sessionId: string; agentName: string | undefined }> {
    const editor = launch('node', [wardenMain, 'acp', '--store', ':memory:', ...args], { env, cwd: repo });
    running.push(editor);
    const init = await editor.initialize();
    const sessionId = await editor.newSession(project);
    return { editor, sessionId, agentName: init.agentInfo?.name ?? undefined };
  }

  it('warden acp --agent claude, with `claude` only on the PATH: a prompt is answered, and warden agents shows the same claude', async () => {
    const bin = pathDirectory(join(base, 'bin'), { claude: fakeClaude });
    const env = editorEnv(bin);
    const { editor, sessionId, agentName } = await start(env, ['--agent', 'claude']);
    expect(agentName).to.equal('claude-code');
    const outcome = await editor.prompt(sessionId, 'hello').outcome;
    expect(outcome, editor.stderr()).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake Anthropic server.', error: undefined });
    // The process warden runs is the one on the PATH.
    expect(descendants(editor.pid).some((row) => row.cmdline.includes(`${bin}/claude`) || row.cmdline.includes(fakeClaude))).to.equal(true);
    expect(await rowOf(env, 'claude')).to.deep.include({ installed: true, path: join(bin, 'claude') });
  });

  // The case above starts warden's sources from the checkout; an editor runs the command
  // `warden` it finds on the same PATH, in the project it opened.
  it('`warden acp --agent claude` run by its bare name from the PATH, in the project, with `claude` only on the PATH: a prompt is answered', async () => {
    const bin = pathDirectory(join(base, 'bin'), { claude: fakeClaude });
    const editor = launch('warden', ['acp', '--store', ':memory:', '--agent', 'claude'], { env: editorEnv(bin), cwd: project });
    running.push(editor);
    expect((await editor.initialize()).agentInfo?.name).to.equal('claude-code');
    const sessionId = await editor.newSession(project);
    const outcome = await editor.prompt(sessionId, 'hello').outcome;
    expect(outcome, editor.stderr()).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake Anthropic server.', error: undefined });
    expect(descendants(editor.pid).some((row) => row.cmdline.includes(`${bin}/claude`) || row.cmdline.includes(fakeClaude))).to.equal(true);
  });

  it('warden acp --agent "acp:node <agent.mjs>", with node found through the PATH: a prompt is answered', async () => {
    const bin = pathDirectory(join(base, 'bin'));
    const { editor, sessionId, agentName } = await start(editorEnv(bin), ['--agent', `acp:node ${sdkAgentModule}`]);
    expect(agentName).to.equal('sdk-agent');
    const outcome = await editor.prompt(sessionId, 'hello').outcome;
    expect(outcome.error, editor.stderr()).to.equal(undefined);
    expect(outcome.stopReason).to.equal('end_turn');
    expect(outcome.text).to.not.equal('');
  });

  it('warden acp --agent opencode, with `opencode` only on the PATH: it starts, and warden agents shows it installed there', async () => {
    const bin = pathDirectory(join(base, 'bin'), { opencode: sdkAgent });
    const env = editorEnv(bin);
    const { editor, sessionId, agentName } = await start(env, ['--agent', 'opencode']);
    expect(agentName).to.equal('sdk-agent');
    expect((await editor.prompt(sessionId, 'hello').outcome).stopReason, editor.stderr()).to.equal('end_turn');
    expect(await rowOf(env, 'opencode')).to.deep.include({ installed: true, path: join(bin, 'opencode') });
  });

  // Each documented variable names an executable that is NOT on the PATH.
  const variables: Array<[agent: string, variable: string, target: () => string, agentName: string]> = [
    ['claude', 'CLAUDE_CODE_EXECUTABLE', () => fakeClaude, 'claude-code'],
    ['gemini', 'GEMINI_CLI_PATH', () => sdkAgent, 'sdk-agent'],
    ['opencode', 'OPENCODE_PATH', () => sdkAgent, 'sdk-agent'],
    ['claude-acp', 'CLAUDE_AGENT_ACP_PATH', () => sdkAgent, 'sdk-agent'],
    ['codex-acp', 'CODEX_ACP_PATH', () => sdkAgent, 'sdk-agent'],
  ];
  for (const [agent, variable, targetOf, agentName] of variables) {
    it(`warden acp --agent ${agent} honours ${variable} from warden's environment, as warden agents does`, async () => {
      const target = targetOf();
      const bin = pathDirectory(join(base, 'bin'));
      const env = editorEnv(bin, { [variable]: target });
      const started = await start(env, ['--agent', agent]);
      expect(started.agentName).to.equal(agentName);
      expect(await rowOf(env, agent)).to.deep.include({ installed: true, path: target });
    });
  }

  it('warden acp --agent codex honours CODEX_PATH from warden\'s environment, as warden agents does', async () => {
    const bin = pathDirectory(join(base, 'bin'));
    const fakeCodex = join(repo, 'spec', 'support', 'fake-codex.mjs');
    const env = editorEnv(bin, { CODEX_PATH: fakeCodex });
    const { editor, sessionId, agentName } = await start(env, ['--agent', 'codex']);
    expect(agentName).to.equal('codex');
    expect((await editor.prompt(sessionId, 'hello').outcome).stopReason, editor.stderr()).to.equal('end_turn');
    expect(await rowOf(env, 'codex')).to.deep.include({ installed: true, path: fakeCodex });
  });

  it('an agent on neither the PATH nor its variable: warden acp exits 2 naming the fix, and warden agents says the same', async () => {
    const bin = pathDirectory(join(base, 'bin'));
    const env = editorEnv(bin);
    const editor = launch('node', [wardenMain, 'acp', '--agent', 'codex'], { env, cwd: repo });
    running.push(editor);
    expect((await editor.exited).code).to.equal(2);
    expect(editor.stderr()).to.match(/"codex" is not installed \(not found on the PATH\)\. Install it with: npm install -g @openai\/codex; or point CODEX_PATH or --agent-command at it/u);
    expect((await rowOf(env, 'codex')).problem).to.equal(/warden acp: (.*)\n/u.exec(editor.stderr())?.[1]);
  });

  it('warden agents prints every problem, one line each, every line ended by a newline', async () => {
    // `claude` is there but its --version fails: installed, with a problem; the others are missing.
    const broken = join(base, 'broken-claude');
    writeFileSync(broken, '#!/bin/sh\necho "no version here" >&2\nexit 3\n');
    chmodSync(broken, 0o755);
    const bin = pathDirectory(join(base, 'bin'), { claude: broken });
    const text = await wardenAgents(editorEnv(bin), false);
    expect(text.endsWith('\n')).to.equal(true);
    const problems = text.split('\n').filter((line) => line.startsWith('- '));
    expect(problems.find((line) => line.startsWith('- Agent "claude"')), text).to.match(/^- Agent "claude" is installed at .*\/bin\/claude but `--version` failed: .*exit code 3.*\.$/u);
    for (const name of ['codex', 'gemini', 'opencode', 'claude-acp', 'codex-acp']) {
      expect(problems.some((line) => line.startsWith(`- Agent "${name}" cannot run: `)), `${name} in:\n${text}`).to.equal(true);
    }
    // Nothing but the table, blank lines, problems, how memory and CPU limits are enforced and the closing hint.
    const others = text.split('\n').filter((line) => line !== '' && !line.startsWith('- ') && !/^\S+\s+(adapter|acp|builtin|kind)\s/u.test(line));
    expect(others).to.deep.equal([memoryLimitMethod(), cpuLimitMethod(), 'Any other ACP agent: warden acp --agent "acp:<command line>"']);
    expect(cpuLimitMethod()).to.match(/^CPU limits \(--max-cpu\): (a v1 cpu cgroup per agent process tree|not enforced here: )/u);
    expect(memoryLimitMethod()).to.match(/^Memory limits \(--max-memory\): the whole agent process tree, sampled from \/proc \(RssAnon \+ RssShmem\); (with --memory-cgroup also|no cgroup can be created here)/u);
  });
});
