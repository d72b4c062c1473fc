/**
 * Flow control: warden's peak resident memory (VmHWM of the `warden acp` process) when the
 * editor reads slowly, for a small and a large amount of the same traffic. Flat memory means
 * the large case's peak stays near the small one's, not in proportion to the bytes moved.
 *
 * - replay: `session/load` of a journaled session of N updates of 2 KB (written through the
 *   journal API into a SQLite file), the editor reading everything;
 * - stream: a prompt answered with N updates of 10 KB by an ACP agent on PATH
 *   (spec/support/stream-agent.mjs), the editor pausing 5 s after the first;
 * - pipelined: N `session/list` requests written at once while the editor reads nothing for
 *   8 s, then everything;
 * - forwarded: the same with N `session/set_mode`, which the agent answers (bounded by the
 *   connection's cap of 1024 unanswered requests, not by the output's 1 MiB).
 *
 * `npm run bench -- flow` (about 3 minutes). Each case is a fresh warden; figures in MB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeLongSession } from '../spec/support/long-session.js';
import { binDirWith, openSession, PipeEditor, type WireMessage } from '../spec/support/pipe-editor.js';

const streamAgent = fileURLToPath(new URL('../spec/support/stream-agent.mjs', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, editor: PipeEditor, what: string, deadlineMs = 300_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (!editor.running) throw new Error(`warden exited waiting for ${what}:\n${editor.stderr}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Warden held to a V8 heap of `heapMb` (what it really needs; without it V8 grows the heap lazily under a high allocation rate). */
function heapCap(heapMb: number | undefined): { env?: Record<string, string> } {
  return heapMb === undefined ? {} : { env: { NODE_OPTIONS: `--max-old-space-size=${heapMb}` } };
}

async function withWork<T>(run: (work: string) => Promise<T>): Promise<T> {
  const work = mkdtempSync(join(tmpdir(), 'warden-bench-flow-'));
  try {
    return await run(work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Peak RSS of a warden replaying `updates` journaled updates of 2 KB. */
function replayPeak(updates: number, heapMb?: number): Promise<number> {
  return withWork(async (work) => {
    const store = join(work, 'journal.sqlite');
    const sessionId = writeLongSession(store, work, updates, 2048);
    let seen = 0;
    let loaded = false;
    const editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', store],
      ...heapCap(heapMb),
      onMessage: (message: WireMessage) => {
        if (message.method === 'session/update') seen++;
        if (message.id === 'load') loaded = true;
      },
    });
    try {
      const init = editor.answer(1);
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }));
      await init;
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: work, mcpServers: [] } }));
      await until(() => loaded, editor, 'the load answer');
      if (seen < updates) throw new Error(`replayed ${seen} of ${updates} updates`);
      return editor.peakRssMb();
    } finally {
      await editor.close();
    }
  });
}

/** Peak RSS of a warden relaying `updates` updates of 10 KB to an editor that pauses 5 s. */
function streamPeak(updates: number, heapMb?: number): Promise<number> {
  return withWork(async (work) => {
    const bin = binDirWith({ 'stream-agent': streamAgent });
    let seen = 0;
    let answered = false;
    const editor = PipeEditor.launch({
      args: ['--agent', `acp:stream-agent ${updates} 10000`, '--store', join(work, 'journal.sqlite')],
      binDir: bin.dir,
      ...heapCap(heapMb),
      onMessage: (message: WireMessage) => {
        if (message.method === 'session/update') seen++;
        if (message.id === 'prompt') answered = true;
      },
    });
    try {
      const sessionId = await openSession(editor, work);
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'prompt', method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } }));
      await until(() => seen > 0, editor, 'the first update');
      editor.pauseReading();
      await sleep(5000);
      editor.resumeReading();
      await until(() => answered, editor, 'the prompt answer');
      if (seen < updates) throw new Error(`got ${seen} of ${updates} updates`);
      return editor.peakRssMb();
    } finally {
      await editor.close();
      bin.remove();
    }
  });
}

/** Peak RSS of a warden answering `requests` pipelined session/list requests, 8 s unread first. */
function pipelinedPeak(requests: number, heapMb?: number): Promise<number> {
  return withWork(async (work) => {
    let answers = 0;
    const editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', join(work, 'journal.sqlite')],
      ...heapCap(heapMb),
      onMessage: (message: WireMessage) => {
        if (typeof message.id === 'number' && message.id >= 1000) answers++;
      },
    });
    try {
      await openSession(editor, work);
      await editor.request('session/new', { cwd: work, mcpServers: [] }, 3);
      editor.pauseReading();
      const lines: string[] = [];
      for (let index = 0; index < requests; index++) lines.push(`{"jsonrpc":"2.0","id":${1000 + index},"method":"session/list","params":{}}`);
      editor.child.stdin.write(`${lines.join('\n')}\n`);
      await sleep(8000);
      editor.resumeReading();
      await until(() => answers === requests, editor, `${requests} answers`);
      return editor.peakRssMb();
    } finally {
      await editor.close();
    }
  });
}

/**
 * Peak RSS of a warden answering `requests` pipelined session/set_mode requests (each
 * answered by the agent, so nothing reaches stdout until it is), 8 s unread first.
 */
function forwardedPeak(requests: number, heapMb?: number): Promise<number> {
  return withWork(async (work) => {
    let answers = 0;
    const editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', join(work, 'journal.sqlite')],
      ...heapCap(heapMb),
      onMessage: (message: WireMessage) => {
        if (typeof message.id === 'number' && message.id >= 1000) answers++;
      },
    });
    try {
      const sessionId = await openSession(editor, work);
      editor.pauseReading();
      const lines: string[] = [];
      for (let index = 0; index < requests; index++) {
        lines.push(`{"jsonrpc":"2.0","id":${1000 + index},"method":"session/set_mode","params":{"sessionId":"${sessionId}","modeId":"${index % 2 === 0 ? 'auto' : 'ask'}"}}`);
      }
      editor.child.stdin.write(`${lines.join('\n')}\n`);
      await sleep(8000);
      editor.resumeReading();
      await until(() => answers === requests, editor, `${requests} answers`);
      return editor.peakRssMb();
    } finally {
      await editor.close();
    }
  });
}

/** Baseline: initialize and one session, nothing else. */
function idlePeak(): Promise<number> {
  return withWork(async (work) => {
    const editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', join(work, 'journal.sqlite')] });
    try {
      await openSession(editor, work);
      return editor.peakRssMb();
    } finally {
      await editor.close();
    }
  });
}

function row(name: string, small: { label: string; mb: number }, large: { label: string; mb: number }): void {
  console.log(`  ${name.padEnd(10)} ${small.label.padStart(22)}: ${small.mb.toFixed(1).padStart(6)} MB   ${large.label.padStart(24)}: ${large.mb.toFixed(1).padStart(6)} MB   ratio ${(large.mb / small.mb).toFixed(2)}`);
}

export async function flowControl(): Promise<void> {
  console.log('\n## Flow control: peak RSS of warden acp (VmHWM), small vs large');
  console.log(`  idle       initialize + session/new: ${(await idlePeak()).toFixed(1)} MB`);
  row('replay', { label: '1,000 × 2 KB (2 MB)', mb: await replayPeak(1_000) }, { label: '50,000 × 2 KB (102 MB)', mb: await replayPeak(50_000) });
  row('replay', { label: '1,000 × 2 KB (2 MB)', mb: await replayPeak(1_000) }, { label: '100,000 × 2 KB (205 MB)', mb: await replayPeak(100_000) });
  row('stream', { label: '400 × 10 KB (4 MB)', mb: await streamPeak(400) }, { label: '4,000 × 10 KB (40 MB)', mb: await streamPeak(4_000) });
  row('stream', { label: '400 × 10 KB (4 MB)', mb: await streamPeak(400) }, { label: '16,000 × 10 KB (160 MB)', mb: await streamPeak(16_000) });
  row('pipelined', { label: '40,000 session/list', mb: await pipelinedPeak(40_000) }, { label: '400,000 session/list', mb: await pipelinedPeak(400_000) });
  row('forwarded', { label: '20,000 set_mode', mb: await forwardedPeak(20_000) }, { label: '200,000 set_mode', mb: await forwardedPeak(200_000) });
  console.log('  the same with warden held to a 128 MB heap (--max-old-space-size=128):');
  row('replay', { label: '1,000 × 2 KB (2 MB)', mb: await replayPeak(1_000, 128) }, { label: '100,000 × 2 KB (205 MB)', mb: await replayPeak(100_000, 128) });
  row('stream', { label: '400 × 10 KB (4 MB)', mb: await streamPeak(400, 128) }, { label: '16,000 × 10 KB (160 MB)', mb: await streamPeak(16_000, 128) });
  row('pipelined', { label: '40,000 session/list', mb: await pipelinedPeak(40_000, 128) }, { label: '400,000 session/list', mb: await pipelinedPeak(400_000, 128) });
  row('forwarded', { label: '20,000 set_mode', mb: await forwardedPeak(20_000, 128) }, { label: '200,000 set_mode', mb: await forwardedPeak(200_000, 128) });
}
