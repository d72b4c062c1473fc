/**
 * The agent client's fast path for hot `session/update`s (src/acp/hot-update-check.ts): what
 * it lets through is exactly what the SDK's schema would have returned, and everything else,
 * malformed updates included, still gets the schema's verdict. Checked on a corpus of variants
 * against the schema itself, and through a real agent process whose updates the client relays.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, type AgentClientEmitted } from '../../src/acp/agent-client.js';
import { isHotSessionUpdate } from '../../src/acp/hot-update-check.js';
import { schemaOf } from '../../src/acp/schemas.js';
import { portTransport } from '../../src/jsonrpc/port-transport.js';
import { portLogic } from '../../src/port/port.js';
import { spawnedPid } from '../support/port-pid.js';
import { expectGroupGone, waitUntil } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));
const notification = schemaOf('SessionNotification');

const chunk = (update: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ sessionId: 'sess_1', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hello' }, ...update }, ...extra });
const tool = (update: Record<string, unknown>) => ({ sessionId: 'sess_1', update: { sessionUpdate: 'tool_call_update', toolCallId: 'call_1', ...update } });

/** What agents send most, in the shapes they send it: all of it takes the fast path. */
const hot: unknown[] = [
  chunk({}),
  chunk({ messageId: 'msg_1' }),
  chunk({ messageId: null }),
  chunk({ _meta: { claudeCode: { parentToolUseId: 'x' } } }, { _meta: { seq: 3 } }),
  chunk({ content: { type: 'text', text: '', _meta: null } }),
  { sessionId: 'sess_1', update: { sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'thinking' } } },
  { sessionId: 'sess_1', update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'hi' } } },
  tool({}),
  tool({ status: 'in_progress' }),
  tool({ status: 'completed', kind: 'execute', title: 'ls', name: null, rawInput: { command: 'ls' }, rawOutput: 'a\nb' }),
  tool({ status: null, kind: null, rawOutput: null }),
  tool({ content: [{ type: 'content', content: { type: 'text', text: 'out' } }, { type: 'terminal', terminalId: 'term_1' }] }),
  tool({ content: null, _meta: { any: [1, 2] } }),
];

/** The schema decides these: it strips, rewrites or refuses something in most; the rest are shapes the check does not cover. */
const forTheSchema: unknown[] = [
  chunk({ extra: 1 }),
  chunk({ content: { type: 'text', text: 'x', annotations: { priority: 1 } } }),
  chunk({ content: { type: 'text', text: 42 } }),
  chunk({ content: { type: 'image', data: 'AAAA', mimeType: 'image/png' } }),
  chunk({ content: undefined }),
  chunk({ messageId: 7 }),
  chunk({ _meta: 'not a record' }),
  chunk({ _meta: JSON.parse('{"__proto__":{"x":1}}') as unknown }),
  chunk({}, { _meta: [] }),
  chunk({}, { extra: true }),
  { sessionId: 7, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } } },
  { sessionId: 'sess_1' },
  { update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } } },
  { sessionId: 'sess_1', update: { sessionUpdate: 'agent_message_chunk' } },
  { sessionId: 'sess_1', update: { sessionUpdate: 'plan', entries: [] } },
  { sessionId: 'sess_1', update: { sessionUpdate: 'nonsense' } },
  { sessionId: 'sess_1', update: [] },
  [],
  null,
  'sess_1',
  tool({ status: 'bogus' }),
  tool({ kind: 'teleport' }),
  tool({ toolCallId: 5 }),
  tool({ title: 3 }),
  tool({ locations: [{ path: '/a', line: 3 }] }),
  tool({ content: [{ type: 'diff', path: '/a', newText: 'b' }] }),
  tool({ content: [{ type: 'content', content: { type: 'text', text: 'x' }, terminalId: 't' }] }),
  tool({ content: [{ type: 'terminal' }] }),
  tool({ content: 'text' }),
  tool({ rawInput: undefined }),
  { sessionId: 'sess_1', update: { sessionUpdate: 'tool_call_update' } },
];

describe('the hot session/update check', () => {
  it('takes the fast path for the hot shapes, and what it passes is what the SDK schema returns', () => {
    for (const params of hot) {
      expect(isHotSessionUpdate(params), JSON.stringify(params)).to.equal(true);
      expect(params, JSON.stringify(params)).to.deep.equal(notification.parse(params));
    }
  });

  it('leaves to the schema every update it would strip, rewrite or refuse, and the shapes it does not cover', () => {
    for (const params of forTheSchema) expect(isHotSessionUpdate(params), JSON.stringify(params) ?? String(params)).to.equal(false);
  });

  describe('through a real agent process', function () {
    this.timeout(30_000);
    let port: AnyActorRef | undefined;
    let client: AnyActorRef | undefined;
    afterEach(async () => {
      const started = port;
      // Learned before the stop: a port stopped before its first spawn would have no pid.
      const pid = started ? await spawnedPid(started).catch((error: unknown) => error as Error) : undefined;
      if (client?.getSnapshot().status === 'active') client.stop();
      if (port?.getSnapshot().status === 'active') port.stop();
      port = client = undefined;
      if (pid instanceof Error) throw pid;
      if (started) await expectGroupGone(pid);
    });

    it('relays the valid updates as the schema makes them and drops the malformed ones, hot-looking or not', async () => {
      const lines = [
        chunk({ content: { type: 'text', text: 42 } }), // a text chunk with a number: refused
        chunk({ messageId: 'msg_1', extra: 'stripped' }), // unknown key: the schema strips it
        tool({ status: 'bogus', rawOutput: { ok: true } }), // invalid optional field: the schema drops it
        { sessionId: 'sess_1', update: { sessionUpdate: 'tool_call_update', toolCallId: 9 } }, // refused
        chunk({ messageId: 'msg_2' }), // hot
        tool({ status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'done' } }] }), // hot
        chunk({ content: { type: 'text', text: 'last' } }),
      ].map((params) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params }));
      // The fake CLI prints its banner at start: one update a line, as an agent writes them.
      port = createActor(portLogic, { input: { command: 'node', args: [fakeCli, '--banner', lines.join('\n')] } });
      port.subscribe({ error: () => {} });
      const updates: Array<Extract<AgentClientEmitted, { type: 'acp.update' }>> = [];
      client = createActor(agentClientLogic, { input: { transport: portTransport(port) } });
      client.on('acp.update', (event: Extract<AgentClientEmitted, { type: 'acp.update' }>) => updates.push(event));
      client.start();
      port.start();
      await waitUntil(() => updates.some((event) => (event.update as { content?: { text?: string } }).content?.text === 'last'), 'the last update relayed', 20_000);
      const expected = lines.map((line) => notification.safeParse((JSON.parse(line) as { params: unknown }).params)).filter((verdict) => verdict.success).map((verdict) => verdict.data);
      expect(expected).to.have.length(5);
      expect(updates.map(({ sessionId, update }) => ({ sessionId, update }))).to.deep.equal(expected);
      expect(updates[0]?.update).not.to.have.property('extra');
      expect((updates[1]?.update as { status?: unknown }).status).to.equal(undefined);
    });
  });
});
