/**
 * The **real** Codex 0.171.0 (`npm run agents:install`) behind the host agent, against the
 * fake OpenAI server: a thread started by an app-server warden never saw (as the codex CLI
 * would) is listed by `session/list` (Codex's `thread/list` on a short-lived app-server),
 * `session/load` journals it and resumes it (`thread/resume`), and the model sees the turn
 * from before. Skipped, saying so, without the binary.
 */
import { expect } from 'chai';
import { leftovers } from '../support/real-agents-harness.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RESUME_META_KEY } from '../../src/protocol/native-agent.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { codexAdapter } from '../../src/adapters/codex/adapter.js';
import { AGENT_META_KEY, createHostAgent } from '../../src/host/host-agent.js';
import { stopServers } from '../../src/runtime/host.js';
import type { Journal } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { startFakeOpenAI, type FakeModelServer } from '../support/fake-openai-server.js';
import { waitUntil } from '../support/processes.js';
import { initialized, type Editor } from '../support/raw-editor.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const codexBin = join(process.env.WARDEN_AGENTS_DIR ?? join(repo, '.cache', 'agents'), 'node_modules', '.bin', 'codex');

/** Live processes of ours under `base` (the CLIs run with HOME under it). */
const processesUnder = (base: string): number[] => leftovers(base).map((row) => row.pid);

/** What a codex CLI does on its own: one app-server, a thread, one turn; then it exits. Returns the thread id. */
async function threadStartedOutsideWarden(env: Record<string, string>, cwd: string, text: string): Promise<string> {
  const child = spawn(codexBin, ['app-server'], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'ignore'] });
  const messages: Array<{ id?: number; method?: string; result?: { thread?: { id: string } }; error?: unknown }> = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      if (line.trim()) messages.push(JSON.parse(line));
    }
  });
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const answer = async (id: number) => {
    await waitUntil(() => messages.some((message) => message.id === id && message.method === undefined), `the app-server's answer to ${id}`, 30_000);
    return messages.find((message) => message.id === id && message.method === undefined) as (typeof messages)[number];
  };
  send({ id: 0, method: 'initialize', params: { clientInfo: { name: 'codex-cli-stand-in', title: 'codex CLI stand-in', version: '0.0.1' }, capabilities: null } });
  await answer(0);
  send({ method: 'initialized' });
  send({ id: 1, method: 'thread/start', params: { cwd, approvalPolicy: 'never', sandbox: 'workspace-write' } });
  const threadId = (await answer(1)).result?.thread?.id as string;
  send({ id: 2, method: 'turn/start', params: { threadId, input: [{ type: 'text', text, text_elements: [] }] } });
  await waitUntil(() => messages.some((message) => message.method === 'turn/completed'), 'the turn to complete', 60_000);
  child.stdin.end();
  await new Promise((resolve) => child.on('exit', resolve));
  return threadId;
}

describe('host agent with the real Codex: a thread warden never journaled is listed, loaded and continued', function () {
  this.timeout(120_000);

  let base: string;
  let home: string;
  let project: string;
  let server: FakeModelServer | undefined;
  let journal: Journal;
  let editor: Editor | undefined;
  const env = () => ({ HOME: home, CODEX_HOME: join(home, '.codex'), TMPDIR: join(base, 'tmp'), FAKE_OPENAI_API_KEY: 'dummy', RUST_LOG: 'warn', NO_PROXY: '127.0.0.1,localhost' });

  before(async function () {
    if (!existsSync(codexBin)) {
      console.log('      real Codex not installed: run `npm run agents:install` to include these tests');
      this.skip();
    }
    base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-host-codex-real-')));
    home = join(base, 'home');
    project = join(base, 'project');
    for (const directory of [home, project, join(base, 'tmp'), join(home, '.codex')]) mkdirSync(directory, { recursive: true });
    server = await startFakeOpenAI();
    writeFileSync(join(home, '.codex', 'config.toml'), [
      'model = "gpt-5.5"', 'model_provider = "fake"', 'approval_policy = "never"', 'sandbox_mode = "workspace-write"', 'check_for_update_on_startup = false',
      '[model_providers.fake]', 'name = "Fake OpenAI"', `base_url = "${server.url}/v1"`, 'env_key = "FAKE_OPENAI_API_KEY"', 'wire_api = "responses"', 'request_max_retries = 0', 'stream_max_retries = 0',
      '[analytics]', 'enabled = false', '[feedback]', 'enabled = false', '[features]', 'plugins = false', 'remote_plugin = false', 'apps = false', '',
    ].join('\n'));
    journal = sqliteJournal(':memory:');
  });

  after(async () => {
    if (editor) await stopServers([editor.server]);
    journal?.close();
    await server?.close();
    if (base) {
      await waitUntil(() => processesUnder(base).length === 0, `no Codex left (left: ${processesUnder(base).join(', ')})`, 20_000, 50);
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('session/list shows the thread (from thread/list), session/load resumes it with thread/resume, the model sees both turns, and the journal lists it once from then on', async () => {
    const threadId = await threadStartedOutsideWarden(env(), project, 'hello from outside warden');

    const host = createHostAgent({ defaultAgent: 'codex', journal, resolve: () => createAdapterAgent({ definition: codexAdapter, executable: codexBin, env: env() }) });
    editor = await initialized(host);
    const started = Date.now();
    const listed = (await editor.request('session/list', { cwd: project })) as { sessions: Array<{ sessionId: string; title?: string; _meta?: Record<string, unknown> }> };
    const listMs = Date.now() - started;
    expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([threadId]);
    expect(listed.sessions[0]).to.deep.include({ title: 'hello from outside warden' });
    expect(listed.sessions[0]?._meta).to.deep.equal({ [AGENT_META_KEY]: 'codex', [RESUME_META_KEY]: { threadId } });
    // The listing's app-server is gone once it answered.
    await waitUntil(() => processesUnder(base).length === 0, 'the listing app-server to stop', 20_000, 50);

    expect(await editor.request('session/load', { sessionId: threadId, cwd: project, mcpServers: [] })).to.have.property('modes');
    expect(journal.getSession(threadId)).to.deep.include({ agent: 'codex', cwd: project, resume: { threadId } });
    const requestsBefore = (server as FakeModelServer).requests.length;
    expect(await editor.request('session/prompt', { sessionId: threadId, prompt: [{ type: 'text', text: 'and now through warden' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const last = ((server as FakeModelServer).requests.slice(requestsBefore) as Array<{ path: string; body: { input?: Array<{ role?: string; content?: unknown }> } }>).filter((request) => request.path.includes('responses')).at(-1);
    const texts = (last?.body.input ?? []).filter((item) => item.role === 'user').flatMap((item) => (Array.isArray(item.content) ? (item.content as Array<{ text?: string }>).map((part) => part.text ?? '') : []));
    expect(texts).to.include.members(['hello from outside warden', 'and now through warden']);

    const again = (await editor.request('session/list', { cwd: project })) as typeof listed;
    expect(again.sessions.map((session) => session.sessionId)).to.deep.equal([threadId]);
    expect(again.sessions[0]?._meta).to.include({ [AGENT_META_KEY]: 'codex', 'acp-warden/state': 'open' });
    console.log(`      (session/list with the real Codex: ${listMs} ms)`);
  });
});
