/**
 * Relay per update through `warden serve` and its bridge (issue 16, goal ≤ 1.5× plain
 * `warden acp`): the same demo turn of 4 000 streamed words (`DEMO_WORD_DELAY_MS=0`) read on the
 * stdout of a plain `warden acp --agent demo` and of a `warden acp --connect URL` bridged to a
 * warm `warden serve --agent demo`, both built from src/, both with an SQLite journal, the
 * processes started once and a prompt per round; timed from the prompt written to its answer
 * read, divided by the updates read. Rounds interleaved. The demo agent paces its words with
 * a timer even at 0 ms (about 1.5 ms a word here), so that time shows what the daemon adds to a
 * turn as a user sees it, not the relay's cost per message. That cost is the second table: the
 * CPU time (user + system, all threads, from /proc) the wardens spent on the same turns, per
 * update: the bridge and the daemon together against the plain `warden acp`, with the demo
 * agent's own process (the same program in both) shown apart. A third case runs the bridge
 * against a second daemon listening on a Unix socket instead of TCP on 127.0.0.1. A fourth puts
 * the least a bridge can be (bench/support/bare-bridge.mjs: lines to frames and back, nothing
 * else) in front of the TCP daemon: the cost of a process on the path, which warden's bridge
 * cannot go under.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWarden } from './support/build-warden.js';
import { killGroup, startServeDaemon } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, summarize, table, withDeadline, type Stats } from './support/measure.js';
import { canReadCpu, childrenOf, cpuNs } from './support/process-cpu.js';

const plan = { warmup: 1, repetitions: 9 };
const wordCount = 4_000;
const words = Array.from({ length: wordCount }, (_, n) => `w${n}`).join(' ');

/** A warden on stdio: requests by id, the session/update lines counted. */
function stdioClient(child: ChildProcess): { request(method: string, params: unknown): Promise<{ result?: Record<string, unknown>; error?: unknown; updates: number }> } {
  let buffered = '';
  let updates = 0;
  let next = 1;
  const waiting = new Map<number, (message: { result?: Record<string, unknown>; error?: unknown }) => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.includes('"session/update"')) {
        updates++;
        continue;
      }
      const message = JSON.parse(line) as { id?: number; method?: string; result?: Record<string, unknown>; error?: unknown };
      if (message.method === undefined && typeof message.id === 'number') waiting.get(message.id)?.(message);
    }
  });
  return {
    request(method, params) {
      const id = next++;
      const before = updates;
      return withDeadline(
        new Promise((resolve) => {
          waiting.set(id, (message) => {
            waiting.delete(id);
            resolve({ ...message, updates: updates - before });
          });
          child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
        }),
        method,
      );
    },
  };
}

export async function serveRelay(): Promise<void> {
  console.log(`\n## Relay through warden serve and its bridge: one demo turn of ${wordCount} words, per update, against plain warden acp`);
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-serve-relay-'));
  const started: ChildProcess[] = [];
  try {
    const main = buildWarden(join(scratch, 'build'));
    const env = { ...process.env, XDG_STATE_HOME: join(scratch, 'state'), HOME: scratch };
    const launch = (args: readonly string[]) => {
      const child = spawn(process.execPath, [main, ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env });
      child.stderr?.resume();
      started.push(child);
      return child;
    };
    const daemon = await startServeDaemon(main, env, ['--store', join(scratch, 'serve.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0']);
    started.push(daemon.child);
    const url = daemon.url;
    /** CPU of each case's processes per update, beside its wall time: the wardens, and the agent they run. */
    const samples = () => ({ warden: [] as number[], agent: [] as number[], first: [] as number[] });
    const cpu = { plain: samples(), bridged: samples(), unix: samples(), bare: samples() };
    /** `wardens()`: the warden processes of the case, the one the editor launched first (its share is shown apart). */
    const open = async (child: ChildProcess, wardens: () => number[], cpuOf: { warden: number[]; agent: number[]; first: number[] }) => {
      const client = stdioClient(child);
      check((await client.request('initialize', { protocolVersion: 1, clientCapabilities: {} })).result !== undefined, 'initialize answered');
      const sessionId = (await client.request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
      const sum = (pids: readonly number[]) => pids.reduce((total, pid) => total + cpuNs(pid), 0);
      return async (): Promise<number> => {
        const pids = wardens();
        const agents = pids.flatMap(childrenOf);
        const [wardenBefore, agentBefore, firstBefore] = [sum(pids), sum(agents), cpuNs(pids[0] as number)];
        const begun = process.hrtime.bigint();
        const answer = await client.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] });
        const ns = Number(process.hrtime.bigint() - begun);
        check(answer.result?.stopReason === 'end_turn', `the turn ended (${JSON.stringify(answer.result ?? answer.error)})`);
        check(answer.updates >= wordCount, `every word arrived (${answer.updates} updates)`);
        cpuOf.warden.push((sum(pids) - wardenBefore) / answer.updates);
        cpuOf.agent.push((sum(agents) - agentBefore) / answer.updates);
        cpuOf.first.push((cpuNs(pids[0] as number) - firstBefore) / answer.updates);
        return ns / answer.updates;
      };
    };
    const plainChild = launch(['acp', '--agent', 'demo', '--store', join(scratch, 'plain.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0']);
    const plain = await open(plainChild, () => [plainChild.pid as number], cpu.plain);
    const bridge = launch(['acp', '--connect', url]);
    const bridged = await open(bridge, () => [bridge.pid as number, daemon.child.pid as number], cpu.bridged);
    // The same over a Unix socket: no TCP stack on either side.
    const unixDaemon = await startServeDaemon(main, env, ['--store', join(scratch, 'serve-unix.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0'], `unix:${join(scratch, 'serve.sock')}`);
    started.push(unixDaemon.child);
    const unixBridge = launch(['acp', '--connect', `unix:${join(scratch, 'serve.sock')}`]);
    const unix = await open(unixBridge, () => [unixBridge.pid as number, unixDaemon.child.pid as number], cpu.unix);
    // The floor of a bridge: a process that only turns lines into frames and back.
    const bareChild = spawn(process.execPath, [fileURLToPath(new URL('./support/bare-bridge.mjs', import.meta.url)), url, daemon.tokenFile], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env });
    bareChild.stderr?.resume();
    started.push(bareChild);
    const bare = await open(bareChild, () => [bareChild.pid as number, daemon.child.pid as number], cpu.bare);
    // The warm-up rounds' CPU is dropped as their times are.
    const stats = await measureInterleaved(plan, { plain, bridged, unix, bare });
    const measured = (samples: number[]) => summarize(samples.slice(plan.warmup));
    const us = (value: Stats, of: 'median' | 'min' | 'max') => `${(value[of] / 1e3).toFixed(1)} µs`;
    const range = (value: Stats) => `${us(value, 'median')} (${us(value, 'min')}–${us(value, 'max')})`;
    console.log(`${plan.repetitions} turns each after ${plan.warmup} warm-up, interleaved; per update, median (min–max); goal: bridged ≤ 1.5× plain`);
    console.log(table(['case', 'per update', '/ plain warden acp'], [
      ['warden acp --connect -> warden serve (bridge + daemon)', range(stats.bridged), formatRatio(stats.bridged.median / stats.plain.median)],
      ['the same over a Unix socket (--listen unix:PATH)', range(stats.unix), formatRatio(stats.unix.median / stats.plain.median)],
      ['a bare bridge -> warden serve (TCP)', range(stats.bare), formatRatio(stats.bare.median / stats.plain.median)],
      ['warden acp --agent demo (plain)', range(stats.plain), formatRatio(1)],
    ]));
    if (!canReadCpu()) return void console.log('(no /proc here: the CPU per update is not measured)');
    const [bridgedCpu, plainCpu] = [measured(cpu.bridged.warden), measured(cpu.plain.warden)];
    const [bridgedAgent, plainAgent] = [measured(cpu.bridged.agent), measured(cpu.plain.agent)];
    const bridgeAlone = measured(cpu.bridged.first);
    const daemonAlone = measured(cpu.bridged.warden.map((total, round) => total - (cpu.bridged.first[round] as number)));
    const unixCpu = measured(cpu.unix.warden);
    const unixBridgeAlone = measured(cpu.unix.first);
    const unixDaemonAlone = measured(cpu.unix.warden.map((total, round) => total - (cpu.unix.first[round] as number)));
    const bareAlone = measured(cpu.bare.first);
    console.log(`\nCPU per update (user + system, /proc, ${plan.repetitions} turns each), the same turns; goal: bridged ≤ 1.5× plain`);
    console.log(table(['processes', 'CPU per update', '/ plain warden acp'], [
      ['bridge + daemon (warden acp --connect, warden serve), TCP on 127.0.0.1', range(bridgedCpu), formatRatio(bridgedCpu.median / plainCpu.median)],
      ['  of which the bridge (warden acp --connect)', range(bridgeAlone), formatRatio(bridgeAlone.median / plainCpu.median)],
      ['  of which the daemon (warden serve, without its agent)', range(daemonAlone), formatRatio(daemonAlone.median / plainCpu.median)],
      ['bridge + daemon over a Unix socket', range(unixCpu), formatRatio(unixCpu.median / plainCpu.median)],
      ['  of which the bridge', range(unixBridgeAlone), formatRatio(unixBridgeAlone.median / plainCpu.median)],
      ['  of which the daemon', range(unixDaemonAlone), formatRatio(unixDaemonAlone.median / plainCpu.median)],
      ['a bare bridge (lines to frames and back, nothing else), TCP: the floor of any bridge', range(bareAlone), formatRatio(bareAlone.median / plainCpu.median)],
      ['warden acp --agent demo (plain)', range(plainCpu), formatRatio(1)],
      ["the demo agent process under the daemon (the same agent's own)", range(bridgedAgent), formatRatio(bridgedAgent.median / plainCpu.median)],
      ['the demo agent process under plain warden acp', range(plainAgent), formatRatio(plainAgent.median / plainCpu.median)],
    ]));
  } finally {
    for (const child of started) killGroup(child);
    rmSync(scratch, { recursive: true, force: true });
  }
}
