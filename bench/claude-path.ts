/**
 * The Claude Code path: warden against `@agentclientprotocol/claude-agent-acp` (the ACP adapter
 * of Claude Code that editors use today), both replaying the same recorded stream-json
 * transcript through the same fake Claude Code CLI (spec/support/fake-claude.mjs), so that only
 * the adapters differ. Prints figures; asserts nothing about speed (it checks that each case
 * did what it claims, that both answered the same text, and that no process is left).
 *
 * Each case is what an editor does: spawn the adapter process, `initialize`, `session/new`,
 * a `session/prompt` "hi", five more in the same session (the fake replays the turn again,
 * FAKE_CLAUDE_LOOP), then close its stdin (and signal its process group if needed).
 * The editor here is a bare newline-delimited JSON-RPC client timestamping each line as it
 * arrives, the same for both. Measured, per fixture (`hello`: system init, one assistant
 * message, result; `partial`: the same streamed as deltas):
 * - spawn to `initialize` answered, spawn to `session/new` answered (the session is ready);
 * - first prompt sent (100 ms after `session/new` answered, so that what the session sends on
 *   its own is not counted) to the first `session/update` after it, to its first text chunk
 *   (`agent_message_chunk`), and to the prompt's answer; and when the CLI had the prompt's
 *   user line (the fake's FAKE_CLAUDE_USER_LOG is a named pipe read here), which splits the
 *   turn into the adapter's way in and its way out; the same for the five later prompts;
 * - the adapter process's own CPU time (user + system) from spawn to the first answer,
 *   and its peak RSS (from /proc; its children, the CLI and probes, not counted).
 *
 * warden: `node <fresh tsc build of src/>/cli/main.js acp --agent claude --agent-command
 * spec/support/fake-claude.mjs` (as an editor runs it: compiled JS, its default journal on
 * disk under the case's HOME). The peer: `node .cache/peers/.../claude-agent-acp/dist/index.js`
 * with `CLAUDE_CODE_EXECUTABLE` pointing at the same fake (the adapter passes it to the Claude
 * Agent SDK as `pathToClaudeCodeExecutable`); installed by `npm run bench:peers`, skipped with
 * a message when missing. Both run on the Node that runs the benchmark, each case in a fresh
 * temporary HOME and working directory; the fake prints a turn without pauses
 * (FAKE_CLAUDE_DELAY_MS=0). Cases interleaved round by round, 1 warm-up round, 9 measured.
 */
import { spawn, spawnSync } from 'node:child_process';
import { constants, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWarden } from './support/build-warden.js';
import { check, formatRatio, now, summarize, table, withDeadline, type Stats } from './support/measure.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const fakeClaude = join(root, 'spec', 'support', 'fake-claude.mjs');
const peersDir = process.env.WARDEN_PEERS_DIR ?? join(root, '.cache', 'peers');
const peerPackage = join(peersDir, 'node_modules', '@agentclientprotocol', 'claude-agent-acp');
const peerEntry = join(peerPackage, 'dist', 'index.js');
const sdkPackage = join(peersDir, 'node_modules', '@anthropic-ai', 'claude-agent-sdk');

const fixtures = ['hello', 'partial'] as const;
type Fixture = (typeof fixtures)[number];
type Side = 'warden' | 'peer';
const expectedText = 'Hello from the fake Anthropic server.';
const plan = { warmup: 1, repetitions: 9 };
/** The pause between session/new answered and the prompt (a person types; the session's own updates arrive first). */
const settleMs = 100;
/** Prompts after the first, in the same session (the fake replays the turn again: FAKE_CLAUDE_LOOP). */
const warmPrompts = 5;

/** One prompt: times in ns from the prompt sent. */
interface Turn {
  readonly firstUpdate: number;
  readonly firstText: number;
  readonly cliHasPrompt: number;
  readonly answered: number;
  readonly text: string;
  readonly updateKinds: readonly string[];
}

/** What one case measured: times in ns from the spawn, CPU in ms, RSS in kB; its first prompt, then the warm ones. */
interface Sample {
  readonly initialized: number;
  readonly ready: number;
  readonly turns: readonly Turn[];
  readonly cpuMs: number;
  readonly peakRssKb: number;
}

const versionOf = (directory: string): string => {
  try {
    return (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
};

/** Live processes whose environment holds `HOME=<home>`: everything one case started, adapter, CLI and probes alike. */
function processesOf(home: string): number[] {
  const marker = `\0HOME=${home}\0`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/u.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z') continue;
      if (`\0${readFileSync(`/proc/${entry}/environ`, 'utf8')}`.includes(marker)) found.push(Number(entry));
    } catch {
      // gone while reading, or not ours
    }
  }
  return found;
}

/** CPU time (user + system, ms) and peak RSS (kB) of a live process. */
function usageOf(pid: number): { cpuMs: number; peakRssKb: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime: clock ticks of 10 ms
  const peak = /VmHWM:\s+(\d+)/u.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return { cpuMs: ticks * 10, peakRssKb: Number(peak ?? 0) };
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(predicate: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await pause(20);
  }
  return true;
}

/**
 * When the fake CLI got each user line: its FAKE_CLAUDE_USER_LOG is a named pipe, held open
 * here for reading and writing (so it never ends), and each append the fake makes as it reads
 * a user line is stamped on arrival. `at(k)` resolves with the arrival of the k-th (from 0).
 */
function userLinesOf(fifo: string): { fifo: string; at: (k: number) => Promise<bigint>; close: () => void } {
  const made = spawnSync('mkfifo', [fifo], { encoding: 'utf8' });
  check(made.status === 0, `mkfifo ${fifo} (${made.stderr ?? made.error?.message})`);
  const socket = new Socket({ fd: openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK), readable: true, writable: false });
  const arrivals: bigint[] = [];
  const waiting = new Set<() => void>();
  socket.on('data', (chunk: Buffer) => {
    const at = now();
    for (const byte of chunk) if (byte === 0x0a) arrivals.push(at);
    for (const wake of waiting) wake();
  });
  const at = (k: number) => new Promise<bigint>((resolve) => {
    const look = () => {
      const arrival = arrivals[k];
      if (arrival === undefined) return;
      waiting.delete(look);
      resolve(arrival);
    };
    waiting.add(look);
    look();
  });
  return { fifo, at, close: () => socket.destroy() };
}

/** One case: spawn the adapter as an editor would, initialize, session/new, prompt "hi" six times, stop it. */
async function runCase(side: Side, fixture: Fixture, wardenMain: string): Promise<Sample> {
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), `warden-bench-claude-${side}-`)));
  const home = join(scratch, 'home');
  const cwd = join(scratch, 'project');
  mkdirSync(home);
  mkdirSync(cwd);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: scratch,
    ANTHROPIC_API_KEY: 'dummy',
    IS_SANDBOX: '1',
    FAKE_CLAUDE_FIXTURE: fixture,
    FAKE_CLAUDE_DELAY_MS: '0',
    FAKE_CLAUDE_LOOP: '1',
  };
  const [command, args] = side === 'warden'
    ? [process.execPath, [wardenMain, 'acp', '--agent', 'claude', '--agent-command', fakeClaude, '--env', 'FAKE_CLAUDE_FIXTURE', '--env', 'FAKE_CLAUDE_DELAY_MS', '--env', 'FAKE_CLAUDE_USER_LOG', '--env', 'FAKE_CLAUDE_LOOP']]
    : [process.execPath, [peerEntry]];
  if (side === 'peer') env.CLAUDE_CODE_EXECUTABLE = fakeClaude;
  const userLines = userLinesOf(join(scratch, 'user-lines.fifo'));
  env.FAKE_CLAUDE_USER_LOG = userLines.fifo;

  const started = now();
  const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const pid = child.pid as number;
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => (stderr = `${stderr}${chunk}`.slice(-4000)));
  child.stdin.on('error', () => {});
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // The editor: one JSON-RPC line at a time, each stamped as it arrives.
  const answers = new Map<number, (message: { at: bigint; result?: Record<string, unknown>; error?: unknown }) => void>();
  const updates: Array<{ at: bigint; update: { sessionUpdate: string; content?: { type?: string; text?: string } } }> = [];
  let nextId = 0;
  let pending = '';
  const send = (message: Record<string, unknown>) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    const at = now();
    pending += chunk;
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (!line) continue;
      const message = JSON.parse(line) as { id?: number; method?: string; params?: { update?: (typeof updates)[number]['update'] }; result?: Record<string, unknown>; error?: unknown };
      if (message.method === 'session/update' && message.params?.update) updates.push({ at, update: message.params.update });
      else if (message.method !== undefined && message.id !== undefined) send({ id: message.id, error: { code: -32601, message: `${message.method} is not served by this editor` } });
      else if (message.method === undefined && typeof message.id === 'number') answers.get(message.id)?.({ at, ...message });
    }
  });
  const request = async (method: string, params: unknown) => {
    const id = ++nextId;
    const answer = new Promise<{ at: bigint; result?: Record<string, unknown>; error?: unknown }>((resolve) => answers.set(id, resolve));
    send({ id, method, params });
    const message = await withDeadline(Promise.race([answer, exited.then(() => Promise.reject(new Error(`${side} exited during ${method}: ${stderr.slice(-600)}`)))]), `${side} ${method}`);
    check(message.error === undefined, `${side} answered ${method} without error (${JSON.stringify(message.error)}; stderr: ${stderr.slice(-600)})`);
    return { at: message.at, result: message.result ?? {} };
  };

  try {
    const initialized = await request('initialize', {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      clientInfo: { name: 'warden-bench', version: '1' },
    });
    const session = await request('session/new', { cwd, mcpServers: [] });
    const sessionId = session.result.sessionId;
    check(typeof sessionId === 'string', `${side} session/new gave a session id`);
    // What session/new sends after its answer (available commands, ...) is not the prompt's.
    await pause(settleMs);
    const turns: Turn[] = [];
    let usage = { cpuMs: 0, peakRssKb: 0 };
    for (let k = 0; k <= warmPrompts; k++) {
      const before = updates.length;
      const prompted = now();
      const answer = await request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] });
      check(answer.result.stopReason === 'end_turn', `${side} ${fixture}: prompt ${k + 1} ended end_turn (got ${String(answer.result.stopReason)})`);
      if (k === 0) usage = usageOf(pid);
      await pause(20); // updates sent with the answer, and a breath between prompts
      const turn = updates.slice(before);
      const chunks = turn.filter((entry) => entry.update.sessionUpdate === 'agent_message_chunk' && entry.update.content?.type === 'text');
      const first = turn[0];
      const firstChunk = chunks[0];
      check(first !== undefined && firstChunk !== undefined, `${side} ${fixture}: prompt ${k + 1} streamed text`);
      turns.push({
        firstUpdate: Number((first as (typeof turn)[number]).at - prompted),
        firstText: Number((firstChunk as (typeof turn)[number]).at - prompted),
        cliHasPrompt: Number((await withDeadline(userLines.at(k), `${side}: the CLI's user line ${k + 1}`)) - prompted),
        answered: Number(answer.at - prompted),
        text: chunks.map((entry) => entry.update.content?.text ?? '').join(''),
        updateKinds: turn.filter((entry) => entry.at <= answer.at).map((entry) => entry.update.sessionUpdate),
      });
    }
    return { initialized: Number(initialized.at - started), ready: Number(session.at - started), turns, ...usage };
  } finally {
    // The editor goes away: stdin closed, then the group signalled, then whatever is left of the case.
    child.stdin.end();
    const ended = () => child.exitCode !== null || child.signalCode !== null;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-pid, name);
      } catch {
        // the group is gone
      }
    };
    if (!(await until(ended, 5_000))) {
      signal('SIGTERM');
      if (!(await until(ended, 3_000))) signal('SIGKILL');
    }
    await exited;
    userLines.close();
    if (!(await until(() => processesOf(home).length === 0, 5_000))) {
      for (const leftover of processesOf(home)) process.kill(leftover, 'SIGKILL');
    }
    const left = processesOf(home);
    rmSync(scratch, { recursive: true, force: true });
    check(left.length === 0, `${side}: no process of the case left (${left.join(', ')})`);
  }
}

const ms = (ns: number) => `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`;
const formatMs = (stats: Stats) => `${ms(stats.median)} (${ms(stats.min)}–${ms(stats.max)})`;
const first = (sample: Sample) => sample.turns[0] as Turn;
const warm = (sample: Sample) => sample.turns.slice(1);

export async function claudeCodePath(): Promise<void> {
  console.log('\n## Claude Code path: warden against @agentclientprotocol/claude-agent-acp, same fake Claude Code CLI');
  if (!existsSync(peerEntry)) {
    console.log(`skipped: @agentclientprotocol/claude-agent-acp is not installed (no ${peerEntry}). Run \`npm run bench:peers\` (installs it into .cache/peers, about 400 MB), then \`npm run bench -- claude\`.`);
    return;
  }
  console.log(`peer: @agentclientprotocol/claude-agent-acp ${versionOf(peerPackage)} (Claude Agent SDK ${versionOf(sdkPackage)}), on ${process.version}; fake CLI: spec/support/fake-claude.mjs`);
  const build = mkdtempSync(join(tmpdir(), 'warden-bench-build-'));
  try {
    const wardenMain = buildWarden(build);
    const samples = new Map<string, Sample[]>();
    const sides: Side[] = ['warden', 'peer'];
    for (let round = 0; round < plan.warmup + plan.repetitions; round++) {
      for (const fixture of fixtures) {
        for (const side of sides) {
          const sample = await runCase(side, fixture, wardenMain);
          for (const [index, turn] of sample.turns.entries()) {
            check(turn.text === expectedText, `${side} ${fixture} prompt ${index + 1}: answered "${expectedText}" (got ${JSON.stringify(turn.text)})`);
          }
          if (round >= plan.warmup) samples.set(`${side} ${fixture}`, [...(samples.get(`${side} ${fixture}`) ?? []), sample]);
        }
      }
    }
    const later = `prompts 2–${warmPrompts + 1}`;
    const measures: Array<[string, (sample: Sample) => number[]]> = [
      ['spawn -> initialize answered', (sample) => [sample.initialized]],
      ['spawn -> session/new answered', (sample) => [sample.ready]],
      ['first prompt -> first session/update', (sample) => [first(sample).firstUpdate]],
      ['first prompt -> first text chunk', (sample) => [first(sample).firstText]],
      ['first prompt -> the CLI has the user line', (sample) => [first(sample).cliHasPrompt]],
      ['first prompt -> answer', (sample) => [first(sample).answered]],
      ['spawn -> session/new answered, plus first prompt -> answer', (sample) => [sample.ready + first(sample).answered]],
      [`${later} -> first text chunk`, (sample) => warm(sample).map((turn) => turn.firstText)],
      [`${later} -> the CLI has the user line`, (sample) => warm(sample).map((turn) => turn.cliHasPrompt)],
      [`${later} -> answer`, (sample) => warm(sample).map((turn) => turn.answered)],
    ];
    const rows: string[][] = [];
    for (const fixture of fixtures) {
      const ours = samples.get(`warden ${fixture}`) ?? [];
      const theirs = samples.get(`peer ${fixture}`) ?? [];
      const both = (pick: (sample: Sample) => number[]) => [summarize(ours.flatMap(pick)), summarize(theirs.flatMap(pick))] as const;
      for (const [name, pick] of measures) {
        const [a, b] = both(pick);
        rows.push([fixture, name, formatMs(a), formatMs(b), formatRatio(a.median / b.median)]);
      }
      const [cpuA, cpuB] = both((sample) => [sample.cpuMs]);
      rows.push([fixture, 'adapter process CPU, spawn to first answer', `${cpuA.median} ms (${cpuA.min}–${cpuA.max})`, `${cpuB.median} ms (${cpuB.min}–${cpuB.max})`, formatRatio(cpuA.median / cpuB.median)]);
      const [rssA, rssB] = both((sample) => [sample.peakRssKb]);
      rows.push([fixture, 'adapter process peak RSS, spawn to first answer', `${(rssA.median / 1024).toFixed(0)} MB`, `${(rssB.median / 1024).toFixed(0)} MB`, formatRatio(rssA.median / rssB.median)]);
    }
    console.log(`${plan.repetitions} cases (processes) each after ${plan.warmup} warm-up round, interleaved; ${later}: ${warmPrompts} per case, in the same session; median (min–max); ratio = warden / claude-agent-acp, below 1 when warden is faster`);
    console.log(table(['fixture', 'measure', 'warden', 'claude-agent-acp', 'warden / peer'], rows));
    for (const fixture of fixtures) {
      for (const side of sides) {
        const kinds = samples.get(`${side} ${fixture}`)?.[0]?.turns[0]?.updateKinds ?? [];
        console.log(`updates of the first prompt, ${side} ${fixture}: ${kinds.join(', ')}`);
      }
    }
    console.log(`both answered "${expectedText}" to every prompt; no process left`);
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}
