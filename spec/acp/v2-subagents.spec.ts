/**
 * Subagent sessions for an ACP v2 editor (docs/acp.md, "Subagent sessions"): the SDK's v2
 * client drives `warden acp` hosting spec/support/subagent-agent.mjs (a v1 agent sending what
 * claude-agent-acp 0.101.0 sends). A v2 editor takes subagents (its baseline): the agent is
 * told `subagents`, and the editor gets the child's announcement on the parent, then the
 * child's updates under the child's `sessionId`, before the parent's answer and its `idle`;
 * after `warden acp` is started again on the same journal, the parent's `session/resume` from
 * the start replays the child after its announcement, then `replay_complete` on the child's id
 * and on the parent's. After a kill -9 of `warden acp`, a new
 * one lists the child under its parent, and a `session/resume` of the child from the start
 * replays the child's updates only, then `replay_complete`.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/processes.js';
import { killGroups } from '../support/warden-process.js';
import { spawnWardenByName } from '../support/warden-by-name.js';
import { v2StdioEditor } from '../support/v2-stdio-editor.js';

const subagentAgent = fileURLToPath(new URL('../support/subagent-agent.mjs', import.meta.url));

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly sessionId?: string; readonly state?: unknown; readonly [key: string]: unknown };
}

describe('ACP v2 editor: subagent sessions', function () {
  this.timeout(60_000);
  const launched: ChildProcess[] = [];
  let dir: string;

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-subagents-')));
  });
  after(async () => {
    await killGroups(launched, { descendants: true });
    rmSync(dir, { recursive: true, force: true });
  });

  /** `warden acp` hosting the fake agent, its journal in `dir`, with the SDK's v2 client on its stdio. */
  async function editor() {
    const child = spawnWardenByName(['acp', '--store', join(dir, 'journal.sqlite'), '--agent', `acp:${process.execPath} ${subagentAgent} --log ${join(dir, 'agent.log')}`], dir, launched);
    child.stderr?.resume();
    const { agent, updates } = await v2StdioEditor<Notified>(child, 'v2-subagents-spec');
    return { child, agent, updates };
  }

  const lines = (updates: readonly Notified[]) =>
    updates
      .filter(({ update }) => !['available_commands_update', 'user_message', 'user_message_chunk', 'state_update', 'config_option_update', 'session_info_update', 'replay_complete'].includes(update.sessionUpdate))
      .map(({ sessionId, update }) => `${sessionId} ${update.sessionUpdate}${update.sessionUpdate === 'subagent_update' ? ` ${update.sessionId}` : ''}`);

  /** An editor whose session ran a task with one subagent: the editor, the parent's id, the child's. */
  async function subagentTask() {
    const first = await editor();
    const active = await first.agent.buildSession(dir).start();
    await active.prompt('task: look at the files');
    await active.readTextUntilIdle();
    return { first, parent: active.sessionId, child: `${active.sessionId}-child-1` };
  }

  it('the agent is told; the child comes after its announcement under its own sessionId, before the parent\'s idle; replayed after a restart', async () => {
    const { first, parent, child } = await subagentTask();
    const told = readFileSync(join(dir, 'agent.log'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { method: string; params: { clientCapabilities?: Record<string, unknown> } });
    expect(told.find((request) => request.method === 'initialize')?.params.clientCapabilities).to.deep.include({ subagents: {} });
    const live = lines(first.updates);
    expect(live).to.deep.equal([
      `${parent} subagent_update ${child}`,
      `${child} agent_message_chunk`,
      `${child} tool_call_update`,
      `${child} tool_call_update`,
      `${parent} subagent_update ${child}`,
      `${parent} agent_message_chunk`,
    ]);
    const idle = first.updates.findIndex(({ update }) => update.sessionUpdate === 'state_update' && update.state === 'idle');
    expect(idle).to.be.greaterThan(first.updates.findIndex(({ sessionId }) => sessionId === child));

    first.child.stdin?.end();
    await new Promise((resolve) => first.child.once('exit', resolve));
    const again = await editor();
    await again.agent.request('session/resume', { sessionId: parent, cwd: dir, replayFrom: { type: 'start' } } as never);
    await waitUntil(() => lines(again.updates).includes(`${parent} agent_message_chunk`), 'the replay');
    expect(lines(again.updates)).to.deep.equal(live);
    // replay_complete for the child on its own id (RFD: a child announced in the replay gets its own marker), then the parent's.
    const markers = () => again.updates.filter(({ update }) => update.sessionUpdate === 'replay_complete').map(({ sessionId }) => sessionId);
    await waitUntil(() => markers().includes(parent), 'the parent\'s replay_complete');
    expect(markers()).to.deep.equal([child, parent]);
    const lastChildUpdate = again.updates.map(({ sessionId, update }) => sessionId === child && update.sessionUpdate !== 'replay_complete').lastIndexOf(true);
    expect(again.updates.findIndex(({ sessionId, update }) => sessionId === child && update.sessionUpdate === 'replay_complete')).to.be.greaterThan(lastChildUpdate);
    again.child.stdin?.end();
  });

  it('after a kill -9 of warden acp, the child is listed under its parent and its resume from the start replays it alone, then replay_complete', async () => {
    const { first, parent, child } = await subagentTask();
    const childLive = lines(first.updates).filter((line) => line.startsWith(`${child} `));
    expect(childLive).to.have.length(3);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const again = await editor();
    const { sessions } = (await again.agent.request('session/list', {} as never)) as unknown as { sessions: Array<{ sessionId: string; _meta?: Record<string, unknown> }> };
    const mine = sessions.filter(({ sessionId }) => sessionId === parent || sessionId === child);
    expect(mine.map(({ sessionId, _meta }) => [sessionId, _meta?.['acp-warden/parentSessionId'] ?? null]).sort()).to.deep.equal([[child, parent], [parent, null]].sort());
    await again.agent.request('session/resume', { sessionId: child, cwd: dir, replayFrom: { type: 'start' } } as never);
    await waitUntil(() => again.updates.some(({ update }) => update.sessionUpdate === 'replay_complete'), 'the replay\'s end');
    expect(lines(again.updates)).to.deep.equal(childLive);
    const kinds = again.updates.map(({ sessionId, update }) => `${sessionId} ${update.sessionUpdate}`);
    expect(kinds.indexOf(`${child} replay_complete`)).to.be.greaterThan(kinds.lastIndexOf(`${child} tool_call_update`));
    expect(again.updates.every(({ sessionId }) => sessionId === child)).to.equal(true);
    again.child.stdin?.end();
  });
  it('session/cancel of a running child that advertises cancel reaches the agent under the child\'s id and ends its work (its last words, then idle on the parent); the parent is not cancelled; a child that does not advertise it is never sent a cancel', async () => {
    const { agent, updates } = await editor();
    const active = await agent.buildSession(dir).start();
    const log = join(dir, 'agent.log');
    const cancelsSent = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { method: string; params?: { sessionId?: string } }).filter((entry) => entry.method === 'session/cancel');
    const before = cancelsSent().length;
    await active.prompt('background');
    await active.readTextUntilIdle();
    const announced = () => updates.filter(({ sessionId, update }) => sessionId === active.sessionId && update.sessionUpdate === 'subagent_update').map(({ update }) => update.sessionId as string);
    await waitUntil(() => announced().length === 1, 'the background child announced');
    const child = announced()[0] as string;
    const childWords = () => updates.filter(({ sessionId, update }) => sessionId === child && update.sessionUpdate === 'agent_message_chunk').map(({ update }) => (update.content as { text: string }).text);
    await waitUntil(() => childWords().includes('child: watching.'), 'the child at work after the parent\'s idle');
    await agent.notify('session/cancel', { sessionId: child } as never);
    await waitUntil(() => childWords().includes('child: stopped.'), 'the child\'s last words');
    const childStates = updates.filter(({ sessionId, update }) => sessionId === active.sessionId && update.sessionUpdate === 'subagent_update' && update.sessionId === child).map(({ update }) => update.state);
    expect(childStates.at(-1)).to.deep.equal({ state: 'idle', stopReason: 'cancelled' });
    expect(cancelsSent().slice(before).map((entry) => entry.params?.sessionId)).to.deep.equal([child]);
    // The parent's own turn was over and stays so: no cancel of it went to the agent.
    const fixed = agent.buildSession(dir);
    const other = await fixed.start();
    await other.prompt('background-fixed');
    await other.readTextUntilIdle();
    const fixedChild = `${other.sessionId}-child-2`;
    await waitUntil(() => updates.some(({ sessionId, update }) => sessionId === fixedChild && update.sessionUpdate === 'agent_message_chunk'), 'the second child at work');
    await agent.notify('session/cancel', { sessionId: fixedChild } as never);
    // A prompt after it on the same connection is answered: the cancel, had it gone, was written before.
    await other.prompt('hello');
    await other.readTextUntilIdle();
    expect(cancelsSent().slice(before).map((entry) => entry.params?.sessionId)).to.deep.equal([child]);
  });
});
