/**
 * Flow control through a real `warden acp`, for requests the agent answers: warden stops
 * reading the editor at 1024 unanswered and still reads the agent's answers and the editor's
 * permission answers, so nothing deadlocks and nothing piles up. A file of its own (split from
 * flow-control.spec.ts, about 4 of its 6 minutes on a loaded CI machine) so that mocha's
 * parallel workers can run the two halves side by side. Peak RSS of warden is printed for
 * docs/benchmarks.md.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession, PipeEditor, type WireMessage } from '../support/pipe-editor.js';
import { waitUntil } from '../support/processes.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('warden acp: flow control of requests the agent answers, with an editor that reads slowly', function () {
  this.timeout(420_000);
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

  // 50,000 requests of about 1 KB each (a `_meta` of 800 bytes): 50 MB that warden would hold,
  // parsed, if it read on past 1024 unanswered; a quarter of the round trips of the 200,000
  // short requests this case sent before (174 s of a CI run). What warden read is counted too.
  it('50,000 pipelined session/set_mode requests of 1 KB (50 MB), each answered by the agent, while the editor reads nothing for 8 s: warden stops reading at 1024 unanswered, stays in a 128 MB heap, then answers every one', async () => {
    const total = 50_000;
    const pad = 'x'.repeat(800);
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
    const sessionId = await openSession(editor, work);
    editor.pauseReading();
    const lines: string[] = [];
    for (let index = 0; index < total; index++) {
      lines.push(`{"jsonrpc":"2.0","id":${1000 + index},"method":"session/set_mode","params":{"sessionId":"${sessionId}","modeId":"${index % 2 === 0 ? 'auto' : 'ask'}","_meta":{"pad":"${pad}"}}}`);
    }
    // Written a chunk at a time, so that what the pipe took (what warden read, and the pipe's
    // 64 KB) is counted against what came back. With the cap, what warden has read and not
    // answered is at most 1024 requests, plus its bounded buffers: 1 MiB of input held unparsed
    // (about 1,000 requests), 256 KB of answers queued and the two pipes' 64 KB (about 7,300
    // answers of 45 bytes): under 10,000. Without it, warden reads the 50 MB as fast as the
    // editor takes answers, and tens of thousands are owed.
    const mostOwed = 15_000;
    let taken = 0;
    let takenRequests = 0;
    let owed = 0;
    for (let index = 0; index < lines.length; index += 64) {
      const count = Math.min(64, lines.length - index);
      const chunk = `${lines.slice(index, index + count).join('\n')}\n`;
      editor.child.stdin.write(chunk, () => {
        taken += Buffer.byteLength(chunk);
        takenRequests += count;
        owed = Math.max(owed, takenRequests - answered.size);
      });
    }
    await sleep(8000);
    expect(editor.running, `warden exited while the editor was not reading:\n${editor.stderr.slice(-600)}`).to.equal(true);
    expect(taken, `bytes of requests warden read while nothing it answered was read (of ${total} requests of about 1 KB)`).to.be.below(12 * 1024 * 1024);
    console.log(`      warden read ${(taken / 1024 / 1024).toFixed(1)} MB of the 50 MB of requests in 8 s unread`);
    editor.resumeReading();
    await waitUntil(() => answered.size === total || !editor?.running || owed > mostOwed, () => `${total} answers (got ${answered.size})`, 360_000, 50);
    expect(owed, 'requests warden read and had not answered, at most (1024 unanswered and its bounded buffers)').to.be.at.most(mostOwed);
    expect(editor.running, `warden exited:\n${editor.stderr.slice(-600)}`).to.equal(true);
    expect(answered.size).to.equal(total);
    expect(errors).to.equal(0);
    console.log(`      peak RSS of warden: ${editor.peakRssMb()} MB (50k set_mode requests of 1 KB, 8 s unread); at most ${owed} requests read and not answered`);
  });

  it('1,100 pipelined prompts, each waiting on a permission the editor grants: past 1024 unanswered warden still reads the answers, and every prompt ends', async () => {
    const total = 1100;
    const ended = new Set<number>();
    let asked = 0;
    editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', join(work, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0'],
      onMessage: (message: WireMessage) => {
        if (message.method === 'session/request_permission' && message.id !== undefined) {
          asked++;
          editor?.writeLine(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } }));
        } else if (typeof message.id === 'number' && message.id >= 1000 && message.result?.stopReason === 'end_turn') ended.add(message.id);
      },
    });
    const sessionId = await openSession(editor, work);
    const lines: string[] = [];
    for (let index = 0; index < total; index++) {
      lines.push(JSON.stringify({ jsonrpc: '2.0', id: 1000 + index, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: `run the tool, #${index}` }] } }));
    }
    editor.child.stdin.write(`${lines.join('\n')}\n`);
    await waitUntil(() => ended.size === total || !editor?.running, () => `${total} prompts to end (${ended.size} did, ${asked} permissions asked)`, 240_000, 50);
    expect(ended.size).to.equal(total);
    expect(asked).to.equal(total);
  });
});
