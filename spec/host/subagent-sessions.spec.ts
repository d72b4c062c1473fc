/**
 * Subagent child sessions (docs/acp.md, "Subagent sessions") through the host and a real agent
 * process (spec/support/subagent-agent.mjs, which sends what claude-agent-acp 0.101.0 sends):
 * the editor's `clientCapabilities.subagents` reaches the agent; a child announced by
 * `subagent_update` is journaled in its parent's journal, delivered after its announcement
 * with its own `sessionId`, replayed on the parent's `session/load` by a host started again on
 * the same journal; an editor without `subagents` gets no child traffic. Each child is also a
 * session of its own: listed under its parent (to editors that take subagents), and a
 * `session/load` of it replays its own updates only, also from a host started again.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAcpPassthrough } from '../../src/adapters/acp-passthrough.js';
import { createHostAgent } from '../../src/host/host-agent.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import type { Journal } from '../../src/journal/journal.js';
import { PARENT_SESSION_META_KEY, SUBAGENT_META_KEY } from '../../src/protocol/native-agent.js';
import { initialized, type Editor } from '../support/raw-editor.js';
import { processesWhere, waitUntil } from '../support/processes.js';

const subagentAgent = fileURLToPath(new URL('../support/subagent-agent.mjs', import.meta.url));

describe('host agent: subagent sessions', function () {
  this.timeout(30_000);
  let dir: string;
  const opened: Array<{ editor: Editor; journal: Journal }> = [];

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-subagents-')));
  });
  afterEach(async () => {
    for (const { editor, journal } of opened.splice(0)) {
      editor.server.stop();
      journal.close();
    }
    await waitUntil(() => processesWhere((cmdline) => cmdline.includes('subagent-agent.mjs') && cmdline.includes(dir)).length === 0, 'the agents gone');
    rmSync(dir, { recursive: true, force: true });
  });

  /** A host on the journal file in `dir`, its agent the fake, an editor initialized with `capabilities`. */
  async function host(capabilities: Record<string, unknown>, agentArgs: readonly string[] = []): Promise<Editor> {
    const journal = sqliteJournal(join(dir, 'journal.db'));
    const agent = createAcpPassthrough({ name: 'subagents', executable: process.execPath, args: [subagentAgent, '--log', join(dir, 'agent.log'), ...agentArgs] });
    const editor = await initialized(createHostAgent({ defaultAgent: 'subagents', resolve: () => agent, journal }), capabilities);
    opened.push({ editor, journal });
    return editor;
  }

  /** Stops the host opened first (a warden process that ends: its agent goes with it), its journal closed. */
  async function stopHost(): Promise<void> {
    const { editor, journal } = opened.splice(0, 1)[0] as { editor: Editor; journal: Journal };
    editor.server.stop();
    journal.close();
    await waitUntil(() => processesWhere((cmdline) => cmdline.includes('subagent-agent.mjs') && cmdline.includes(dir)).length === 0, 'the host\'s agent gone');
  }

  const agentRequests = () =>
    readFileSync(join(dir, 'agent.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { method: string; params: Record<string, unknown> });

  /** What the editor got, as `<sessionId> <kind>` lines, from `from` on. */
  const shown = (editor: Editor, from = 0) => editor.updates.slice(from).map(({ sessionId, update }) => `${sessionId} ${update.sessionUpdate}${update.sessionUpdate === 'subagent_update' ? ` ${String(update.sessionId)}` : ''}`);

  async function runTask(editor: Editor): Promise<string> {
    const { sessionId } = (await editor.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'task: look at the files' }] })).to.deep.include({ stopReason: 'end_turn' });
    return sessionId;
  }

  it('a v1 editor with `subagents`: the agent is told; the child is announced, then its updates come under its own sessionId, in order; journaled under the parent', async () => {
    const editor = await host({ subagents: {} });
    const parent = await runTask(editor);
    const child = `${parent}-child-1`;
    expect(agentRequests().find((request) => request.method === 'initialize')?.params.clientCapabilities).to.deep.include({ subagents: {} });
    const turn = shown(editor).filter((line) => !line.includes('available_commands') && !line.includes('user_message_chunk'));
    expect(turn).to.deep.equal([
      `${parent} subagent_update ${child}`,
      `${child} agent_message_chunk`,
      `${child} tool_call`,
      `${child} tool_call_update`,
      `${parent} subagent_update ${child}`,
      `${parent} agent_message_chunk`,
    ]);
    const announcement = editor.updates.find(({ update }) => update.sessionUpdate === 'subagent_update')?.update;
    expect(announcement).to.deep.include({ sessionId: child, title: 'Explore', description: 'Look at the files', capabilities: { cancel: {} }, state: { state: 'running' } });
    // The tag is the journal's: the editor never sees it.
    for (const { update } of editor.updates) expect((update._meta as Record<string, unknown> | undefined)?.[SUBAGENT_META_KEY]).to.equal(undefined);
    const journal = opened[0]?.journal as Journal;
    const tagged = journal.entries(parent).flatMap((record) => (record.entry.kind === 'update' ? [record.entry.update as { sessionUpdate: string; _meta?: Record<string, unknown> }] : []));
    expect(tagged.filter((update) => update._meta?.[SUBAGENT_META_KEY] === child).map((update) => update.sessionUpdate)).to.deep.equal(['agent_message_chunk', 'tool_call', 'tool_call_update']);
    expect(journal.entries(child)).to.deep.equal([]);
  });

  it('a v1 editor without `subagents`: the agent is not told, and gives the child\'s words in the parent; no child session reaches the editor', async () => {
    const editor = await host({});
    const parent = await runTask(editor);
    expect(agentRequests().find((request) => request.method === 'initialize')?.params.clientCapabilities).to.not.have.property('subagents');
    expect(editor.updates.every(({ sessionId }) => sessionId === parent)).to.equal(true);
    expect(editor.updates.map(({ update }) => update.sessionUpdate)).to.not.include('subagent_update');
    const words = editor.updates.flatMap(({ update }) => (update.sessionUpdate === 'agent_message_chunk' ? [(update.content as { text: string }).text] : []));
    expect(words.join('')).to.equal('child: looked at the files. done');
  });

  it('after a restart on the same journal, the parent\'s session/load replays each child after its announcement; a child still running (announced again in the agent\'s replay) is routed; an editor without `subagents` gets none of it', async () => {
    const first = await host({ subagents: {} });
    const parent = await runTask(first);
    const child = `${parent}-child-1`;
    // The replay shows the user's prompt too, which the live turn did not echo.
    const conversation = (lines: string[]) => lines.filter((line) => !line.includes('available_commands') && !line.includes('user_message_chunk'));
    const live = conversation(shown(first));
    await stopHost();

    const again = await host({ subagents: {} });
    await again.request('session/load', { sessionId: parent, cwd: dir, mcpServers: [] });
    await waitUntil(() => shown(again).some((line) => line === `${parent} agent_message_chunk`), 'the replay');
    const replayed = conversation(shown(again));
    expect(replayed).to.deep.equal(live);
    // The child runs on in the agent started again, which announced it in its replay: its words reach the editor under its id.
    const before = again.updates.length;
    await again.request('session/prompt', { sessionId: parent, prompt: [{ type: 'text', text: 'continue' }] });
    expect(shown(again, before)).to.deep.equal([`${child} agent_message_chunk`]);
    expect(replayed.indexOf(`${child} agent_message_chunk`)).to.be.greaterThan(replayed.indexOf(`${parent} subagent_update ${child}`));

    await stopHost();
    const plain = await host({});
    await plain.request('session/load', { sessionId: parent, cwd: dir, mcpServers: [] });
    await waitUntil(() => shown(plain).some((line) => line === `${parent} agent_message_chunk`), 'the replay without subagents');
    expect(plain.updates.every(({ sessionId }) => sessionId === parent)).to.equal(true);
    expect(plain.updates.map(({ update }) => update.sessionUpdate)).to.not.include('subagent_update');
  });

  it('a child is listed under its parent (to editors that take subagents), and its session/load replays its own updates only, marked complete; also from a host started again; deleting the parent forgets it', async () => {
    const first = await host({ subagents: {} });
    const parent = await runTask(first);
    const child = `${parent}-child-1`;
    const listOf = async (editor: Editor) => ((await editor.request('session/list', {})) as { sessions: Array<{ sessionId: string; cwd: string; title?: string | null; _meta?: Record<string, unknown> }> }).sessions;
    const listed = await listOf(first);
    expect(listed.map(({ sessionId }) => sessionId).sort()).to.deep.equal([parent, child].sort());
    expect(listed.find(({ sessionId }) => sessionId === child)).to.deep.include({ cwd: dir, title: 'Explore' });
    expect(listed.find(({ sessionId }) => sessionId === child)?._meta?.[PARENT_SESSION_META_KEY]).to.equal(parent);
    expect(listed.find(({ sessionId }) => sessionId === parent)?._meta).to.not.have.property(PARENT_SESSION_META_KEY);

    // Its load while the parent runs here: the child's three updates under its id, nothing of the parent's, then the answer.
    const before = first.updates.length;
    const answer = (await first.request('session/load', { sessionId: child, cwd: dir, mcpServers: [] })) as { _meta?: Record<string, unknown> };
    expect(shown(first, before)).to.deep.equal([`${child} agent_message_chunk`, `${child} tool_call`, `${child} tool_call_update`]);
    expect(answer._meta?.['acp-warden/replayComplete']).to.not.equal(undefined);
    await stopHost();

    const again = await host({ subagents: {} });
    expect((await listOf(again)).find(({ sessionId }) => sessionId === child)?._meta?.[PARENT_SESSION_META_KEY]).to.equal(parent);
    await again.request('session/load', { sessionId: child, cwd: dir, mcpServers: [] });
    expect(shown(again)).to.deep.equal([`${child} agent_message_chunk`, `${child} tool_call`, `${child} tool_call_update`]);
    // Replaying the child opened nothing on the agent.
    expect(agentRequests().filter((request) => request.method === 'session/load' || request.method === 'session/resume').map((request) => request.params.sessionId)).to.not.include(child);
    await stopHost();

    const plain = await host({});
    expect((await listOf(plain)).map(({ sessionId }) => sessionId)).to.deep.equal([parent]);
    await plain.request('session/delete', { sessionId: parent });
    const journal = opened[0]?.journal as Journal;
    expect(journal.getSession(child)).to.equal(undefined);
  });

  it('after a restart, a child its agent does not announce again is routed by the journal\'s record: its words reach the editor under its id, journaled under the parent', async () => {
    const first = await host({ subagents: {} }, ['--quiet-load']);
    const parent = await runTask(first);
    const child = `${parent}-child-1`;
    await stopHost();

    const again = await host({ subagents: {} }, ['--quiet-load']);
    await again.request('session/load', { sessionId: parent, cwd: dir, mcpServers: [] });
    const before = again.updates.length;
    await again.request('session/prompt', { sessionId: parent, prompt: [{ type: 'text', text: 'continue' }] });
    expect(shown(again, before)).to.deep.equal([`${child} agent_message_chunk`]);
    const journal = opened[0]?.journal as Journal;
    const last = journal.entries(parent).filter((record) => record.entry.kind === 'update').at(-1)?.entry as { update: { _meta?: Record<string, unknown> } } | undefined;
    expect(last?.update._meta?.[SUBAGENT_META_KEY]).to.equal(child);
  });
});
