/**
 * The host agent's fork, delete and notices where they depend on the agent behind (in-process
 * demo agents with some capabilities taken away), driven by a raw editor over a memory pair.
 * The end-to-end view of the same surface is spec/cli/acp-surface.spec.ts.
 */
import { expect } from 'chai';
import { createMachine, emit, enqueueActions } from 'xstate';
import { demoAgent } from '../../src/acp/demo-agent.js';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { AGENT_META_KEY, createHostAgent } from '../../src/host/host-agent.js';
import type { Journal } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { errorOf, initialized, type Editor } from '../support/raw-editor.js';

async function waitFor(predicate: () => boolean): Promise<void> {
  for (let tries = 0; tries < 1000 && !predicate(); tries++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(predicate()).to.equal(true);
}

/** The demo agent advertising only these session capabilities (its machine still answers the rest). */
function demoWith(sessionCapabilities: Record<string, unknown>): NativeAgent {
  const agent = demoAgent({ wordDelayMs: 1 });
  return { ...agent, capabilities: { ...agent.capabilities, sessionCapabilities } as NativeAgent['capabilities'] };
}

describe('host agent: fork, delete and notices by what the agent can do', () => {
  let journal: Journal;
  const editors: Editor[] = [];

  async function editorFor(agents: Record<string, NativeAgent>, defaultAgent: string) {
    const editor = await initialized(createHostAgent({ defaultAgent, resolve: (name) => agents[name] as NativeAgent, journal }));
    editors.push(editor);
    return editor;
  }

  beforeEach(() => {
    journal = sqliteJournal(':memory:');
  });
  afterEach(() => {
    for (const editor of editors.splice(0)) editor.server.stop();
    journal.close();
  });

  it('session/fork of a session whose agent does not fork is -32601 naming the agent, and nothing is journaled', async () => {
    const editor = await editorFor({ forks: demoAgent({ wordDelayMs: 1 }), plain: demoWith({ close: {} }) }, 'forks');
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [], _meta: { [AGENT_META_KEY]: 'plain' } })) as { sessionId: string };
    const refused = await errorOf(editor.request('session/fork', { sessionId, cwd: '/work', mcpServers: [] }));
    expect(refused.code).to.equal(-32601);
    expect(refused.message).to.contain('agent plain cannot fork');
    expect(journal.listSessions().sessions.map((session) => session.sessionId)).to.deep.equal([sessionId]);
  });

  it('session/delete of a live session on an agent that cannot delete: closed there, gone from the journal and the list', async () => {
    const editor = await editorFor({ demo: demoWith({ list: {}, close: {} }) }, 'demo');
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(await editor.request('session/delete', { sessionId })).to.deep.equal({});
    expect(journal.getSession(sessionId)).to.equal(undefined);
    expect(journal.entries(sessionId)).to.deep.equal([]);
    // The journal no longer lists it. The agent was asked to close, not delete (it cannot), and
    // still keeps and lists its session: the host shows that one as the agent's, with no journal state.
    const listed = (await editor.request('session/list', {})) as { sessions: Array<{ sessionId: string; _meta?: Record<string, unknown> }> };
    expect(listed.sessions.map((entry) => [entry.sessionId, entry._meta?.[AGENT_META_KEY], entry._meta?.['acp-warden/state']])).to.deep.equal([[sessionId, 'demo', undefined]]);
    const refused = await errorOf(editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] }));
    expect(refused.code).to.equal(-32002);
  });

  it('an agent\'s own notice is journaled as a notice (not conversation), and a replay gives it back as a notice', async () => {
    // An agent that, like the Claude and Codex adapters when the old conversation is gone, says so with a notice.
    const noticing: NativeAgent = {
      agentInfo: { name: 'noticing', version: '1' },
      capabilities: { loadSession: true },
      logic: createMachine({
        on: {
          'session.new': {
            actions: enqueueActions(({ event, enqueue }) => {
              const { requestId } = event as unknown as { requestId: string };
              enqueue.emit({ type: 'acp.respond', requestId, result: { sessionId: 'noticing-1' } } as never);
              enqueue.emit({ type: 'acp.update', sessionId: 'noticing-1', update: { sessionUpdate: 'notice', severity: 'warning', title: 'started a new conversation', description: 'the old one is gone' } } as never);
            }),
          },
          'session.load': { actions: emit(({ event }) => ({ type: 'acp.respond', requestId: (event as unknown as { requestId: string }).requestId, result: {} }) as never) },
        },
      }),
    };
    const plain = await editorFor({ noticing }, 'noticing');
    await plain.request('session/new', { cwd: '/work', mcpServers: [] });
    await waitFor(() => plain.updates.length > 0);
    expect(journal.entries('noticing-1').map((record) => record.entry)).to.deep.equal([
      { kind: 'notice', severity: 'warning', title: 'started a new conversation', description: 'the old one is gone' },
    ]);
    const capable = await initialized(createHostAgent({ defaultAgent: 'noticing', resolve: () => noticing, journal }), { session: { notices: {} } });
    editors.push(capable);
    await capable.request('session/load', { sessionId: 'noticing-1', cwd: '/work', mcpServers: [] });
    expect(capable.updates.map((entry) => entry.update)).to.deep.equal([
      { sessionUpdate: 'notice', severity: 'warning', title: 'started a new conversation', description: 'the old one is gone' },
    ]);
  });
});
