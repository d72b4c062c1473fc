/**
 * Flow control through a real `warden acp`: an editor that stops reading its stdout for
 * seconds is waited for, never dropped. Warden stops reading stdin and pauses the agents'
 * output while its stdout is backed up, and everything is answered, in order, once the
 * editor reads again. Peak RSS of warden is printed for docs/benchmarks.md.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { binDirWith, openSession, PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';

const streamAgent = fileURLToPath(new URL('../support/stream-agent.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));


describe('warden acp: flow control with an editor that reads slowly', function () {
  this.timeout(300_000);
  let work: string;
  let editor: PipeEditor | undefined;

  beforeEach(() => {
    work = mkdtempSync(join(tmpdir(), 'warden-flow-'));
  });

  afterEach(async () => {
    await PipeEditor.closeAll();
    await editor?.close();
    editor = undefined;
    rmSync(work, { recursive: true, force: true });
  });

  it('400,000 pipelined session/list requests (180 MB of answers) while the editor reads nothing for 8 s: warden waits, in a 128 MB heap, then answers every one', async () => {
    const total = 400_000;
    const answered = new Set<number>();
    let errors = 0;
    editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', join(work, 'journal.sqlite')],
      env: { NODE_OPTIONS: '--max-old-space-size=128' },
      onMessage: (message: WireMessage) => {
        if (typeof message.id !== 'number' || message.id < 1000) return;
        if (message.error) errors++;
        answered.add(message.id);
      },
    });
    // Two journaled sessions: each answer lists them (about 450 bytes), 180 MB in all.
    await openSession(editor, work);
    expect((await editor.request('session/new', { cwd: work, mcpServers: [] }, 3)).result?.sessionId).to.be.a('string');
    editor.pauseReading();
    const lines: string[] = [];
    for (let index = 0; index < total; index++) lines.push(`{"jsonrpc":"2.0","id":${1000 + index},"method":"session/list","params":{}}`);
    editor.child.stdin.write(`${lines.join('\n')}\n`);
    await sleep(8000);
    expect(editor.running, `warden exited while the editor was not reading:\n${editor.stderr}`).to.equal(true);
    editor.resumeReading();
    await waitUntil(() => answered.size === total || !editor?.running, () => `${total} answers (got ${answered.size})`, 240_000, 50);
    expect(answered.size).to.equal(total);
    expect(errors).to.equal(0);
    expect(editor.running).to.equal(true);
    console.log(`      peak RSS of warden: ${editor.peakRssMb()} MB (400k requests, 8 s unread)`);
  });

  it('100,000 requests pipelined behind an initialize the agent is slow to answer: warden reads about 1024 of them (and 1 MiB unparsed), not all, then answers every one', async () => {
    const total = 100_000;
    const gate = join(work, 'init-gate');
    const bin = binDirWith({ 'stream-agent': streamAgent });
    try {
      const answered = new Set<number>();
      let errors = 0;
      editor = PipeEditor.launch({
        args: ['--agent', 'acp:stream-agent 1 10', '--store', join(work, 'journal.sqlite'), '--env', `STREAM_AGENT_INIT_GATE=${gate}`],
        binDir: bin.dir,
        env: { NODE_OPTIONS: '--max-old-space-size=128' },
        onMessage: (message: WireMessage) => {
          if (typeof message.id !== 'number' || message.id < 1000) return;
          if (message.error) errors++;
          answered.add(message.id);
        },
      });
      const initialized = editor.answer('init');
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
      const lines: string[] = [];
      for (let index = 0; index < total; index++) lines.push(`{"jsonrpc":"2.0","id":${1000 + index},"method":"session/list","params":{}}`);
      const bytes = Buffer.byteLength(`${lines.join('\n')}\n`);
      editor.child.stdin.write(`${lines.join('\n')}\n`);
      await waitUntil(() => existsSync(`${gate}.asked`) || !editor?.running, 'the agent to be asked to initialize', 60_000, 50);
      // Whatever warden would read, it has had the time to: what it left in the pipe stays unread.
      await sleep(3000);
      const unread = editor.child.stdin.writableLength;
      // Read at most: 1024 requests, 1 MiB held unparsed, a chunk of stdin and the pipe (64 KiB each), with slack.
      expect(bytes - unread, `warden read ${bytes - unread} of ${bytes} bytes behind initialize`).to.be.below(1024 * 80 + 1024 * 1024 + 512 * 1024);
      writeFileSync(gate, '');
      expect((await initialized).result?.protocolVersion).to.equal(1);
      await waitUntil(() => answered.size === total || !editor?.running, () => `${total} answers (got ${answered.size})`, 240_000, 50);
      expect(editor.running, `warden exited:\n${editor.stderr.slice(-600)}`).to.equal(true);
      expect(answered.size).to.equal(total);
      expect(errors).to.equal(0);
      console.log(`      peak RSS of warden: ${editor.peakRssMb()} MB (100k requests behind a slow initialize)`);
    } finally {
      await editor?.close();
      editor = undefined;
      bin.remove();
    }
  });

  it('an editor that leaves with 5,000 requests behind an initialize the agent never answers: warden still sees the end of its stdin and exits', async () => {
    const gate = join(work, 'init-gate');
    const bin = binDirWith({ 'stream-agent': streamAgent });
    try {
      editor = PipeEditor.launch({
        args: ['--agent', 'acp:stream-agent 1 10', '--store', join(work, 'journal.sqlite'), '--env', `STREAM_AGENT_INIT_GATE=${gate}`, '--drain-timeout', '2'],
        binDir: bin.dir,
      });
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
      const lines: string[] = [];
      for (let index = 0; index < 5000; index++) lines.push(`{"jsonrpc":"2.0","id":${1000 + index},"method":"session/list","params":{}}`);
      editor.child.stdin.write(`${lines.join('\n')}\n`);
      await waitUntil(() => existsSync(`${gate}.asked`) || !editor?.running, 'the agent to be asked to initialize', 60_000, 50);
      // Time for warden to read up to its limit behind initialize: warden says nowhere that it stopped reading.
      await sleep(1000);
      // The editor goes away: what it had not written yet goes with it, the pipe keeps the rest.
      editor.child.stdin.destroy();
      await waitUntil(() => !editor?.running, 'warden to exit after its stdin ended', 60_000, 50);
      // An orderly end of input, not a crash: exit status 0.
      expect(await editor.exited).to.deep.equal({ code: 0, signal: null });
    } finally {
      await editor?.close();
      editor = undefined;
      bin.remove();
    }
  });

  it('a 160 MB turn streams through a warden held to a 128 MB heap: nothing of the turn is kept once relayed', async () => {
    const count = 16_000;
    const bin = binDirWith({ 'stream-agent': streamAgent });
    try {
      let seen = 0;
      let promptAnswer: WireMessage | undefined;
      editor = PipeEditor.launch({
        args: ['--agent', `acp:stream-agent ${count} 10000`, '--store', join(work, 'journal.sqlite')],
        binDir: bin.dir,
        env: { NODE_OPTIONS: '--max-old-space-size=128' },
        onMessage: (message: WireMessage) => {
          if (message.method === 'session/update') seen++;
          else if (message.id === 'prompt') promptAnswer = message;
        },
      });
      const sessionId = await openSession(editor, work);
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'prompt', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'say a lot' }] } }));
      await waitUntil(() => promptAnswer !== undefined || !editor?.running, 'the prompt answer', 180_000, 50);
      expect(editor.running, `warden ran out of memory:\n${editor.stderr.slice(-600)}`).to.equal(true);
      expect(promptAnswer?.result?.stopReason).to.equal('end_turn');
      expect(seen).to.equal(count);
    } finally {
      await editor?.close();
      editor = undefined;
      bin.remove();
    }
  });

  it('an editor pausing 5 s during a 40 MB stream of updates gets every one, in order, then the answer', async () => {
    const count = 4000;
    const size = 10_000;
    const bin = binDirWith({ 'stream-agent': streamAgent });
    try {
      const order: number[] = [];
      let answeredAfter = -1;
      let promptAnswer: WireMessage | undefined;
      editor = PipeEditor.launch({
        args: ['--agent', `acp:stream-agent ${count} ${size}`, '--store', join(work, 'journal.sqlite')],
        binDir: bin.dir,
        onMessage: (message: WireMessage) => {
          if (message.method === 'session/update') {
            const text = message.params?.update?.content?.text as string | undefined;
            if (text?.startsWith('#')) order.push(Number(text.slice(1, text.indexOf(' '))));
          } else if (message.id === 'prompt') {
            promptAnswer = message;
            answeredAfter = order.length;
          }
        },
      });
      const sessionId = await openSession(editor, work);
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'prompt', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'say a lot' }] } }));
      await waitUntil(() => order.length > 0, 'the first update', 60_000, 50);
      editor.pauseReading();
      await sleep(5000);
      expect(editor.running, `warden exited while the editor paused:\n${editor.stderr}`).to.equal(true);
      expect(order.length).to.be.below(count);
      editor.resumeReading();
      await waitUntil(() => promptAnswer !== undefined || !editor?.running, 'the prompt answer', 120_000, 50);
      expect(promptAnswer?.result?.stopReason, JSON.stringify(promptAnswer)).to.equal('end_turn');
      expect(answeredAfter).to.equal(count);
      expect(order).to.deep.equal(Array.from({ length: count }, (_, index) => index));
      console.log(`      peak RSS of warden: ${editor.peakRssMb()} MB (40 MB stream, 5 s paused)`);
    } finally {
      await editor?.close();
      editor = undefined;
      bin.remove();
    }
  });
});
