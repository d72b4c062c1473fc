/**
 * Attach -> first live update over loopback (issue 16, goal ≤ 5 ms): a warm `warden serve
 * --agent demo` (built from src/), a controller streaming a long turn over a WebSocket, and
 * per round a second client, already open and initialized, that sends `session/resume` with
 * `_meta["acp-warden/after"]` = the last seq the controller has seen: timed from that send to
 * the first `session/update` it gets with a later seq. The baseline, same socket, same run: a
 * request round trip through the daemon (`initialize`, which the hub answers from memory).
 * Each round's turn is cancelled before the next one starts.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { buildWarden } from './support/build-warden.js';
import { killGroup, startServeDaemon } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, table, withDeadline, type Stats } from './support/measure.js';

const plan = { warmup: 2, repetitions: 25 };
const afterKey = 'acp-warden/after';
const seqKey = 'acp-warden/seq';
type Frame = { id?: number; method?: string; params?: { sessionId?: string; _meta?: Record<string, unknown> }; result?: Record<string, unknown>; error?: unknown };

/** A WebSocket client of the daemon: requests by id, every frame handed to `listeners`. */
async function client(url: string, token: string): Promise<{ socket: WebSocket; request(method: string, params: unknown): Promise<Frame>; send(message: object): void; listeners: Set<(frame: Frame) => void> }> {
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  await withDeadline(once(socket, 'open'), 'the WebSocket to open');
  const listeners = new Set<(frame: Frame) => void>();
  let next = 1;
  socket.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as Frame;
    for (const listener of listeners) listener(frame);
  });
  const send = (message: object) => socket.send(JSON.stringify({ jsonrpc: '2.0', ...message }));
  return {
    socket,
    listeners,
    send,
    request(method, params) {
      const id = next++;
      return withDeadline(
        new Promise<Frame>((resolve) => {
          const listener = (frame: Frame) => {
            if (frame.id !== id || frame.method !== undefined) return;
            listeners.delete(listener);
            resolve(frame);
          };
          listeners.add(listener);
          send({ id, method, params });
        }),
        method,
      );
    },
  };
}

const initialize = { protocolVersion: 1, clientCapabilities: {} };
const words = Array.from({ length: 20_000 }, (_, n) => `w${n}`).join(' ');

export async function serveAttach(): Promise<void> {
  console.log('\n## Attach -> first live update over loopback: warden serve --agent demo, session/resume after the last seq seen, during a streaming turn');
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-attach-'));
  let daemon: ChildProcess | undefined;
  try {
    const main = buildWarden(join(scratch, 'build'));
    const env = { ...process.env, XDG_STATE_HOME: join(scratch, 'state'), HOME: scratch };
    const started = await startServeDaemon(main, env, ['--store', join(scratch, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0']);
    daemon = started.child;
    const url = started.url;
    const token = readFileSync(join(scratch, 'state', 'acp-warden', 'token'), 'utf8').trim();
    const controller = await client(url, token);
    await controller.request('initialize', initialize);
    const sessionId = (await controller.request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
    let lastSeq = 0;
    controller.listeners.add((frame) => {
      const seq = frame.params?._meta?.[seqKey];
      if (frame.method === 'session/update' && typeof seq === 'number') lastSeq = Math.max(lastSeq, seq);
    });
    const observer = await client(url, token);
    await observer.request('initialize', initialize);

    const attach = async (): Promise<number> => {
      const turn = controller.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] });
      const streaming = lastSeq + 3;
      await withDeadline(new Promise<void>((resolve) => { const poll = () => (lastSeq >= streaming ? resolve() : setTimeout(poll, 1)); poll(); }), 'the turn to stream');
      const after = lastSeq;
      let started = 0n;
      const first = new Promise<bigint>((resolve) => {
        const listener = (frame: Frame) => {
          const seq = frame.params?._meta?.[seqKey];
          if (frame.method !== 'session/update' || typeof seq !== 'number' || seq <= after) return;
          observer.listeners.delete(listener);
          resolve(process.hrtime.bigint());
        };
        observer.listeners.add(listener);
      });
      started = process.hrtime.bigint();
      const resumed = observer.request('session/resume', { sessionId, cwd: scratch, mcpServers: [], _meta: { [afterKey]: after } });
      const at = await withDeadline(first, 'the first live update after the attach');
      check((await resumed).error === undefined, 'session/resume answered with a result');
      controller.send({ method: 'session/cancel', params: { sessionId } });
      check(['cancelled', 'end_turn'].includes(String((await turn).result?.stopReason)), 'the turn ended after its cancel');
      return Number(at - started);
    };
    const roundTrip = async (): Promise<number> => {
      const started = process.hrtime.bigint();
      check((await observer.request('initialize', initialize)).result !== undefined, 'initialize answered');
      return Number(process.hrtime.bigint() - started);
    };
    const stats = await measureInterleaved(plan, { attach, roundTrip });
    const ms = (value: Stats, of: 'median' | 'min' | 'max') => `${(value[of] / 1e6).toFixed(2)} ms`;
    console.log(`${plan.repetitions} rounds after ${plan.warmup} warm-up, interleaved; median (min–max); goal: attach ≤ 5 ms`);
    console.log(table(['case', 'time', '/ request round trip'], [
      ['session/resume after the last seq -> first live update', `${ms(stats.attach, 'median')} (${ms(stats.attach, 'min')}–${ms(stats.attach, 'max')})`, formatRatio(stats.attach.median / stats.roundTrip.median)],
      ['a request round trip through the daemon (initialize)', `${ms(stats.roundTrip, 'median')} (${ms(stats.roundTrip, 'min')}–${ms(stats.roundTrip, 'max')})`, formatRatio(1)],
    ]));
    controller.socket.terminate();
    observer.socket.terminate();
  } finally {
    killGroup(daemon);
    rmSync(scratch, { recursive: true, force: true });
  }
}
