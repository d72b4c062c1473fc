/**
 * `session/load` of a 100 MB history through a real `warden acp --store FILE`: the load
 * completes, warden's peak resident memory (VmHWM) against an idle warden's, and the
 * throughput in MB of history a second (from the request to the answer). The history is
 * 51,200 agent message chunks of 2 KB (100 MiB of journal entries), written straight into the
 * SQLite store through the journal API; the editor (this process, spec/support/pipe-editor.ts)
 * reads everything as fast as it can, then, a second time, in bursts (150 ms stopped, 50 ms
 * reading: a slow editor). Each case is a fresh warden, with no heap cap (what a user runs).
 *
 * `npm run bench -- load-history` (about 1 minute).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeLongSession } from '../spec/support/long-session.js';
import { openSession, PipeEditor, type WireMessage } from '../spec/support/pipe-editor.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const updates = 51_200;
const updateBytes = 2048;

async function withWork<T>(run: (work: string) => Promise<T>): Promise<T> {
  const work = mkdtempSync(join(tmpdir(), 'warden-bench-load-'));
  try {
    return await run(work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Peak RSS of a warden that answered initialize and one session/new, nothing else. */
function idlePeak(): Promise<number> {
  return withWork(async (work) => {
    const editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', join(work, 'journal.sqlite')] });
    try {
      await openSession(editor, work);
      await sleep(500);
      return editor.peakRssMb();
    } finally {
      await editor.close();
    }
  });
}

interface LoadFigures {
  readonly peakMb: number;
  readonly seconds: number;
  readonly storeMb: number;
}

/** One load of the history; `slow`: the editor reads in bursts. */
function load(store: string, sessionId: string, work: string, slow: boolean): Promise<LoadFigures> {
  return (async () => {
    let seen = 0;
    let answer: WireMessage | undefined;
    const editor = PipeEditor.launch({
      args: ['--agent', 'demo', '--store', store],
      onMessage: (message: WireMessage) => {
        // The history's chunks (the demo agent adds its commands after the load).
        if (message.method === 'session/update' && (message.params?.update?.content?.text as string | undefined)?.startsWith('#')) seen++;
        else if (message.id === 'load') answer = message;
      },
    });
    try {
      const init = await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {} });
      if (init.error) throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
      const started = performance.now();
      editor.writeLine(JSON.stringify({ jsonrpc: '2.0', id: 'load', method: 'session/load', params: { sessionId, cwd: work, mcpServers: [] } }));
      const deadline = Date.now() + 600_000;
      while (answer === undefined && editor.running && Date.now() < deadline) {
        if (slow) {
          editor.pauseReading();
          await sleep(150);
          editor.resumeReading();
          await sleep(50);
        } else {
          await sleep(5);
        }
      }
      const seconds = (performance.now() - started) / 1000;
      if (answer?.error || answer === undefined) throw new Error(`the load failed: ${JSON.stringify(answer)}\n${editor.stderr.slice(-600)}`);
      if (seen !== updates) throw new Error(`replayed ${seen} of ${updates} updates`);
      return { peakMb: editor.peakRssMb(), seconds, storeMb: statSync(store).size / 1e6 };
    } finally {
      await editor.close();
    }
  })();
}

export async function loadHistory(): Promise<void> {
  console.log(`\n## session/load of a 100 MiB history (${updates.toLocaleString('en')} × ${updateBytes} B), warden acp, no heap cap`);
  const idle = await idlePeak();
  console.log(`  idle (initialize + session/new): peak RSS ${idle.toFixed(1)} MB`);
  await withWork(async (work) => {
    const store = join(work, 'journal.sqlite');
    const sessionId = writeLongSession(store, work, updates, updateBytes);
    const historyMb = (updates * updateBytes) / 1e6;
    for (const slow of [false, true]) {
      const figures = await load(store, sessionId, work, slow);
      console.log(
        `  ${slow ? 'editor reading in bursts' : 'editor reading at once  '}: completed in ${figures.seconds.toFixed(2)} s, ` +
          `${(historyMb / figures.seconds).toFixed(1)} MB/s, peak RSS ${figures.peakMb.toFixed(1)} MB (idle + ${(figures.peakMb - idle).toFixed(1)} MB; store ${figures.storeMb.toFixed(0)} MB)`,
      );
    }
  });
}
