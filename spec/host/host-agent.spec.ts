/**
 * The host agent in front of the in-process demo agent, driven by a raw editor: the journal
 * records before the editor hears, session/list and session/load work from the journal, a
 * second host on the same journal (a restarted warden) lists, replays and resumes.
 */
import { expect } from 'chai';
import { createMachine, emit, enqueueActions, type AnyActorRef } from 'xstate';
import { handlerOf } from '../../src/acp/agent-server.js';
import { demoAgent } from '../../src/acp/demo-agent.js';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { AGENT_META_KEY, createHostAgent, sessionMachinesOf, type HostSessionEvent } from '../../src/host/host-agent.js';
import type { Journal } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { errorOf, initialized, start, type Editor } from '../support/raw-editor.js';

const textOf = (editor: Editor, sessionUpdate: string) =>
  editor.updates.filter((entry) => entry.update.sessionUpdate === sessionUpdate).map((entry) => (entry.update.content as { text: string }).text).join('');

describe('host agent', () => {
  let journal: Journal;
  const editors: Editor[] = [];

  function host(resolve: (name: string) => NativeAgent = () => demoAgent({ wordDelayMs: 1 }), events?: HostSessionEvent[]) {
    return createHostAgent({ defaultAgent: 'demo', resolve, journal, ...(events ? { onEvent: (event) => events.push(event) } : {}) });
  }

  async function editorFor(agent: NativeAgent, capabilities: Record<string, unknown> = {}) {
    const editor = await initialized(agent, capabilities);
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

  it('advertises load, list, resume and close whatever the agent behind advertises', async () => {
    const editor = start(host());
    const result = (await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} })) as { agentCapabilities: { loadSession: boolean; sessionCapabilities: Record<string, unknown> } };
    editors.push(editor);
    expect(result.agentCapabilities.loadSession).to.equal(true);
    expect(result.agentCapabilities.sessionCapabilities).to.include.keys('list', 'resume', 'close');
  });

  it('journals the prompt, every update and the stop reason, in the order the editor saw them', async () => {
    const editor = await editorFor(host());
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const entries = journal.entries(sessionId).map((record) => record.entry);
    // (the agent's available commands came right after session/new, before the prompt)
    // Each turn entry names the request it belongs to (the key the host got the prompt under).
    const prompted = entries.find((entry) => entry.kind === 'prompt') as { requestId?: unknown } | undefined;
    expect(prompted?.requestId).to.be.a('string');
    expect(prompted).to.deep.equal({ kind: 'prompt', prompt: [{ type: 'text', text: 'hello' }], requestId: prompted?.requestId });
    expect(entries.at(-1)).to.deep.equal({ kind: 'stop', stopReason: 'end_turn', requestId: prompted?.requestId });
    const journaledUpdates = entries.filter((entry) => entry.kind === 'update').map((entry) => (entry as { update: unknown }).update);
    expect(journaledUpdates).to.deep.equal(editor.updates.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update));
    expect(journal.getSession(sessionId)).to.include({ agent: 'demo', cwd: '/work', title: 'hello', state: 'open' });
  });

  it('group commit: a burst of updates is one journal transaction, and no update reaches the editor before its commit', async () => {
    // An agent that streams 50 updates in one go, as a CLI's buffered output arrives.
    const flood: NativeAgent = {
      agentInfo: { name: 'flood', version: '1' },
      logic: createMachine({
        on: {
          'session.new': { actions: emit(({ event }) => ({ type: 'acp.respond', requestId: (event as unknown as { requestId: string }).requestId, result: { sessionId: 'flood-1' } }) as never) },
          'session.prompt': {
            actions: enqueueActions(({ event, enqueue }) => {
              const { requestId } = event as unknown as { requestId: string };
              for (let index = 0; index < 50; index++) enqueue.emit({ type: 'acp.update', sessionId: 'flood-1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `word ${index} ` } } } as never);
              enqueue.emit({ type: 'acp.respond', requestId, result: { stopReason: 'end_turn' } } as never);
            }),
          },
        },
      }),
    };
    const inner = sqliteJournal(':memory:');
    let open = false;
    let uncommitted = 0;
    let commits = 0;
    const logged: Journal = {
      ...inner,
      append: (sessionId, entry) => {
        if (open) uncommitted++;
        return inner.append(sessionId, entry);
      },
      begin: () => {
        open = true;
        inner.begin?.();
      },
      commit: () => {
        commits++;
        inner.commit?.();
        open = false;
        uncommitted = 0;
      },
    };
    const editor = start(createHostAgent({ defaultAgent: 'flood', resolve: () => flood, journal: logged }));
    editors.push(editor);
    await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    const shownUncommitted: number[] = [];
    (handlerOf(editor.server) as AnyActorRef).on('acp.update', () => shownUncommitted.push(uncommitted));
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    const before = commits;
    expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })).to.deep.equal({ stopReason: 'end_turn' });
    expect(shownUncommitted).to.have.length(50);
    expect(shownUncommitted.every((count) => count === 0), 'every update shown after its commit').to.equal(true);
    expect(commits - before, 'one commit for the burst').to.equal(1);
    const journaled = inner.entries(sessionId).filter((record) => record.entry.kind === 'update');
    expect(journaled).to.have.length(50);
    expect(editor.updates.filter((entry) => entry.sessionId === sessionId).map((entry) => (entry.update as unknown as { content: { text: string } }).content.text)).to.deep.equal(journaled.map((record) => (record.entry as { update: { content: { text: string } } }).update.content.text));
    inner.close();
  });

  it('what an agent still says about a session the editor closed is dropped, not shown unjournaled (found by the chaos walk)', async () => {
    const late: NativeAgent = {
      agentInfo: { name: 'late', version: '1' },
      capabilities: { sessionCapabilities: { close: {} } } as never,
      logic: createMachine({
        on: {
          'session.new': { actions: emit(({ event }) => ({ type: 'acp.respond', requestId: (event as unknown as { requestId: string }).requestId, result: { sessionId: 'late-1' } }) as never) },
          'session.close': {
            actions: enqueueActions(({ event, enqueue }) => {
              enqueue.emit({ type: 'acp.respond', requestId: (event as unknown as { requestId: string }).requestId, result: {} } as never);
              // The turn it was winding down still produces output.
              enqueue.emit({ type: 'acp.update', sessionId: 'late-1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'too late' } } } as never);
            }),
          },
        },
      }),
    };
    const editor = await editorFor(host(() => late));
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    await editor.request('session/close', { sessionId });
    // A negative check (the late update never shows): the wait is its point. No later answer can
    // stand for it: the host delivers updates on a later turn of the event loop (setImmediate).
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(editor.updates.filter((entry) => entry.sessionId === sessionId).map((entry) => JSON.stringify(entry.update))).to.deep.equal([]);
    expect(journal.entries(sessionId).map((record) => record.entry.kind)).to.deep.equal(['closed']);
  });

  it('group commit: a commit that fails is a journal error for the group; its updates are never shown (the editor gets one notice saying so), until the journal takes them again (issue 28)', async () => {
    const events: HostSessionEvent[] = [];
    const inner = sqliteJournal(':memory:');
    let full = true;
    const failing: Journal = { ...inner, begin: () => inner.begin?.(), commit: () => {
      inner.commit?.();
      if (full) throw new Error('disk full (simulated)');
    } };
    const editor = start(createHostAgent({ defaultAgent: 'demo', resolve: () => demoAgent({ wordDelayMs: 0 }), journal: failing, onEvent: (event) => events.push(event) }));
    editors.push(editor);
    await editor.request('initialize', { protocolVersion: 1, clientCapabilities: { session: { notices: {} } } });
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi there you' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const ofSession = () => editor.updates.filter((entry) => entry.sessionId === sessionId);
    const failures = events.filter((event) => event.type === 'journal.error').map((event) => (event as { message: string }).message);
    expect(failures.filter((message) => message === 'disk full (simulated)').length, 'a journal error per refused group').to.be.greaterThan(1);
    expect(ofSession().filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'nothing the journal refused').to.deep.equal([]);
    const notices = ofSession().filter((entry) => entry.update.sessionUpdate === 'notice');
    expect(notices.map((entry) => entry.update.title), 'told once, however many groups failed').to.deep.equal(['updates lost: the journal failed']);
    expect(notices[0]?.update.description).to.contain('disk full (simulated)');
    // The journal takes updates again: they are shown (with their seq), and a next failure is told again.
    full = false;
    expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const shown = ofSession().filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk') as Array<{ _meta?: Record<string, unknown> }>;
    expect(shown.length).to.be.greaterThan(0);
    expect(shown.every((entry) => typeof entry._meta?.['acp-warden/seq'] === 'number')).to.equal(true);
    full = true;
    expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and again' }] })).to.deep.equal({ stopReason: 'end_turn' });
    expect(ofSession().filter((entry) => entry.update.sessionUpdate === 'notice').length).to.equal(2);
    inner.close();
  });

  it('lists sessions from the journal, filtered by cwd, with the agent in _meta', async () => {
    const editor = await editorFor(host());
    const a = (await editor.request('session/new', { cwd: '/a', mcpServers: [] })) as { sessionId: string };
    await editor.request('session/new', { cwd: '/b', mcpServers: [] });
    await editor.request('session/prompt', { sessionId: a.sessionId, prompt: [{ type: 'text', text: 'title of a' }] });
    const all = (await editor.request('session/list', {})) as { sessions: Array<{ sessionId: string; cwd: string; title: string | null; _meta: Record<string, unknown> }> };
    expect(all.sessions.map((session) => session.cwd).sort()).to.deep.equal(['/a', '/b']);
    const onlyA = (await editor.request('session/list', { cwd: '/a' })) as typeof all;
    expect(onlyA.sessions).to.have.length(1);
    expect(onlyA.sessions[0]).to.deep.include({ sessionId: a.sessionId, title: 'title of a' });
    expect(onlyA.sessions[0]?._meta[AGENT_META_KEY]).to.equal('demo');
    const bad = await errorOf(editor.request('session/list', { cursor: 'not-ours' }));
    expect(bad.code).to.equal(-32602);
  });

  it('a restarted host lists the session, load replays the journal before answering, and the next prompt works', async () => {
    const first = await editorFor(host());
    const { sessionId } = (await first.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    await first.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember me' }] });
    const said = textOf(first, 'agent_message_chunk');
    first.server.stop(); // the first host is gone; the journal stays

    const events: HostSessionEvent[] = [];
    const second = await editorFor(host(undefined, events));
    const listed = (await second.request('session/list', {})) as { sessions: Array<{ sessionId: string }> };
    expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([sessionId]);
    await second.request('session/load', { sessionId, cwd: '/work', mcpServers: [] });
    // Replayed before the answer: the user's prompt, then what the agent said.
    expect(textOf(second, 'user_message_chunk')).to.equal('remember me');
    expect(textOf(second, 'agent_message_chunk')).to.equal(said);
    expect(events).to.deep.include({ type: 'session.opened', sessionId, agent: 'demo', how: 'load' });
    expect(await second.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const kinds = journal.entries(sessionId).map((record) => record.entry.kind);
    expect(kinds.filter((kind) => kind === 'prompt')).to.have.length(2);
    expect(kinds).to.include('attached');
  });

  it('a turn a previous host left open (killed mid-turn: prompt journaled, no end) is ended in the journal (shutdown) when the session is restored, once', async () => {
    const first = await editorFor(host());
    const { sessionId } = (await first.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    expect(await first.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'ended' }] })).to.deep.equal({ stopReason: 'end_turn' });
    // What a host killed during its next turn leaves: the prompt on record, no stop or error.
    journal.append(sessionId, { kind: 'prompt', prompt: [{ type: 'text', text: 'cut' }] });
    first.server.stop();
    const ends = () => journal.entries(sessionId).filter((record) => record.entry.kind === 'stop' || record.entry.kind === 'error').map((record) => record.entry);

    const second = await editorFor(host());
    await second.request('session/resume', { sessionId, cwd: '/work', mcpServers: [] });
    const [ended, cut, ...more] = ends();
    expect(ended).to.deep.include({ kind: 'stop', stopReason: 'end_turn' });
    expect(cut?.kind).to.equal('error');
    expect((cut as { error: { code: number; data: { reason: string } } }).error).to.deep.include({ code: -32603 });
    expect((cut as { error: { data: { reason: string } } }).error.data.reason).to.equal('shutdown');
    expect(more).to.deep.equal([]);
    second.server.stop();

    const third = await editorFor(host());
    await third.request('session/load', { sessionId, cwd: '/work', mcpServers: [] });
    expect(ends(), 'a turn is ended once').to.have.length(2);
  });

  it('session/load of a session the journal does not know is -32002', async () => {
    const editor = await editorFor(host());
    const error = await errorOf(editor.request('session/load', { sessionId: 'nope', cwd: '/w', mcpServers: [] }));
    expect(error.code).to.equal(-32002);
  });

  it('runs each session on the agent its session/new names, and refuses an unknown agent with -32602', async () => {
    const resolve = (name: string): NativeAgent => {
      if (name === 'demo' || name === 'other') return demoAgent({ wordDelayMs: 1 });
      throw new Error(`unknown agent ${name}`);
    };
    const editor = await editorFor(host(resolve));
    const { sessionId } = (await editor.request('session/new', { cwd: '/w', mcpServers: [], _meta: { [AGENT_META_KEY]: 'other' } })) as { sessionId: string };
    expect(journal.getSession(sessionId)?.agent).to.equal('other');
    const refused = await errorOf(editor.request('session/new', { cwd: '/w', mcpServers: [], _meta: { [AGENT_META_KEY]: 'missing' } }));
    expect(refused.code).to.equal(-32602);
    expect(refused.message).to.contain('missing');
  });

  it('keeps a state chart per session: ready, prompting, ready; closed after session/close', async () => {
    const events: HostSessionEvent[] = [];
    const editor = await editorFor(host(undefined, events));
    const { sessionId } = (await editor.request('session/new', { cwd: '/w', mcpServers: [] })) as { sessionId: string };
    const machine = sessionMachinesOf(handlerOf(editor.server) as AnyActorRef).get(sessionId);
    expect(machine?.getSnapshot().value).to.equal('ready');
    await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
    expect(events.filter((event) => event.type === 'session.state').map((event) => (event as { state: string }).state)).to.deep.equal(['starting', 'ready', 'prompting', 'ready']);
    await editor.request('session/close', { sessionId });
    expect(machine?.getSnapshot().value).to.equal('closed');
    expect(journal.getSession(sessionId)?.state).to.equal('closed');
  });
});
