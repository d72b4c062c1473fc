/**
 * The real Gemini CLI (0.61.0, `gemini --acp`) and opencode (1.18.33, `opencode acp`) behind
 * `warden acp --agent gemini|opencode`, launched as an editor launches it: `warden` and the CLI
 * found on the PATH, the model server's address and the CLI's switches in the environment the
 * editor gives warden (which passes them on through the registry's passthrough lists, not
 * through `--env`). Against fake model servers on 127.0.0.1 (fake-gemini-server.ts,
 * fake-chat-completions-server.ts), as recorded in ../shared/fixtures (section 4): a text
 * prompt, a cancel of a slow answer, and kill -9 of the agent process mid-turn (warden restarts
 * it, re-attaches the session, and the next prompt is answered).
 *
 * The CLIs come from `npm run agents:install` (.cache/agents); without them these tests skip
 * with a message. Each suite has its own HOME, TMPDIR and XDG directories, removed at the end,
 * and no process may be left behind.
 */
import { expect } from 'chai';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, type EditorSession } from '../support/editor.js';
import { chatHello, startFakeChatCompletions } from '../support/fake-chat-completions-server.js';
import { geminiHello, startFakeGemini } from '../support/fake-gemini-server.js';
import type { FakeModelServer } from '../support/local-model-server.js';
import { pathDirectory } from '../support/launch-harness.js';
import { waitUntil } from '../support/processes.js';
import { agentProcessOf, agentsBin, expectNoLeftovers, skipMessage, workspace, type ProcessRow, type Workspace } from '../support/real-agents-harness.js';

interface NativeAgentCase {
  readonly agent: 'gemini' | 'opencode';
  readonly title: string;
  readonly hello: string;
  /** `agentInfo` as recorded in ../shared/fixtures (acp-gemini-hello, acp-opencode-hello). */
  readonly agentInfo: { readonly name: string; readonly version: string };
  readonly startServer: () => Promise<FakeModelServer>;
  /** The editor's environment for this CLI (beyond PATH, HOME, TMPDIR), files it needs written. */
  readonly environment: (server: FakeModelServer, space: Workspace) => Record<string, string>;
  /** Model requests that carry the conversation (not the CLI's side calls). */
  readonly isTurn: (request: FakeModelServer['requests'][number]) => boolean;
  /** What must hold before the agent is killed for its restart to find the session (see Gemini). */
  readonly beforeKill?: (sessionStartedAt: Date) => Promise<void>;
}

/** Updates that state how a session is now, not its history (the passthrough lets them through a re-attach). */
const stateKinds = ['available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'usage_update'];

/** How many pasted logs the kill test's conversation has before the kill. */
const pastes = 3;
/** A pasted log of 800 lines (about 40 KB), told apart by `paste`. */
const pastedLog = (paste: number) => Array.from({ length: 800 }, (_, line) => `paste ${paste} line ${line + 1}: GET /api/items?page=${line} 200 12ms`).join('\n');

const utcMinute = (at: Date) => at.toISOString().slice(0, 16);

const cases: NativeAgentCase[] = [
  {
    agent: 'gemini',
    title: 'real Gemini CLI 0.61.0 through warden acp --agent gemini (fake Gemini server)',
    hello: geminiHello,
    agentInfo: { name: 'gemini-cli', version: '0.61.0' },
    startServer: () => startFakeGemini(),
    environment(server, space) {
      mkdirSync(join(space.home, '.gemini'), { recursive: true });
      writeFileSync(join(space.home, '.gemini', 'settings.json'), JSON.stringify({
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
      }));
      return { GEMINI_API_KEY: 'dummy', GOOGLE_GEMINI_BASE_URL: server.url };
    },
    isTurn: (request) => request.path.endsWith(':streamGenerateContent'),
    // Gemini CLI 0.61.0 records a session in chats/session-<UTC minute>-<id8>.jsonl, and its
    // session/load first starts a new recording of that id: in the same minute, into the same
    // file, resetting its messages, so the load finds "No previous sessions found for this
    // project." (docs/adapters.md). The kill waits for the next minute: a restart then loads.
    beforeKill: (sessionStartedAt) => waitUntil(() => utcMinute(new Date()) !== utcMinute(sessionStartedAt), 'the next UTC minute', 65_000, 200),
  },
  {
    agent: 'opencode',
    title: 'real opencode 1.18.33 through warden acp --agent opencode (fake Chat Completions server)',
    hello: chatHello,
    agentInfo: { name: 'OpenCode', version: '1.18.33' },
    startServer: () => startFakeChatCompletions(),
    environment(server, space) {
      const config = {
        model: 'fake/gpt-fake',
        small_model: 'fake/gpt-fake',
        autoupdate: false,
        share: 'disabled',
        provider: { fake: { npm: '@ai-sdk/openai-compatible', name: 'Fake', options: { baseURL: `${server.url}/v1`, apiKey: 'dummy' }, models: { 'gpt-fake': { name: 'GPT Fake', tool_call: true } } } },
      };
      return {
        XDG_CONFIG_HOME: join(space.home, '.config'),
        XDG_DATA_HOME: join(space.home, '.local', 'share'),
        XDG_STATE_HOME: join(space.home, '.local', 'state'),
        XDG_CACHE_HOME: join(space.home, '.cache'),
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_CLAUDE_CODE: '1',
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      };
    },
    isTurn: (request) => request.path === '/v1/chat/completions' && request.reply !== 'title',
  },
];

/** The user texts of a model request (Gemini `contents`, Chat Completions `messages`). */
function userTexts(body: unknown): string[] {
  const request = (body ?? {}) as { contents?: Array<{ role?: string; parts?: Array<{ text?: string }> }>; messages?: Array<{ role?: string; content?: unknown }> };
  const fromGemini = (request.contents ?? []).filter((content) => content.role === 'user').flatMap((content) => (content.parts ?? []).map((part) => (part.text ?? '').trim()));
  const fromChat = (request.messages ?? []).filter((message) => message.role === 'user').flatMap((message) => (typeof message.content === 'string' ? [message.content.trim()] : Array.isArray(message.content) ? (message.content as Array<{ text?: string }>).map((part) => (part.text ?? '').trim()) : []));
  return [...fromGemini, ...fromChat].filter(Boolean);
}

for (const agentCase of cases) {
  describe(agentCase.title, function () {
    this.timeout(180_000);
    const cli = join(agentsBin, agentCase.agent);
    let server: FakeModelServer | undefined;
    let space: Workspace | undefined;
    let env: Record<string, string> = {};
    const running: EditorSession[] = [];

    before(async function () {
      if (!existsSync(cli)) {
        console.log(`      ${skipMessage(`the real ${agentCase.agent} CLI`)}`);
        this.skip();
      }
      server = await agentCase.startServer();
      space = workspace(`warden-e2e-${agentCase.agent}-`);
      const bin = pathDirectory(join(space.base, 'bin'));
      env = {
        PATH: [bin, agentsBin, '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
        HOME: space.home,
        TMPDIR: space.tmp,
        NO_PROXY: '127.0.0.1,localhost',
        ...agentCase.environment(server, space),
      };
    });

    afterEach(async () => {
      for (const editor of running.splice(0)) await editor.close();
    });

    after(async function () {
      await server?.close();
      if (space) {
        await expectNoLeftovers(space.base);
        rmSync(space.base, { recursive: true, force: true });
      }
    });

    /** `warden acp --agent <agent>` from the PATH, initialized, with one session. */
    async function start(): Promise<{ editor: EditorSession; sessionId: string; startedAt: Date; agentInfo: unknown }> {
      const project = (space as Workspace).project();
      const editor = launch('warden', ['acp', '--agent', agentCase.agent, '--hang-after', '300'], { env, cwd: project, requestTimeoutMs: 90_000 });
      running.push(editor);
      const { agentInfo } = await editor.initialize();
      const startedAt = new Date();
      return { editor, sessionId: await editor.newSession(project), startedAt, agentInfo };
    }

    it(`a text prompt: "hello" gets the fake's text and end_turn`, async () => {
      const { editor, sessionId, agentInfo } = await start();
      // The editor is told who answers (initialize is the agent's own, passed through).
      expect(agentInfo).to.deep.include(agentCase.agentInfo);
      const outcome = await editor.prompt(sessionId, 'hello').outcome;
      expect(outcome, editor.stderr()).to.deep.equal({ stopReason: 'end_turn', text: agentCase.hello, error: undefined });
      const turn = (server as FakeModelServer).requests.filter(agentCase.isTurn).at(-1);
      expect(userTexts(turn?.body)).to.include('hello');
    });

    it('cancel: a slow answer ends cancelled after session/cancel, and the next prompt is answered', async () => {
      const { editor, sessionId } = await start();
      const slow = editor.prompt(sessionId, 'slow');
      await slow.firstText;
      await editor.cancel(sessionId);
      const cancelled = await slow.outcome;
      expect(cancelled.stopReason, `${JSON.stringify(cancelled)}\n${editor.stderr()}`).to.equal('cancelled');
      expect(cancelled.text).to.match(/^word1 /u);
      expect(cancelled.text).to.not.include('word60.');
      const next = await editor.prompt(sessionId, 'hello').outcome;
      expect(next, editor.stderr()).to.deep.equal({ stopReason: 'end_turn', text: agentCase.hello, error: undefined });
    });

    it('kill -9 of the agent process mid-turn: warden restarts it and continues the prompt (the default --on-crash continue): it ends end_turn with the whole answer after the restart notice, with no replayed history; the next prompt is answered', async () => {
      const { editor, sessionId, startedAt } = await start();
      expect((await editor.prompt(sessionId, 'hello').outcome).stopReason, editor.stderr()).to.equal('end_turn');
      // A history worth replaying: pasted logs, about 40 KB each (a replay longer than one pipe read).
      for (let paste = 1; paste <= pastes; paste++) expect((await editor.prompt(sessionId, pastedLog(paste)).outcome).stopReason, editor.stderr()).to.equal('end_turn');
      await agentCase.beforeKill?.(startedAt);
      const slow = editor.prompt(sessionId, 'slow');
      await slow.firstText;
      const killed = agentProcessOf(editor.pid);
      expect(killed, `the ${agentCase.agent} process under warden ${editor.pid}`).to.not.equal(undefined);
      const sinceKill = editor.received(sessionId).length;
      process.kill((killed as ProcessRow).pid, 'SIGKILL');
      const continued = await slow.outcome;
      expect(continued.error, JSON.stringify(continued)).to.equal(undefined);
      expect(continued.stopReason).to.equal('end_turn');
      const wholeSlow = `${Array.from({ length: 60 }, (_, n) => `word${n + 1}`).join(' ')}.`;
      expect(continued.text?.endsWith(wholeSlow), `the whole answer, after what streamed before the kill: ${continued.text}`).to.equal(true);
      // Since the kill: the restart notices, state updates and the answer again; none of the history the restarted agent replays.
      const sinceKillShown = editor.received(sessionId).slice(sinceKill).filter((update) => !stateKinds.includes(update.sessionUpdate) && !update.notice);
      expect(sinceKillShown.map((update) => update.sessionUpdate)).to.deep.equal(sinceKillShown.map(() => 'agent_message_chunk'));
      expect(editor.received(sessionId).slice(sinceKill).some((update) => update.notice), 'a notice of the restart').to.equal(true);
      const sinceCrash = editor.received(sessionId).length;
      await waitUntil(() => {
        const now = agentProcessOf(editor.pid);
        return now !== undefined && now.pid !== (killed as ProcessRow).pid;
      }, `the restarted ${agentCase.agent}`, 60_000, 100);
      const next = await editor.prompt(sessionId, 'hello').outcome;
      expect(next.error, editor.stderr()).to.equal(undefined);
      expect(next.stopReason).to.equal('end_turn');
      expect(next.text, 'the text streamed during the prompt').to.equal(agentCase.hello);
      // Everything the editor got for the session since the crash: warden's notices (restarted,
      // back), state updates, and the new answer, whole; none of the history the restarted agent
      // replays for the passthrough's re-attach (Gemini goes on replaying after answering
      // session/load: docs/adapters.md, "Gemini CLI").
      const since = editor.received(sessionId).slice(sinceCrash);
      const shown = since.filter((update) => !stateKinds.includes(update.sessionUpdate) && !update.notice);
      expect(shown.map((update) => update.sessionUpdate), JSON.stringify(since)).to.deep.equal(shown.map(() => 'agent_message_chunk'));
      expect(shown.map((update) => update.text).join(''), JSON.stringify(since)).to.equal(agentCase.hello);
      // The restarted agent went on in the same conversation: the model sees the first turn.
      const turn = (server as FakeModelServer).requests.filter(agentCase.isTurn).at(-1);
      expect(userTexts(turn?.body).filter((text) => text === 'hello').length, JSON.stringify(userTexts(turn?.body))).to.be.at.least(2);
    });
  });
}
