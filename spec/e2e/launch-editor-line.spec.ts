/**
 * EXACTLY the README's editor line ("Use it from an editor"): the command `warden` with the
 * arguments `acp --agent claude --hang-after 300` (and `--agent codex`), found on the PATH, with
 * the real Claude Code 2.1.332 and Codex 0.171.0 from .cache/agents/node_modules/.bin found
 * only through that PATH too; the model server's address and the key in the environment the
 * editor gives warden (Zed's `env`), nothing on the command line. Driven by the ACP SDK's
 * client as an editor drives it (spec/support/editor.ts): initialize, session/new, a text
 * prompt answered. Plus `warden acp --agent "acp:node <agent.mjs>" --hang-after 300` with
 * `node` found through the PATH.
 *
 * Against the fake model servers of spec/e2e/real-agents.spec.ts, on 127.0.0.1. Without the
 * CLIs (`npm run agents:install`) the real-CLI cases skip with a message.
 */
import { expect } from 'chai';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { launch, type EditorSession } from '../support/editor.js';
import { startFakeAnthropic } from '../support/fake-anthropic-server.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import type { FakeModelServer } from '../support/local-model-server.js';
import { pathDirectory } from '../support/launch-harness.js';
import { agentsBin, anthropicUserTexts, claudeBin, claudeEnv, codexBin, codexEnv, descendants, expectNoLeftovers, openaiUserTexts, repo, skipMessage, workspace, writeCodexHome, type Workspace } from '../support/real-agents-harness.js';

/** The README's arguments for `agent`. */
const readmeArgs = (agent: string) => ['acp', '--agent', agent, '--hang-after', '300'];

describe("the README's editor line: warden acp --agent NAME --hang-after 300, everything through the PATH", function () {
  this.timeout(180_000);
  let space: Workspace;
  let bin: string;
  const running: EditorSession[] = [];
  const servers: FakeModelServer[] = [];

  before(() => {
    space = workspace('warden-e2e-editor-line-');
    bin = pathDirectory(join(space.base, 'bin'));
  });

  afterEach(async () => {
    for (const editor of running.splice(0)) await editor.close();
  });

  after(async () => {
    for (const server of servers.splice(0)) await server.close();
    await expectNoLeftovers(space.base);
    rmSync(space.base, { recursive: true, force: true });
  });

  /** What an editor's PATH looks like: warden's bin, the agents' bin, the system. */
  const editorPath = () => [bin, agentsBin, '/usr/local/bin', '/usr/bin', '/bin'].join(':');

  /** `warden <args>` as the editor runs it, initialized, with one session in a fresh project. */
  async function open(args: string[], env: Record<string, string>): Promise<{ editor: EditorSession; sessionId: string; agentName: string | undefined }> {
    const project = space.project();
    const editor = launch('warden', args, { env, cwd: project, requestTimeoutMs: 90_000 });
    running.push(editor);
    const init = await editor.initialize();
    return { editor, sessionId: await editor.newSession(project), agentName: init.agentInfo?.name ?? undefined };
  }

  it('warden acp --agent claude --hang-after 300: the real Claude Code, found on the PATH, answers a text prompt', async function () {
    if (!existsSync(claudeBin)) {
      console.log(`      ${skipMessage('real Claude Code')}`);
      this.skip();
    }
    const server = await startFakeAnthropic();
    servers.push(server);
    const { editor, sessionId, agentName } = await open(readmeArgs('claude'), { PATH: editorPath(), ...claudeEnv(server.url, space) });
    expect(agentName).to.equal('claude-code');
    const outcome = await editor.prompt(sessionId, 'hello').outcome;
    expect(outcome, editor.stderr()).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake Anthropic server.', error: undefined });
    const last = server.requests.filter((request) => request.path === '/v1/messages').at(-1);
    expect(last?.headers['user-agent']).to.match(/^claude-cli\/2\.1\.332 /u);
    expect(anthropicUserTexts(last?.body)).to.include('hello');
    // The CLI warden runs is the one the PATH leads to.
    expect(descendants(editor.pid).some((row) => row.cmdline.startsWith(join(agentsBin, 'claude')))).to.equal(true);
  });

  it('warden acp --agent codex --hang-after 300: the real Codex, found on the PATH, answers a text prompt', async function () {
    if (!existsSync(codexBin)) {
      console.log(`      ${skipMessage('real Codex')}`);
      this.skip();
    }
    const server = await startFakeOpenAI();
    servers.push(server);
    // The key goes by the name Codex's adapter passes on (OPENAI_API_KEY): an editor's user sets
    // that one, and warden keeps other *_API_KEY variables from the agent.
    const codexHome = writeCodexHome(space, server.url, 'OPENAI_API_KEY');
    const env = Object.fromEntries(Object.entries(codexEnv(space, codexHome)).filter(([name]) => name !== 'FAKE_OPENAI_API_KEY'));
    const { editor, sessionId, agentName } = await open(readmeArgs('codex'), { PATH: editorPath(), ...env, OPENAI_API_KEY: 'dummy' });
    expect(agentName).to.equal('codex');
    const outcome = await editor.prompt(sessionId, 'hello').outcome;
    expect(outcome, editor.stderr()).to.deep.equal({ stopReason: 'end_turn', text: 'Hello from the fake OpenAI server.', error: undefined });
    const last = server.requests.filter((request) => request.path === '/v1/responses').at(-1);
    expect(last?.headers.authorization).to.equal('Bearer dummy');
    expect(openaiUserTexts(last?.body)).to.include('hello');
  });

  it('warden acp --agent "acp:node <agent.mjs>" --hang-after 300, with node found through the PATH: a text prompt answered', async () => {
    const agent = join(repo, 'spec', 'support', 'sdk-agent.mjs');
    const { editor, sessionId, agentName } = await open(readmeArgs(`acp:node ${agent}`), { PATH: editorPath(), HOME: space.home, TMPDIR: space.tmp });
    expect(agentName).to.equal('sdk-agent');
    const outcome = await editor.prompt(sessionId, 'hello').outcome;
    expect(outcome.error, editor.stderr()).to.equal(undefined);
    expect(outcome.stopReason).to.equal('end_turn');
    expect(outcome.text).to.not.equal('');
  });
});
