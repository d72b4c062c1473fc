/**
 * A permission over ACP v2 end to end with the real adapters (issue 30): the SDK 2.4.0 v2 client
 * as the editor of `warden acp --agent claude-acp|codex-acp --agent-protocol v2` (run by name, as an
 * editor's configuration runs it, with its default file journal), serving
 * @agentclientprotocol/claude-agent-acp 0.101.0 pinned to v2 (CLAUDE_AGENT_ACP_PROTOCOL=v2) over the
 * pinned Claude Code against the fake Anthropic server, and @agentclientprotocol/codex-acp 2.6.0
 * over the pinned Codex against the fake OpenAI server, on 127.0.0.1. The editor sets the
 * session's `mode` config option to one that asks (claude-agent-acp starts in `auto`, where Claude
 * decides alone: `default`; codex-acp's default `agent` has a model review the request:
 * `workspace-write`, where Codex asks for a command that leaves the sandbox); the prompt makes
 * the model create `new.txt` (Claude's Write tool; Codex's `touch` asking to escalate), the
 * adapter's v2 `session/request_permission` reaches the v2 editor (v2's title and a tool-call
 * subject naming the tool call it was shown), the turn is `requires_action` meanwhile, the
 * editor's answer goes back, and the tool runs (allowed: the file is there) or does not
 * (rejected: nothing created); the turn ends `idle` `end_turn`, or, rejected by Codex's only
 * reject option ("No, and tell Codex what to do differently"), `idle` `cancelled`.
 *
 * The adapters come from `npm run agents:install` (WARDEN_AGENTS_DIR); without them this skips.
 */
import { client, ndJsonStream, type ActiveSession } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import type { ChildProcess, ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { FakeModelServer } from '../support/local-model-server.js';
import { waitUntil } from '../support/processes.js';
import { agentsBin, envArgs, endRealAgentSuite, skipMessage, workspace, type Workspace } from '../support/real-agents-harness.js';
import { spawnWardenByName } from '../support/warden-by-name.js';
import { claudeAgentAcp, codexAcp, type RealAcpAdapter } from '../support/real-acp-adapter-cases.js';

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly toolCallId?: string; readonly title?: string; readonly status?: string; readonly state?: string; readonly stopReason?: string };
}

interface AskedPermission {
  readonly title?: string;
  readonly description?: string;
  readonly subject?: { readonly type: string; readonly toolCall?: { readonly toolCallId: string; readonly title?: string } };
  readonly options: ReadonlyArray<{ readonly optionId: string; readonly kind: string }>;
}

/** One adapter the suite runs, and what makes it ask. */
interface AdapterCase extends RealAcpAdapter {
  /** The `mode` config option value in which the adapter asks the editor. */
  readonly askMode: string;
  /** The prompt that makes the fake model create `new.txt` with a tool that needs permission. */
  readonly prompt: string;
  /** What `new.txt` holds once created. */
  readonly created: string;
  /** How a turn whose tool the editor rejected ends. */
  readonly rejectedEnds: 'end_turn' | 'cancelled';
  /** The title the adapter asks with (its own v2 `title`, which warden must not replace by the tool call's); undefined: the tool call's own title. */
  readonly askedTitle?: string;
  /** The description the adapter asks with, if any. */
  readonly askedDescription?: string;
}

const cases: AdapterCase[] = [
  // Pinned to v2, so that a v1 offer would be refused.
  { ...claudeAgentAcp, env: (server, space) => ({ ...claudeAgentAcp.env(server, space), CLAUDE_AGENT_ACP_PROTOCOL: 'v2' }), askMode: 'default', prompt: 'permission', created: 'hello\n', rejectedEnds: 'end_turn' },
  // Codex's one reject option is "No, and tell Codex what to do differently": it stops the turn.
  { ...codexAcp, askMode: 'workspace-write', prompt: 'TOOL:escalate touch new.txt', created: '', rejectedEnds: 'cancelled', askedTitle: 'Run command?', askedDescription: 'the test asks for it' },
];

for (const adapter of cases) describe(`real ${adapter.bin} behind warden acp in ACP v2 both ways: a permission answered by the v2 editor (fake model server)`, function () {
  this.timeout(90_000);
  const adapterBin = join(agentsBin, adapter.bin);
  let server: FakeModelServer | undefined;
  let space: Workspace | undefined;
  let warden: ChildProcessWithoutNullStreams | undefined;
  /** The warden this suite starts (its own process group), killed with what it started after the suite. */
  const launched: ChildProcess[] = [];
  const stderr: string[] = [];
  const updates: Notified[] = [];
  const asked: AskedPermission[] = [];
  /** What the editor answers the next permission: allow once, or reject once. */
  let answer: 'allow_once' | 'reject_once' = 'allow_once';
  let agent: ReturnType<ReturnType<typeof client>['connect']>['agent'];

  before(async function () {
    if (!existsSync(adapterBin) || !existsSync(adapter.cli)) {
      console.log(`      ${skipMessage(`${adapter.bin} (or its CLI)`)}`);
      this.skip();
    }
    server = await adapter.server();
    space = workspace(`warden-e2e-v2-permission-${adapter.bin}-`);
    const env = adapter.env(server, space);
    // As an editor's agent configuration runs it: `warden` by name, its default journal (a file under HOME).
    warden = spawnWardenByName(['acp', '--agent', adapter.agent, '--agent-protocol', 'v2', ...envArgs(env)], space.home, launched, { [adapter.pathVar]: adapterBin }) as ChildProcessWithoutNullStreams;
    const child = warden;
    child.stderr.setEncoding('utf8').on('data', (text: string) => stderr.push(text));
    const app = client({ name: 'v2-permission-e2e' })
      .onNotification('session/update', ({ params }) => {
        updates.push(params as unknown as Notified);
      })
      .onRequest('session/request_permission', ({ params }) => {
        const request = params as unknown as AskedPermission;
        asked.push(request);
        const option = request.options.find((entry) => entry.kind === answer);
        return { outcome: option ? { outcome: 'selected' as const, optionId: option.optionId } : { outcome: 'cancelled' as const } };
      });
    agent = app.connect(ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>)).agent;
    expect((await agent.request('initialize', { protocolVersion: 2, info: { name: 'v2-permission-e2e', version: '1' }, capabilities: {} })).protocolVersion, stderr.join('')).to.equal(2);
  });

  after(async () => {
    await endRealAgentSuite(warden, server, space, launched);
  });

  /** A `permission` turn in a new session in a new project: what the editor saw of it. */
  async function permissionTurn(): Promise<{ project: string; text: string; session: ActiveSession; of: Notified['update'][]; permission: AskedPermission | undefined }> {
    const project = (space as Workspace).project();
    const session = await agent.buildSession(project).start();
    // The adapter's starting mode asks nobody: the editor picks one that asks through v2's config options, where v2 keeps the modes.
    const mode = session.configOptions?.find((option) => option.configId === 'mode');
    expect(mode, JSON.stringify(session.configOptions)).to.not.equal(undefined);
    await session.setConfigOption({ configId: 'mode', value: adapter.askMode } as never);
    const before = asked.length;
    await session.prompt(adapter.prompt);
    const text = await session.readTextUntilIdle();
    // The SDK's session and the recording handler each get the idle: wait for the record.
    await waitUntil(() => updates.some((entry) => entry.sessionId === session.sessionId && entry.update.state === 'idle'), 'the idle recorded');
    const of = updates.filter((entry) => entry.sessionId === session.sessionId).map((entry) => entry.update);
    expect(asked.length - before, `${text}\n${of.map((update) => update.sessionUpdate).join(' ')}\n${stderr.join('').slice(-3000)}`).to.equal(1);
    return { project, text, session, of, permission: asked.at(-1) };
  }

  const statesOf = (of: Notified['update'][]) => of.filter((update) => update.sessionUpdate === 'state_update').map((update) => (update.stopReason ? `${update.state}:${update.stopReason}` : update.state));

  it('allowed: v2 title and tool-call subject, requires_action while asked, the tool completes and the file is written, idle end_turn', async () => {
    answer = 'allow_once';
    const { project, text, of, permission } = await permissionTurn();
    expect(permission?.title).to.be.a('string').and.not.equal('');
    expect(permission?.subject?.type).to.equal('tool_call');
    const toolCallId = permission?.subject?.toolCall?.toolCallId;
    // The adapter's own question reaches the editor as it asked it (src/acp/v2-permission.ts).
    const shownTitle = permission?.subject?.toolCall?.title ?? of.filter((update) => update.toolCallId === toolCallId && update.title).at(-1)?.title;
    expect(permission?.title, JSON.stringify(permission)).to.equal(adapter.askedTitle ?? shownTitle);
    expect(permission?.description).to.equal(adapter.askedDescription);
    expect(of.some((update) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === toolCallId), 'the tool call shown before it was asked about').to.equal(true);
    expect(statesOf(of)).to.include('requires_action');
    expect(statesOf(of).at(-1)).to.equal('idle:end_turn');
    expect(of.filter((update) => update.toolCallId === toolCallId).at(-1)?.status).to.equal('completed');
    expect(text).to.include('Tool finished');
    expect(readFileSync(join(project, 'new.txt'), 'utf8')).to.equal(adapter.created);
  });

  it(`rejected: the tool fails, nothing is written, idle ${adapter.rejectedEnds}`, async () => {
    answer = 'reject_once';
    const { project, of, permission } = await permissionTurn();
    const toolCallId = permission?.subject?.toolCall?.toolCallId;
    expect(of.filter((update) => update.toolCallId === toolCallId).at(-1)?.status).to.equal('failed');
    expect(existsSync(join(project, 'new.txt'))).to.equal(false);
    expect(statesOf(of).at(-1)).to.equal(`idle:${adapter.rejectedEnds}`);
  });
});
