/**
 * The embedding API with the in-process demo agent: sessions, prompts as async iterables,
 * FIFO prompts, permission policy, list, reopen after a "program restart" (a second host
 * on the same journal file), the tree, stop.
 */
import type { Journal } from '../../src/journal/journal.js';
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { fileURLToPath } from 'node:url';
import { createHost, type Host, type HostEvent } from '../../src/runtime/host.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import type { HostLogEntry } from '../../src/host/host-log.js';
import { isAlive, waitUntil } from '../support/processes.js';

describe('createHost (embedding API)', () => {
  let dir: string;
  const hosts: Host[] = [];
  const open = (store: string, permission?: Parameters<typeof createHost>[0] extends infer O ? (O extends { permission?: infer P } ? P : never) : never) => {
    const host = createHost({ store, agents: { demo: demoAgent({ wordDelayMs: 1 }) }, ...(permission ? { permission } : {}) });
    hosts.push(host);
    return host;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-host-'));
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a prompt yields its updates and ends with a stop reason; the journal has it all', async () => {
    const host = open(join(dir, 'j.sqlite'));
    const session = await host.newSession({ cwd: dir });
    const run = session.prompt('hello');
    let text = '';
    for await (const update of run) if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') text += update.content.text;
    expect(await run.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(text).to.contain('You said: hello');
    expect((host.journal as Journal).entries(session.sessionId).map((record) => record.entry.kind)).to.include.members(['prompt', 'update', 'stop']);
    expect(session.state()).to.equal('ready');
  });

  it('prompts sent together run one after the other, in order', async () => {
    const host = open(':memory:');
    const session = await host.newSession({ cwd: dir });
    const order: string[] = [];
    const runs = ['one', 'two', 'three'].map((text) => session.prompt(text).result.then((result) => order.push(`${text}:${result.stopReason}`)));
    await Promise.all(runs);
    expect(order).to.deep.equal(['one:end_turn', 'two:end_turn', 'three:end_turn']);
    const prompts = (host.journal as Journal).entries(session.sessionId).filter((record) => record.entry.kind === 'prompt');
    expect(prompts.map((record) => (record.entry as unknown as { prompt: Array<{ text: string }> }).prompt[0]?.text)).to.deep.equal(['one', 'two', 'three']);
  });

  it('the permission policy decides, and the journal records the answer', async () => {
    const asked: string[] = [];
    const askedIds: string[] = [];
    const host = open(':memory:', (request) => {
      asked.push(request.toolCall.title ?? '');
      askedIds.push(request.toolCall.toolCallId);
      return { outcome: 'selected', optionId: request.options.find((option) => option.kind === 'allow_once')?.optionId ?? '' };
    });
    const session = await host.newSession({ cwd: dir });
    const run = session.prompt('please run the tool');
    const statuses: string[] = [];
    for await (const update of run) if (update.sessionUpdate === 'tool_call_update' && update.status) statuses.push(update.status);
    expect(await run.result).to.deep.equal({ stopReason: 'end_turn' });
    expect(asked).to.have.length(1);
    expect(statuses).to.include('completed');
    const permission = (host.journal as Journal).entries(session.sessionId).find((record) => record.entry.kind === 'permission');
    // The entry names the tool call asked about (its id and title), not only the answer.
    expect(permission?.entry).to.deep.include({ toolCallId: askedIds[0], title: asked[0], outcome: { outcome: 'selected', optionId: 'allow' } });
  });

  it('after the program restarts, lists the session and reopens it with its history replayed', async () => {
    const store = join(dir, 'journal.sqlite');
    const first = open(store);
    const session = await first.newSession({ cwd: dir });
    await session.prompt('remember this').result;
    await first.stop();
    hosts.splice(hosts.indexOf(first), 1);

    const second = open(store);
    const listed = await second.listSessions();
    expect(listed.map((entry) => entry.sessionId)).to.deep.equal([session.sessionId]);
    expect(listed[0]?.title).to.equal('remember this');
    const reopened = await second.openSession(session.sessionId, { how: 'load' });
    const userText = reopened.replayed.filter((update) => update.sessionUpdate === 'user_message_chunk').map((update) => (update as { content: { text: string } }).content.text);
    expect(userText).to.deep.equal(['remember this']);
    expect(await reopened.prompt('and now?').result).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('tells the program about sessions and shows them in the tree', async () => {
    const host = open(':memory:');
    const events: HostEvent[] = [];
    host.on((event) => events.push(event));
    const session = await host.newSession({ cwd: dir });
    expect(events).to.deep.include({ type: 'session.opened', sessionId: session.sessionId, agent: 'demo', how: 'new' });
    const tree = host.tree();
    expect(tree.children.map((child) => child.id)).to.include.members(['agent:demo', `session:${session.sessionId}`]);
    await session.close();
    expect(events).to.deep.include({ type: 'session.closed', sessionId: session.sessionId });
  });

  it('with a real subprocess (fake Claude Code): supervision settings apply, the logger hears the failure, stop leaves no process', async function () {
    this.timeout(60_000);
    const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
    const entries: HostLogEntry[] = [];
    const host = createHost({
      store: ':memory:',
      agentOptions: { agentCommand: fakeClaude, env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_CRASH_AFTER: '1' }, onCrash: 'fail' },
      supervision: { intensity: 0, period: 60_000 },
      logger: (entry) => entries.push(entry),
    });
    hosts.push(host);
    const session = await host.newSession({ agent: 'claude', cwd: dir });
    // (the default agent, the demo agent, runs as a process of its own too)
    const cli = host.processes().find((process) => process.agent === 'claude');
    expect(cli?.agent).to.equal('claude');
    const failure = await session.prompt('hello').result.then(() => undefined, (error: Error) => error);
    expect(failure?.message).to.contain('stopped during the prompt');
    await waitUntil(() => session.state() === 'failed', 'the session to fail (intensity 0)');
    expect(entries.map((entry) => entry.level)).to.include('error');
    expect(entries.some((entry) => entry.level === 'error' && entry.message.includes(`session ${session.sessionId} failed`))).to.equal(true);
    expect(entries.some((entry) => entry.level === 'error' && entry.message.includes('more than 0 restarts'))).to.equal(true);
    expect((host.journal as Journal).getSession(session.sessionId)?.state).to.equal('failed');
    await host.stop();
    hosts.splice(hosts.indexOf(host), 1);
    expect(isAlive(cli?.pid)).to.equal(false);
  });

  it('a bad store path fails at once, naming it and the fix', () => {
    expect(() => createHost({ store: dir })).to.throw(/cannot open the journal at .*--store/);
  });

  it('serve() with a drain timeout that is not a number of milliseconds throws a TypeError naming it, and serves nothing', async () => {
    const host = createHost({ store: ':memory:', agents: { demo: demoAgent({ wordDelayMs: 1 }) } });
    try {
      for (const bad of [-1, Number.NaN, 2 ** 31, '5000' as unknown as number]) {
        const [, warden] = createMemoryTransportPair();
        expect(() => host.serve(warden, { drainTimeoutMs: bad }), String(bad)).to.throw(TypeError, /drainTimeoutMs.*milliseconds/);
      }
      const [, warden] = createMemoryTransportPair();
      expect(host.serve(warden, { drainTimeoutMs: 0 }).getSnapshot().status).to.equal('active');
    } finally {
      await host.stop();
    }
  });
});
