/**
 * Startup: what an editor waits for before it can talk to its agent, `warden acp --agent
 * claude` against `@agentclientprotocol/claude-agent-acp`, same machine, same run. Prints
 * figures; asserts nothing about speed (it checks that every answer is a result and that no
 * process of a case is left). Issue 15's goal: spawn -> `initialize` answered ≤ 0.5× the peer's.
 *
 * Each case is an editor: spawn the adapter in a fresh HOME and working directory, send
 * `initialize` (with `fs` and `terminal` capabilities, as Zed does) at once, `session/new`
 * when it is answered, then close stdin. Times are from the spawn to each answer's line.
 *
 * - warden (built): `node <fresh tsc build of src/>/cli/main.js acp --agent claude`, what the
 *   package's bin `warden` runs; `claude` is found through PATH (a shim to
 *   spec/support/fake-claude.mjs, the recorded Claude Code 2.1.332), its journal on disk.
 * - warden (tsx): the same from src/ through `node --import tsx` (what the tests run; not
 *   what a user runs), for scale.
 * - claude-agent-acp: `node .cache/peers/.../dist/index.js` with `CLAUDE_CODE_EXECUTABLE` set
 *   to the same fake (installed by `npm run bench:peers`; without it the peer rows are skipped).
 * - node: a bare `node -e` that answers the first line: the floor any Node adapter starts from.
 *
 * Also the adapter process's own CPU time when `initialize` was answered (/proc, 10 ms ticks): on a
 * shared machine the wall-clock times move with the load, the CPU a process needs much less.
 *
 * Cases interleaved round by round, 1 warm-up round, 11 measured. Then one more run of each
 * adapter counts the modules it had loaded when it answered `initialize`, and before exiting
 * (through `import`: spec/support/module-log.mjs; through `require()`: require-log.cjs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWarden } from './support/build-warden.js';
import { check, formatRatio, summarize, table, withDeadline, type Stats } from './support/measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const fakeClaude = join(root, 'spec', 'support', 'fake-claude.mjs');
const moduleLog = join(root, 'spec', 'support', 'module-log.mjs');
const requireLog = join(root, 'spec', 'support', 'require-log.cjs');
const tsx = import.meta.resolve('tsx');
const peersDir = process.env.WARDEN_PEERS_DIR ?? join(root, '.cache', 'peers');
const peerPackage = join(peersDir, 'node_modules', '@agentclientprotocol', 'claude-agent-acp');
const peerEntry = join(peerPackage, 'dist', 'index.js');
const plan = { warmup: 1, repetitions: 11 };

type Side = 'warden (built)' | 'warden (tsx)' | 'claude-agent-acp' | 'node';
interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** Whether it answers session/new (the bare node does not). */
  readonly sessions: boolean;
}
interface Sample {
  readonly initialized: number;
  readonly ready: number | undefined;
  /** The adapter process's own CPU time (user + system) when `initialize` was answered, ms (Linux /proc; 10 ms ticks). */
  readonly cpuMs: number;
  /** With a module log: its lines when `initialize` was answered. */
  readonly modulesAtInitialize: readonly string[];
}

/** CPU time (user + system, ms) of a live process so far; NaN where /proc cannot tell. */
function cpuOf(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

const initializeLine = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } } })}\n`;

/** Runs one case: spawn, initialize, session/new, close; every process of it gone before it resolves. */
async function runCase(side: Side, launch: Launch, extraEnv: Record<string, string> = {}): Promise<Sample> {
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-startup-'));
  const home = join(scratch, 'home');
  const bin = join(scratch, 'bin');
  mkdirSync(home);
  mkdirSync(bin);
  writeFileSync(join(bin, 'claude'), `#!/bin/sh\nexec '${process.execPath}' '${fakeClaude}' "$@"\n`, { mode: 0o755 });
  let child: ChildProcess | undefined;
  try {
    const started = process.hrtime.bigint();
    child = spawn(launch.command, [...launch.args], {
      cwd: home,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...launch.env, ...extraEnv, HOME: home, XDG_STATE_HOME: join(home, '.state'), PATH: `${bin}:${process.env.PATH ?? ''}`, FAKE_CLAUDE_DELAY_MS: '0' },
    });
    const running = child;
    let stderr = '';
    running.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    const answers = new Map<number, { at: bigint; message: Record<string, unknown> }>();
    const waiting = new Map<number, () => void>();
    let buffered = '';
    let cpuAtInitialize = Number.NaN;
    let modulesAtInitialize: string[] = [];
    running.stdout?.on('data', (chunk: Buffer) => {
      const at = process.hrtime.bigint();
      buffered += chunk.toString('utf8');
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const message = JSON.parse(buffered.slice(0, newline)) as Record<string, unknown>;
        buffered = buffered.slice(newline + 1);
        if (typeof message.id === 'number') {
          if (message.id === 1) {
            cpuAtInitialize = cpuOf(running.pid);
            if (extraEnv.MODULE_LOG && existsSync(extraEnv.MODULE_LOG)) modulesAtInitialize = readFileSync(extraEnv.MODULE_LOG, 'utf8').split('\n').filter(Boolean);
          }
          answers.set(message.id, { at, message });
          waiting.get(message.id)?.();
        }
      }
    });
    const answer = (id: number, what: string) =>
      withDeadline(
        Promise.race([
          new Promise<{ at: bigint; message: Record<string, unknown> }>((resolve) => {
            const settle = () => resolve(answers.get(id) as { at: bigint; message: Record<string, unknown> });
            if (answers.has(id)) settle();
            else waiting.set(id, settle);
          }),
          exited.then(() => Promise.reject(new Error(`${side} exited before answering ${what}: ${stderr}`))),
        ]),
        `${side} ${what}`,
      );
    running.stdin?.write(initializeLine);
    const initialized = await answer(1, 'initialize');
    check('result' in initialized.message, `${side}: initialize answered with a result (${JSON.stringify(initialized.message).slice(0, 300)})`);
    let ready: number | undefined;
    if (launch.sessions) {
      running.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: home, mcpServers: [] } })}\n`);
      const created = await answer(2, 'session/new');
      check('result' in created.message, `${side}: session/new answered with a result (${JSON.stringify(created.message).slice(0, 300)})`);
      ready = Number(created.at - started);
    }
    running.stdin?.end();
    const ended = () => running.exitCode !== null || running.signalCode !== null;
    const deadline = Date.now() + 5_000;
    while (!ended() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (!ended() && running.pid) process.kill(-running.pid, 'SIGKILL');
    await exited;
    return { initialized: Number(initialized.at - started), ready, cpuMs: cpuAtInitialize, modulesAtInitialize };
  } finally {
    // The editor is gone: nothing of the case's process group may stay.
    if (child?.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // the group is gone
      }
    }
    rmSync(scratch, { recursive: true, force: true });
  }
}

interface ModuleCounts {
  readonly total: number;
  readonly packages: number;
  /** Of `total`, those loaded by the time `initialize` was answered. */
  readonly atInitialize: number;
}

/** The modules one run of `launch` loaded, through `import` and `require()` (node_modules and the adapter's own). */
async function modulesOf(side: Side, launch: Launch): Promise<ModuleCounts> {
  const log = join(mkdtempSync(join(tmpdir(), 'warden-bench-modules-')), 'modules.log');
  try {
    const args = launch.command === process.execPath ? ['--import', moduleLog, '--require', requireLog, ...launch.args] : launch.args;
    const sample = await runCase(side, { ...launch, args }, { MODULE_LOG: log });
    const files = (lines: readonly string[]) => new Set(lines.filter((url) => url.startsWith('file://')));
    const urls = [...files(readFileSync(log, 'utf8').split('\n'))];
    return { total: urls.length, packages: urls.filter((url) => url.includes('/node_modules/')).length, atInitialize: files(sample.modulesAtInitialize).size };
  } finally {
    rmSync(join(log, '..'), { recursive: true, force: true });
  }
}

const ms = (ns: number) => `${(ns / 1e6).toFixed(1)} ms`;
const formatMs = (stats: Stats) => `${ms(stats.median)} (${ms(stats.min)}–${ms(stats.max)})`;

export async function startup(): Promise<void> {
  console.log('\n## Startup: warden acp spawn -> initialize answered, against claude-agent-acp (same fake Claude Code CLI)');
  const peer = existsSync(peerEntry);
  if (!peer) console.log(`claude-agent-acp is not installed (no ${peerEntry}): its rows are skipped. Run \`npm run bench:peers\`, then \`npm run bench -- startup\`.`);
  const build = mkdtempSync(join(tmpdir(), 'warden-bench-build-'));
  try {
    const built = buildWarden(build);
    const launches: Partial<Record<Side, Launch>> = {
      'warden (built)': { command: process.execPath, args: [built, 'acp', '--agent', 'claude'], env: {}, sessions: true },
      'warden (tsx)': { command: process.execPath, args: ['--import', tsx, join(root, 'src', 'cli', 'main.ts'), 'acp', '--agent', 'claude'], env: {}, sessions: true },
      ...(peer ? { 'claude-agent-acp': { command: process.execPath, args: [peerEntry], env: { CLAUDE_CODE_EXECUTABLE: fakeClaude }, sessions: true } } : {}),
      node: { command: process.execPath, args: ['-e', `process.stdin.once('data', () => process.stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\\n')); process.stdin.on('end', () => process.exit(0));`], env: {}, sessions: false },
    };
    const sides = Object.keys(launches) as Side[];
    const samples = new Map<Side, Sample[]>(sides.map((side) => [side, []]));
    for (let round = 0; round < plan.warmup + plan.repetitions; round++) {
      for (const side of sides) {
        const sample = await runCase(side, launches[side] as Launch);
        if (round >= plan.warmup) samples.get(side)?.push(sample);
      }
    }
    const initialize = (side: Side) => summarize((samples.get(side) ?? []).map((sample) => sample.initialized));
    const sessionNew = (side: Side) => summarize((samples.get(side) ?? []).map((sample) => sample.ready ?? 0));
    const cpu = (side: Side) => summarize((samples.get(side) ?? []).map((sample) => sample.cpuMs));
    const vsPeer = (stats: Stats, of: (side: Side) => Stats) => (peer ? formatRatio(stats.median / of('claude-agent-acp').median) : 'n/a');
    const modules = new Map<Side, ModuleCounts>();
    for (const side of sides.filter((name) => name !== 'node')) modules.set(side, await modulesOf(side, launches[side] as Launch));
    const rows = sides.map((side) => {
      const init = initialize(side);
      const loaded = modules.get(side);
      return [
        side,
        formatMs(init),
        vsPeer(init, initialize),
        `${cpu(side).median} ms (${cpu(side).min}–${cpu(side).max})`,
        vsPeer(cpu(side), cpu),
        launches[side]?.sessions ? formatMs(sessionNew(side)) : '',
        launches[side]?.sessions ? vsPeer(sessionNew(side), sessionNew) : '',
        loaded ? `${loaded.atInitialize} / ${loaded.total} (${loaded.packages} from node_modules)` : '',
      ];
    });
    console.log(`${plan.repetitions} cases each after ${plan.warmup} warm-up round, interleaved; median (min–max); ratio = this / claude-agent-acp (goal for warden (built): ≤ 0.5× on initialize)`);
    console.log(table(['adapter', 'spawn -> initialize answered', '/ peer', 'CPU to initialize', '/ peer', 'spawn -> session/new answered', '/ peer', 'modules at initialize / in all'], rows));
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}
