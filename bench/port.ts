/**
 * Port benchmarks: what a port (an agent CLI subprocess as an XState actor) costs next to a
 * bare `child_process.spawn` of the same command, measured in the same process, cases
 * interleaved round by round. Prints tables of figures and ratios; asserts nothing about
 * speed (it only checks that each case did what it claims, and that every process it
 * started is gone).
 *
 * 1. spawn to first line: a port running the fake CLI with a one-line banner, from
 *    `createActor(...).start()` to the first `port.message`, against `spawn()` of the same
 *    command (same environment, three pipes) to the first newline on its stdout;
 * 2. line throughput: a child writes N short JSON lines as fast as the pipe takes them; a
 *    port (`parse: 'json'`, the default, and `parse: 'text'`) against bare readers of the
 *    same bytes that count newlines only, split lines, or split and `JSON.parse` each.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createActor, type Actor } from 'xstate';
import { buildEnvironment, portLogic, reaperPid, type PortExit } from '../src/port/index.js';
import { shutdown } from '../src/supervision/index.js';
import { collectGarbage, formatNs, formatRatio, formatStats, measureInterleaved, now, since, summarize, table, type Plan, type Stats, check, ratio, withDeadline } from './support/measure.js';

const fakeCli = fileURLToPath(new URL('../spec/support/fake-cli.mjs', import.meta.url));

type PortActor = Actor<typeof portLogic>;

/** Longest a single repetition may take before the benchmark gives up on it. */

/** A signed difference of medians: `+1.78 ms`, `−1.13 ms`. */
function difference(a: Stats, b: Stats): string {
  const ns = a.median - b.median;
  return `${ns < 0 ? '−' : '+'}${formatNs(Math.abs(ns))}`;
}

/** Whether process `pid` (or, with `group`, any process of group `pid`) still exists; a zombie counts. */
function exists(pid: number, group = false): boolean {
  try {
    process.kill(group ? -pid : pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Every pid this file started, to check at the end that none is left. */
const spawned: number[] = [];

/** Resolves when the port actor has ended (done or error). */
function portEnded(actor: PortActor): Promise<void> {
  return new Promise<void>((resolve) => {
    const snapshot = actor.getSnapshot();
    if (snapshot.status !== 'active') {
      resolve();
      return;
    }
    actor.subscribe({ complete: () => resolve(), error: () => resolve() });
  });
}

/** Resolves when the bare child has exited and its pipes are closed (it is reaped by then). Call right after spawn(). */
function childClosed(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => child.once('close', () => resolve()));
}

function recordPid(pid: number | undefined): number {
  check(pid !== undefined, 'the process was spawned');
  spawned.push(pid as number);
  return pid as number;
}

// ---------------------------------------------------------------------------------------
// 1. Spawn to first line

const banner = '{"ready":true}';
const bannerArgs = [fakeCli, '--banner', banner];

/** Time spent in the synchronous start call (the host's thread is busy), per repetition. */
const portStartCalls: number[] = [];
const bareSpawnCalls: number[] = [];

/** A port of the fake CLI: ns from createActor().start() to its first `port.message`. */
async function portFirstLine(): Promise<number> {
  let first = 0;
  let message: unknown;
  let resolveFirst: () => void = () => {};
  const gotFirst = new Promise<void>((resolve) => (resolveFirst = resolve));
  const start = now();
  const actor = createActor(portLogic, { input: { command: process.execPath, args: bannerArgs } });
  actor.on('port.message', (event) => {
    if (first !== 0) return;
    first = since(start);
    message = event.message;
    resolveFirst();
  });
  actor.start();
  portStartCalls.push(since(start));
  const ended = portEnded(actor);
  await withDeadline(Promise.race([gotFirst, ended]), 'port: first line');
  const pid = recordPid(actor.getSnapshot().context.pid);
  check(first > 0 && (message as { ready?: unknown }).ready === true, 'port emitted the banner as its first message');
  // Graceful stop: stdin EOF, on which the fake CLI exits.
  await withDeadline(shutdown(actor).then(() => ended), 'port: shutdown');
  check(!exists(pid) && !exists(pid, true), `port process ${pid} and its group are gone after shutdown`);
  return first;
}

/** `spawn()` of the same command: ns from spawn() to the first newline on its stdout. */
async function bareFirstLine(env: Record<string, string>): Promise<number> {
  let first = 0;
  let text = '';
  let resolveFirst: () => void = () => {};
  const gotFirst = new Promise<void>((resolve) => (resolveFirst = resolve));
  const start = now();
  const child = spawn(process.execPath, bannerArgs, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  bareSpawnCalls.push(since(start));
  const closed = childClosed(child);
  child.stdout.on('data', (chunk: Buffer) => {
    if (first !== 0) return;
    text += chunk.toString('utf8');
    if (text.includes('\n')) {
      first = since(start);
      resolveFirst();
    }
  });
  child.stderr.resume();
  await withDeadline(Promise.race([gotFirst, closed]), 'bare spawn: first line');
  const pid = recordPid(child.pid);
  check(first > 0 && text.startsWith(`${banner}\n`), 'bare child printed the banner first');
  child.stdin.end();
  await withDeadline(closed, 'bare spawn: exit');
  check(!exists(pid), `bare child ${pid} is gone after exit`);
  return first;
}

async function benchFirstLine(): Promise<void> {
  // The port's default environment (`isolated`), given to the bare spawn as well: the same
  // command in the same environment (a host's NODE_OPTIONS, say, would change Node's start).
  const env = buildEnvironment();
  const plan: Plan = { warmup: 5, repetitions: 41 };
  const r = await measureInterleaved(plan, {
    port: portFirstLine,
    bare: () => bareFirstLine(env),
  });
  // Every case ran warmup + repetitions times, in order: drop the warm-up samples.
  const portCall = summarize(portStartCalls.slice(plan.warmup));
  const bareCall = summarize(bareSpawnCalls.slice(plan.warmup));
  console.log('\n### 1. Spawn to first line (per process; median (min–max))\n');
  console.log(table(
    ['case', 'time', 'port / this', 'port − this (medians)'],
    [
      ['port: createActor(portLogic).start() -> first port.message', formatStats(r.port), '', ''],
      ['bare: spawn() -> first newline on stdout', formatStats(r.bare), ratio(r.port, r.bare), difference(r.port, r.bare)],
      ['of which in the call: createActor(portLogic).start()', formatStats(portCall), '', ''],
      ['of which in the call: spawn()', formatStats(bareCall), ratio(portCall, bareCall), difference(portCall, bareCall)],
    ],
  ));
  console.log(`\nCommand: node spec/support/fake-cli.mjs --banner '${banner}' (prints the line at once, then`);
  console.log('waits on stdin). Bare spawn: same executable, arguments and environment (the port\'s isolated');
  console.log('one), stdin/stdout/stderr piped, not detached. Each stopped after its first line (port: await');
  console.log(`shutdown(port), stdin EOF; bare: stdin.end()), untimed. "In the call": the synchronous part,
while the host's thread is busy (options, environment, fork/exec). ${plan.repetitions} repetitions each after`);
  console.log(`${plan.warmup} warm-up rounds, interleaved.`);
}

// ---------------------------------------------------------------------------------------
// 2. Line throughput

const lineCount = 200_000;

/**
 * The writer: builds all N lines first (the lines of fake-cli's `flood`), then writes them
 * to stdout as fast as the pipe takes them and exits. Building before the first byte keeps
 * the writer out of the timed window (first line read -> last line read).
 */
const writerSource = `
import { writeStdoutSync } from ${JSON.stringify(new URL('../spec/support/stdio-lines.mjs', import.meta.url).href)};
const count = Number(process.argv[1]);
const lines = [];
for (let index = 0; index < count; index++) lines.push('{"jsonrpc":"2.0","method":"tick","params":{"index":' + index + '}}');
writeStdoutSync(Buffer.from(lines.join('\\n') + '\\n'));
`;
const writerArgs = ['--input-type=module', '-e', writerSource, String(lineCount)];

/** Bytes the writer sends: every line, with its newline. */
function writerBytes(count: number): number {
  let bytes = 0;
  for (let index = 0; index < count; index++) bytes += `{"jsonrpc":"2.0","method":"tick","params":{"index":${index}}}\n`.length;
  return bytes;
}

/** A port reading the writer: ns per line, from its first line to its last (N-th). */
async function portThroughput(parse: 'json' | 'text'): Promise<number> {
  let lines = 0;
  let first = 0n;
  let elapsed = 0;
  let last: unknown;
  const actor = createActor(portLogic, { input: { command: process.execPath, args: writerArgs, parse } });
  const count = (): void => {
    lines += 1;
    if (lines === 1) first = now();
    else if (lines === lineCount) elapsed = Number(now() - first);
  };
  if (parse === 'json') {
    actor.on('port.message', (event) => {
      count();
      if (lines === lineCount) last = event.message;
    });
  } else {
    actor.on('port.line', (event) => {
      count();
      if (lines === lineCount) last = event.line;
    });
  }
  const ended = portEnded(actor);
  actor.start();
  const pid = recordPid(actor.getSnapshot().context.pid);
  await withDeadline(ended, `port (${parse}): ${lineCount} lines`);
  const snapshot = actor.getSnapshot();
  check(snapshot.status === 'done' && (snapshot.output as PortExit).reason.kind === 'exited', `port (${parse}) ended with a clean exit`);
  check(lines === lineCount && elapsed > 0, `port (${parse}) delivered ${lineCount} lines (got ${lines})`);
  const index = lineCount - 1;
  check(
    parse === 'json'
      ? (last as { params?: { index?: number } }).params?.index === index
      : typeof last === 'string' && last.endsWith(`"index":${index}}}`),
    `port (${parse}) delivered the last line last`,
  );
  check(!exists(pid) && !exists(pid, true), `port process ${pid} and its group are gone`);
  return elapsed / (lineCount - 1);
}

type BareMode = 'count' | 'split' | 'parse';

/**
 * A bare reader of the writer: ns per line, from its first line to its last. `count`:
 * newlines counted in the chunks; `split`: each line decoded to a string; `parse`: and
 * `JSON.parse`d, what a port does by default. The splitting is the minimum (no CR, BOM or
 * length checks), a line held across chunks is joined.
 */
async function bareThroughput(mode: BareMode, env: Record<string, string>): Promise<number> {
  let lines = 0;
  let first = 0n;
  let elapsed = 0;
  let last: unknown;
  const onLine = mode === 'parse'
    ? (line: string) => {
        const message: unknown = JSON.parse(line);
        lines += 1;
        if (lines === 1) first = now();
        else if (lines === lineCount) {
          elapsed = Number(now() - first);
          last = message;
        }
      }
    : (line: string) => {
        lines += 1;
        if (lines === 1) first = now();
        else if (lines === lineCount) {
          elapsed = Number(now() - first);
          last = line;
        }
      };
  let pending: Buffer | undefined;
  const split = (chunk: Buffer): void => {
    let start = 0;
    let newline = chunk.indexOf(10);
    if (pending !== undefined && newline >= 0) {
      onLine(Buffer.concat([pending, chunk.subarray(0, newline)]).toString('utf8'));
      pending = undefined;
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    while (newline >= 0) {
      onLine(chunk.toString('utf8', start, newline));
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      // Copy: the stream may reuse its buffer.
      const rest = Buffer.from(chunk.subarray(start));
      pending = pending === undefined ? rest : Buffer.concat([pending, rest]);
    }
  };
  const countNewlines = (chunk: Buffer): void => {
    let newline = chunk.indexOf(10);
    while (newline >= 0) {
      lines += 1;
      if (lines === 1) first = now();
      else if (lines === lineCount) elapsed = Number(now() - first);
      newline = chunk.indexOf(10, newline + 1);
    }
  };
  const child = spawn(process.execPath, writerArgs, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const closed = childClosed(child);
  child.stdout.on('data', mode === 'count' ? countNewlines : split);
  child.stderr.resume();
  const pid = recordPid(child.pid);
  await withDeadline(closed, `bare (${mode}): ${lineCount} lines`);
  check(child.exitCode === 0, `bare (${mode}) writer exited with code 0`);
  check(lines === lineCount && elapsed > 0 && pending === undefined, `bare (${mode}) read ${lineCount} lines (got ${lines})`);
  const index = lineCount - 1;
  if (mode === 'parse') check((last as { params?: { index?: number } }).params?.index === index, 'bare (parse) read the last line last');
  if (mode === 'split') check(typeof last === 'string' && last.endsWith(`"index":${index}}}`), 'bare (split) read the last line last');
  check(!exists(pid), `bare child ${pid} is gone`);
  return elapsed / (lineCount - 1);
}

/** Lines per second of a median (min–max) in ns per line: the fastest repetition is the max. */
function formatRate(stats: Stats): string {
  const rate = (ns: number): string => `${((1e9 / ns) / 1e6).toFixed(2)} M`;
  return `${rate(stats.median)} (${rate(stats.max)}–${rate(stats.min)})`;
}

function formatBandwidth(stats: Stats, bytesPerLine: number): string {
  return `${((bytesPerLine * 1e9) / stats.median / 1e6).toFixed(0)} MB/s`;
}

async function benchThroughput(): Promise<void> {
  const env = buildEnvironment();
  const bytes = writerBytes(lineCount);
  const bytesPerLine = bytes / lineCount;
  // Odd repetitions: the median in lines/s is then exactly the inverse of the one in ns/line.
  const plan: Plan = { warmup: 2, repetitions: 15, gcEachRepetition: true };
  const r = await measureInterleaved(plan, {
    portJson: () => portThroughput('json'),
    portText: () => portThroughput('text'),
    bareCount: () => bareThroughput('count', env),
    bareSplit: () => bareThroughput('split', env),
    bareParse: () => bareThroughput('parse', env),
  });
  // Throughput ratio = port lines/s over baseline lines/s = baseline ns/line over port ns/line.
  const speed = (port: Stats, baseline: Stats): string => formatRatio(baseline.median / port.median);
  console.log(`\n### 2. Line throughput (${lineCount.toLocaleString('en-US')} lines of ${bytesPerLine.toFixed(1)} bytes; lines/s, median (min–max))\n`);
  console.log(table(
    ['reader', 'lines/s', 'per line', 'bytes', 'port json / this', 'port text / this'],
    [
      ['port, parse: json (default): port.message', formatRate(r.portJson), formatNs(r.portJson.median), formatBandwidth(r.portJson, bytesPerLine), '', ''],
      ['port, parse: text: port.line', formatRate(r.portText), formatNs(r.portText.median), formatBandwidth(r.portText, bytesPerLine), '', ''],
      ['bare spawn: split + JSON.parse', formatRate(r.bareParse), formatNs(r.bareParse.median), formatBandwidth(r.bareParse, bytesPerLine), speed(r.portJson, r.bareParse), ''],
      ['bare spawn: split into strings', formatRate(r.bareSplit), formatNs(r.bareSplit.median), formatBandwidth(r.bareSplit, bytesPerLine), speed(r.portJson, r.bareSplit), speed(r.portText, r.bareSplit)],
      ['bare spawn: count newlines only', formatRate(r.bareCount), formatNs(r.bareCount.median), formatBandwidth(r.bareCount, bytesPerLine), speed(r.portJson, r.bareCount), speed(r.portText, r.bareCount)],
    ],
  ));
  console.log(`\nPort time per line over its fair baseline (medians): parse: json ${difference(r.portJson, r.bareParse)},`);
  console.log(`parse: text ${difference(r.portText, r.bareSplit)}.`);
  console.log('Ratios are throughputs (port lines/s / baseline lines/s; below 1 when the port is slower).');
  console.log('Fair baselines: split + JSON.parse for parse: json, split into strings for parse: text;');
  console.log('count newlines only is what the pipe and the stream deliver, an upper bound no line reader');
  console.log('reaches. Writer: node -e, builds the lines of fake-cli\'s flood, then writeSync to stdout and');
  console.log('exit. Timed from the first line to the last, per reader; the writer\'s start is not timed.');
  console.log(`${plan.repetitions} repetitions each after ${plan.warmup} warm-up rounds, interleaved, garbage collected before each.`);
}

/** Runs the port benchmarks and prints their tables. */
export async function ports(): Promise<void> {
  const started = now();
  console.log('\n## Ports');
  for (const section of [benchFirstLine, benchThroughput]) {
    collectGarbage();
    const sectionStarted = now();
    await section();
    console.log(`(${formatNs(since(sectionStarted))})`);
  }
  const left = spawned.filter((pid) => exists(pid));
  check(left.length === 0, `no process left (left: ${left.join(', ')})`);
  console.log(`\nProcesses started: ${spawned.length}; left alive: ${left.length} (process.kill(pid, 0) on each). The orphan`);
  console.log(`reaper the first port started (pid ${reaperPid() ?? 'none'}) stays until this process exits, by design.`);
  console.log(`\n(port benchmarks: ${formatNs(since(started))})`);
}
