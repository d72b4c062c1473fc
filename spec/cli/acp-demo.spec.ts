/**
 * The demo agent end to end (issue 14): an editor built on the official ACP SDK launches
 * `warden acp --agent demo` by its bare name through the PATH, as Zed or a terminal would,
 * and talks to it over stdio. The demo agent runs as a real subprocess under warden's
 * supervision (`warden demo-agent`), so everything goes through the whole path: the agent
 * server facing the editor, the host and its session machine, the ACP passthrough, the
 * demo process's own agent server and machine.
 */
import { client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import type { RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { childrenOf, expectGroupGone, isAlive, waitUntil } from '../support/processes.js';
import { wardenMain as main, writeShim } from '../support/warden-process.js';

interface Update {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly status?: string; readonly content?: unknown; readonly currentModeId?: string };
}

type PermissionAnswer = (request: RequestPermissionRequest) => Promise<RequestPermissionResponse['outcome']> | RequestPermissionResponse['outcome'];

interface Editor {
  readonly process: ChildProcess;
  /** Every session/update, in the order the editor read them. */
  readonly updates: Update[];
  /** Every session/request_permission the editor was asked. */
  readonly asked: RequestPermissionRequest[];
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  notify(method: string, params: unknown): Promise<void>;
  close(): Promise<number | null>;
}

const launched: ChildProcess[] = [];
let bin: string;

/** `warden` on a PATH of its own, as an installed package puts it. */
function installWarden(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-demo-bin-')));
  const shim = join(dir, 'warden');
  writeShim(shim, `"${process.execPath}" "${main}"`);
  return dir;
}

/** Launches `warden acp --agent demo` by name, in its own process group, and initializes it. */
async function launch(permission: PermissionAnswer): Promise<Editor> {
  const child = spawn('warden', ['acp', '--agent', 'demo', '--store', ':memory:'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
  });
  launched.push(child);
  child.stderr?.resume();
  const updates: Update[] = [];
  const asked: RequestPermissionRequest[] = [];
  const stream = ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>);
  const app = client({ name: 'demo-test-editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as unknown as Update);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      asked.push(params);
      return { outcome: await permission(params) };
    });
  const connection = app.connect(stream);
  const agent = connection.agent as unknown as { request(method: string, params: unknown): Promise<unknown>; notify(method: string, params: unknown): Promise<void> };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const editor: Editor = {
    process: child,
    updates,
    asked,
    request: (method, params) => agent.request(method, params) as Promise<never>,
    notify: (method, params) => agent.notify(method, params),
    async close() {
      child.stdin?.end();
      return exited;
    },
  };
  await editor.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'demo-test-editor', version: '1' } });
  return editor;
}

const allowOnce: PermissionAnswer = (request) => ({ outcome: 'selected', optionId: request.options.find((option) => option.kind === 'allow_once')?.optionId ?? '' });
const chunksOf = (editor: Editor, sessionId: string) => editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk');
const textOf = (editor: Editor, sessionId: string) => chunksOf(editor, sessionId).map((entry) => (entry.update.content as { text?: string }).text ?? '').join('');
const toolStatuses = (editor: Editor, sessionId: string) => editor.updates
  .filter((entry) => entry.sessionId === sessionId && (entry.update.sessionUpdate === 'tool_call' || entry.update.sessionUpdate === 'tool_call_update'))
  .map((entry) => `${entry.update.sessionUpdate}:${entry.update.status}`);
const prompt = (editor: Editor, sessionId: string, text: string) => editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
/** A long prompt: its answer repeats it, so it streams for a good while (the demo agent's 30 ms a word). */
const longText = (word: string) => Array.from({ length: 80 }, (_, index) => `${word}${index}`).join(' ');

describe('warden acp --agent demo (issue 14)', function () {
  this.timeout(90_000);
  let dir: string;

  before(() => {
    bin = installWarden();
  });

  after(() => {
    rmSync(bin, { recursive: true, force: true });
  });

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-demo-')));
  });

  afterEach(async () => {
    for (const child of launched.splice(0)) {
      const agents = child.pid ? childrenOf(child.pid).filter((entry) => entry.cmdline.includes('demo-agent')).map((entry) => entry.pid) : [];
      child.stdin?.end();
      if (child.pid && isAlive(child.pid)) {
        await waitUntil(() => child.exitCode !== null || child.signalCode !== null, 'warden to exit after stdin closed', 20_000).catch(() => {
          try {
            process.kill(-(child.pid as number), 'SIGKILL');
          } catch {
            // gone
          }
        });
      }
      await expectGroupGone(child.pid, 20_000);
      for (const pid of agents) await waitUntil(() => !isAlive(pid), `demo agent ${pid} to be gone`, 20_000);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('mode auto: a tool prompt gets no session/request_permission, and the tool call reports completed; ask asks again; plan runs nothing', async () => {
    const editor = await launch(allowOnce);
    const { sessionId } = await editor.request<{ sessionId: string; modes: { currentModeId: string } }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    await editor.request(methods.agent.session.setMode, { sessionId, modeId: 'auto' });
    await waitUntil(() => editor.updates.some((entry) => entry.update.sessionUpdate === 'current_mode_update' && entry.update.currentModeId === 'auto'), 'the mode change to reach the editor', 20_000);
    const result = await prompt(editor, sessionId, 'please run the tool');
    expect(result.stopReason).to.equal('end_turn');
    expect(editor.asked).to.deep.equal([]);
    expect(toolStatuses(editor, sessionId)).to.deep.equal(['tool_call:in_progress', 'tool_call_update:completed']);
    expect(textOf(editor, sessionId)).to.include('I ran the demo tool');
    // Back in mode ask, the same prompt asks.
    await editor.request(methods.agent.session.setMode, { sessionId, modeId: 'ask' });
    expect((await prompt(editor, sessionId, 'please run the tool')).stopReason).to.equal('end_turn');
    expect(editor.asked).to.have.length(1);
    // Mode plan: nothing asked, nothing run, a plan entry instead of a tool call.
    await editor.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' });
    const calls = toolStatuses(editor, sessionId).length;
    expect((await prompt(editor, sessionId, 'please run the tool')).stopReason).to.equal('end_turn');
    expect(editor.asked).to.have.length(1);
    expect(toolStatuses(editor, sessionId)).to.have.length(calls);
    expect(editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'plan')).to.have.length(1);
    expect(await editor.close()).to.equal(0);
  });

  it('reject_always: the tool call reports failed with a reason, the answer says it was rejected, and the next tool prompt does not ask', async () => {
    const editor = await launch((request) => ({ outcome: 'selected', optionId: request.options.find((option) => option.kind === 'reject_always')?.optionId ?? 'none offered' }));
    const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
    expect((await prompt(editor, sessionId, 'please run the tool')).stopReason).to.equal('end_turn');
    expect(editor.asked).to.have.length(1);
    expect(toolStatuses(editor, sessionId)).to.deep.equal(['tool_call:pending', 'tool_call_update:failed']);
    const failed = editor.updates.find((entry) => entry.update.sessionUpdate === 'tool_call_update');
    expect(JSON.stringify(failed?.update.content)).to.include('not run, the permission was rejected');
    expect(textOf(editor, sessionId)).to.include('I did not run the demo tool: you rejected it.');
    expect((await prompt(editor, sessionId, 'the tool again')).stopReason).to.equal('end_turn');
    expect(editor.asked).to.have.length(1);
    expect(toolStatuses(editor, sessionId).slice(-1)).to.deep.equal(['tool_call_update:failed']);
  });

  it('two sessions prompting at once: B streams while A waits for its permission, then both stream interleaved and finish', async () => {
    let releaseA: () => void = () => {};
    const heldA = new Promise<void>((resolve) => {
      releaseA = resolve;
    });
    const editor = await launch(async (request) => {
      await heldA;
      return allowOnce(request);
    });
    const a = (await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] })).sessionId;
    const b = (await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] })).sessionId;
    try {
      const runA = prompt(editor, a, 'please run the tool');
      await waitUntil(() => editor.asked.length === 1, 'A to ask its permission', 20_000);
      const runB = prompt(editor, b, longText('bravo'));
      runB.catch(() => releaseA());
      await waitUntil(() => chunksOf(editor, b).length > 0, 'B to stream while A waits for its permission', 20_000);
      releaseA();
      const [resultA, resultB] = await Promise.all([runA, runB]);
      expect(resultA.stopReason).to.equal('end_turn');
      expect(resultB.stopReason).to.equal('end_turn');
    } finally {
      releaseA();
    }
    const order = editor.updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => entry.sessionId);
    const firstA = order.indexOf(a);
    const lastB = order.lastIndexOf(b);
    expect(order.indexOf(b), 'B streamed before A').to.be.lessThan(firstA);
    expect(firstA, 'A streamed while B still did').to.be.lessThan(lastB);
    expect(order.slice(firstA, lastB + 1)).to.include(b);
    expect(textOf(editor, a)).to.equal('You said: please run the tool. I ran the demo tool; it said hello. This is the acp-warden demo agent, answering word by word.');
    expect(textOf(editor, b)).to.equal(`You said: ${longText('bravo')}. This is the acp-warden demo agent, answering word by word.`);
    expect(editor.asked.map((request) => request.sessionId)).to.deep.equal([a]);
  });

  it('cancel ends only its own session\'s prompt; the other streams on to the end', async () => {
    const editor = await launch(allowOnce);
    const a = (await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] })).sessionId;
    const b = (await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] })).sessionId;
    const runA = prompt(editor, a, longText('alpha'));
    const runB = prompt(editor, b, longText('bravo'));
    await waitUntil(() => chunksOf(editor, a).length > 0 && chunksOf(editor, b).length > 0, 'both sessions to stream', 20_000);
    await editor.notify(methods.agent.session.cancel, { sessionId: a });
    expect((await runA).stopReason).to.equal('cancelled');
    expect((await runB).stopReason).to.equal('end_turn');
    expect(textOf(editor, b)).to.equal(`You said: ${longText('bravo')}. This is the acp-warden demo agent, answering word by word.`);
    expect(textOf(editor, a).length).to.be.lessThan(`You said: ${longText('alpha')}.`.length);
  });

  it('two prompts in one session are served one after the other, in order (the agent server queues them)', async () => {
    const editor = await launch(allowOnce);
    const a = (await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] })).sessionId;
    const ended: string[] = [];
    const first = prompt(editor, a, 'first').then((result) => ended.push(`first:${result.stopReason}`));
    const second = prompt(editor, a, 'second').then((result) => ended.push(`second:${result.stopReason}`));
    await Promise.all([first, second]);
    expect(ended).to.deep.equal(['first:end_turn', 'second:end_turn']);
    expect(textOf(editor, a)).to.equal('You said: first. This is the acp-warden demo agent, answering word by word.You said: second. This is the acp-warden demo agent, answering word by word.');
  });
});
