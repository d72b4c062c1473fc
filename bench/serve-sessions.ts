/**
 * `warden sessions --json` against a warm `warden serve --agent demo`: spawn to exit (the
 * whole one-shot call: Node, the command's modules, the token file, the WebSocket upgrade,
 * `initialize`, `_acp-warden/sessions`, the close), against a bare `node -e 0` in the same
 * run (the floor of any Node command). From a fresh tsc build of src/, the daemon started
 * once and already listing once; cases interleaved, 1 warm-up round, 15 measured. Prints
 * figures; asserts only that each call exited 0 with the JSON list.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWarden } from './support/build-warden.js';
import { killGroup, startServeDaemon } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, table, withDeadline, type Stats } from './support/measure.js';

const plan = { warmup: 1, repetitions: 15 };

/** Spawns `node ARGS`, resolves with the ns from the spawn to its exit; checks status 0 and, when asked, the JSON list on stdout. */
async function spawnToExit(args: readonly string[], env: NodeJS.ProcessEnv, expectList: boolean): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  try {
    const status = await withDeadline(new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))), `${args.join(' ')} to exit`);
    const ns = Number(process.hrtime.bigint() - started);
    check(status === 0, `${args.slice(1).join(' ')} exited 0 (${String(status)}: ${stderr.trim()})`);
    if (expectList) check(Array.isArray((JSON.parse(stdout) as { sessions?: unknown }).sessions), `warden sessions --json printed {"sessions": [...]} (${stdout.slice(0, 200)})`);
    return ns;
  } finally {
    killGroup(child);
  }
}

const ms = (stats: Stats, of: 'median' | 'min' | 'max') => `${(stats[of] / 1e6).toFixed(1)} ms`;

export async function serveSessions(): Promise<void> {
  console.log('\n## warden sessions --json against a warm daemon: spawn -> exit, against node -e 0');
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-sessions-'));
  let daemon: ReturnType<typeof spawn> | undefined;
  try {
    const main = buildWarden(join(scratch, 'build'));
    const env = { ...process.env, XDG_STATE_HOME: join(scratch, 'state'), HOME: scratch };
    const started = await startServeDaemon(main, env, ['--store', ':memory:']);
    daemon = started.child;
    const sessions = [main, 'sessions', '--connect', started.url, '--json'];
    await spawnToExit(sessions, env, true); // the daemon's first listing: warm from here on
    const stats = await measureInterleaved(plan, {
      sessions: () => spawnToExit(sessions, env, true),
      node: () => spawnToExit(['-e', '0'], env, false),
    });
    console.log(`${plan.repetitions} cases each after ${plan.warmup} warm-up round, interleaved; median (min–max)`);
    console.log(table(['case', 'spawn -> exit', '/ node -e 0'], [
      ['warden sessions --json (warm daemon)', `${ms(stats.sessions, 'median')} (${ms(stats.sessions, 'min')}–${ms(stats.sessions, 'max')})`, formatRatio(stats.sessions.median / stats.node.median)],
      ['node -e 0 (the floor)', `${ms(stats.node, 'median')} (${ms(stats.node, 'min')}–${ms(stats.node, 'max')})`, formatRatio(1)],
    ]));
  } finally {
    if (daemon) killGroup(daemon);
    rmSync(scratch, { recursive: true, force: true });
  }
}
