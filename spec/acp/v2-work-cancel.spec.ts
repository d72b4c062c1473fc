/**
 * ACP v2's `tool_call/cancel` and `terminal/cancel` from a v2 editor (the SDK 2.4.0 v2 client)
 * through a real `warden acp` (issue 30). Behind `--agent-protocol v2` (spec/support/v2-agent.mjs,
 * the SDK's v2 agent app behind its router): the tool call and the terminal that advertise
 * `capabilities.cancel` show it to the editor (the SDK's `canCancelToolCall` /
 * `canCancelTerminal` say so), their cancels reach the agent, whose confirmations reach the
 * editor; a tool call that does not advertise it is refused -32602 by warden without asking the
 * agent (v2: a client must not send it; an agent answers -32602). Behind a v1 agent
 * (spec/support/sdk-agent.mjs) both are refused -32602 (v1 cancels whole turns only); a v1
 * editor gets -32601 for both (not v1 methods). Nothing left running.
 */
import { client as v1Client } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/processes.js';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf } from '../support/warden-process.js';
import { spawnWardenByName } from '../support/warden-by-name.js';
import { v2StdioEditor } from '../support/v2-stdio-editor.js';

const v2Agent = fileURLToPath(new URL('../support/v2-agent.mjs', import.meta.url));
const v1Agent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly toolCallId?: string; readonly terminalId?: string; readonly status?: string; readonly state?: string; readonly stopReason?: string; readonly capabilities?: unknown; readonly exitStatus?: unknown };
}

const launched: ChildProcess[] = [];
let dir: string;

/** `warden acp` in front of `agent` (an `acp:` command line) speaking `protocol` to it. */
function wardenAcp(agent: string, protocol: 'v1' | 'v2', store: string): { child: ChildProcess; stderr: () => string } {
  const child = spawnWardenByName(['acp', '--agent', agent, '--agent-protocol', protocol, '--store', join(dir, store)], dir, launched);
  void exitCodeOf(child);
  return { child, stderr: stderrOf(child) };
}

/** The SDK v2 client on `child`'s stdio, every update recorded. */
const v2Editor = (child: ChildProcess) => v2StdioEditor<Notified>(child, 'v2-cancel-spec');

/** The error a request failed with (it must fail). */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error);
  expect(outcome, 'the request should have failed').to.not.equal(undefined);
  return outcome as { code: number; message: string; data?: unknown };
}

before(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-cancel-')));
});

after(async () => {
  await killGroups(launched, { descendants: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('ACP v2 editor: tool_call/cancel and terminal/cancel', function () {
  this.timeout(60_000);

  it('behind a v2 agent: cancellable work shows capabilities.cancel, its cancels reach the agent and their confirmations the editor; a tool call without it is refused -32602 by warden', async () => {
    const log = join(dir, 'v2-requests.ndjson');
    const { child, stderr } = wardenAcp(`acp:${process.execPath} ${v2Agent} --log ${log}`, 'v2', 'v2.sqlite');
    const editor = await v2Editor(child);
    const active = await editor.agent.buildSession(dir).start();
    const { sessionId } = active;
    await active.prompt('work');
    const ofSession = () => editor.updates.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update);
    await waitUntil(() => ofSession().some((update) => update.sessionUpdate === 'terminal_update'), `the work's terminal to be announced (${stderr()})`);
    const tools = ofSession().filter((update) => update.sessionUpdate === 'tool_call_update');
    const cancellable = tools.find((update) => update.toolCallId?.endsWith('-cancellable'));
    const fixed = tools.find((update) => update.toolCallId?.endsWith('-fixed'));
    const terminal = ofSession().find((update) => update.sessionUpdate === 'terminal_update');
    expect(cancellable?.capabilities).to.deep.equal({ cancel: {} });
    expect(fixed).to.not.have.property('capabilities');
    expect(terminal?.capabilities).to.deep.equal({ cancel: {} });
    expect(active.canCancelToolCall(cancellable?.toolCallId as string)).to.equal(true);
    expect(active.canCancelToolCall(fixed?.toolCallId as string)).to.equal(false);
    expect(active.canCancelTerminal(terminal?.terminalId as string)).to.equal(true);

    // Sent anyway (raw): warden refuses it as v2 says an agent does, without asking the agent.
    const notCancellable = await refusal(editor.agent.request('tool_call/cancel' as never, { sessionId, toolCallId: fixed?.toolCallId } as never));
    expect(notCancellable.code).to.equal(-32602);
    expect(notCancellable.message).to.include('not cancellable');
    const unknownTerminal = await refusal(editor.agent.request('terminal/cancel' as never, { sessionId, terminalId: 'no-such-terminal' } as never));
    expect(unknownTerminal.code).to.equal(-32602);

    await active.cancelToolCall(cancellable?.toolCallId as string);
    await active.cancelTerminal(terminal?.terminalId as string);
    const text = await active.readTextUntilIdle();
    expect(text).to.equal('done');
    await waitUntil(() => ofSession().some((update) => update.state === 'idle'), 'the idle recorded');
    const received = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { method: string; params: Record<string, unknown> });
    expect(received.filter((entry) => entry.method.endsWith('/cancel')).map((entry) => [entry.method, entry.params])).to.deep.equal([
      ['tool_call/cancel', { sessionId, toolCallId: cancellable?.toolCallId }],
      ['terminal/cancel', { sessionId, terminalId: terminal?.terminalId }],
    ]);
    // The agent's confirmations: the tool call final (v1's journal keeps `cancelled` as failed, with the v2 status), the terminal's exit status.
    const last = (id: string | undefined) => ofSession().filter((update) => update.toolCallId === id).at(-1);
    expect(last(cancellable?.toolCallId)?.status).to.be.oneOf(['cancelled', 'failed']);
    expect(last(cancellable?.toolCallId)?.capabilities).to.equal(null);
    expect(ofSession().filter((update) => update.sessionUpdate === 'terminal_update').at(-1)?.exitStatus).to.deep.equal({ exitCode: null, signal: 'SIGTERM' });
    expect(active.canCancelToolCall(cancellable?.toolCallId as string)).to.equal(false);
    // A cancel after the work ended: refused by warden (the agent no longer advertises it).
    const again = await refusal(editor.agent.request('tool_call/cancel' as never, { sessionId, toolCallId: cancellable?.toolCallId } as never));
    expect(again.code).to.equal(-32602);
    expect(ofSession().filter((update) => update.sessionUpdate === 'state_update').map((update) => `${update.state}${update.stopReason ? `:${update.stopReason}` : ''}`)).to.deep.equal(['running', 'idle:end_turn']);
    child.stdin?.end();
  });

  it('background work: a turn that ends with a tool call and a terminal going on lists them in its idle state_update; each one that ends later gives a new idle snapshot without it, after the update that ended it', async () => {
    const { child, stderr } = wardenAcp(`acp:${process.execPath} ${v2Agent}`, 'v2', 'v2-background.sqlite');
    const editor = await v2Editor(child);
    const active = await editor.agent.buildSession(dir).start();
    const { sessionId } = active;
    const ofSession = () => editor.updates.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update as Notified['update'] & { background?: unknown });
    const states = () => ofSession().filter((update) => update.sessionUpdate === 'state_update').map(({ state, stopReason, background }) => ({ state, ...(stopReason ? { stopReason } : {}), background }));
    await active.prompt('background');
    expect(await active.readTextUntilIdle()).to.equal('watching');
    // The SDK's session and the recording handler each get the update: wait for the record.
    await waitUntil(() => states().length === 2, 'the idle snapshot recorded');
    const tool = ofSession().find((update) => update.sessionUpdate === 'tool_call_update')?.toolCallId as string;
    const terminal = ofSession().find((update) => update.sessionUpdate === 'terminal_update')?.terminalId as string;
    expect(states(), stderr()).to.deep.equal([
      { state: 'running', background: [] },
      { state: 'idle', stopReason: 'end_turn', background: [{ type: 'terminal', terminalId: terminal }, { type: 'tool_call', toolCallId: tool }] },
    ]);
    await active.cancelToolCall(tool);
    await waitUntil(() => states().length === 3, 'the snapshot after the tool call ended');
    expect(states()[2]).to.deep.equal({ state: 'idle', background: [{ type: 'terminal', terminalId: terminal }] });
    const kinds = ofSession().map((update) => (update.sessionUpdate === 'state_update' ? 'state' : `${update.sessionUpdate}:${update.status ?? ''}`));
    expect(kinds.slice(-2)).to.deep.equal(['tool_call_update:cancelled', 'state']);
    await active.cancelTerminal(terminal);
    await waitUntil(() => states().length === 4, 'the snapshot after the terminal exited');
    expect(states()[3]).to.deep.equal({ state: 'idle', background: [] });
    expect(ofSession().at(-2)).to.deep.include({ sessionUpdate: 'terminal_update', exitStatus: { exitCode: null, signal: 'SIGTERM' } });
    // The next turn: nothing in the background any more.
    await active.prompt('hello');
    await active.readTextUntilIdle();
    await waitUntil(() => states().length === 6, 'the next turn recorded');
    expect(states().slice(4)).to.deep.equal([{ state: 'running', background: [] }, { state: 'idle', stopReason: 'end_turn', background: [] }]);
    child.stdin?.end();
  });

  it('behind a v1 agent: both refused -32602 (v1 cancels whole turns only); a v1 editor gets -32601 for both', async () => {
    const { child } = wardenAcp(`acp:${process.execPath} ${v1Agent}`, 'v1', 'v1.sqlite');
    const editor = await v2Editor(child);
    const active = await editor.agent.buildSession(dir).start();
    const tool = await refusal(editor.agent.request('tool_call/cancel' as never, { sessionId: active.sessionId, toolCallId: 'tool-1' } as never));
    expect(tool.code).to.equal(-32602);
    expect(tool.message).to.include('ACP v1');
    const terminal = await refusal(editor.agent.request('terminal/cancel' as never, { sessionId: active.sessionId, terminalId: 'term-1' } as never));
    expect(terminal.code).to.equal(-32602);
    child.stdin?.end();

    const v1 = wardenAcp(`acp:${process.execPath} ${v1Agent}`, 'v1', 'v1-editor.sqlite');
    const agent = connectOverStdio(v1Client({ name: 'v1-editor' }), v1.child);
    await agent.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'v1-editor', version: '1' } });
    const { sessionId } = (await agent.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    for (const method of ['tool_call/cancel', 'terminal/cancel']) expect((await refusal(agent.request(method, { sessionId, toolCallId: 'x', terminalId: 'x' }))).code).to.equal(-32601);
    v1.child.stdin?.end();
  });

  it('a v1 editor of warden acp that marks its initialize as a peer host\'s relay link is still a v1 editor: -32601 for both (only a warden serve connection serves the mark)', async () => {
    const v1 = wardenAcp(`acp:${process.execPath} ${v1Agent}`, 'v1', 'v1-relay-mark.sqlite');
    const agent = connectOverStdio(v1Client({ name: 'v1-editor' }), v1.child);
    await agent.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'v1-editor', version: '1' }, _meta: { 'acp-warden/relay': true } });
    const { sessionId } = (await agent.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    for (const method of ['tool_call/cancel', 'terminal/cancel']) expect((await refusal(agent.request(method, { sessionId, toolCallId: 'x', terminalId: 'x' }))).code).to.equal(-32601);
    v1.child.stdin?.end();
  });
});
