/**
 * The Claude Code adapter against a fake `claude` that replays the recorded stream-json
 * transcripts (spec/fixtures/claude-stream-json-*), driven through our ACP agent side by our
 * ACP client: what an editor would see.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, closeSession, initialize, loadSession, newSession, prompt, resumeSession, setConfigOption, setMode, type ClientHandler } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { RESUME_META_KEY } from '../../src/protocol/native-agent.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { claudeAdapter } from '../../src/adapters/claude/adapter.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { buildEnvironment } from '../../src/port/env-policy.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { isAlive, waitUntil } from '../support/processes.js';
import type { CrashChoice } from '../../src/adapters/crash-policy.js';
import { CONTINUED_NOTICE_TITLE } from '../../src/adapters/continuation-text.js';
import { NOTICE_META_KEY } from '../../src/acp/agent-server.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

interface Harness {
  client: AnyActorRef;
  server: AnyActorRef;
  cwd: string;
  argvLog: string;
  updates: SessionUpdate[];
  starts(): Array<{ pid: number; args: string[] }>;
}

const harnesses: Harness[] = [];

/** An initialized editor connection to the Claude adapter agent, with no session yet. */
async function connect(fixture: string, env: Record<string, string> = {}, handler: ClientHandler = {}, crash?: CrashChoice): Promise<Harness & { init: Awaited<ReturnType<typeof initialize>> }> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'warden-claude-')));
  const argvLog = join(cwd, '.argv.log');
  const [editorSide, agentSide] = createMemoryTransportPair();
  const agent = createAdapterAgent({
    definition: claudeAdapter,
    executable: fakeClaude,
    env: { FAKE_CLAUDE_FIXTURE: fixture, FAKE_CLAUDE_ARGV_LOG: argvLog, ...env },
    ...(crash ? { crash } : {}),
  });
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent } }).start();
  const client = createActor(agentClientLogic, { input: { transport: editorSide, handler } }).start();
  const updates: SessionUpdate[] = [];
  client.on('acp.update', (event: { update: SessionUpdate }) => updates.push(event.update));
  const harness: Harness = {
    client,
    server,
    cwd,
    argvLog,
    updates,
    starts: () => (existsSync(argvLog) ? readFileSync(argvLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) : []),
  };
  harnesses.push(harness);
  return { ...harness, init: await initialize(client) };
}

async function start(fixture: string, env: Record<string, string> = {}, handler: ClientHandler = {}, crash?: CrashChoice): Promise<Harness & { sessionId: string; setup: Record<string, unknown> }> {
  const harness = await connect(fixture, env, handler, crash);
  const setup = await newSession(harness.client, { cwd: harness.cwd });
  return { ...harness, sessionId: setup.sessionId, setup };
}

async function run(client: AnyActorRef, sessionId: string, text: string, options: { cancelOn?: (update: SessionUpdate) => boolean } = {}) {
  const handle = prompt(client, sessionId, [{ type: 'text', text }]);
  const updates: SessionUpdate[] = [];
  for await (const update of handle.updates) {
    updates.push(update);
    if (options.cancelOn?.(update)) handle.cancel();
  }
  const result = await handle.result.catch((error: unknown) => error);
  return { updates, result };
}

const chunks = (updates: SessionUpdate[]) => updates.filter((update) => update.sessionUpdate === 'agent_message_chunk').map((update) => (update as { content: { text: string } }).content.text);

/** Stops every harness of the test, waits for its CLIs to be gone, removes its directory. */
async function closeHarnesses(): Promise<void> {
  for (const harness of harnesses.splice(0)) {
    harness.client.stop();
    harness.server.stop();
    try {
      for (const { pid } of harness.starts()) await waitUntil(() => !isAlive(pid), `fake claude ${pid} to be gone`);
    } finally {
      rmSync(harness.cwd, { recursive: true, force: true });
    }
  }
}

describe('Claude Code adapter (fake CLI replaying recorded transcripts)', function () {
  afterEach(closeHarnesses);

  this.timeout(30_000);

  it('session/new: initialize handshake first, then modes, the model as a config option, and the commands', async () => {
    const { setup, updates, starts } = await start('hello');
    expect(setup.modes).to.deep.include({ currentModeId: 'default' });
    const options = setup.configOptions as Array<{ id: string; category: string; options: unknown[] }>;
    expect(options[0]).to.include({ id: 'model', category: 'model' });
    expect(options[0]?.options.length).to.be.greaterThan(0);
    await waitUntil(() => updates.some((update) => update.sessionUpdate === 'available_commands_update'), 'the commands');
    expect(starts()[0]?.args).to.include.members(['-p', '--output-format', 'stream-json', '--input-format', 'stream-json', '--permission-prompt-tool', 'stdio', '--include-partial-messages']);
  });

  it('hello: the text, the stop reason, and usage with cost', async () => {
    const { client, sessionId } = await start('hello');
    const { updates, result } = await run(client, sessionId, 'hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(chunks(updates)).to.deep.equal(['Hello from the fake Anthropic server.']);
    const usage = updates.find((update) => update.sessionUpdate === 'usage_update') as { used: number; size: number; cost: { amount: number; currency: string } };
    expect(usage).to.deep.include({ used: 19, size: 1_000_000 });
    expect(usage.cost).to.deep.equal({ amount: 0.000188, currency: 'USD' });
  });

  it('a 429 API error result before any tool call: a "Rate limited" notice, the prompt sent again after 1 s, it ends end_turn with the answer (issue 32)', async () => {
    const { client, sessionId } = await start('hello', { FAKE_CLAUDE_RATE_LIMITS: '1' });
    const { updates, result } = await run(client, sessionId, 'hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(chunks(updates).join('')).to.contain('Hello from the fake Anthropic server.');
    expect(JSON.stringify(updates)).to.contain('The model provider is rate limited, retrying in 1 s (1 of 3).');
  });

  it('a cancel during the wait after a 429: the prompt ends cancelled, nothing is sent again', async () => {
    const { client, sessionId } = await start('hello', { FAKE_CLAUDE_RATE_LIMITS: '1' });
    const { updates, result } = await run(client, sessionId, 'hi', { cancelOn: (update) => JSON.stringify(update).includes('Rate limited') });
    expect(result).to.deep.equal({ stopReason: 'cancelled' });
    expect(chunks(updates).join('')).to.not.contain('Hello from the fake Anthropic server.');
  });

  it('a 429 API error result with rate-limit retries 0: the error is the answer, as before', async () => {
    const { client, sessionId } = await start('hello', { FAKE_CLAUDE_RATE_LIMITS: '1' }, {}, { rateLimitRetries: 0 });
    const { result } = await run(client, sessionId, 'hi');
    expect((result as { message?: string }).message).to.contain('API Error: 429');
  });

  it('partial messages: deltas streamed once, not repeated when the full message arrives', async () => {
    const { client, sessionId } = await start('partial');
    const { updates, result } = await run(client, sessionId, 'hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(chunks(updates)).to.deep.equal(['Hello from the fake', ' Anthropic server.']);
  });

  it('a permission asked through session/request_permission and allowed: the write completes with a diff', async () => {
    const asked: unknown[] = [];
    const { client, sessionId } = await start('tool-write-permission-allow', {}, {
      permission: (request) => {
        asked.push(request);
        return { outcome: 'selected', optionId: 'allow' };
      },
    });
    const { updates, result } = await run(client, sessionId, 'TOOL:write /home/user/project/new.txt');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(asked).to.have.length(1);
    expect((asked[0] as { options: Array<{ kind: string }> }).options.map((option) => option.kind)).to.deep.equal(['allow_always', 'allow_once', 'reject_once']);
    const call = updates.find((update) => update.sessionUpdate === 'tool_call') as { toolCallId: string; kind: string; title: string };
    expect(call).to.include({ toolCallId: 'toolu_fake_5', kind: 'edit', title: 'Write /home/user/project/new.txt' });
    const done = updates.find((update) => update.sessionUpdate === 'tool_call_update' && (update as { status?: string }).status === 'completed') as { content: Array<{ type: string; path?: string; newText?: string; oldText?: unknown }> };
    expect(done.content[0]).to.deep.equal({ type: 'diff', path: '/home/user/project/new.txt', oldText: null, newText: 'hello\n' });
  });

  it('a permission refused: the tool call fails and the turn ends normally', async () => {
    const { client, sessionId } = await start('tool-write-permission-deny', {}, { permission: () => ({ outcome: 'selected', optionId: 'reject' }) });
    const { updates, result } = await run(client, sessionId, 'TOOL:write /home/user/project/new.txt');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(updates.some((update) => update.sessionUpdate === 'tool_call_update' && (update as { status?: string }).status === 'failed')).to.equal(true);
  });

  it('a read-only Bash call runs without asking; its output is shown', async () => {
    const { client, sessionId } = await start('tool-bash-readonly');
    const { updates, result } = await run(client, sessionId, 'TOOL:bash');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    const call = updates.find((update) => update.sessionUpdate === 'tool_call') as { kind: string; title: string };
    expect(call).to.include({ kind: 'execute', title: '`echo hi`' });
    const done = updates.find((update) => update.sessionUpdate === 'tool_call_update' && (update as { status?: string }).status === 'completed') as { content: Array<{ content: { text: string } }> };
    expect(done.content[0]?.content.text).to.contain('hi');
  });

  it('cancel: an interrupt control request, the prompt ends cancelled, and the next prompt works', async () => {
    const { client, sessionId } = await start('interrupt');
    const first = await run(client, sessionId, 'SLOW please', { cancelOn: (update) => update.sessionUpdate === 'agent_message_chunk' });
    expect(first.result).to.deep.equal({ stopReason: 'cancelled' });
    const second = await run(client, sessionId, 'hi');
    expect(second.result).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('cancel sent with the prompt, before the CLI printed anything of its turn: the interrupt still reaches it, the prompt ends cancelled, the next prompt works', async () => {
    // The real Claude Code, slow to start under load, took such an interrupt before it had asked its model anything.
    const { client, sessionId } = await start('interrupt');
    const handle = prompt(client, sessionId, [{ type: 'text', text: 'SLOW please' }]);
    handle.cancel();
    // The recorded turn waits for the interrupt: without it the CLI never ends the turn (the
    // server's cancel grace would answer this prompt, and the next one would wait for ever).
    for await (const _update of handle.updates);
    expect(await handle.result).to.deep.equal({ stopReason: 'cancelled' });
    const second = await run(client, sessionId, 'hi');
    expect(second.result).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('cancel of a prompt sent while the CLI restarts after a crash: cancelled, and the restarted CLI serves the next prompt', async () => {
    const controlLog = join(tmpdir(), `warden-claude-control-${process.pid}-${Date.now()}.log`);
    const { client, sessionId, starts } = await start('hello', { FAKE_CLAUDE_CRASH_AFTER: '1', FAKE_CLAUDE_LOOP: '1', FAKE_CLAUDE_CONTROL_LOG: controlLog }, {}, { onCrash: 'fail' });
    const crashed = await run(client, sessionId, 'hi');
    expect(((crashed.result as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
    // Sent at once, within the restart's backoff: the prompt waits for the new CLI, and the cancel ends it there.
    const waiting = prompt(client, sessionId, [{ type: 'text', text: 'hi' }]);
    waiting.cancel();
    for await (const _update of waiting.updates);
    expect(await waiting.result).to.deep.equal({ stopReason: 'cancelled' });
    await waitUntil(() => starts().length === 2, 'the restart');
    const next = await run(client, sessionId, 'hi');
    expect(next.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(chunks(next.updates).join('')).to.not.equal('');
    // One prompt reached each CLI (the crashed one, the last one): the cancelled one never did.
    const users = readFileSync(controlLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number; type?: string }).filter((line) => line.type === 'user');
    rmSync(controlLog, { force: true });
    expect(users.map((line) => line.pid)).to.deep.equal(starts().map((entry) => entry.pid));
  });

  it('an API error ends the prompt with a JSON-RPC error naming it', async () => {
    const { client, sessionId } = await start('api-error');
    const { result } = await run(client, sessionId, 'ERROR400');
    expect(result).to.be.instanceOf(RpcError);
    expect((result as RpcError).message).to.contain('API Error: 400');
  });

  it('several turns in one process (system:init repeats each turn)', async () => {
    const { client, sessionId } = await start('multiturn');
    for (const text of ['hi', 'TOOL:read /home/user/project/sample.txt', 'bye']) {
      const { result } = await run(client, sessionId, text);
      expect(result, text).to.deep.equal({ stopReason: 'end_turn' });
    }
  });

  it('modes via set_permission_mode and the model via set_model', async () => {
    const { client, sessionId, setup, updates } = await start('hello');
    await setMode(client, sessionId, 'acceptEdits');
    await waitUntil(() => updates.some((update) => update.sessionUpdate === 'current_mode_update'), 'the mode update');
    const model = ((setup.configOptions as Array<{ options: Array<{ value: string }> }>)[0]?.options.at(-1) as { value: string }).value;
    const changed = await setConfigOption(client, sessionId, 'model', model);
    expect((changed.configOptions[0] as { currentValue: string }).currentValue).to.equal(model);
  });

  it('a CLI that keeps dying: after the restart intensity the session/new fails, naming why', async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'warden-claude-')));
    const argvLog = join(cwd, '.argv.log');
    const [editorSide, agentSide] = createMemoryTransportPair();
    const agent = createAdapterAgent({ definition: claudeAdapter, executable: fakeClaude, env: { FAKE_CLAUDE_CRASH_ALWAYS: '1', FAKE_CLAUDE_ARGV_LOG: argvLog } });
    const server = createActor(agentServerLogic, { input: { transport: agentSide, agent } }).start();
    const client = createActor(agentClientLogic, { input: { transport: editorSide } }).start();
    harnesses.push({ client, server, cwd, argvLog, updates: [], starts: () => readFileSync(argvLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) });
    await initialize(client);
    const error = (await newSession(client, { cwd }).catch((caught: unknown) => caught)) as RpcError;
    expect(error).to.be.instanceOf(RpcError);
    expect(error.message).to.contain('kept failing');
    expect((error.data as { reason: string }).reason).to.equal('session_failed');
    expect(readFileSync(argvLog, 'utf8').split('\n').filter(Boolean)).to.have.length(4); // the first start and 3 restarts
  });

  it('session/resume from the host\'s journal (advertised): the first CLI already runs --resume <journaled id>, the answer is the session\'s setup, the next prompt goes on', async () => {
    const { client, cwd, init, starts } = await connect('hello');
    expect(init.agentCapabilities).to.deep.include({ loadSession: true });
    expect(init.agentCapabilities?.sessionCapabilities).to.have.all.keys('resume', 'close');
    const journaled = 'c1a0de00-0000-4000-8000-00000000cafe';
    const params = { sessionId: 'claude-fromjournal', cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: { claudeSessionId: journaled } } };
    const setup = await resumeSession(client, params);
    expect(setup).to.not.have.property('sessionId');
    expect(setup.modes).to.deep.include({ currentModeId: 'default' });
    expect(starts().map((entry) => entry.args.at(-1))).to.deep.equal([`--resume=${journaled}`]);
    const { result } = await run(client, 'claude-fromjournal', 'hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('session/load from the host\'s journal: the same start with --resume; the adapter replays no history itself (the host replays its journal)', async () => {
    const { client, cwd, starts } = await connect('hello');
    const journaled = 'c1a0de00-0000-4000-8000-00000000f00d';
    const { response, replayed } = await loadSession(client, { sessionId: 'claude-loaded', cwd, mcpServers: [], _meta: { [RESUME_META_KEY]: { claudeSessionId: journaled } } } as never);
    expect(response).to.have.property('configOptions');
    expect(replayed.filter((update) => update.sessionUpdate.endsWith('_message_chunk'))).to.deep.equal([]);
    expect(starts()[0]?.args.at(-1)).to.equal(`--resume=${journaled}`);
    const { result } = await run(client, 'claude-loaded', 'hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('session/close: the CLI stops, and the session is gone for the editor', async () => {
    const { client, sessionId, starts } = await start('hello');
    await closeSession(client, sessionId);
    const { pid } = starts()[0] as { pid: number };
    await waitUntil(() => !isAlive(pid), 'the closed session\'s CLI to stop', 15_000);
    const { result } = await run(client, sessionId, 'hi');
    expect(result).to.be.instanceOf(RpcError);
    expect((result as RpcError).code).to.equal(-32002);
  });

  it('the environment: Claude gets its own variables, never another agent\'s key', () => {
    const line = claudeAdapter.command?.({ executable: 'claude', cwd: '/w', params: {}, resume: undefined, restarts: 0 });
    const env = buildEnvironment({ ...line?.env, parent: { PATH: '/bin', ANTHROPIC_API_KEY: 'sk-ant', OPENAI_API_KEY: 'sk-oai', GEMINI_API_KEY: 'g', CLAUDE_CONFIG_DIR: '/c' } });
    expect(env).to.include({ ANTHROPIC_API_KEY: 'sk-ant', CLAUDE_CONFIG_DIR: '/c', PATH: '/bin' });
    expect(env).to.not.have.any.keys('OPENAI_API_KEY', 'GEMINI_API_KEY');
  });

  it('kill -9 mid-turn with --on-crash fail: the prompt fails naming the crash, the CLI restarts with --resume <id> and a new handshake, the next prompt works', async () => {
    const { client, sessionId, starts } = await start('hello', { FAKE_CLAUDE_CRASH_AFTER: '1' }, {}, { onCrash: 'fail' });
    const first = await run(client, sessionId, 'hi');
    expect(first.result).to.be.instanceOf(RpcError);
    expect((first.result as RpcError).message).to.contain('Claude Code stopped during the prompt');
    expect(((first.result as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
    await waitUntil(() => starts().length === 2, 'the restart');
    expect(starts()[1]?.args.at(-1)).to.equal('--resume=64dc14b7-5438-426f-9829-9210cc56949d');
    const second = await run(client, sessionId, 'hi');
    expect(second.result).to.deep.equal({ stopReason: 'end_turn' });
  });
});

/** The restart notice of a continued turn, as the editor got it: a `notice` update, or the signed text with the notice under `_meta` (an editor without `session.notices`). */
function restartNoticeAt(updates: SessionUpdate[]): number {
  return updates.findIndex((update) => {
    const raw = update as unknown as { sessionUpdate: string; title?: string; _meta?: Record<string, { title?: string } | undefined> };
    return (raw.sessionUpdate === 'notice' && raw.title === CONTINUED_NOTICE_TITLE) || raw._meta?.[NOTICE_META_KEY]?.title === CONTINUED_NOTICE_TITLE;
  });
}

/** The user messages each Claude process got (FAKE_CLAUDE_TEXT_LOG), in order. */
function userTexts(log: string): Array<{ pid: number; resumed: boolean; text: string }> {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) : [];
}

describe('Claude Code adapter: a turn cut by kill -9 is continued (--on-crash continue, the default)', function () {
  this.timeout(60_000);
  let textLog: string;
  beforeEach(() => {
    textLog = join(tmpdir(), `warden-claude-texts-${process.pid}-${Date.now()}.log`);
  });
  afterEach(async () => {
    rmSync(textLog, { force: true });
    rmSync(`${textLog}.crashed`, { force: true });
    await closeHarnesses();
  });

  it('kill -9 mid-text, no tool call: the restarted CLI gets the prompt again, the prompt ends end_turn with the whole answer after the restart notice', async () => {
    const { client, sessionId, starts } = await start('hello', { FAKE_CLAUDE_CRASH_AFTER: '2', FAKE_CLAUDE_TEXT_LOG: textLog });
    const { updates, result } = await run(client, sessionId, 'hi');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    const notice = restartNoticeAt(updates);
    expect(notice, 'the restart notice').to.be.greaterThan(0);
    // Text came before the crash (the part the editor must see restarted), and the whole answer after the notice.
    expect(chunks(updates.slice(0, notice)).join('')).to.contain('Hello from the fake Anthropic server.');
    expect(chunks(updates.slice(notice + 1)).join('')).to.equal('Hello from the fake Anthropic server.');
    expect(starts()).to.have.length(2);
    expect(userTexts(textLog).map(({ resumed, text }) => ({ resumed, text }))).to.deep.equal([
      { resumed: false, text: 'hi' },
      { resumed: true, text: 'hi' },
    ]);
  });

  it('kill -9 with a permission request unanswered: the continuation says the tool call never ran, asks to check and continue; end_turn', async () => {
    let asked = 0;
    let restarted: (() => boolean) | undefined;
    const { client, sessionId, starts } = await start('tool-write-permission-allow', { FAKE_CLAUDE_CRASH_AFTER: '4', FAKE_CLAUDE_TEXT_LOG: textLog }, {
      // The first request is answered only once the CLI that asked it is gone and restarted: it never got an answer.
      permission: async () => {
        asked += 1;
        if (asked === 1) await waitUntil(() => restarted?.() === true, 'the restart');
        return { outcome: 'selected', optionId: 'allow' };
      },
    });
    restarted = () => starts().length === 2;
    const { updates, result } = await run(client, sessionId, 'write new.txt');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(restartNoticeAt(updates)).to.be.greaterThan(0);
    const texts = userTexts(textLog);
    expect(texts.map((entry) => entry.resumed)).to.deep.equal([false, true]);
    const continuation = texts[1]?.text ?? '';
    expect(continuation).to.contain('The Claude Code process crashed (Agent process was killed with SIGKILL) during your previous turn and was restarted by the host');
    expect(continuation).to.contain('This message is from the host, not the user');
    expect(continuation).to.match(/- [^\n]*new\.txt[^\n]*: its permission request was never answered, so it did not run\./u);
    expect(continuation).to.contain('Check the current state (files, processes) before repeating any action');
    expect(continuation.endsWith('\nwrite new.txt')).to.equal(true);
  });

  it('kill -9 after a tool call completed: the continuation passes its result on; end_turn with the answer', async () => {
    const { client, sessionId } = await start('tool-bash-readonly', { FAKE_CLAUDE_CRASH_AFTER: '4', FAKE_CLAUDE_TEXT_LOG: textLog });
    const { updates, result } = await run(client, sessionId, 'TOOL:bash');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    const notice = restartNoticeAt(updates);
    expect(chunks(updates.slice(notice + 1)).join('')).to.contain('Tool finished: hi');
    const continuation = userTexts(textLog)[1]?.text ?? '';
    expect(continuation).to.match(/- `echo hi`: it completed before the crash; its result began: hi\./u);
  });

  it('killed in its first turn after a tool call, before anything was saved: --resume finds no conversation, so the new conversation gets the whole prompt after a note of the cut call (not "continue from your history"); end_turn', async () => {
    const recorded = '9fe5fc8a-5f15-4790-a1e3-178f9557e938'; // the session id of the tool-bash-readonly transcript
    const { client, sessionId, starts } = await start('tool-bash-readonly', { FAKE_CLAUDE_CRASH_AFTER: '4', FAKE_CLAUDE_CRASH_ONCE: `${textLog}.crashed`, FAKE_CLAUDE_TEXT_LOG: textLog, FAKE_CLAUDE_NO_CONVERSATION: recorded });
    const { updates, result } = await run(client, sessionId, 'TOOL:bash');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(JSON.stringify(updates)).to.contain('Claude Code started a new conversation');
    expect(starts().map((entry) => entry.args.some((arg) => arg.startsWith('--resume')))).to.deep.equal([false, true, false]);
    const texts = userTexts(textLog);
    expect(texts.map((entry) => entry.resumed)).to.deep.equal([false, false]);
    const again = texts[1]?.text ?? '';
    expect(again).to.contain('its conversation could not be resumed (nothing of it had been saved yet): this is a new conversation');
    expect(again).to.match(/- `echo hi`: it completed before the crash; its result began: hi\./u);
    expect(again).to.not.contain('from where your history shows');
    expect(again.endsWith('answer the request:\nTOOL:bash'), again).to.equal(true);
  });

  it('the mode and model the editor chose are put back on the restarted CLI before the continuation is sent: the continued turn runs in them', async () => {
    const controlLog = join(tmpdir(), `warden-claude-controls-${process.pid}-${Date.now()}.log`);
    try {
      const { client, sessionId, setup, starts, updates } = await start('hello', { FAKE_CLAUDE_CRASH_AFTER: '2', FAKE_CLAUDE_CONTROL_LOG: controlLog });
      await setMode(client, sessionId, 'acceptEdits');
      await waitUntil(() => updates.some((update) => update.sessionUpdate === 'current_mode_update'), 'the mode update');
      const model = ((setup.configOptions as Array<{ options: Array<{ value: string }> }>)[0]?.options.at(-1) as { value: string }).value;
      await setConfigOption(client, sessionId, 'model', model);
      const { result } = await run(client, sessionId, 'hi');
      expect(result).to.deep.equal({ stopReason: 'end_turn' });
      expect(starts()).to.have.length(2);
      const restartedPid = starts()[1]?.pid;
      const seen = readFileSync(controlLog, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { pid: number; subtype?: string; type?: string; mode?: string; model?: string });
      const restarted = seen.filter((line) => line.pid === restartedPid).map((line) => line.type === 'user' ? 'user' : `${line.subtype}:${line.mode ?? line.model}`);
      expect(restarted, 'what the restarted CLI got, in order').to.deep.equal([`set_permission_mode:acceptEdits`, `set_model:${model}`, 'user']);
    } finally {
      rmSync(controlLog, { force: true });
    }
  });

  it('--on-crash retry: the prompt is sent again even after a tool call ran', async () => {
    const { client, sessionId } = await start('tool-bash-readonly', { FAKE_CLAUDE_CRASH_AFTER: '4', FAKE_CLAUDE_TEXT_LOG: textLog }, {}, { onCrash: 'retry' });
    const { result } = await run(client, sessionId, 'TOOL:bash');
    expect(result).to.deep.equal({ stopReason: 'end_turn' });
    expect(userTexts(textLog).map((entry) => entry.text)).to.deep.equal(['TOOL:bash', 'TOOL:bash']);
  });

  it('--on-crash fail: the prompt fails agent_crashed as before, nothing is sent again', async () => {
    const { client, sessionId, starts } = await start('hello', { FAKE_CLAUDE_CRASH_AFTER: '2', FAKE_CLAUDE_TEXT_LOG: textLog }, {}, { onCrash: 'fail' });
    const { updates, result } = await run(client, sessionId, 'hi');
    expect(((result as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
    expect(restartNoticeAt(updates)).to.equal(-1);
    await waitUntil(() => starts().length === 2, 'the restart');
    expect(userTexts(textLog)).to.have.length(1);
  });

  it('more crashes than --max-continuations: the turn fails agent_crashed after its last continuation', async () => {
    const { client, sessionId } = await start('hello', { FAKE_CLAUDE_CRASH_AFTER: '2', FAKE_CLAUDE_CRASH_RESUMED: '1', FAKE_CLAUDE_TEXT_LOG: textLog }, {}, { maxContinuations: 1 });
    const { updates, result } = await run(client, sessionId, 'hi');
    expect(((result as RpcError).data as { reason: string }).reason).to.equal('agent_crashed');
    // One continuation (one notice, the prompt sent twice), then the second crash failed it.
    expect(updates.filter((_update, index) => restartNoticeAt(updates.slice(index)) === 0)).to.have.length(1);
    expect(userTexts(textLog).map((entry) => entry.text)).to.deep.equal(['hi', 'hi']);
  });

  it('session/cancel while the CLI restarts: the prompt ends cancelled, nothing is sent again, the next prompt works', async () => {
    const gate = join(tmpdir(), `warden-claude-gate-${process.pid}-${Date.now()}`);
    try {
      const { client, sessionId, starts } = await start('hello', { FAKE_CLAUDE_CRASH_AFTER: '2', FAKE_CLAUDE_TEXT_LOG: textLog, FAKE_CLAUDE_RESUME_GATE: gate, FAKE_CLAUDE_LOOP: '1' });
      // Cancelled on the restart notice; the restarted CLI reads nothing until the gate opens, so it cannot be ready before the cancel.
      const cut = await run(client, sessionId, 'hi', { cancelOn: (update) => restartNoticeAt([update]) === 0 });
      expect(cut.result).to.deep.equal({ stopReason: 'cancelled' });
      writeFileSync(gate, '');
      const next = await run(client, sessionId, 'bye');
      expect(next.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(starts()).to.have.length(2);
      expect(userTexts(textLog).map(({ resumed, text }) => ({ resumed, text }))).to.deep.equal([
        { resumed: false, text: 'hi' },
        { resumed: true, text: 'bye' },
      ]);
    } finally {
      rmSync(gate, { force: true });
    }
  });
});
