/**
 * Prompts that wait while a new agent process gets the user's choices: the host agent in front
 * of an in-process agent whose process "restarts" when the editor says so (an extension
 * notification), driven by a raw editor. The agent forgets its mode on each restart, as a new
 * process does, and says the mode it runs in with each answer; the order of the answers
 * (each request goes through the same actors in turn) shows what reached it when.
 */
import { expect } from 'chai';
import { assign, createMachine, enqueueActions } from 'xstate';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { createHostAgent } from '../../src/host/host-agent.js';
import type { Journal, JournalEntry } from '../../src/journal/journal.js';
import { asyncJournalOf } from '../../src/journal/async-journal-of.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { errorOf, initialized, type Editor } from '../support/raw-editor.js';

const modes = { currentModeId: 'ask', availableModes: [{ id: 'ask', name: 'Ask' }, { id: 'plan', name: 'Plan' }] };
type Request = { requestId: string; params: Record<string, unknown> };

/**
 * An agent with modes `ask` (its default) and `plan`; `_test/restart` (with `noPlan`: the new
 * process refuses `plan`), `_test/back` and `_test/fail` are its process ending, coming back, and its supervisor giving up.
 */
function restartingAgent(onSetMode: (modeId: unknown) => void = () => undefined): NativeAgent {
  return {
    agentInfo: { name: 'restarting', version: '1' },
    capabilities: { sessionCapabilities: { close: {} } },
    extensions: { notifications: ['_test/restart', '_test/back', '_test/fail'] },
    logic: createMachine({
      types: {} as { context: { mode: string; restarts: number; prompts: number; noPlan: boolean } },
      context: { mode: 'ask', restarts: 0, prompts: 0, noPlan: false },
      on: {
        'session.new': { actions: enqueueActions(({ event, enqueue }) => enqueue.emit({ type: 'acp.respond', requestId: (event as unknown as Request).requestId, result: { sessionId: 'r-1', modes } } as never)) },
        'session.setMode': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const { requestId, params } = event as unknown as Request;
            onSetMode(params.modeId);
            if (!modes.availableModes.some((mode) => mode.id === params.modeId) || (context.noPlan && params.modeId === 'plan')) {
              enqueue.emit({ type: 'acp.error', requestId, error: { code: -32602, message: `unknown mode ${String(params.modeId)}` } } as never);
              return;
            }
            enqueue.assign({ mode: params.modeId as string });
            enqueue.emit({ type: 'acp.update', sessionId: 'r-1', update: { sessionUpdate: 'current_mode_update', currentModeId: params.modeId } } as never);
            enqueue.emit({ type: 'acp.respond', requestId, result: {} } as never);
          }),
        },
        'session.prompt': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const { requestId } = event as unknown as Request;
            enqueue.assign({ prompts: context.prompts + 1 });
            enqueue.emit({ type: 'acp.update', sessionId: 'r-1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `[${context.mode}]` } } } as never);
            enqueue.emit({ type: 'acp.respond', requestId, result: { stopReason: 'end_turn' } } as never);
          }),
        },
        'session.close': { actions: enqueueActions(({ event, enqueue }) => enqueue.emit({ type: 'acp.respond', requestId: (event as unknown as Request).requestId, result: {} } as never)) },
        'ext.notification': {
          actions: enqueueActions(({ context, event, enqueue }) => {
            const { method, params } = event as unknown as { method: string; params?: { noPlan?: boolean } };
            if (method === '_test/restart') {
              // A new process: its own default mode (a new version may have no mode plan).
              enqueue.assign({ mode: 'ask', restarts: context.restarts + 1, noPlan: params?.noPlan === true });
              enqueue.emit({ type: 'session.restarting', sessionId: 'r-1', restarts: context.restarts, exit: { reason: { kind: 'signaled', signal: 'SIGKILL' } } } as never);
            } else if (method === '_test/back') {
              enqueue.emit({ type: 'session.recovered', sessionId: 'r-1', restarts: context.restarts } as never);
            } else if (method === '_test/fail') {
              enqueue.emit({ type: 'session.failed', sessionId: 'r-1', restarts: context.restarts, reason: 'kept failing' } as never);
            }
          }),
        },
        'session.cancel': { actions: assign({}) },
      },
    }),
  } as NativeAgent;
}

describe('held prompts: a new agent process gets the user\'s mode before the next prompt', () => {
  let journal: Journal;
  const editors: Editor[] = [];

  async function session(): Promise<Editor> {
    const editor = await initialized(createHostAgent({ defaultAgent: 'restarting', resolve: () => restartingAgent(), journal }));
    editors.push(editor);
    expect(await editor.request('session/new', { cwd: '/w', mcpServers: [] })).to.deep.include({ sessionId: 'r-1' });
    await editor.request('session/set_mode', { sessionId: 'r-1', modeId: 'plan' });
    editor.notify('_test/restart');
    return editor;
  }
  const said = (editor: Editor) => editor.updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => (entry.update.content as { text: string }).text).filter((text) => text.startsWith('['));
  const settledOrNot = (promise: Promise<unknown>) => {
    const state = { settled: false };
    void promise.then(() => (state.settled = true), () => (state.settled = true));
    return state;
  };

  beforeEach(() => {
    journal = sqliteJournal(':memory:');
  });
  afterEach(() => {
    for (const editor of editors.splice(0)) editor.server.stop();
    journal.close();
  });

  it('a prompt during the restart waits (a later request is answered first), then runs in the re-applied mode; the journal has it in order', async () => {
    const editor = await session();
    const prompt = editor.request('session/prompt', { sessionId: 'r-1', prompt: [{ type: 'text', text: 'go' }] });
    const held = settledOrNot(prompt);
    await editor.request('session/list', {});
    expect(held.settled, 'the prompt waits while the agent restarts').to.equal(false);
    editor.notify('_test/back');
    expect(await prompt).to.deep.equal({ stopReason: 'end_turn' });
    expect(said(editor)).to.deep.equal(['[plan]']);
    const kinds = journal.entries('r-1').map((record) => record.entry.kind);
    expect(kinds.filter((kind) => kind === 'mode')).to.have.length(1);
    expect(kinds.slice(kinds.indexOf('prompt'))).to.include.ordered.members(['prompt', 'recovered']);
    expect(kinds.at(-1)).to.equal('stop');
  });

  it('session/cancel of a held prompt ends it cancelled; the agent never gets it', async () => {
    const editor = await session();
    const prompt = editor.request('session/prompt', { sessionId: 'r-1', prompt: [{ type: 'text', text: 'go' }] });
    await editor.request('session/list', {});
    editor.notify('session/cancel', { sessionId: 'r-1' });
    expect(await prompt).to.deep.equal({ stopReason: 'cancelled' });
    editor.notify('_test/back');
    expect(await editor.request('session/prompt', { sessionId: 'r-1', prompt: [{ type: 'text', text: 'again' }] })).to.deep.equal({ stopReason: 'end_turn' });
    expect(said(editor)).to.deep.equal(['[plan]']);
  });

  it('session/close while a prompt is held ends it cancelled; the agent never gets it', async () => {
    const editor = await session();
    const prompt = editor.request('session/prompt', { sessionId: 'r-1', prompt: [{ type: 'text', text: 'go' }] });
    await editor.request('session/list', {});
    expect(await editor.request('session/close', { sessionId: 'r-1' })).to.deep.equal({});
    expect(await prompt).to.deep.equal({ stopReason: 'cancelled' });
    expect(said(editor)).to.deep.equal([]);
    expect(journal.getSession('r-1')?.state).to.equal('closed');
  });

  it('the session failing while a prompt is held fails that prompt with session_failed', async () => {
    const editor = await session();
    const prompt = editor.request('session/prompt', { sessionId: 'r-1', prompt: [{ type: 'text', text: 'go' }] });
    await editor.request('session/list', {});
    editor.notify('_test/fail');
    const error = await errorOf(prompt);
    expect(error.code).to.equal(-32603);
    expect((error.data as { reason?: string }).reason).to.equal('session_failed');
    expect(said(editor)).to.deep.equal([]);
  });

  it('a prompt held during the restart whose entry is written only after the re-apply ended (a journal that answers later) still runs, in the re-applied mode', async () => {
    // The race met on a delayed journal (issue 28): the release of held prompts came while the
    // prompt's entry was on its way; the prompt, held once written, waited for a release that never came.
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const store = asyncJournalOf(journal);
    const gated = { ...store, append: async (sessionId: string, entry: JournalEntry) => (entry.kind === 'prompt' ? gate.then(() => store.append(sessionId, entry)) : store.append(sessionId, entry)) };
    let modesSet = 0;
    const editor = await initialized(createHostAgent({ defaultAgent: 'restarting', resolve: () => restartingAgent(() => modesSet++), journal: gated }));
    editors.push(editor);
    await editor.request('session/new', { cwd: '/w', mcpServers: [] });
    await editor.request('session/set_mode', { sessionId: 'r-1', modeId: 'plan' });
    editor.notify('_test/restart');
    const prompt = editor.request('session/prompt', { sessionId: 'r-1', prompt: [{ type: 'text', text: 'go' }] });
    const held = settledOrNot(prompt);
    await editor.request('session/list', {});
    editor.notify('_test/back');
    // The new process was given mode plan again and answered: the re-apply ended (its output waits behind the prompt's entry).
    for (let turns = 0; turns < 200 && modesSet < 2; turns++) await new Promise((resolve) => setImmediate(resolve));
    expect(modesSet, 'the re-apply asked the new process for mode plan').to.equal(2);
    for (let turns = 0; turns < 20; turns++) await new Promise((resolve) => setImmediate(resolve));
    expect(held.settled).to.equal(false);
    openGate();
    expect(await prompt).to.deep.equal({ stopReason: 'end_turn' });
    expect(said(editor)).to.deep.equal(['[plan]']);
  });

  it('a mode the new process refuses: a notice names it, and the held prompt runs in the agent\'s own mode (no hang)', async () => {
    const editor = await initialized(createHostAgent({ defaultAgent: 'restarting', resolve: () => restartingAgent(), journal }));
    editors.push(editor);
    await editor.request('session/new', { cwd: '/w', mcpServers: [] });
    await editor.request('session/set_mode', { sessionId: 'r-1', modeId: 'plan' });
    editor.notify('_test/restart', { noPlan: true });
    const prompt = editor.request('session/prompt', { sessionId: 'r-1', prompt: [{ type: 'text', text: 'go' }] });
    editor.notify('_test/back');
    expect(await prompt).to.deep.equal({ stopReason: 'end_turn' });
    expect(said(editor)).to.deep.equal(['[ask]']);
    const notices = editor.updates.map((entry) => JSON.stringify(entry.update)).filter((text) => text.includes('did not take mode plan again'));
    expect(notices).to.have.length(1);
    // The choice stays on record: a later process is asked again.
    expect(journal.entries('r-1').filter((record) => record.entry.kind === 'mode').map((record) => record.entry)).to.deep.equal([{ kind: 'mode', modeId: 'plan' }]);
  });
});
