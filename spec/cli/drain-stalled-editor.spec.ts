/**
 * `session/load` through a real `warden acp` of a session whose agent goes on streaming its
 * own replay after its answer (the SDK's reference agent with `--replay-after-answer`, as
 * Gemini CLI 0.61.0): warden drains that replay before it answers. Right after its own
 * journal replay the editor's output is full, so the read gate is closed just when the
 * drain runs; an editor that stalls longer than a drain round's deadline (10 s) must still
 * see the history once, not the agent's replay again after the answer.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('warden acp: session/load of an agent that replays after its answer, the editor stalling', function () {
  this.timeout(240_000);
  let dir: string;
  let editor: PipeEditor | undefined;

  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-drain-stall-')));
  });

  afterEach(async () => {
    await PipeEditor.closeAll();
    await editor?.close();
    editor = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('the editor reads nothing for 13 s right after the journal replay: each turn of the history reaches it once, none again after the answer', async () => {
    const store = join(dir, 'journal.sqlite');
    const state = join(dir, 'agent-state');
    mkdirSync(state);
    // `node` found on PATH, as a user's --agent line runs it.
    const args = ['--agent', `acp:node ${sdkAgent} --state-dir ${state} --no-resume --replay-after-answer`, '--store', store];
    const turns = 40;
    const filler = 'z'.repeat(40 * 1024);

    // A first warden records 40 turns of 40 KB (3.2 MB of history: the editor's output backs up on replay).
    editor = PipeEditor.launch({ args });
    const init = await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
    const created = await editor.request('session/new', { cwd: dir, mcpServers: [] });
    const sessionId = created.result?.sessionId as string;
    expect(sessionId, JSON.stringify(created)).to.be.a('string');
    for (let turn = 0; turn < turns; turn++) {
      const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `turn ${turn} ${filler}` }] });
      expect(answer.result?.stopReason, JSON.stringify(answer.error)).to.equal('end_turn');
    }
    expect((await editor.close()).code).to.equal(0);

    // A second warden on the same store and agent state: its load re-attaches with the agent's session/load.
    const seen = new Map<string, number>();
    const answers = new Map<string | number, WireMessage>();
    let stalled = false;
    const second = PipeEditor.launch({
      args,
      onMessage: (message) => {
        const text = message.params?.update?.content?.text as string | undefined;
        if (message.method === 'session/update' && message.params?.sessionId === sessionId && text?.startsWith('turn ')) {
          const key = `${message.params.update.sessionUpdate} ${text.slice(0, text.indexOf(' ', 5))}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
          if (!stalled) {
            stalled = true;
            second.pauseReading();
            setTimeout(() => second.resumeReading(), 13_000);
          }
        } else if (message.method === undefined && message.id !== undefined && message.id !== null) {
          answers.set(message.id, message);
        }
      },
    });
    editor = second;
    const answered = async (id: string) => {
      await waitUntil(() => answers.has(id) || !second.running, `the answer to ${id}`, 120_000);
      return answers.get(id) as WireMessage;
    };
    second.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
    expect((await answered('init')).error).to.equal(undefined);
    second.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: dir, mcpServers: [] } }));
    const load = await answered('load');
    expect(load.error, `${JSON.stringify(load.error)}\n${second.stderr}`).to.equal(undefined);
    expect(stalled).to.equal(true);
    // A turn after the load: whatever of the agent's replay came late has reached the editor by its end.
    second.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'after', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hello' }] } }));
    expect((await answered('after')).result?.stopReason).to.equal('end_turn');
    await sleep(0);
    const expected = new Map<string, number>();
    for (let turn = 0; turn < turns; turn++) {
      expected.set(`user_message_chunk turn ${turn}`, 1);
      expected.set(`agent_message_chunk turn ${turn}`, 1);
    }
    expect(Object.fromEntries(seen)).to.deep.equal(Object.fromEntries(expected));
  });
});
