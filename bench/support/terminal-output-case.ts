/**
 * One case of the terminal output benchmark, run in a fresh process so that its peak RSS is
 * its own: `node --expose-gc --import tsx bench/support/terminal-output-case.ts MODE BYTES [LIMIT [CAP]]`.
 * MODE `spawn` drains the command's stdout through a bare `child_process.spawn` (decoded as
 * UTF-8, then dropped): the floor. MODE `terminal` runs it as a terminal (`Terminals`, a port
 * under a dynamic supervisor) asking for `outputByteLimit` LIMIT (`default`: none given),
 * waits for its exit and reads its output once; CAP is the host's `maxOutputByteLimit`
 * (`default`: 16 MiB). MODE `tail-pieces` appends BYTES one-character pieces straight to an
 * `OutputTail` of 16 MiB (a command writing a byte at a time, with no pipe to coalesce it).
 * Prints one JSON line of figures.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from 'xstate';
import { OutputTail } from '../../src/acp/output-tail.js';
import { Terminals } from '../../src/acp/terminals.js';
import { createDynamicSupervisor } from '../../src/supervision/index.js';

const [mode, bytesArg, limitArg = 'default', capArg = 'default'] = process.argv.slice(2);
const bytes = Number(bytesArg);
// Bare names through the PATH, as an agent's command line is.
const command = `yes 0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ | head -c ${bytes}`;
const cwd = mkdtempSync(join(tmpdir(), 'warden-bench-term-'));

globalThis.gc?.();
const rssBefore = process.memoryUsage().rss;
const started = process.hrtime.bigint();
let outputBytes = 0;
let truncated = false;
if (mode === 'tail-pieces') {
  const tail = new OutputTail(16 * 2 ** 20);
  for (let i = 0; i < bytes; i++) tail.append(String.fromCharCode(97 + (i % 26)));
  outputBytes = Buffer.byteLength(tail.text);
  truncated = tail.truncated;
} else if (mode === 'spawn') {
  const child = spawn('sh', ['-c', command], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text: string) => (outputBytes += Buffer.byteLength(text)));
  await new Promise((resolve) => child.on('close', resolve));
} else {
  const supervisor = createActor(createDynamicSupervisor({ name: 'terminals' })).start();
  const terminals = new Terminals(supervisor, capArg === 'default' ? {} : { maxOutputByteLimit: Number(capArg) });
  const outputByteLimit = limitArg === 'default' ? undefined : Number(limitArg);
  const { terminalId } = await terminals.create({ sessionId: 'bench', command: 'sh', args: ['-c', command], ...(outputByteLimit === undefined ? {} : { outputByteLimit }) }, [cwd]);
  await terminals.waitForExit({ sessionId: 'bench', terminalId });
  const output = terminals.output({ sessionId: 'bench', terminalId });
  outputBytes = Buffer.byteLength(output.output);
  truncated = output.truncated;
  await terminals.release({ sessionId: 'bench', terminalId });
  supervisor.stop();
}
const ms = Number(process.hrtime.bigint() - started) / 1e6;
const peakMb = process.resourceUsage().maxRSS / 1024;
rmSync(cwd, { recursive: true, force: true });
console.log(JSON.stringify({ mode, limit: limitArg, cap: capArg, ms, rssBeforeMb: rssBefore / 2 ** 20, peakMb, growthMb: peakMb - rssBefore / 2 ** 20, outputBytes, truncated }));
