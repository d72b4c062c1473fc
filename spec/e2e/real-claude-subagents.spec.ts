/**
 * A real subagent: @agentclientprotocol/claude-agent-acp 0.101.0 (running the pinned Claude Code
 * 2.1.332) behind `warden acp --agent claude-acp`, the fake Anthropic server answering
 * `TOOL:agent hello` with a tool_use of Claude Code's subagent tool, whose child then runs its own
 * turn (`hello`: the fake's text). A v1 editor that advertised `subagents` (the SDK's v1 client)
 * gets the child announced by `subagent_update` on its parent, then the child's updates under
 * the child's own `sessionId`; the child is listed under its parent, and its `session/load`
 * replays the child alone. The adapters come from `npm run agents:install`
 * (WARDEN_AGENTS_DIR); without them this spec is skipped, saying so.
 */
// The SDK's unstable v1 client: its stable one refuses `subagent_update` (-32602), which the stable v1 schema does not have.
import { client, methods, ndJsonStream, type ClientContext } from '@agentclientprotocol/sdk/unstable';
import { client as v2Client, ndJsonStream as v2Stream } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { startFakeAnthropic } from '../support/fake-anthropic-server.js';
import type { FakeModelServer } from '../support/local-model-server.js';
import { waitUntil } from '../support/processes.js';
import { agentsBin, claudeBin, claudeEnv, envArgs, endRealAgentSuite, repo, skipMessage, wardenMain, workspace, type Workspace } from '../support/real-agents-harness.js';

interface Seen {
  readonly sessionId: string;
  /** `acp-warden/seq`: the journal's number of the update. */
  readonly _meta?: { readonly [key: string]: unknown };
  readonly update: { readonly sessionUpdate: string; readonly sessionId?: string; readonly [key: string]: unknown };
}

/** The wardens the suites start (each in its own process group), killed with what they started after each suite. */
const launched: ChildProcess[] = [];

describe('real claude-agent-acp subagent behind warden acp (the SDK v1 client with subagents; fake Anthropic server)', function () {
  this.timeout(120_000);
  let server: FakeModelServer | undefined;
  let space: Workspace | undefined;
  let warden: ChildProcessWithoutNullStreams | undefined;
  let agent: ClientContext;
  const seen: Seen[] = [];
  const stderr: string[] = [];

  before(async function () {
    const adapter = join(agentsBin, 'claude-agent-acp');
    if (!existsSync(adapter) || !existsSync(claudeBin)) {
      console.log(`      ${skipMessage('claude-agent-acp (or its CLI)')}`);
      this.skip();
    }
    server = await startFakeAnthropic();
    space = workspace('warden-e2e-subagents-');
    const env = { ...claudeEnv(server.url, space), CLAUDE_CODE_EXECUTABLE: claudeBin, IS_SANDBOX: '1' };
    warden = spawn(process.execPath, [wardenMain, 'acp', '--agent', 'claude-acp', '--store', ':memory:', ...envArgs(env)], { cwd: repo, env: { ...process.env, CLAUDE_AGENT_ACP_PATH: adapter }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    launched.push(warden);
    warden.stderr.setEncoding('utf8').on('data', (text: string) => stderr.push(text));
    const app = client()
      .onNotification(methods.client.session.update, ({ params }) => {
        seen.push(params as unknown as Seen);
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => {
        const allow = params.options.find((option) => option.kind === 'allow_once' || option.kind === 'allow_always');
        return { outcome: allow ? { outcome: 'selected', optionId: allow.optionId } : { outcome: 'cancelled' } };
      });
    agent = app.connect(ndJsonStream(Writable.toWeb(warden.stdin) as WritableStream<Uint8Array>, Readable.toWeb(warden.stdout) as ReadableStream<Uint8Array>)).agent;
    await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: { subagents: {} } as never });
  });

  after(async () => {
    await endRealAgentSuite(warden, server, space, launched);
  });

  it('the child is announced on the parent, then its own updates come under its sessionId; it is listed under its parent, and its session/load replays it alone', async () => {
    const { sessionId } = await agent.request(methods.agent.session.new, { cwd: (space as Workspace).project(), mcpServers: [] });
    // The adapter's default mode is `auto`, whose safety check runs on Anthropic's servers: behind the fake one every tool call fails.
    await agent.request(methods.agent.session.setMode, { sessionId, modeId: 'bypassPermissions' });
    const { stopReason } = await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'TOOL:agent hello' }] });
    const trace = seen.map(({ sessionId: id, update }) => `${id === sessionId ? 'parent' : id} ${update.sessionUpdate}${update.sessionUpdate === 'subagent_update' ? ` ${String(update.sessionId)}` : ''}`);
    expect(stopReason, `${trace.join('\n')}\n${stderr.join('')}`).to.equal('end_turn');
    // The child runs in the background (Claude Code's async agent): its end is the parent's `subagent_update` to idle, maybe after the answer.
    await waitUntil(() => seen.some(({ update }) => update.sessionUpdate === 'subagent_update' && (update.state as { state?: string } | undefined)?.state === 'idle'), 'the child idle', 60_000);
    const announcement = seen.find(({ update }) => update.sessionUpdate === 'subagent_update');
    expect(announcement?.sessionId, trace.join('\n')).to.equal(sessionId);
    const child = announcement?.update.sessionId as string;
    const first = seen.findIndex(({ sessionId: id }) => id === child);
    expect(first, trace.join('\n')).to.be.greaterThan(seen.indexOf(announcement as Seen));
    const childText = seen.filter(({ sessionId: id, update }) => id === child && update.sessionUpdate === 'agent_message_chunk').map(({ update }) => (update.content as { text?: string }).text ?? '').join('');
    expect(childText, trace.join('\n')).to.include('Hello from the fake Anthropic server.');
    // The subagent's prompt, as claude-agent-acp sends it: a session_message from the parent, on the parent and on the child.
    const messages = seen.filter(({ update }) => update.sessionUpdate === 'session_message').map(({ sessionId: id, update }) => `${id === sessionId ? 'parent' : id === child ? 'child' : id} ${String(update.senderSessionId === sessionId ? 'from-parent' : 'from-child')}`);
    expect(messages, trace.join('\n')).to.include.members(['parent from-parent', 'child from-parent']);

    // The child as a session of its own: listed under its parent, and its load replays it alone.
    const { sessions } = await agent.request(methods.agent.session.list, {});
    expect(sessions.find((info) => info.sessionId === child)?._meta?.['acp-warden/parentSessionId'], trace.join('\n')).to.equal(sessionId);
    const before = seen.length;
    await agent.request(methods.agent.session.load, { sessionId: child, cwd: (space as Workspace).project(), mcpServers: [] });
    // The parent is still this editor's: a late live update of it (usage, commands) may come meanwhile; nothing of the parent is replayed.
    const replayed = seen.slice(before).filter(({ sessionId: id }) => id !== sessionId);
    expect(replayed.every(({ sessionId: id }) => id === child), trace.join('\n')).to.equal(true);
    // Claude Code may speak again on the parent when its background agent ends (a new model call): live news, journaled after
    // everything this editor saw of the parent. A replay would repeat what it saw: seqs at or below the parent's last one.
    const seqOf = (entry: Seen) => entry._meta?.['acp-warden/seq'];
    const parentSeqs = seen.slice(0, before).filter(({ sessionId: id }) => id === sessionId).map((entry) => Number(seqOf(entry))).filter(Number.isFinite);
    expect(parentSeqs.length, 'the parent updates carry their seq').to.be.greaterThan(0);
    const lastParentSeq = Math.max(...parentSeqs);
    const repeated = seen.slice(before).filter((entry) => entry.sessionId === sessionId && Number(seqOf(entry)) <= lastParentSeq);
    expect(repeated, `no parent update replayed (the parent's last seq before the load: ${lastParentSeq})`).to.deep.equal([]);
    const replayedText = replayed.filter(({ update }) => update.sessionUpdate === 'agent_message_chunk').map(({ update }) => (update.content as { text?: string }).text ?? '').join('');
    expect(replayedText).to.equal(childText);
  });
});

describe('real claude-agent-acp subagent behind warden acp over ACP v2 both ways (the SDK v2 client; fake Anthropic server)', function () {
  this.timeout(120_000);
  let server: FakeModelServer | undefined;
  let space: Workspace | undefined;
  let warden: ChildProcessWithoutNullStreams | undefined;
  const seen: Seen[] = [];
  const stderr: string[] = [];
  let agent: ReturnType<ReturnType<typeof v2Client>['connect']>['agent'];

  before(async function () {
    const adapter = join(agentsBin, 'claude-agent-acp');
    if (!existsSync(adapter) || !existsSync(claudeBin)) {
      console.log(`      ${skipMessage('claude-agent-acp (or its CLI)')}`);
      this.skip();
    }
    server = await startFakeAnthropic();
    space = workspace('warden-e2e-subagents-v2-');
    const env = { ...claudeEnv(server.url, space), CLAUDE_CODE_EXECUTABLE: claudeBin, IS_SANDBOX: '1', CLAUDE_AGENT_ACP_PROTOCOL: 'v2' };
    warden = spawn(process.execPath, [wardenMain, 'acp', '--agent', 'claude-acp', '--agent-protocol', 'v2', '--store', ':memory:', ...envArgs(env)], { cwd: repo, env: { ...process.env, CLAUDE_AGENT_ACP_PATH: adapter }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    launched.push(warden);
    warden.stderr.setEncoding('utf8').on('data', (text: string) => stderr.push(text));
    const app = v2Client({ name: 'v2-subagents-e2e' })
      .onNotification('session/update', ({ params }) => {
        seen.push(params as unknown as Seen);
      })
      .onRequest('session/request_permission', async () => ({ outcome: { outcome: 'selected' as const, optionId: 'allow' } }));
    agent = app.connect(v2Stream(Writable.toWeb(warden.stdin) as WritableStream<Uint8Array>, Readable.toWeb(warden.stdout) as ReadableStream<Uint8Array>)).agent;
    const answer = await agent.request('initialize', { protocolVersion: 2, info: { name: 'v2-subagents-e2e', version: '1' }, capabilities: {} });
    expect(answer.protocolVersion, stderr.join('')).to.equal(2);
  });

  after(async () => {
    await endRealAgentSuite(warden, server, space, launched);
  });

  it('the child is announced on the parent, then its own updates come under its sessionId', async () => {
    const active = await agent.buildSession((space as Workspace).project()).start();
    const sessionId = active.sessionId;
    // As over v1: the adapter's default `auto` mode fails every tool call behind a fake server.
    await agent.request('session/set_config_option', { sessionId, configId: 'mode', value: 'bypassPermissions' } as never);
    await active.prompt('TOOL:agent hello');
    const trace = () => seen.map(({ sessionId: id, update }) => `${id === sessionId ? 'parent' : id} ${update.sessionUpdate}${update.sessionUpdate === 'subagent_update' ? ` ${String(update.sessionId)} ${JSON.stringify(update.state)}` : ''}`).join('\n');
    await waitUntil(() => seen.some(({ update }) => update.sessionUpdate === 'subagent_update' && (update.state as { state?: string } | undefined)?.state === 'idle'), 'the child idle', 60_000);
    const announcement = seen.find(({ update }) => update.sessionUpdate === 'subagent_update');
    expect(announcement?.sessionId, trace()).to.equal(sessionId);
    const child = announcement?.update.sessionId as string;
    const first = seen.findIndex(({ sessionId: id }) => id === child);
    expect(first, trace()).to.be.greaterThan(seen.indexOf(announcement as Seen));
    const childText = seen.filter(({ sessionId: id, update }) => id === child && update.sessionUpdate === 'agent_message_chunk').map(({ update }) => (update.content as { text?: string }).text ?? '').join('');
    expect(childText, trace()).to.include('Hello from the fake Anthropic server.');
  });
});
