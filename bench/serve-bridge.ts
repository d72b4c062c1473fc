/**
 * The bridge's startup (issue 16): what an editor waits for when it launches
 * `warden acp --connect URL` against a warm `warden serve --agent demo`, against launching a
 * plain `warden acp --agent demo`, same machine, same run. Issue 16's goal: spawn ->
 * `initialize` answered ≤ 0.3× plain `warden acp`'s. Prints figures; asserts only that every
 * answer is a result, that no process of a case is left, and what the bridge's process loads
 * (no xstate, and `ws` required as CommonJS: the ES module graph holds none of its files).
 *
 * Both from a fresh tsc build of src/ (what the package's bin runs), each case in a fresh
 * state directory; the daemon is started once, before the rounds, and answers one
 * `initialize` first (warm). Cases interleaved round by round, 1 warm-up round, 15 measured.
 * A bare `node -e` answering the first line is the floor any Node program starts from; the
 * daemon's own share is measured apart, from this process: a WebSocket opened, then
 * `initialize` sent, to its answer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWarden } from './support/build-warden.js';
import { killGroup, startServeDaemon } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, table, withDeadline, type Stats } from './support/measure.js';

const plan = { warmup: 1, repetitions: 15 };
/** A bare Node process answering the first line it reads: what any Node adapter starts from. */
const nodeFloor = `process.stdin.once('data', () => process.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\\n')); process.stdin.on('end', () => process.exit(0));`;
const initializeLine = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } } })}\n`;

/** Spawns `node main ARGS`, sends `initialize`, resolves with the ns from the spawn to its answer; the process is gone when it resolves. */
async function spawnToInitialize(main: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [main, ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const answered = await withDeadline(
      new Promise<{ at: bigint; line: string }>((resolve, reject) => {
        let buffered = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          const at = process.hrtime.bigint();
          buffered += chunk.toString('utf8');
          const newline = buffered.indexOf('\n');
          if (newline >= 0) resolve({ at, line: buffered.slice(0, newline) });
        });
        void exited.then(() => reject(new Error(`${args.join(' ')} exited before answering initialize: ${stderr}`)));
        child.stdin?.write(initializeLine);
      }),
      `${args.join(' ')} initialize`,
    );
    check('result' in (JSON.parse(answered.line) as object), `initialize answered with a result (${answered.line.slice(0, 200)})`);
    child.stdin?.end();
    await withDeadline(exited, `${args.join(' ')} to exit after stdin closed`);
    return Number(answered.at - started);
  } finally {
    killGroup(child);
  }
}

/** In this process: a WebSocket to the daemon opened, then `initialize` sent; the ns from the open to its answer (the daemon's share of a bridge's start). */
async function daemonInitialize(url: string, token: string): Promise<number> {
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  try {
    await withDeadline(once(socket, 'open'), 'the WebSocket to open');
    const started = process.hrtime.bigint();
    const answered = withDeadline(once(socket, 'message'), 'initialize over the WebSocket');
    socket.send(initializeLine.trim());
    const [data] = (await answered) as [Buffer];
    const ns = Number(process.hrtime.bigint() - started);
    check('result' in (JSON.parse(data.toString('utf8')) as object), 'initialize over the WebSocket answered with a result');
    return ns;
  } finally {
    socket.terminate();
  }
}

/**
 * The ES modules a bridge's process loads (Node's `NODE_DEBUG=esm` log): checks that the
 * bridge's own modules are there and that neither xstate nor any file of `ws` is (ws is
 * required as CommonJS: imported, Node's ESM loader takes its files through its CommonJS
 * translator, about 35 ms of the bridge's start); returns how many of warden's modules load.
 */
function checkBridgeModules(main: string, url: string, env: NodeJS.ProcessEnv): number {
  const run = spawnSync(process.execPath, [main, 'acp', '--connect', url], { input: initializeLine, env: { ...env, NODE_DEBUG: 'esm' }, encoding: 'utf8', timeout: 60_000 });
  check(run.status === 0 && run.stdout.includes('"result"'), `the bridge under NODE_DEBUG=esm answered initialize and exited 0 (status ${String(run.status)})`);
  const urls = new Set(run.stderr.match(/file:\/\/[^\s'"]+/g) ?? []);
  check([...urls].some((found) => found.endsWith('/dist/serve/bridge.js')), 'the NODE_DEBUG=esm log names the bridge\'s modules');
  check(![...urls].some((found) => found.includes('/node_modules/ws/')), 'the bridge loads ws as CommonJS, not through its ESM wrapper');
  check(![...urls].some((found) => found.includes('/node_modules/xstate/')), 'the bridge loads no xstate');
  return [...urls].filter((found) => found.includes('/dist/')).length;
}

const ms = (stats: Stats, of: 'median' | 'min' | 'max') => `${(stats[of] / 1e6).toFixed(1)} ms`;

export async function serveBridge(): Promise<void> {
  console.log('\n## Bridge startup: warden acp --connect (warm daemon) spawn -> initialize answered, against plain warden acp --agent demo');
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-bridge-'));
  let daemon: ChildProcess | undefined;
  try {
    const main = buildWarden(join(scratch, 'build'));
    const env = { ...process.env, XDG_STATE_HOME: join(scratch, 'state'), HOME: scratch };
    const started = await startServeDaemon(main, env, ['--store', ':memory:']);
    daemon = started.child;
    await spawnToInitialize(main, ['acp', '--connect', started.url], env); // the daemon's first connection: warm from here on
    const wardenModules = checkBridgeModules(main, started.url, env);
    const token = readFileSync(join(scratch, 'state', 'acp-warden', 'token'), 'utf8').trim();
    const stats = await measureInterleaved(plan, {
      bridge: () => spawnToInitialize(main, ['acp', '--connect', started.url], env),
      plain: () => spawnToInitialize(main, ['acp', '--agent', 'demo', '--store', ':memory:'], env),
      node: () => spawnToInitialize('-e', [nodeFloor], env),
      daemon: () => daemonInitialize(started.url, token),
    });
    console.log(`${plan.repetitions} cases each after ${plan.warmup} warm-up round, interleaved; median (min–max); goal: bridge ≤ 0.3× plain; the bridge loads ${wardenModules} of warden's modules, ws as CommonJS, no xstate`);
    console.log(table(['case', 'spawn -> initialize answered', '/ plain warden acp'], [
      ['warden acp --connect (bridge, warm daemon)', `${ms(stats.bridge, 'median')} (${ms(stats.bridge, 'min')}–${ms(stats.bridge, 'max')})`, formatRatio(stats.bridge.median / stats.plain.median)],
      ['warden acp --agent demo (plain)', `${ms(stats.plain, 'median')} (${ms(stats.plain, 'min')}–${ms(stats.plain, 'max')})`, formatRatio(1)],
      ['of the bridge\'s: the daemon, WebSocket open -> initialize answered (in-process client)', `${ms(stats.daemon, 'median')} (${ms(stats.daemon, 'min')}–${ms(stats.daemon, 'max')})`, formatRatio(stats.daemon.median / stats.plain.median)],
      ['node -e (answers the first line: the floor)', `${ms(stats.node, 'median')} (${ms(stats.node, 'min')}–${ms(stats.node, 'max')})`, formatRatio(stats.node.median / stats.plain.median)],
    ]));
  } finally {
    if (daemon) killGroup(daemon);
    rmSync(scratch, { recursive: true, force: true });
  }
}
