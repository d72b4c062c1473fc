/**
 * The ACP surface of `warden acp --agent demo` end to end (issue 14, "ACP surface"): fork,
 * delete, requests pipelined behind initialize, load / resume of a live session, and recovery
 * notices in the journal and in replays. warden is launched as an editor launches it (the bare
 * `warden` through PATH); the demo agent runs as its real subprocess.
 */
import { methods } from '@agentclientprotocol/sdk';
import { methods as unstableMethods } from '@agentclientprotocol/sdk/unstable';
import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { childrenOf, waitUntil } from '../support/processes.js';
import { binDirectory, initializedEditor, rawEditor, sdkEditor, stopAll, textOf, type SdkEditor } from '../support/path-editor.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

interface Listed {
  sessions: Array<{ sessionId: string; title?: string | null; _meta?: Record<string, unknown> }>;
  nextCursor?: string;
}

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error);
  expect(outcome, 'the request should have failed').to.not.equal(undefined);
  return outcome as { code: number; message: string; data?: Record<string, unknown> };
}

const prompt = (editor: SdkEditor, sessionId: string, text: string) =>
  editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });

describe('warden acp --agent demo: the ACP surface', function () {
  this.timeout(120_000);
  let dir: string;
  let bin: string;
  let store: string;
  let demo: string[];

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-surface-')));
    bin = binDirectory(dir, { 'sdk-agent': sdkAgent });
    store = join(dir, 'journal.sqlite');
    demo = ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=1'];
  });

  afterEach(async () => {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('session/fork', () => {
    it('forks through the SDK client: a journaled session of its own, listed, whose load replays the source history, and which goes on by itself', async () => {
      const first = await initializedEditor(bin, demo, dir);
      expect(first.initialized?.agentCapabilities.sessionCapabilities).to.have.property('fork');
      const { sessionId: source } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      await prompt(first, source, 'remember the fork');
      const said = textOf(first.updates, source);
      expect(said).to.contain('remember the fork');
      const forked = await first.request<{ sessionId: string; modes?: { currentModeId: string } }>(unstableMethods.agent.session.fork, { sessionId: source, cwd: dir, mcpServers: [] });
      expect(forked.sessionId).to.be.a('string').and.not.equal(source);
      expect(forked.modes?.currentModeId).to.equal('ask');
      const listed = await first.request<Listed>(methods.agent.session.list, {});
      expect(listed.sessions.map((session) => session.sessionId)).to.have.members([source, forked.sessionId]);
      expect(listed.sessions.find((session) => session.sessionId === forked.sessionId)?.title).to.equal('remember the fork');
      // The fork goes on alone: its turn is not the source's.
      expect((await prompt(first, forked.sessionId, 'only in the fork')).stopReason).to.equal('end_turn');
      expect(await first.close()).to.equal(0);

      // A later warden on the same store: the fork's load replays the source's turn, then its own.
      const second = await initializedEditor(bin, demo, dir);
      await second.request(methods.agent.session.load, { sessionId: forked.sessionId, cwd: dir, mcpServers: [] });
      expect(textOf(second.updates, forked.sessionId, 'user_message_chunk')).to.equal('remember the forkonly in the fork');
      expect(textOf(second.updates, forked.sessionId)).to.contain(said).and.contain('only in the fork');
      await second.request(methods.agent.session.load, { sessionId: source, cwd: dir, mcpServers: [] });
      expect(textOf(second.updates, source, 'user_message_chunk')).to.equal('remember the fork');
      expect(await second.close()).to.equal(0);
    });

    it('raw JSON-RPC: session/fork is served, not -32601', async () => {
      const editor = rawEditor(bin, demo, dir);
      editor.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
      await editor.answer(1);
      editor.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: dir, mcpServers: [] } })}\n`);
      const source = (await editor.answer(2)).result?.sessionId as string;
      editor.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/fork', params: { sessionId: source, cwd: dir, mcpServers: [] } })}\n`);
      const forked = await editor.answer(3);
      expect(forked.error, JSON.stringify(forked.error)).to.equal(undefined);
      expect(forked.result?.sessionId).to.be.a('string').and.not.equal(source);
      expect(await editor.close()).to.equal(0);
    });

    it('an agent that does not fork: fork is not advertised, and session/fork is -32601', async () => {
      // The shim's full path: `acp:<bare name>` is looked up on --env's PATH, not warden's (left to the launch work).
      const editor = await initializedEditor(bin, ['--agent', `acp:${join(bin, 'sdk-agent')}`, '--store', store], dir);
      expect(editor.initialized?.agentCapabilities.sessionCapabilities).to.not.have.property('fork');
      const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const refused = await rejection(editor.request(unstableMethods.agent.session.fork, { sessionId, cwd: dir, mcpServers: [] }));
      expect(refused.code).to.equal(-32601);
      expect(await editor.close()).to.equal(0);
    });
  });

  describe('session/delete', () => {
    it('a deleted session leaves session/list and cannot be loaded, in this warden and in a later one on the same store', async () => {
      const first = await initializedEditor(bin, demo, dir);
      const { sessionId: kept } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const { sessionId: deleted } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      await prompt(first, deleted, 'forget me');
      expect(await first.request(methods.agent.session.delete, { sessionId: deleted })).to.deep.equal({});
      const listed = await first.request<Listed>(methods.agent.session.list, {});
      expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([kept]);
      const gone = await rejection(first.request(methods.agent.session.load, { sessionId: deleted, cwd: dir, mcpServers: [] }));
      expect(gone.code).to.equal(-32002);
      expect(await first.close()).to.equal(0);

      const second = await initializedEditor(bin, demo, dir);
      const relisted = await second.request<Listed>(methods.agent.session.list, {});
      expect(relisted.sessions.map((session) => session.sessionId)).to.deep.equal([kept]);
      const stillGone = await rejection(second.request(methods.agent.session.resume, { sessionId: deleted, cwd: dir, mcpServers: [] }));
      expect(stillGone.code).to.equal(-32002);
      expect(await second.close()).to.equal(0);
      // Nothing of it is left in the journal itself.
      const journal = sqliteJournal(store);
      try {
        expect(journal.getSession(deleted)).to.equal(undefined);
        expect(journal.entries(deleted)).to.deep.equal([]);
        expect(journal.getSession(kept)?.sessionId).to.equal(kept);
      } finally {
        journal.close();
      }
    });

    it('a session another running warden has live is not deleted by a second one on the same store', async () => {
      const first = await initializedEditor(bin, demo, dir);
      const { sessionId } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const second = await initializedEditor(bin, demo, dir);
      const refused = await rejection(second.request(methods.agent.session.delete, { sessionId }));
      expect(refused.code).to.equal(-32603);
      expect(refused.data?.reason).to.equal('session_owned');
      expect((await second.request<Listed>(methods.agent.session.list, {})).sessions.map((session) => session.sessionId)).to.deep.equal([sessionId]);
      // The first goes on with it.
      expect((await prompt(first, sessionId, 'still mine')).stopReason).to.equal('end_turn');
      expect(await second.close()).to.equal(0);
      expect(await first.close()).to.equal(0);
    });
  });

  describe('requests pipelined behind initialize', () => {
    it('raw: initialize, session/new and session/list in ONE write are all served, in order', async () => {
      const editor = rawEditor(bin, demo, dir);
      editor.write([
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } },
        { jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: dir, mcpServers: [] } },
        { jsonrpc: '2.0', id: 3, method: 'session/list', params: {} },
      ].map((message) => `${JSON.stringify(message)}\n`).join(''));
      const [init, created, listed] = [await editor.answer(1), await editor.answer(2), await editor.answer(3)];
      expect(init.result?.protocolVersion).to.equal(1);
      expect(created.error, JSON.stringify(created.error)).to.equal(undefined);
      const sessionId = created.result?.sessionId as string;
      expect(sessionId).to.be.a('string');
      expect(listed.error, JSON.stringify(listed.error)).to.equal(undefined);
      expect(listed.result?.sessions).to.be.an('array');
      // initialize is answered first; the two behind it were handed on in the order they came.
      const order = editor.messages.filter((message) => 'id' in message && ('result' in message || 'error' in message)).map((message) => message.id);
      expect(order[0]).to.equal(1);
      expect(order).to.have.members([1, 2, 3]);
      editor.write(`${JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'session/list', params: {} })}\n`);
      expect(((await editor.answer(4)).result?.sessions as Array<{ sessionId: string }>).map((session) => session.sessionId)).to.deep.equal([sessionId]);
      expect(await editor.close()).to.equal(0);
    });

    it('SDK: session/new sent before the answer to initialize is served', async () => {
      const editor = sdkEditor(bin, demo, dir);
      const init = editor.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
      const created = editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      await init;
      expect((await created).sessionId).to.be.a('string');
      expect(await editor.close()).to.equal(0);
    });

    it('a request before initialize is still refused with -32600, and initialize then works', async () => {
      const editor = rawEditor(bin, demo, dir);
      editor.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: dir, mcpServers: [] } })}\n`);
      const refused = await editor.answer(1);
      expect(refused.error?.code).to.equal(-32600);
      expect(refused.error?.message).to.contain("ACP connection must be initialized before 'session/new'");
      editor.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`);
      expect((await editor.answer(2)).result?.protocolVersion).to.equal(1);
      expect(await editor.close()).to.equal(0);
    });
  });

  describe('session/load and session/resume of a live session', () => {
    it('answer with the mode and config the user set, as the agent last reported them', async () => {
      const editor = await initializedEditor(bin, demo, dir);
      const created = await editor.request<{ sessionId: string; modes: { currentModeId: string; availableModes: unknown[] } }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      expect(created.modes.currentModeId).to.equal('ask');
      const { sessionId } = created;
      await editor.request(methods.agent.session.setMode, { sessionId, modeId: 'auto' });
      await editor.request(methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'demo-thorough' });
      type Setup = { modes?: { currentModeId: string; availableModes: unknown[] }; configOptions?: Array<{ id: string; currentValue: unknown }> };
      for (const method of [methods.agent.session.load, methods.agent.session.resume]) {
        const answer = await editor.request<Setup>(method, { sessionId, cwd: dir, mcpServers: [] });
        expect(answer.modes?.currentModeId, method).to.equal('auto');
        expect(answer.modes?.availableModes, method).to.deep.equal(created.modes.availableModes);
        expect(answer.configOptions?.find((option) => option.id === 'model')?.currentValue, method).to.equal('demo-thorough');
      }
      // And the session still takes mode changes (the server saw modes in the answer).
      await editor.request(methods.agent.session.setMode, { sessionId, modeId: 'ask' });
      const again = await editor.request<Setup>(methods.agent.session.resume, { sessionId, cwd: dir, mcpServers: [] });
      expect(again.modes?.currentModeId).to.equal('ask');
      expect(await editor.close()).to.equal(0);
    });
  });

  describe('recovery notices', () => {
    const demoProcess = (editor: SdkEditor) => childrenOf(editor.process.pid as number).find((child) => child.cmdline.includes('demo-agent'))?.pid;
    const noticesOf = (editor: SdkEditor, sessionId: string) =>
      editor.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'notice').map((entry) => ({ severity: entry.update.severity, title: entry.update.title }));

    it('kill -9 of the demo agent mid-turn: the journal keeps typed notices, a replay gives them back as notices, or as signed text marked in _meta, never as the agent\'s words', async () => {
      const args = ['--agent', 'demo', '--store', store, '--env', 'DEMO_WORD_DELAY_MS=40'];
      const first = await initializedEditor(bin, args, dir);
      const { sessionId } = await first.request<{ sessionId: string }>(methods.agent.session.new, { cwd: dir, mcpServers: [] });
      const victim = demoProcess(first) as number;
      // About 70 words at 40 ms each: the turn is still streaming when the kill comes.
      const turn = rejection(prompt(first, sessionId, `a long answer that is cut off by a kill of the agent process ${'and it goes on '.repeat(15)}`.trim()));
      await waitUntil(() => textOf(first.updates, sessionId).includes('You said'), 'the first words');
      process.kill(victim, 'SIGKILL');
      expect((await turn).data?.reason).to.equal('agent_crashed');
      await waitUntil(() => textOf(first.updates, sessionId).includes('is back'), 'the recovery notice', 30_000);
      expect(await first.close()).to.equal(0);

      // The journal: the notices as notice entries; nothing the agent "said" mentions them.
      const journal = sqliteJournal(store);
      let agentText = '';
      try {
        const entries = journal.entries(sessionId).map((record) => record.entry);
        expect(entries.filter((entry) => entry.kind === 'notice').map((entry) => (entry as { severity: string; title: string }).title)).to.deep.equal(['demo restarted', 'demo is back']);
        for (const entry of entries) {
          if (entry.kind !== 'update') continue;
          expect(entry.update.sessionUpdate).to.not.equal('notice');
          if (entry.update.sessionUpdate === 'agent_message_chunk' && entry.update.content.type === 'text') agentText += entry.update.content.text;
        }
      } finally {
        journal.close();
      }
      expect(agentText).to.contain('You said').and.not.contain('restart').and.not.contain('acp-warden');

      // A client with session.notices: they come back as notices, and the agent's words are only its own.
      const capable = await initializedEditor(bin, args, dir, { session: { notices: {} } });
      await capable.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      expect(noticesOf(capable, sessionId)).to.deep.equal([{ severity: 'warning', title: 'demo restarted' }, { severity: 'info', title: 'demo is back' }]);
      expect(textOf(capable.updates, sessionId)).to.equal(agentText);
      expect(await capable.close()).to.equal(0);

      // A client without: the same signed text it got live, each marked with the notice in _meta.
      const plain = await initializedEditor(bin, args, dir);
      await plain.request(methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] });
      const chunks = plain.updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk');
      const noticeIn = (entry: (typeof chunks)[number]) => (entry.update._meta as Record<string, { title: string }> | undefined)?.['acp-warden/notice'];
      const marked = chunks.filter((entry) => noticeIn(entry) !== undefined);
      expect(marked.map((entry) => noticeIn(entry)?.title)).to.deep.equal(['demo restarted', 'demo is back']);
      for (const entry of marked) expect(entry.update.content?.text).to.match(/^\n\n\[acp-warden (warning|info)\] demo (restarted|is back): /u);
      expect(chunks.filter((entry) => !marked.includes(entry)).map((entry) => entry.update.content?.text ?? '').join('')).to.equal(agentText);
      // The session goes on in the agent: the next turn is answered from this prompt alone.
      const next = await prompt(plain, sessionId, 'hello again');
      expect(next.stopReason).to.equal('end_turn');
      expect(await plain.close()).to.equal(0);
    });
  });
});
