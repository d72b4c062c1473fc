/**
 * The ACP agent side, driven by our own JSON-RPC connection playing the editor, over an
 * in-memory pair. Every result the server sends is checked against the ACP schema.
 */
import { expect } from 'chai';
import { waitUntil } from '../support/processes.js';
import { createActor, enqueueActions, fromCallback, setup, SimulatedClock, type AnyActorLogic } from 'xstate';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { demoAgent } from '../../src/acp/demo-agent.js';
import type { AgentHandlerEvent, AgentHandlerOutput, NativeAgent } from '../../src/protocol/native-agent.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/index.js';
import { errorOf, initialized, start } from '../support/raw-editor.js';
import { schemaOf } from '../../src/acp/schemas.js';

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Session `s1` made, a prompt sent and cancelled by the editor: the prompt ends `cancelled`. */
async function cancelledPrompt(editor: Awaited<ReturnType<typeof initialized>>): Promise<void> {
  await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
  const prompt = editor.request('session/prompt', { sessionId: 's1', prompt: [] });
  await settle();
  editor.notify('session/cancel', { sessionId: 's1' });
  expect(await prompt).to.deep.equal({ stopReason: 'cancelled' });
}

/** A handler machine built from a table of event type → what to emit, for targeted tests. */
/** A script step: `session/new` opens session `s1`. */
const opensS1 = {
  'session.new': (event: AgentHandlerEvent): AgentHandlerOutput[] => [{ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { sessionId: 's1' } }],
};

function scriptedAgent(script: Partial<Record<AgentHandlerEvent['type'], (event: AgentHandlerEvent) => AgentHandlerOutput[]>>, extra: Partial<NativeAgent> = {}): NativeAgent {
  const on: Record<string, unknown> = {};
  for (const [type, outputs] of Object.entries(script)) {
    on[type] = {
      actions: enqueueActions(({ event, enqueue }: { event: AgentHandlerEvent; enqueue: { emit: (output: AgentHandlerOutput) => void } }) => {
        for (const output of (outputs as (event: AgentHandlerEvent) => AgentHandlerOutput[])(event)) enqueue.emit(output);
      }),
    };
  }
  const logic = setup({ types: {} as { events: AgentHandlerEvent; emitted: AgentHandlerOutput } }).createMachine({ on: on as never });
  return { logic: logic as AnyActorLogic, agentInfo: { name: 'scripted', version: '0' }, ...extra };
}

describe('ACP agent server', () => {
  describe('initialize', () => {
    it('must come first: anything else is -32600', async () => {
      const editor = start(demoAgent());
      const error = await errorOf(editor.request('session/new', { cwd: '/tmp', mcpServers: [] }));
      expect(error.code).to.equal(-32600);
      expect(error.message).to.contain("must be initialized before 'session/new'");
    });

    it('before initialize, even invalid params get -32600 (as the SDK answers)', async () => {
      const editor = start(demoAgent());
      expect((await errorOf(editor.request('session/new', { cwd: 5 }))).code).to.equal(-32600);
    });

    it('negotiates the version: the requested one when supported, else the newest it speaks', async () => {
      const editor = start({ ...demoAgent(), protocolVersions: [1] });
      expect(await editor.request('initialize', { protocolVersion: 1 })).to.include({ protocolVersion: 1 });
      expect(await editor.request('initialize', { protocolVersion: 7 })).to.include({ protocolVersion: 1 });
    });

    it('advertises the agent and hides terminal auth methods from clients that cannot run them', async () => {
      const agent = { ...demoAgent(), authMethods: [{ id: 'key', name: 'API key' }, { type: 'terminal', id: 'login', name: 'Log in' } as never] };
      const plain = start(agent);
      const result = (await plain.request('initialize', { protocolVersion: 1 })) as { authMethods: Array<{ id: string }>; agentInfo: { name: string } };
      expect(result.authMethods.map((method) => method.id)).to.deep.equal(['key']);
      expect(result.agentInfo.name).to.equal('acp-warden-demo');
      const terminal = start(agent);
      const withTerminal = (await terminal.request('initialize', { protocolVersion: 1, clientCapabilities: { auth: { terminal: true } } })) as { authMethods: unknown[] };
      expect(withTerminal.authMethods).to.have.length(2);
    });
  });

  describe('capability gating', () => {
    it('answers -32601 for optional methods the agent did not advertise', async () => {
      const editor = await initialized({ ...demoAgent(), capabilities: {} });
      for (const [method, params] of [
        ['session/load', { sessionId: 'x', cwd: '/tmp', mcpServers: [] }],
        ['session/list', {}],
        ['session/resume', { sessionId: 'x', cwd: '/tmp' }],
        ['session/close', { sessionId: 'x' }],
        ['session/delete', { sessionId: 'x' }],
        ['logout', {}],
        ['authenticate', { methodId: 'x' }],
        ['_vendor/thing', {}],
      ] as const) {
        expect((await errorOf(editor.request(method, params))).code, method).to.equal(-32601);
      }
    });

    it('refuses prompt content, MCP transports and directories the agent cannot take (-32602)', async () => {
      const editor = await initialized(demoAgent({ wordDelayMs: 1 }));
      const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
      const image = await errorOf(editor.request('session/prompt', { sessionId, prompt: [{ type: 'image', data: 'AA==', mimeType: 'image/png' }] }));
      expect(image.code).to.equal(-32602);
      const http = await errorOf(editor.request('session/new', { cwd: '/tmp', mcpServers: [{ type: 'http', name: 'x', url: 'http://127.0.0.1:1', headers: [] }] }));
      expect(http.code).to.equal(-32602);
      const directories = await errorOf(editor.request('session/new', { cwd: '/tmp', mcpServers: [], additionalDirectories: ['/var'] }));
      expect(directories.code).to.equal(-32602);
      expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'resource', resource: { uri: 'file:///a', text: 'x' } }] })).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('answers -32002 with the session id for an unknown session, -32602 for invalid params', async () => {
      const editor = await initialized(demoAgent());
      const unknown = await errorOf(editor.request('session/prompt', { sessionId: 'nope', prompt: [] }));
      expect(unknown.code).to.equal(-32002);
      expect(unknown.data).to.deep.equal({ sessionId: 'nope' });
      const invalid = await errorOf(editor.request('session/prompt', { sessionId: 'nope', prompt: 'text' }));
      expect(invalid.code).to.equal(-32602);
      expect(invalid.message).to.contain('prompt');
    });

    it("refuses the agent's requests the client did not advertise, without asking the client", async () => {
      const agent = scriptedAgent({
        ...opensS1,
        'session.prompt': () => [{ type: 'acp.clientRequest', key: 'read', method: 'fs/read_text_file', params: { sessionId: 's1', path: '/etc/hostname' } }],
        'client.error': (event) => [{ type: 'acp.respond', requestId: 'r2', result: { stopReason: 'end_turn', _meta: { error: (event as { error: { code: number } }).error.code } } }],
      });
      const editor = await initialized(agent, { fs: { readTextFile: false } });
      await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
      const result = (await editor.request('session/prompt', { sessionId: 's1', prompt: [] })) as { _meta: { error: number } };
      expect(result._meta.error).to.equal(-32601);
      expect(editor.clientRequests).to.have.length(0);
    });
  });

  describe('prompts and cancel', () => {
    it('streams updates before the answer; a second prompt waits its turn (FIFO) and runs after the first', async () => {
      const editor = await initialized(demoAgent({ wordDelayMs: 1 }));
      const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
      const order: string[] = [];
      const first = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] }).then((result) => {
        order.push('first');
        return result;
      });
      const second = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'again' }] }).then((result) => {
        order.push('second');
        return result;
      });
      expect(await first).to.deep.equal({ stopReason: 'end_turn' });
      expect(await second).to.deep.equal({ stopReason: 'end_turn' });
      expect(order).to.deep.equal(['first', 'second']);
      const text = editor.updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => (entry.update.content as { text: string }).text).join('');
      // Not interleaved: the whole first answer, then the whole second.
      expect(text).to.equal('You said: hello. This is the acp-warden demo agent, answering word by word.You said: again. This is the acp-warden demo agent, answering word by word.');
    });

    it('session/cancel ends the running prompt and every waiting one "cancelled"; the next prompt works', async () => {
      const editor = await initialized(demoAgent({ wordDelayMs: 20 }));
      const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
      const prompts = ['one', 'two', 'three'].map((text) => editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `a long answer ${text}` }] }));
      await waitUntil(() => editor.updates.some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the first chunk');
      editor.notify('session/cancel', { sessionId });
      expect(await Promise.all(prompts)).to.deep.equal([{ stopReason: 'cancelled' }, { stopReason: 'cancelled' }, { stopReason: 'cancelled' }]);
      const text = editor.updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => (entry.update.content as { text: string }).text).join('');
      expect(text).not.to.contain('two');
      expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'after' }] })).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('$/cancel_request of a waiting prompt ends only that one; the running one and the others go on', async () => {
      const editor = await initialized(demoAgent({ wordDelayMs: 10 }));
      const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
      // Requests 3, 4 and 5 (initialize was 1, session/new 2).
      const prompts = ['one', 'two', 'three'].map((text) => editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }));
      editor.notify('$/cancel_request', { requestId: 4 });
      expect(await Promise.all(prompts)).to.deep.equal([{ stopReason: 'end_turn' }, { stopReason: 'cancelled' }, { stopReason: 'end_turn' }]);
      const text = editor.updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => (entry.update.content as { text: string }).text).join('');
      expect(text).to.contain('You said: one.').and.contain('You said: three.').and.not.contain('You said: two.');
    });

    it('a running prompt that fails hands the session to the next waiting one', async () => {
      let prompts = 0;
      const agent = scriptedAgent({
        ...opensS1,
        'session.prompt': (event) => {
          const requestId = (event as { requestId: string }).requestId;
          prompts++;
          return prompts === 1
            ? [{ type: 'acp.error', requestId, error: { code: -32603, message: 'the first one breaks' } }]
            : [{ type: 'acp.respond', requestId, result: { stopReason: 'end_turn' } }];
        },
      });
      const editor = await initialized(agent);
      await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
      const first = errorOf(editor.request('session/prompt', { sessionId: 's1', prompt: [] }));
      const second = editor.request('session/prompt', { sessionId: 's1', prompt: [] });
      expect((await first).message).to.contain('the first one breaks');
      expect(await second).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('a cancelled prompt of the demo agent ends "cancelled", nothing follows, and the next prompt works', async () => {
      const editor = await initialized(demoAgent({ wordDelayMs: 20 }));
      const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
      const prompt = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a long answer' }] });
      // Mid-answer: the first words are out.
      await waitUntil(() => editor.updates.some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the first chunk');
      editor.notify('session/cancel', { sessionId });
      expect(await prompt).to.deep.equal({ stopReason: 'cancelled' });
      const count = editor.updates.length;
      // A negative check: nothing may come after the cancelled answer. The wait is its point (5 words' time at 20 ms a word).
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(editor.updates.length).to.equal(count);
      expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'next' }] })).to.deep.equal({ stopReason: 'end_turn' });
    });

    it('a handler without cancel support: the prompt is answered "cancelled" at once (the seed default)', async () => {
      const agent = scriptedAgent({
        ...opensS1,
        'session.prompt': () => [],
      });
      const editor = await initialized(agent);
      await cancelledPrompt(editor);
    });

    it('a handler that ignores the cancel is overruled after the grace period: nothing hangs', async () => {
      const clock = new SimulatedClock();
      const agent = scriptedAgent({
        ...opensS1,
        'session.prompt': () => [],
        'session.cancel': () => [],
      }, { cancelGraceMs: 3000 });
      const editor = await initialized(agent, {}, clock);
      await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
      let outcome: unknown = 'pending';
      void editor.request('session/prompt', { sessionId: 's1', prompt: [] }).then((value) => (outcome = value));
      await settle();
      editor.notify('session/cancel', { sessionId: 's1' });
      await settle();
      clock.increment(2999);
      await settle();
      expect(outcome).to.equal('pending');
      clock.increment(1);
      await settle();
      expect(outcome).to.deep.equal({ stopReason: 'cancelled' });
    });

    it('turn updates the handler sends after its cancelled answer never reach the editor; other updates do', async () => {
      const chunk = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'too late' } } as const;
      const agent = scriptedAgent({
        ...opensS1,
        'session.prompt': () => [],
        'session.cancel': (event) => [
          { type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { stopReason: 'end_turn' } },
          { type: 'acp.update', sessionId: 's1', update: chunk },
          { type: 'acp.update', sessionId: 's1', update: { sessionUpdate: 'session_info_update', title: 'still shown' } },
        ],
      });
      const editor = await initialized(agent);
      await cancelledPrompt(editor);
      await settle();
      expect(editor.updates.map((entry) => entry.update.sessionUpdate)).to.deep.equal(['session_info_update']);
    });

    it('after a cancelled turn, another request to the session ends its quiet: the turn updates the handler sends with its answer reach the editor', async () => {
      const chunk = (text: string) => ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }) as const;
      const modes = { currentModeId: 'ask', availableModes: [{ id: 'ask', name: 'Ask' }, { id: 'code', name: 'Code' }] };
      const agent = scriptedAgent({
        'session.new': (event) => [{ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { sessionId: 's1', modes } }],
        'session.prompt': () => [],
        'session.cancel': (event) => [
          { type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { stopReason: 'end_turn' } },
          { type: 'acp.update', sessionId: 's1', update: chunk('too late') },
        ],
        'session.setMode': (event) => [
          { type: 'acp.update', sessionId: 's1', update: chunk('mode set') },
          { type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: {} },
        ],
      });
      const editor = await initialized(agent);
      await cancelledPrompt(editor);
      expect(await editor.request('session/set_mode', { sessionId: 's1', modeId: 'code' })).to.deep.equal({});
      await settle();
      expect(editor.updates.map((entry) => (entry.update as { content?: { text?: string } }).content?.text)).to.deep.equal(['mode set']);
    });

    it('an error or another stop reason after a cancel becomes stopReason "cancelled"', async () => {
      const agent = scriptedAgent({
        ...opensS1,
        'session.prompt': () => [],
        'session.cancel': (event) => [{ type: 'acp.error', requestId: (event as { requestId: string }).requestId, error: { code: -32603, message: 'aborted' } }],
      });
      const editor = await initialized(agent);
      await cancelledPrompt(editor);
    });
  });

  describe('handler results', () => {
    it('an invalid result is never sent: the editor gets -32603 naming the method', async () => {
      const agent = scriptedAgent({
        'session.new': (event) => [{ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { sessionId: 42 } }],
      });
      const editor = await initialized(agent);
      const error = await errorOf(editor.request('session/new', { cwd: '/tmp', mcpServers: [] }));
      expect(error.code).to.equal(-32603);
      expect(error.message).to.contain('invalid session/new result');
    });

    it('a handler that does not handle session/new gets a generated session id', async () => {
      const editor = await initialized(scriptedAgent({}));
      expect(await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })).to.deep.equal({ sessionId: 'session-1' });
    });

    it('routes declared extension methods to the handler', async () => {
      const agent = scriptedAgent({
        'ext.request': (event) => [{ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { method: (event as { method: string }).method } }],
      }, { extensions: { requests: ['_demo/echo'] } });
      const editor = await initialized(agent);
      expect(await editor.request('_demo/echo', { a: 1 })).to.deep.equal({ method: '_demo/echo' });
    });
  });

  describe('the demo agent through the server', () => {
    it('asks permission for a tool, and the tool result follows the answer', async () => {
      const editor = await initialized(demoAgent({ wordDelayMs: 1 }));
      const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
      const prompt = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run the tool' }] });
      while (editor.clientRequests.length === 0) await settle();
      const ask = editor.clientRequests[0] as { id: string | number; method: string; params: { options: Array<{ optionId: string }> } };
      expect(ask.method).to.equal('session/request_permission');
      editor.answerClient(ask.id, { outcome: { outcome: 'selected', optionId: 'reject' } });
      expect(await prompt).to.deep.equal({ stopReason: 'end_turn' });
      const toolUpdate = editor.updates.find((entry) => entry.update.sessionUpdate === 'tool_call_update');
      expect(toolUpdate?.update.status).to.equal('failed');
    });

    it('load replays the history before answering; list pages; modes and config options change', async () => {
      const editor = await initialized(demoAgent({ wordDelayMs: 1 }));
      const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
      await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember me' }] });
      editor.updates.length = 0;
      await editor.request('session/load', { sessionId, cwd: '/work', mcpServers: [] });
      expect(editor.updates.map((entry) => entry.update.sessionUpdate)).to.deep.equal(['user_message_chunk', 'agent_message_chunk']);
      for (let extra = 0; extra < 10; extra++) await editor.request('session/new', { cwd: '/work', mcpServers: [] });
      const first = (await editor.request('session/list', { cwd: '/work' })) as { sessions: Array<{ sessionId: string }>; nextCursor?: string };
      expect(first.sessions).to.have.length(10);
      expect(first.sessions[0]?.sessionId).to.equal(sessionId);
      const second = (await editor.request('session/list', { cwd: '/work', cursor: first.nextCursor })) as { sessions: unknown[]; nextCursor?: string };
      expect(second.sessions).to.have.length(1);
      expect(second.nextCursor).to.equal(undefined);
      expect((await errorOf(editor.request('session/list', { cursor: 'bogus' }))).code).to.equal(-32602);
      await editor.request('session/set_mode', { sessionId, modeId: 'auto' });
      expect(editor.updates.at(-1)?.update).to.deep.equal({ sessionUpdate: 'current_mode_update', currentModeId: 'auto' });
      const options = (await editor.request('session/set_config_option', { sessionId, configId: 'model', value: 'demo-thorough' })) as { configOptions: Array<{ currentValue: string }> };
      expect(options.configOptions[0]?.currentValue).to.equal('demo-thorough');
      expect((await errorOf(editor.request('session/set_mode', { sessionId, modeId: 'nope' }))).code).to.equal(-32602);
      await editor.request('session/close', { sessionId });
      expect((await errorOf(editor.request('session/prompt', { sessionId, prompt: [] }))).code).to.equal(-32002);
    });
  });

  it('unstable session/fork: served when advertised, -32601 otherwise', async () => {
    const editor = await initialized(demoAgent({ wordDelayMs: 1 }));
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'remember me' }] });
    const fork = (await editor.request('session/fork', { sessionId, cwd: '/work' })) as { sessionId: string };
    expect(fork.sessionId).to.not.equal(sessionId);
    editor.updates.length = 0;
    await editor.request('session/load', { sessionId: fork.sessionId, cwd: '/work', mcpServers: [] });
    expect(editor.updates.map((entry) => entry.update.sessionUpdate)).to.deep.equal(['user_message_chunk', 'agent_message_chunk']);
    const plain = await initialized({ ...demoAgent(), capabilities: { loadSession: true } });
    expect((await errorOf(plain.request('session/fork', { sessionId, cwd: '/work' }))).code).to.equal(-32601);
  });

  it('every session/update it sends conforms to the ACP schema', async () => {
    const editor = await initialized(demoAgent({ wordDelayMs: 1 }));
    const { sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string };
    const run = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'use the tool' }] });
    while (editor.clientRequests.length === 0) await settle();
    editor.answerClient((editor.clientRequests[0] as { id: number }).id, { outcome: { outcome: 'selected', optionId: 'allow' } });
    await run;
    await editor.request('session/set_mode', { sessionId, modeId: 'auto' });
    expect(editor.updates.length).to.be.greaterThan(5);
    for (const notification of editor.updates) {
      const checked = schemaOf('SessionNotification').safeParse(notification);
      expect(checked.success, JSON.stringify(notification)).to.equal(true);
    }
    for (const request of editor.clientRequests) {
      expect(schemaOf('RequestPermissionRequest').safeParse(request.params).success).to.equal(true);
    }
  });

  it('ends when the editor goes away, and stops its handler', async () => {
    let handlerStopped = false;
    const handler = fromCallback(() => () => {
      handlerStopped = true;
    });
    const [editorSide, agentSide] = createMemoryTransportPair();
    const server = createActor(agentServerLogic, { input: { transport: agentSide, agent: { logic: handler, agentInfo: { name: 'h', version: '0' } } } }).start();
    editorSide.close();
    await settle();
    expect(server.getSnapshot().status).to.equal('done');
    expect(handlerStopped).to.equal(true);
  });

  it('a shutdown answers what the editor is still waiting for, instead of leaving it hanging', async () => {
    const agent = scriptedAgent({
      ...opensS1,
      'session.prompt': () => [],
    });
    const editor = await initialized(agent);
    await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
    const prompt = errorOf(editor.request('session/prompt', { sessionId: 's1', prompt: [] }));
    await settle();
    editor.server.send({ type: 'supervisor.shutdown' });
    const error = await prompt;
    expect(error.code).to.equal(-32603);
    expect(error.data).to.deep.include({ reason: 'shutdown' });
  });

  it('a declared extension request without params is served, not a crash', async () => {
    const agent = scriptedAgent({
      'ext.request': (event) => [{ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { params: (event as { params: unknown }).params } }],
    }, { extensions: { requests: ['_x/ping'] } });
    const editor = await initialized(agent);
    expect(await editor.request('_x/ping', undefined)).to.deep.equal({ params: {} });
  });

  it('session/close cancels the running prompt first, then forgets the session', async () => {
    const editor = await initialized(demoAgent({ wordDelayMs: 20 }));
    const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
    const prompt = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'a long answer' }] });
    // Mid-answer: the first words are out.
    await waitUntil(() => editor.updates.some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the first chunk');
    await editor.request('session/close', { sessionId });
    expect(await prompt).to.deep.equal({ stopReason: 'cancelled' });
    expect((await errorOf(editor.request('session/prompt', { sessionId, prompt: [] }))).code).to.equal(-32002);
  });

  it('updates the client did not ask for: notices become agent messages, compaction is dropped, boolean options are left out', async () => {
    const agent = scriptedAgent({
      'session.new': (event) => [
        {
          type: 'acp.respond',
          requestId: (event as { requestId: string }).requestId,
          result: {
            sessionId: 's1',
            configOptions: [
              { id: 'fast', name: 'Fast', type: 'boolean', currentValue: false },
              { id: 'model', name: 'Model', type: 'select', currentValue: 'a', options: [{ value: 'a', name: 'A' }] },
            ],
          },
        },
        { type: 'acp.update', sessionId: 's1', update: { sessionUpdate: 'notice', severity: 'warning', title: 'Agent restarted', description: 'the CLI crashed' } as never },
        { type: 'acp.update', sessionId: 's1', update: { sessionUpdate: 'compaction_update', compactionId: 'c1', status: 'in_progress' } as never },
      ],
    });
    const plain = await initialized(agent);
    const result = (await plain.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { configOptions: Array<{ id: string }> };
    expect(result.configOptions.map((option) => option.id)).to.deep.equal(['model']);
    await settle();
    // Signed by acp-warden, on lines of its own, the notice itself in _meta: not the agent's words.
    const notice = { 'acp-warden/notice': { severity: 'warning', title: 'Agent restarted', description: 'the CLI crashed' } };
    expect(plain.updates.map((entry) => entry.update)).to.deep.equal([
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: '\n\n[acp-warden warning] Agent restarted: the CLI crashed\n\n', _meta: notice }, _meta: notice },
    ]);
    const capable = await initialized(agent, { session: { notices: {}, compaction: {}, configOptions: { boolean: {} } } });
    const full = (await capable.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { configOptions: unknown[] };
    expect(full.configOptions).to.have.length(2);
    await settle();
    expect(capable.updates.map((entry) => entry.update.sessionUpdate)).to.deep.equal(['notice', 'compaction_update']);
  });

  it('a handler that fails: what was pending is answered -32603, then the server ends in error naming it (not done, as when the editor leaves)', async () => {
    const failing = scriptedAgent({
      'session.new': (event) => [{ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { sessionId: 's1' } }],
      'session.prompt': () => {
        throw new Error('the handler broke');
      },
    });
    const editor = await initialized(failing);
    let ended: { error: unknown } | 'done' | undefined;
    editor.server.subscribe({ complete: () => (ended = 'done'), error: (error) => (ended = { error }) });
    await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
    const refused = await errorOf(editor.request('session/prompt', { sessionId: 's1', prompt: [{ type: 'text', text: 'hi' }] }));
    expect(refused.code).to.equal(-32603);
    expect(refused.message).to.contain('the handler broke');
    await waitUntil(() => ended !== undefined, 'the server to end');
    expect(ended).to.not.equal('done');
    expect(String((ended as { error: Error }).error.message)).to.equal('the agent handler failed: the handler broke');
    expect(editor.server.getSnapshot().status).to.equal('error');
  });
});

describe('ACP agent server: a bare agent\'s turns follow the session machine\'s rules (turn-queue.ts)', () => {
  it('$/cancel_request of the running prompt cancels that one only: the prompts waiting behind it then run', async () => {
    const editor = await initialized(demoAgent({ wordDelayMs: 10 }));
    const { sessionId } = (await editor.request('session/new', { cwd: '/tmp', mcpServers: [] })) as { sessionId: string };
    // Requests 3, 4 and 5 (initialize was 1, session/new 2).
    const prompts = ['one', 'two', 'three'].map((text) => editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `a long answer ${text}` }] }));
    await waitUntil(() => editor.updates.some((entry) => entry.update.sessionUpdate === 'agent_message_chunk'), 'the first chunk');
    editor.notify('$/cancel_request', { requestId: 3 });
    expect(await Promise.all(prompts)).to.deep.equal([{ stopReason: 'cancelled' }, { stopReason: 'end_turn' }, { stopReason: 'end_turn' }]);
    const text = editor.updates.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => (entry.update.content as { text: string }).text).join('');
    expect(text).to.contain('You said: a long answer two.').and.contain('You said: a long answer three.');
  });

  it('a prompt sent after session/close, before its answer, ends cancelled when the close is answered: nothing of the closed session is left unanswered', async () => {
    let closeKey = '';
    const agent = scriptedAgent({
      ...opensS1,
      'session.prompt': () => [],
      'session.cancel': (event) => [{ type: 'acp.respond', requestId: (event as { requestId: string }).requestId, result: { stopReason: 'cancelled' } }],
      'session.close': (event) => {
        closeKey = (event as { requestId: string }).requestId;
        return [];
      },
      // The agent answers the close only when told to, so that a prompt can come in between.
      'ext.notification': () => [{ type: 'acp.respond', requestId: closeKey, result: {} }],
    }, { capabilities: { sessionCapabilities: { close: {} } }, extensions: { notifications: ['_test/answer_close'] } });
    const editor = await initialized(agent);
    await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
    const answered: string[] = [];
    const first = editor.request('session/prompt', { sessionId: 's1', prompt: [] }).then((result) => (answered.push('first'), result));
    await settle();
    const close = editor.request('session/close', { sessionId: 's1' }).then((result) => (answered.push('close'), result));
    expect(await first).to.deep.equal({ stopReason: 'cancelled' });
    const late = editor.request('session/prompt', { sessionId: 's1', prompt: [] }).then((result) => (answered.push('late'), result));
    await settle();
    expect(closeKey, 'the agent has the close').to.not.equal('');
    editor.notify('_test/answer_close', {});
    expect(await close).to.deep.equal({});
    await settle();
    expect(answered).to.deep.equal(['first', 'late', 'close']);
    expect(await late).to.deep.equal({ stopReason: 'cancelled' });
    expect((await errorOf(editor.request('session/prompt', { sessionId: 's1', prompt: [] }))).code).to.equal(-32002);
  });

  it('a shutdown answers the running and the waiting prompts without handing the waiting one to the agent', async () => {
    const seen: string[] = [];
    const agent = scriptedAgent({
      ...opensS1,
      'session.prompt': (event) => {
        seen.push((event as { requestId: string }).requestId);
        return [];
      },
    });
    const editor = await initialized(agent);
    await editor.request('session/new', { cwd: '/tmp', mcpServers: [] });
    const running = errorOf(editor.request('session/prompt', { sessionId: 's1', prompt: [] }));
    const waiting = errorOf(editor.request('session/prompt', { sessionId: 's1', prompt: [] }));
    await settle();
    expect(seen).to.have.length(1);
    editor.server.send({ type: 'supervisor.shutdown' });
    for (const error of [await running, await waiting]) {
      expect(error.code).to.equal(-32603);
      expect(error.data).to.deep.include({ reason: 'shutdown' });
    }
    expect(seen, 'the agent never saw the waiting prompt').to.have.length(1);
  });
});
