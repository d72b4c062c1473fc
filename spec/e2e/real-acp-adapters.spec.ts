/**
 * The real ACP adapters behind warden: `warden acp --agent claude-acp` serving
 * @agentclientprotocol/claude-agent-acp 0.101.0 (which runs the pinned Claude Code 2.1.332 through
 * CLAUDE_CODE_EXECUTABLE) and `warden acp --agent codex-acp` serving @agentclientprotocol/codex-acp
 * 2.6.0 (which runs the pinned Codex 0.171.0 app-server through CODEX_PATH), against the fake model
 * servers on 127.0.0.1, warden speaking ACP v1 to the adapter and again v2 (`--agent-protocol v2`;
 * claude-agent-acp pinned to v2 only by CLAUDE_AGENT_ACP_PROTOCOL, so that a v1 offer would fail).
 * The editor is the SDK's v1 client (`@agentclientprotocol/sdk`) in this process. One warden per
 * adapter and protocol serves every case in turn:
 * a text turn, a cancel mid-turn, and kill -9 of the adapter mid-turn (the prompt gets warden's
 * typed failure, the adapter is restarted, the next prompt works).
 *
 * The adapters come from `npm run agents:install` (WARDEN_AGENTS_DIR, as there); without them
 * these tests skip with a message. WARDEN_E2E_TIMINGS=1 prints each adapter's times.
 */
import { client, methods, ndJsonStream, PROTOCOL_VERSION, RequestError, type ClientContext, type SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { claudeAgentAcp, codexAcp, type RealAcpAdapter } from '../support/real-acp-adapter-cases.js';
import type { FakeModelServer } from '../support/local-model-server.js';
import { isAlive, waitUntil } from '../support/processes.js';
import {
  agentsBin,
  anthropicUserTexts,
  openaiUserTexts,
  descendants,
  envArgs,
  expectNoLeftovers,
  repo,
  skipMessage,
  wardenMain,
  workspace,
  type ProcessRow,
  type Workspace,
} from '../support/real-agents-harness.js';

interface AdapterCase extends RealAcpAdapter {
  /** The user agent of the pinned CLI's model requests. */
  readonly userAgent: RegExp;
}

const cases: AdapterCase[] = [
  { ...claudeAgentAcp, userAgent: /^claude-cli\/2\.1\.332 /u },
  { ...codexAcp, userAgent: /^[\w-]+\/0\.171\.0 /u },
];

/** One `warden acp` with the SDK's v1 client on its stdio; updates gathered per session. */
interface Editor {
  readonly warden: ChildProcessWithoutNullStreams;
  readonly agent: ClientContext;
  readonly updates: Map<string, SessionUpdate[]>;
  readonly stderr: string[];
  /** Resolves at the next `agent_message_chunk` (the turn is streaming). */
  nextText(): Promise<void>;
  close(): Promise<void>;
}

function startEditor(adapter: AdapterCase, wardenArgs: string[]): Editor {
  const warden = spawn(process.execPath, [wardenMain, 'acp', ...wardenArgs], {
    cwd: repo,
    env: { ...process.env, [adapter.pathVar]: join(agentsBin, adapter.bin) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  warden.stderr.setEncoding('utf8').on('data', (text: string) => stderr.push(text));
  const exited = new Promise<void>((resolve) => warden.once('exit', () => resolve()));
  const updates = new Map<string, SessionUpdate[]>();
  let textWaiter: (() => void) | undefined;
  const app = client()
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.set(params.sessionId, [...(updates.get(params.sessionId) ?? []), params.update]);
      if (params.update.sessionUpdate === 'agent_message_chunk') textWaiter?.();
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const allow = params.options.find((option) => option.kind === 'allow_once');
      return { outcome: allow ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' } };
    });
  const connection = app.connect(ndJsonStream(Writable.toWeb(warden.stdin) as WritableStream<Uint8Array>, Readable.toWeb(warden.stdout) as ReadableStream<Uint8Array>));
  return {
    warden,
    agent: connection.agent,
    updates,
    stderr,
    nextText: () => new Promise<void>((resolve) => (textWaiter = resolve)),
    async close() {
      connection.close();
      warden.stdin.end();
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        let timer: NodeJS.Timeout | undefined;
        const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 10_000)))]);
        clearTimeout(timer);
        if (gone) break;
        warden.kill(signal);
      }
      await exited;
    },
  };
}

/** What the agent said in `updates` (warden's own notices, marked in `_meta`, left out). */
function textOf(updates: readonly SessionUpdate[]): string {
  return updates
    .filter((update) => update.sessionUpdate === 'agent_message_chunk' && !update._meta?.['acp-warden/notice'])
    .map((update) => (update as { content: { text?: string } }).content.text ?? '')
    .join('');
}

/** The adapter process warden runs: warden's child whose command line names the adapter. */
function adapterUnder(wardenPid: number, adapter: AdapterCase): ProcessRow | undefined {
  return descendants(wardenPid).find((row) => row.ppid === wardenPid && row.cmdline.includes(adapter.bin));
}

const timings: string[] = [];

describe('real ACP adapters through warden acp', () => {
  after(() => {
    // WARDEN_E2E_TIMINGS=1: each adapter's start and turn times.
    if (timings.length > 0 && process.env.WARDEN_E2E_TIMINGS) console.log(`      real ACP adapter timings:\n${timings.map((line) => `        ${line}`).join('\n')}`);
  });

  for (const adapter of cases) for (const protocol of ['v1', 'v2'] as const) {
    // v2: warden offers it (--agent-protocol v2); claude-agent-acp is pinned to v2 only, so a v1 offer would be refused.
    const protocolArgs = protocol === 'v2' ? ['--agent-protocol', 'v2'] : [];
    const protocolEnv: Record<string, string> = protocol === 'v2' && adapter.bin === 'claude-agent-acp' ? { CLAUDE_AGENT_ACP_PROTOCOL: 'v2' } : {};
    describe(`real ${adapter.bin} behind warden acp --agent ${adapter.agent} (warden to agent: ACP ${protocol}; the editor: the SDK's v1 client; fake model server)`, function () {
      this.timeout(60_000);
      let server: FakeModelServer | undefined;
      let space: Workspace | undefined;
      let editor: Editor | undefined;
      let sessionId = '';

      /** A prompt's stop reason and the text it streamed. */
      async function turn(text: string): Promise<{ stopReason: string; text: string }> {
        const before = (editor as Editor).updates.get(sessionId)?.length ?? 0;
        const { stopReason } = await (editor as Editor).agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
        return { stopReason, text: textOf(((editor as Editor).updates.get(sessionId) ?? []).slice(before)) };
      }

      before(async function () {
        if (!existsSync(join(agentsBin, adapter.bin)) || !existsSync(adapter.cli)) {
          console.log(`      ${skipMessage(`${adapter.bin} (or its CLI)`)}`);
          this.skip();
        }
        server = await adapter.server();
        space = workspace(`warden-e2e-${adapter.agent}-`);
        const started = Date.now();
        // --on-crash fail: the kill case checks the failure and the resume itself (a continued turn is launch-native-agents'.)
        editor = startEditor(adapter, ['--agent', adapter.agent, ...protocolArgs, '--on-crash', 'fail', '--store', ':memory:', ...envArgs({ ...adapter.env(server, space), ...protocolEnv })]);
        const answer = await editor.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
        expect(answer.protocolVersion, editor.stderr.join('')).to.equal(1);
        sessionId = (await editor.agent.request(methods.agent.session.new, { cwd: space.project(), mcpServers: [] })).sessionId;
        timings.push(`${adapter.bin} (${protocol}): warden spawned to session/new answered: ${Date.now() - started} ms`);
      });

      after(async function () {
        await editor?.close();
        await server?.close();
        if (space) {
          await expectNoLeftovers(space.base);
          rmSync(space.base, { recursive: true, force: true, maxRetries: 5 });
        }
      });

      it('a text turn: "hello" ends end_turn with the fake model\'s text', async () => {
        const started = Date.now();
        expect(await turn('hello'), (editor as Editor).stderr.join('')).to.deep.equal({ stopReason: 'end_turn', text: adapter.hello });
        timings.push(`${adapter.bin} (${protocol}): first "hello" turn: ${Date.now() - started} ms`);
        const started2 = Date.now();
        expect(await turn('hello')).to.deep.equal({ stopReason: 'end_turn', text: adapter.hello });
        timings.push(`${adapter.bin} (${protocol}): second "hello" turn: ${Date.now() - started2} ms`);
        // The pinned CLI answered, not the adapter's own (the Agent SDK's bundled Claude Code 2.1.318,
        // codex-acp's @openai/codex 0.166.0): Claude Code names its version in its user agent, Codex
        // its version after the originator (warden's client name, handed on by codex-acp).
        const agents = (server as FakeModelServer).requests.map((request) => request.headers['user-agent']);
        expect(agents).to.have.length.above(0);
        for (const agent of agents) expect(agent).to.match(adapter.userAgent);
      });

      it('a cancel once the slow turn streams: the prompt ends cancelled, the next prompt ends end_turn', async () => {
        const streaming = (editor as Editor).nextText();
        const running = turn('slow');
        await streaming;
        await (editor as Editor).agent.notify(methods.agent.session.cancel, { sessionId });
        expect((await running).stopReason).to.equal('cancelled');
        // The session goes on, and nothing of the cancelled turn comes after its end.
        expect(await turn('hello')).to.deep.equal({ stopReason: 'end_turn', text: adapter.hello });
      });

      it('kill -9 of the adapter mid-turn (--on-crash fail): the prompt fails agent_crashed, the restarted adapter resumes the session with its history, the next prompt ends end_turn', async () => {
        const { warden } = editor as Editor;
        const streaming = (editor as Editor).nextText();
        const running = turn('slow').then(
          (result) => new Error(`the prompt ended with ${JSON.stringify(result)} instead of failing`),
          (caught: unknown) => caught,
        );
        await streaming;
        const killed = adapterUnder(warden.pid as number, adapter);
        expect(killed, `${adapter.bin} under warden ${warden.pid}`).to.not.equal(undefined);
        const killedAt = Date.now();
        process.kill((killed as ProcessRow).pid, 'SIGKILL');
        const error = await running;
        expect(error, String(error)).to.be.instanceOf(RequestError);
        expect((error as RequestError).data, JSON.stringify((error as RequestError).data)).to.deep.include({ reason: 'agent_crashed' });
        await waitUntil(() => !isAlive((killed as ProcessRow).pid), `${adapter.bin} ${(killed as ProcessRow).pid} to be gone`, 15_000, 50);
        await waitUntil(() => adapterUnder(warden.pid as number, adapter) !== undefined, `the restarted ${adapter.bin}`, 30_000, 50);
        expect(await turn('hello'), (editor as Editor).stderr.join('')).to.deep.equal({ stopReason: 'end_turn', text: adapter.hello });
        timings.push(`${adapter.bin} (${protocol}): kill -9 to the next turn's end_turn: ${Date.now() - killedAt} ms`);
        // The restarted adapter resumed the session: the model sees the earlier turns (two hellos,
        // the cancelled slow, the hello after it), then the turn cut by the kill when the CLI had
        // written it down before it died (once at most: warden does not send it again), then this one.
        const last = (server as FakeModelServer).requests.at(-1);
        const history = (adapter.bin === 'claude-agent-acp' ? anthropicUserTexts(last?.body) : openaiUserTexts(last?.body)).filter((text) => text === 'hello' || text === 'slow');
        expect([['hello', 'hello', 'slow', 'hello', 'slow', 'hello'], ['hello', 'hello', 'slow', 'hello', 'hello']], JSON.stringify(history)).to.deep.include(history);
      });
    });
  }
});
