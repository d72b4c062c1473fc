/**
 * Big agent lines: warden's peak resident memory (VmHWM of the `warden acp` process) when a
 * native ACP agent (spec/support/sdk-agent.mjs, `--agent "acp:node ..."`) sends one
 * session/update carrying an image of N bytes of base64, read (under the 64 MiB default) or
 * skipped (`--max-line-mib 1`), against the same agent sending a 100 KB image. A skipped line
 * should cost what the small one costs: only its edges are kept.
 *
 * `npm run bench -- agent-lines` (about a minute). Each case is a fresh warden; figures in MB.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSession, PipeEditor } from '../spec/support/pipe-editor.js';

const sdkAgent = fileURLToPath(new URL('../spec/support/sdk-agent.mjs', import.meta.url));

/** Peak RSS of a warden whose agent answers one prompt with an image of `bytes` base64 characters. */
async function imagePeak(bytes: number, maxLineMib?: number, heapMb?: number): Promise<{ mb: number; delivered: number }> {
  const work = mkdtempSync(join(tmpdir(), 'warden-bench-lines-'));
  let delivered = 0;
  const editor = PipeEditor.launch({
    args: ['--agent', `acp:node ${sdkAgent}`, '--store', ':memory:', ...(maxLineMib ? ['--max-line-mib', String(maxLineMib)] : [])],
    // The V8 heap cap goes to warden only (NODE_OPTIONS is not passed to the agent's isolated environment).
    ...(heapMb ? { env: { NODE_OPTIONS: `--max-old-space-size=${heapMb}` } } : {}),
    onMessage: (message) => {
      const content = message.params?.update?.content;
      if (content?.type === 'image') delivered = (content.data as string).length;
    },
  });
  try {
    const sessionId = await openSession(editor, work);
    const answer = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `screenshot ${bytes}` }] });
    if (answer.result?.stopReason !== 'end_turn') throw new Error(`the prompt did not end: ${JSON.stringify(answer.error)}\n${editor.stderr}`);
    return { mb: editor.peakRssMb(), delivered };
  } finally {
    await editor.close();
    rmSync(work, { recursive: true, force: true });
  }
}

export async function agentLines(): Promise<void> {
  console.log('\n## Agent lines: peak RSS of warden acp (VmHWM), one image update from a native ACP agent');
  const mb = 1024 * 1024;
  const small = await imagePeak(100 * 1024);
  const cases = [
    { name: '40 MB image, read (default 64 MiB limit)', ...(await imagePeak(40 * mb)) },
    { name: '40 MB image, skipped (--max-line-mib 1)', ...(await imagePeak(40 * mb, 1)) },
    { name: '160 MB image, skipped (--max-line-mib 1)', ...(await imagePeak(160 * mb, 1)) },
    { name: '40 MB image, skipped, 128 MB heap', ...(await imagePeak(40 * mb, 1, 128)) },
    { name: '40 MB image, read, 256 MB heap', ...(await imagePeak(40 * mb, undefined, 256)) },
    { name: '5 MB image, read', ...(await imagePeak(5 * mb)) },
  ];
  console.log(`  ${'100 KB image, read (baseline)'.padEnd(44)} ${small.mb.toFixed(1).padStart(6)} MB   delivered ${small.delivered} B`);
  for (const entry of cases) {
    console.log(`  ${entry.name.padEnd(44)} ${entry.mb.toFixed(1).padStart(6)} MB   delivered ${entry.delivered} B   ratio to baseline ${(entry.mb / small.mb).toFixed(2)}`);
  }
}
