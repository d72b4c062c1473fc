/**
 * `session/load` of a long session through a real `warden acp --store FILE`: a history of
 * more than 100 MB (written straight into the SQLite store through the journal API) is
 * replayed whole, in order, under flow control (the editor also stops reading for a while),
 * and warden goes on. Peak RSS is printed; bench/flow.ts compares it with a small replay.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeLongSession, writeScreenshotSession } from '../support/long-session.js';
import { PipeEditor, type WireMessage } from '../support/pipe-editor.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('warden acp: session/load of a long session', function () {
  this.timeout(300_000);
  let work: string;
  let editor: PipeEditor | undefined;

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'warden-replay-'));
  });

  afterEach(async () => {
    await PipeEditor.closeAll();
    await editor?.close();
    editor = undefined;
    rmSync(work, { recursive: true, force: true });
  });

  it('replays a 100 MB history (50,000 updates) whole and in order, in a 128 MB heap, the editor pausing 3 s midway, then answers the load', async () => {
    const count = 50_000;
    const store = join(work, 'journal.sqlite');
    const sessionId = writeLongSession(store, work, count, 2048);
    const order: number[] = [];
    let loadAnswer: WireMessage | undefined;
    let answeredAfter = -1;
    editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', store],
      // A history read whole would not fit: the replay must go a page at a time.
      env: { NODE_OPTIONS: '--max-old-space-size=128' },
      onMessage: (message: WireMessage) => {
        if (message.method === 'session/update' && message.params?.sessionId === sessionId) {
          const text = message.params.update?.content?.text as string | undefined;
          if (text?.startsWith('#')) order.push(Number(text.slice(1, text.indexOf(' '))));
        } else if (message.id === 'load') {
          loadAnswer = message;
          answeredAfter = order.length;
        }
      },
    });
    const init = editor.answer(1);
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
    expect((await init).result?.agentCapabilities?.loadSession).to.equal(true);
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: work, mcpServers: [] } }));
    const deadline = Date.now() + 240_000;
    while (order.length < count / 4 && editor.running && Date.now() < deadline) await sleep(20);
    editor.pauseReading();
    await sleep(3000);
    expect(editor.running, `warden exited during the replay:\n${editor.stderr}`).to.equal(true);
    editor.resumeReading();
    while (loadAnswer === undefined && editor.running && Date.now() < deadline) await sleep(50);
    expect(loadAnswer?.error, `${JSON.stringify(loadAnswer)}\n${editor.stderr}`).to.equal(undefined);
    expect(answeredAfter).to.equal(count);
    expect(order.length).to.equal(count);
    expect(order.every((value, index) => value === index), 'updates in journal order').to.equal(true);
    // The session is open again: a prompt is served.
    const prompt = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and now?' }] }, 'prompt');
    expect(prompt.result?.stopReason).to.equal('end_turn');
    console.log(`      peak RSS of warden: ${editor.peakRssMb()} MB (replay of ${count} updates, ~${Math.round((count * 2048) / 1e6)} MB)`);
  });

  it('replays a history of 30 screenshots of 5 MB (150 MB) in a 128 MB heap: pages are bounded in bytes, not only in entries', async () => {
    const prompts = 30;
    const imageBytes = 5 * 1024 * 1024;
    const store = join(work, 'journal.sqlite');
    const sessionId = writeScreenshotSession(store, work, prompts, imageBytes);
    const shots: Array<{ text?: string; bytes?: number }> = [];
    let loadAnswer: WireMessage | undefined;
    editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', store],
      env: { NODE_OPTIONS: '--max-old-space-size=128' },
      onMessage: (message: WireMessage) => {
        const update = message.params?.update;
        if (message.method === 'session/update' && update?.sessionUpdate === 'user_message_chunk') {
          shots.push(update.content.type === 'image' ? { bytes: (update.content.data as string).length } : { text: update.content.text as string });
        } else if (message.id === 'load') {
          loadAnswer = message;
        }
      },
    });
    const init = editor.answer(1);
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
    await init;
    editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: work, mcpServers: [] } }));
    const deadline = Date.now() + 240_000;
    while (loadAnswer === undefined && editor.running && Date.now() < deadline) await sleep(50);
    expect(editor.running, `warden exited during the replay:\n${editor.stderr.slice(-600)}`).to.equal(true);
    expect(loadAnswer?.error).to.equal(undefined);
    expect(shots).to.deep.equal(Array.from({ length: prompts }, (_, index) => [{ text: `shot ${index}` }, { bytes: imageBytes }]).flat());
  });
});
