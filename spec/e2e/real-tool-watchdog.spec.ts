/**
 * The turn-aware watchdog with the real CLIs: `warden acp --agent claude|codex --hang-after 1
 * --tool-hang-after 60`, launched as an editor launches it (the bare `warden`, `claude` and
 * `codex` through PATH), the real Claude Code 2.1.332 and Codex 0.171.0 talking to the fake
 * model servers on 127.0.0.1, asked to run `sleep 4` (silent four times as long as
 * `--hang-after`). The real CLIs print nothing while the command runs; the turn must end
 * normally in the one CLI process it started in. Skipped without `npm run agents:install`.
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeModelServer } from '../support/fake-anthropic-server.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import { binDirectory, initializedEditor, stopAll } from '../support/path-editor.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { agentProcessOf, claudeBin, claudeEnv, codexBin, codexEnv, envArgs, expectNoLeftovers, skipMessage, workspace, writeCodexHome, type ProcessRow, type Workspace } from '../support/real-agents-harness.js';
import { writeShim } from '../support/warden-process.js';

const scaled = ['--hang-after', '1', '--tool-hang-after', '60'];

/**
 * Runs `sleep 4` in a turn of `warden acp --agent AGENT` (found in `bin`, with `agentEnv`):
 * the turn ends end_turn, the tool call completed, nothing was called hung, the CLI the turn
 * started in is the one it ended in (alive, the same pid: no restart), warden exits 0.
 */
async function silentToolTurn(bin: string, agent: string, project: string, agentEnv: Record<string, string>): Promise<void> {
  const editor = await initializedEditor(bin, ['--agent', agent, '--store', ':memory:', ...scaled, ...envArgs(agentEnv)], project);
  const wardenPid = editor.process.pid;
  if (wardenPid === undefined) throw new Error('warden was not spawned');
  const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: project, mcpServers: [] });
  const turn = editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'TOOL:sh sleep 4' }] });
  // The CLI as soon as it runs (at session/new, or at the prompt): seconds before a watchdog
  // under --hang-after 1 could kill it during the silent `sleep 4`.
  let started: ProcessRow | undefined;
  await waitUntil(() => (started = agentProcessOf(wardenPid)) !== undefined, `the ${agent} CLI to run under warden ${wardenPid}`, 60_000, 10);
  const cli = started as ProcessRow;
  const result = await turn;
  expect(result.stopReason, editor.stderr()).to.equal('end_turn');
  expect(isAlive(cli.pid), `the CLI the turn started in (${cli.pid} ${cli.cmdline}) still runs`).to.equal(true);
  expect(agentProcessOf(wardenPid)?.pid, 'the CLI the turn ended in is the one it started in').to.equal(cli.pid);
  const tools = editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'tool_call_update').map((entry) => entry.update.status);
  expect(tools).to.include('completed');
  expect(editor.stderr()).to.not.match(/hung/u);
  expect(await editor.close()).to.equal(0);
}

/** Runs `test` in a fresh workspace named `prefix…`; then stops warden and `server`, expects no process left, removes the workspace. */
async function inWorkspace(server: FakeModelServer, prefix: string, test: (space: Workspace) => Promise<void>): Promise<void> {
  const space = workspace(prefix);
  try {
    await test(space);
  } finally {
    await stopAll();
    await server.close();
    await expectNoLeftovers(space.base);
    rmSync(space.base, { recursive: true, force: true });
  }
}

describe('real agent CLIs: a silent tool run is no hang', function () {
  this.timeout(120_000);

  afterEach(async () => {
    await stopAll();
  });

  it('real Claude Code: Bash `sleep 4` under --hang-after 1 ends end_turn, the CLI never restarted', async function () {
    if (!existsSync(claudeBin)) {
      console.log(`      ${skipMessage('real Claude Code')}`);
      this.skip();
    }
    const server = await startFakeAnthropic();
    await inWorkspace(server, 'warden-e2e-tool-claude-', async (space) => {
      const bin = binDirectory(space.base);
      writeShim(join(bin, 'claude'), `'${claudeBin}'`);
      await silentToolTurn(bin, 'claude', space.project(), claudeEnv(server.url, space));
    });
  });

  it('real Codex: an approved `sleep 4` under --hang-after 1 ends end_turn, the app-server never restarted', async function () {
    if (!existsSync(codexBin)) {
      console.log(`      ${skipMessage('real Codex')}`);
      this.skip();
    }
    const server = await startFakeOpenAI();
    await inWorkspace(server, 'warden-e2e-tool-codex-', async (space) => {
      const codexHome = writeCodexHome(space, server.url);
      const bin = binDirectory(space.base, { codex: codexBin });
      await silentToolTurn(bin, 'codex', space.project(), codexEnv(space, codexHome));
    });
  });
});
