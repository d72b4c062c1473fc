/**
 * The Codex adapter against a fake `codex app-server` that replays the recorded transcripts
 * (spec/fixtures/codex-app-server-*), driven through our ACP agent side by our ACP client.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, closeSession, initialize, newSession, prompt, resumeSession, type ClientHandler } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { RESUME_META_KEY } from '../../src/protocol/native-agent.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { codexAdapter } from '../../src/adapters/codex/adapter.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { buildEnvironment } from '../../src/port/env-policy.js';
import { isAlive, waitUntil } from '../support/processes.js';
import type { CrashChoice } from '../../src/adapters/crash-policy.js';
import { CONTINUED_NOTICE_TITLE } from '../../src/adapters/continuation-text.js';

const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));
const started: Array<{ client: AnyActorRef; server: AnyActorRef; cwd: string; log: string }> = [];

/** An initialized editor connection to the Codex adapter agent, with no session yet. */
async function connect(fixture: string, env: Record<string, string> = {}, handler: ClientHandler = {}, crash?: CrashChoice) {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'warden-codex-')));
  const log = join(cwd, '.argv.log');
  const [editorSide, agentSide] = createMemoryTransportPair();
  const agent = createAdapterAgent({ definition: codexAdapter, executable: fakeCodex, env: { FAKE_CODEX_FIXTURE: fixture, FAKE_CODEX_ARGV_LOG: log, ...env }, ...(crash ? { crash } : {}) });
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent } }).start();
  const client = createActor(agentClientLogic, { input: { transport: editorSide, handler } }).start();
  started.push({ client, server, cwd, log });
  const init = await initialize(client);
  const starts = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number; args: string[] }) : []);
  return { client, cwd, init, starts };
}

async function start(fixture: string, env: Record<string, string> = {}, handler: ClientHandler = {}, crash?: CrashChoice) {
  const connected = await connect(fixture, env, handler, crash);
  const setup = await newSession(connected.client, { cwd: connected.cwd });
  return { ...connected, sessionId: setup.sessionId, setup };
}

async function run(client: AnyActorRef, sessionId: string, text: string) {
  const handle = prompt(client, sessionId, [{ type: 'text', text }]);
  const updates: SessionUpdate[] = [];
  for await (const update of handle.updates) updates.push(update);
  return { updates, result: await handle.result.catch((error: unknown) => error) };
}

describe('Codex adapter (fake app-server replaying recorded transcripts)', function () {
  afterEach(async () => {
    for (const { client, server, cwd, log } of started.splice(0)) {
      client.stop();
      server.stop();
      const pids = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { pid: number }).pid) : [];
      for (const pid of pids) await waitUntil(() => !isAlive(pid), `fake codex ${pid} to be gone`);
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  this.timeout(30_000);

  it('hello: handshake, a thread, the streamed text, usage and end_turn', async () => {
    const { client, sessionId, setup, starts } = await start('hello');
    expect(starts()[0]?.args).to.deep.equal(['app-server']);
    expect((setup.modes as { currentModeId: string }).currentModeId).to.equal('untrusted');
    const { updates, result } = await run(client, sessionId, 'say hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    const text = updates.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => (update as { content: { text: string } }).content.text).join('');
    expect(text).to.equal('Hello from the fake OpenAI server.');
    expect(updates.find((update) => update.sessionUpdate === 'usage_update')).to.deep.include({ used: 19, size: 258400 });
  });

  it('a turn failed with a 429 before any tool call: a "Rate limited" notice, the prompt sent again after 1 s, it ends end_turn with the answer (issue 32)', async () => {
    const { client, sessionId } = await start('hello', { FAKE_CODEX_RATE_LIMITS: '1' });
    const { updates, result } = await run(client, sessionId, 'say hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(JSON.stringify(updates)).to.contain('The model provider is rate limited, retrying in 1 s (1 of 3).');
    const text = updates.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => (update as { content: { text: string } }).content.text).join('');
    expect(text).to.contain('Hello from the fake OpenAI server.');
  });

  it('an approval request becomes session/request_permission; allowed, the command runs and completes', async () => {
    const asked: Array<{ toolCall: { title: string } }> = [];
    const { client, sessionId } = await start('tool-approval', {}, {
      permission: (request) => {
        asked.push(request as never);
        return { outcome: 'selected', optionId: 'allow' };
      },
    });
    const { updates, result } = await run(client, sessionId, 'TOOL:sh touch /home/user/project/codex-touched2.txt');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(asked).to.have.length(1);
    expect(asked[0]?.toolCall.title).to.contain("touch /home/user/project/codex-touched2.txt");
    const call = updates.find((update) => update.sessionUpdate === 'tool_call') as { kind: string; title: string; toolCallId: string };
    expect(call).to.include({ kind: 'execute', toolCallId: 'call_fake_9', title: '`touch /home/user/project/codex-touched2.txt`' });
    expect(updates.some((update) => update.sessionUpdate === 'tool_call_update' && (update as { status?: string }).status === 'completed')).to.equal(true);
  });

  it('kill -9 mid-turn with --on-crash fail: the prompt fails naming the crash, the restarted app-server resumes the thread, the next prompt works', async () => {
    const methodLog = join(tmpdir(), `warden-codex-methods-${process.pid}-${Date.now()}`);
    try {
      const { client, sessionId, starts } = await start('hello', { FAKE_CODEX_CRASH_AFTER: '2', FAKE_CODEX_METHOD_LOG: methodLog }, {}, { onCrash: 'fail' });
      const first = await run(client, sessionId, 'say hi');
      expect(first.result).to.be.instanceOf(RpcError);
      expect(((first.result as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
      await waitUntil(() => starts().length === 2, 'the restart');
      const second = await run(client, sessionId, 'say hi');
      expect(second.result).to.deep.equal({ stopReason: 'end_turn' });
      const methods = readFileSync(methodLog, 'utf8').trim().split('\n');
      // The second app-server resumed the thread the first one started.
      expect(methods.filter((line) => line.startsWith('thread/'))).to.deep.equal(['thread/start null', 'thread/resume "01a22bbb-6e57-7a52-b8be-e2dcb9d419da"']);
      expect(methods.filter((line) => line.startsWith('initialize '))).to.have.length(2);
    } finally {
      rmSync(methodLog, { force: true });
    }
  });

  it('session/resume from the host\'s journal (advertised): the first thread request is thread/resume of the journaled thread, and the turn runs in it', async () => {
    const methodLog = join(tmpdir(), `warden-codex-methods-${process.pid}-${Date.now()}`);
    try {
      const { client, cwd, init } = await connect('hello', { FAKE_CODEX_METHOD_LOG: methodLog });
      expect(init.agentCapabilities).to.deep.include({ loadSession: true });
      expect(init.agentCapabilities?.sessionCapabilities).to.have.all.keys('resume', 'close', 'list');
      const journaled = '01a22bbb-1111-7222-8333-944455556666';
      const params = { sessionId: 'codex-fromjournal', cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: { threadId: journaled } } };
      const setup = await resumeSession(client, params);
      expect(setup).to.not.have.property('sessionId');
      expect((setup.modes as { currentModeId: string }).currentModeId).to.equal('untrusted');
      const { updates, result } = await run(client, 'codex-fromjournal', 'say hi');
      expect(result).to.deep.equal({ stopReason: 'end_turn' });
      const text = updates.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => (update as { content: { text: string } }).content.text).join('');
      expect(text).to.equal('Hello from the fake OpenAI server.');
      const methods = readFileSync(methodLog, 'utf8').trim().split('\n');
      expect(methods.filter((line) => line.startsWith('thread/'))).to.deep.equal([`thread/resume ${JSON.stringify(journaled)}`]);
      expect(methods.find((line) => line.startsWith('turn/start'))).to.equal(`turn/start ${JSON.stringify(journaled)}`);
    } finally {
      rmSync(methodLog, { force: true });
    }
  });

  it('session/close: the app-server stops, and the session is gone for the editor', async () => {
    const { client, sessionId, starts } = await start('hello');
    await closeSession(client, sessionId);
    const { pid } = starts()[0] as { pid: number };
    await waitUntil(() => !isAlive(pid), 'the closed session\'s app-server to stop', 15_000);
    const { result } = await run(client, sessionId, 'say hi');
    expect(result).to.be.instanceOf(RpcError);
    expect((result as RpcError).code).to.equal(-32002);
  });

  it('the environment: Codex gets its own variables, never another agent\'s key', () => {
    const line = codexAdapter.command?.({ executable: 'codex', cwd: '/w', params: {}, resume: undefined, restarts: 0 });
    const env = buildEnvironment({ ...line?.env, parent: { PATH: '/bin', OPENAI_API_KEY: 'sk-oai', ANTHROPIC_API_KEY: 'sk-ant', CODEX_HOME: '/h' } });
    expect(env).to.include({ OPENAI_API_KEY: 'sk-oai', CODEX_HOME: '/h' });
    expect(env).to.not.have.any.keys('ANTHROPIC_API_KEY');
  });
  /** The text of each `turn/start` the app-servers got (FAKE_CODEX_PARAMS_LOG), in order. */
  const turnTexts = (log: string): string[] =>
    (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { method: string; params: { input?: Array<{ text?: string }> } }) : [])
      .filter((entry) => entry.method === 'turn/start')
      .map((entry) => (entry.params.input ?? []).map((item) => item.text ?? '').join(''));
  const noticeSeen = (updates: SessionUpdate[]) => updates.some((update) => JSON.stringify(update).includes(CONTINUED_NOTICE_TITLE));

  it('kill -9 mid-text (--on-crash continue, the default): the resumed thread gets the prompt again, the prompt ends end_turn with the whole answer after the notice', async () => {
    const paramsLog = join(tmpdir(), `warden-codex-params-${process.pid}-${Date.now()}`);
    try {
      const { client, sessionId, starts } = await start('hello', { FAKE_CODEX_CRASH_AFTER: '8', FAKE_CODEX_PARAMS_LOG: paramsLog });
      const { updates, result } = await run(client, sessionId, 'say hi');
      expect(result).to.deep.equal({ stopReason: 'end_turn' });
      expect(noticeSeen(updates)).to.equal(true);
      const after = updates.slice(updates.findIndex((update) => JSON.stringify(update).includes(CONTINUED_NOTICE_TITLE)) + 1);
      expect(after.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => (update as { content: { text: string } }).content.text).join('')).to.equal('Hello from the fake OpenAI server.');
      expect(starts()).to.have.length(2);
      expect(turnTexts(paramsLog)).to.deep.equal(['say hi', 'say hi']);
    } finally {
      rmSync(paramsLog, { force: true });
    }
  });

  it('kill -9 while an approved-or-running command was started: the continuation says it may have partly run and asks to check; end_turn', async () => {
    const paramsLog = join(tmpdir(), `warden-codex-params-${process.pid}-${Date.now()}`);
    try {
      const { client, sessionId } = await start('tool-approval', { FAKE_CODEX_CRASH_AFTER: '7', FAKE_CODEX_PARAMS_LOG: paramsLog }, { permission: () => ({ outcome: 'selected', optionId: 'allow' }) });
      const { updates, result } = await run(client, sessionId, 'TOOL:sh touch /home/user/project/codex-touched2.txt');
      expect(result).to.deep.equal({ stopReason: 'end_turn' });
      expect(noticeSeen(updates)).to.equal(true);
      const [first, continuation] = turnTexts(paramsLog);
      expect(first).to.equal('TOOL:sh touch /home/user/project/codex-touched2.txt');
      expect(continuation).to.contain('The Codex process crashed');
      expect(continuation).to.contain('nobody interrupted you on purpose');
      expect(continuation).to.match(/- [^\n]*touch \/home\/user\/project\/codex-touched2\.txt[^\n]*: it was approved or running when the process died, so it may have partly run; its outcome is unknown\./u);
      expect(continuation?.endsWith('\nTOOL:sh touch /home/user/project/codex-touched2.txt')).to.equal(true);
    } finally {
      rmSync(paramsLog, { force: true });
    }
  });
});
