/**
 * Relay per update through `warden serve` and its bridge (issue 16, goal ≤ 1.5× plain
 * `warden acp`): the same demo turn of 4 000 streamed words (`DEMO_WORD_DELAY_MS=0`) read on the
 * stdout of a plain `warden acp --agent demo` and of a `warden acp --connect URL` bridged to a
 * warm `warden serve --agent demo`, both built from src/, both with an SQLite journal, the
 * processes started once and a prompt per round; timed from the prompt written to its answer
 * read, divided by the updates read. Rounds interleaved. The demo agent paces its words with
 * a timer even at 0 ms (about 1.5 ms a word here), so this shows what the daemon adds to a turn
 * as a user sees it, not the relay's CPU cost per message (bench/relay.ts measures that).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWarden } from './support/build-warden.js';
import { killGroup, startServeDaemon } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, table, withDeadline, type Stats } from './support/measure.js';

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
    const open = async (child: ChildProcess) => {
      const client = stdioClient(child);
      check((await client.request('initialize', { protocolVersion: 1, clientCapabilities: {} })).result !== undefined, 'initialize answered');
      const sessionId = (await client.request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
      return async (): Promise<number> => {
        const begun = process.hrtime.bigint();
        const answer = await client.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] });
        const ns = Number(process.hrtime.bigint() - begun);
        check(answer.result?.stopReason === 'end_turn', `the turn ended (${JSON.stringify(answer.result ?? answer.error)})`);
        check(answer.updates >= wordCount, `every word arrived (${answer.updates} updates)`);
        return ns / answer.updates;
      };
    };
    const plain = await open(launch(['acp', '--agent', 'demo', '--store', join(scratch, 'plain.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0']));
    const bridged = await open(launch(['acp', '--connect', url]));
    const stats = await measureInterleaved(plan, { plain, bridged });
    const us = (value: Stats, of: 'median' | 'min' | 'max') => `${(value[of] / 1e3).toFixed(1)} µs`;
    console.log(`${plan.repetitions} turns each after ${plan.warmup} warm-up, interleaved; per update, median (min–max); goal: bridged ≤ 1.5× plain`);
    console.log(table(['case', 'per update', '/ plain warden acp'], [
      ['warden acp --connect -> warden serve (bridge + daemon)', `${us(stats.bridged, 'median')} (${us(stats.bridged, 'min')}–${us(stats.bridged, 'max')})`, formatRatio(stats.bridged.median / stats.plain.median)],
      ['warden acp --agent demo (plain)', `${us(stats.plain, 'median')} (${us(stats.plain, 'min')}–${us(stats.plain, 'max')})`, formatRatio(1)],
    ]));
  } finally {
    for (const child of started) killGroup(child);
    rmSync(scratch, { recursive: true, force: true });
  }
}
