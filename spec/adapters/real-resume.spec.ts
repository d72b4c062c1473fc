/**
 * Sessions resumed from the host's journal, against the **real** Claude Code 2.1.332 and
 * Codex 0.171.0 (`npm run agents:install`) and the fake model servers: one adapter agent
 * opens a session and runs a turn, and is stopped (warden restarted); a second adapter agent
 * is given the session id and the resume state the first one reported, as `session/resume`
 * with `_meta["acp-warden/resume"]`, and the model sees both turns. Also what each CLI does
 * with a conversation it does not have. Skipped, saying so, without the binaries.
 */
import { expect } from 'chai';
import { leftovers } from '../support/real-agents-harness.js';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESUME_META_KEY } from '../../src/protocol/native-agent.js';
import type { AdapterDefinition } from '../../src/adapters/adapter.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { claudeAdapter } from '../../src/adapters/claude/adapter.js';
import { codexAdapter } from '../../src/adapters/codex/adapter.js';
import { startFakeAnthropic } from '../support/fake-anthropic-server.js';
import { startFakeOpenAI } from '../support/fake-openai-server.js';
import { waitUntil } from '../support/processes.js';
import { driveAgent, resultOf, type Driver } from './native-driver.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const agentsBin = join(process.env.WARDEN_AGENTS_DIR ?? join(repo, '.cache', 'agents'), 'node_modules', '.bin');
const claudeBin = join(agentsBin, 'claude');
const codexBin = join(agentsBin, 'codex');

/** Live processes of ours under `base` (the CLIs run with HOME under it). */
const processesUnder = (base: string): number[] => leftovers(base).map((row) => row.pid);

interface Space {
  readonly base: string;
  readonly home: string;
  readonly tmp: string;
  readonly project: string;
}

function space(prefix: string): Space {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const paths = { base, home: join(base, 'home'), tmp: join(base, 'tmp'), project: join(base, 'project') };
  for (const directory of [paths.home, paths.tmp, paths.project]) mkdirSync(directory);
  return paths;
}

const drivers: Driver[] = [];

/** An adapter agent (one warden process's worth), driven as the host drives it. */
function agent(definition: AdapterDefinition, executable: string, env: Record<string, string>): Driver {
  const driver = driveAgent(createAdapterAgent({ definition, executable, env }));
  drivers.push(driver);
  return driver;
}

/** Stops an agent (warden going away) and waits until its CLIs are gone. */
async function stop(driver: Driver, base: string): Promise<void> {
  driver.stop();
  await waitUntil(() => processesUnder(base).length === 0, `the CLIs under ${base} to be gone (left: ${processesUnder(base).join(', ')})`, 20_000, 50);
}

async function hello(driver: Driver, sessionId: string): Promise<void> {
  const answer = await driver.answer(driver.request('session.prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] }), 60_000);
  expect(resultOf(answer)).to.deep.equal({ stopReason: 'end_turn' });
}

async function resume(driver: Driver, sessionId: string, cwd: string, state: unknown): Promise<Record<string, unknown>> {
  const params = { sessionId, cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: state } };
  return resultOf(await driver.answer(driver.request('session.resume', 'session/resume', params), 60_000));
}

const lastState = (driver: Driver) => (driver.lifecycle().filter((output) => output.type === 'session.resumeState').at(-1) as { state: unknown } | undefined)?.state;
const notices = (driver: Driver) => driver.outputs.filter((output) => output.type === 'acp.update' && (output.update as { sessionUpdate: string }).sessionUpdate === 'notice');

describe('sessions resumed from the journal after warden restarted, with the real CLIs', function () {
  this.timeout(120_000);

  afterEach(() => {
    for (const driver of drivers.splice(0)) driver.stop();
  });

  describe('Claude Code 2.1.332 (fake Anthropic server)', function () {
    let paths: Space;
    let server: Awaited<ReturnType<typeof startFakeAnthropic>> | undefined;
    const env = () => ({
      ANTHROPIC_BASE_URL: (server as { url: string }).url,
      ANTHROPIC_API_KEY: 'dummy',
      HOME: paths.home,
      TMPDIR: paths.tmp,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      NO_PROXY: '127.0.0.1,localhost',
    });

    before(async function () {
      if (!existsSync(claudeBin)) {
        console.log('      real Claude Code not installed: run `npm run agents:install` to include these tests');
        this.skip();
      }
      paths = space('warden-real-resume-claude-');
      server = await startFakeAnthropic();
    });

    after(async () => {
      await server?.close();
      if (paths) {
        await waitUntil(() => processesUnder(paths.base).length === 0, 'no Claude Code left', 20_000, 50);
        rmSync(paths.base, { recursive: true, force: true });
      }
    });

    it('--resume=<journaled id>: the same Claude session goes on, and the model sees the turn from before the restart', async () => {
      const first = agent(claudeAdapter, claudeBin, env());
      const { sessionId } = resultOf(await first.answer(first.request('session.new', 'session/new', { cwd: paths.project, mcpServers: [] }), 60_000)) as { sessionId: string };
      await hello(first, sessionId);
      const journaled = lastState(first) as { claudeSessionId: string };
      expect(journaled.claudeSessionId).to.match(/^[0-9a-f-]{36}$/u);
      await stop(first, paths.base);

      const requestsBefore = (server as { requests: unknown[] }).requests.length;
      const second = agent(claudeAdapter, claudeBin, env());
      const setup = await resume(second, sessionId, paths.project, journaled);
      expect(setup).to.have.property('modes');
      await hello(second, sessionId);
      const mine = ((server as { requests: Array<{ path: string; headers: Record<string, string>; body: { messages?: Array<{ role: string; content: unknown }> } }> }).requests.slice(requestsBefore)).filter((request) => request.path === '/v1/messages');
      const last = mine.at(-1);
      expect(last?.headers['x-claude-code-session-id']).to.equal(journaled.claudeSessionId);
      const texts = (last?.body.messages ?? []).filter((message) => message.role === 'user').flatMap((message) =>
        typeof message.content === 'string' ? [message.content] : (message.content as Array<{ type: string; text?: string }>).filter((block) => block.type === 'text').map((block) => block.text ?? ''));
      expect(texts.filter((text) => text === 'hello')).to.have.length(2);
      expect(second.lifecycle(), 'the same session id: nothing new to journal').to.deep.equal([]);
      await stop(second, paths.base);
    });

    it('a journaled id Claude has no conversation for: a new conversation, a warning notice, its new id to journal', async () => {
      const driver = agent(claudeAdapter, claudeBin, env());
      const missing = '0b4c8a77-1111-4222-8333-944455556666';
      expect(await resume(driver, 'claude-missing', paths.project, { claudeSessionId: missing })).to.have.property('modes');
      await hello(driver, 'claude-missing');
      expect(notices(driver)).to.have.length(1);
      const restarting = driver.lifecycle().find((output) => output.type === 'session.restarting') as { exit: { stderrTail?: string } };
      expect(restarting.exit.stderrTail).to.contain(`No conversation found with session ID: ${missing}`);
      expect((lastState(driver) as { claudeSessionId: string }).claudeSessionId).to.not.equal(missing);
      await stop(driver, paths.base);
    });
  });

  describe('Codex 0.171.0 app-server (fake OpenAI server)', function () {
    let paths: Space;
    let server: Awaited<ReturnType<typeof startFakeOpenAI>> | undefined;
    const env = () => ({ HOME: paths.home, CODEX_HOME: join(paths.home, '.codex'), TMPDIR: paths.tmp, FAKE_OPENAI_API_KEY: 'dummy', RUST_LOG: 'warn', NO_PROXY: '127.0.0.1,localhost' });

    before(async function () {
      if (!existsSync(codexBin)) {
        console.log('      real Codex not installed: run `npm run agents:install` to include these tests');
        this.skip();
      }
      paths = space('warden-real-resume-codex-');
      server = await startFakeOpenAI();
      mkdirSync(join(paths.home, '.codex'));
      writeFileSync(join(paths.home, '.codex', 'config.toml'), [
        'model = "gpt-5.5"', 'model_provider = "fake"', 'approval_policy = "never"', 'sandbox_mode = "workspace-write"', 'check_for_update_on_startup = false',
        '[model_providers.fake]', 'name = "Fake OpenAI"', `base_url = "${server.url}/v1"`, 'env_key = "FAKE_OPENAI_API_KEY"', 'wire_api = "responses"', 'request_max_retries = 0', 'stream_max_retries = 0',
        '[analytics]', 'enabled = false', '[feedback]', 'enabled = false', '[features]', 'plugins = false', 'remote_plugin = false', 'apps = false', '',
      ].join('\n'));
    });

    after(async () => {
      await server?.close();
      if (paths) {
        await waitUntil(() => processesUnder(paths.base).length === 0, 'no Codex left', 20_000, 50);
        rmSync(paths.base, { recursive: true, force: true });
      }
    });

    it('thread/resume of the journaled thread: the model sees the turn from before the restart', async () => {
      const first = agent(codexAdapter, codexBin, env());
      const { sessionId } = resultOf(await first.answer(first.request('session.new', 'session/new', { cwd: paths.project, mcpServers: [] }), 60_000)) as { sessionId: string };
      const journaled = lastState(first) as { threadId: string };
      expect(journaled.threadId).to.be.a('string');
      await hello(first, sessionId);
      await stop(first, paths.base);

      const requestsBefore = (server as { requests: unknown[] }).requests.length;
      const second = agent(codexAdapter, codexBin, env());
      expect(await resume(second, sessionId, paths.project, journaled)).to.have.property('modes');
      await hello(second, sessionId);
      const last = ((server as { requests: Array<{ path: string; body: { input?: Array<{ role?: string; content?: unknown }> } }> }).requests.slice(requestsBefore)).filter((request) => request.path.includes('responses')).at(-1);
      const texts = (last?.body.input ?? []).filter((item) => item.role === 'user').flatMap((item) => (Array.isArray(item.content) ? (item.content as Array<{ text?: string }>).map((part) => part.text ?? '') : []));
      expect(texts.filter((text) => text === 'hello')).to.have.length(2);
      expect(second.lifecycle(), 'the same thread: nothing new to journal').to.deep.equal([]);
      await stop(second, paths.base);
    });

    it('a journaled thread that was never saved (no turn): a new thread, a warning notice, its id to journal', async () => {
      const first = agent(codexAdapter, codexBin, env());
      const { sessionId } = resultOf(await first.answer(first.request('session.new', 'session/new', { cwd: paths.project, mcpServers: [] }), 60_000)) as { sessionId: string };
      const journaled = lastState(first) as { threadId: string };
      await stop(first, paths.base);

      const second = agent(codexAdapter, codexBin, env());
      expect(await resume(second, sessionId, paths.project, journaled)).to.have.property('modes');
      expect(notices(second)).to.have.length(1);
      expect((lastState(second) as { threadId: string }).threadId).to.not.equal(journaled.threadId);
      await hello(second, sessionId);
      await stop(second, paths.base);
    });
  });
});
