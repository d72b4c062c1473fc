/**
 * Attach -> first live update over loopback (issue 16, goal ≤ 5 ms): a warm `warden serve
 * --agent demo` (built from src/), a controller streaming a long turn over a WebSocket, and
 * per round a fresh client (opened and initialized before the clock starts, attached to
 * nothing) that sends `session/resume` with `_meta["acp-warden/after"]` = the last seq the
 * controller has seen: timed from that send to the first `session/update` it gets with a
 * later seq, and to the resume's answer; 23 updates into the turn (it streams steadily) and 3
 * (its start, while the daemon and the agent still handle the 20 000-word prompt that makes the
 * turn long). A third kind of round resumes 20 updates behind: timed to the first of them (the
 * replay's start). The baseline,
 * same run: a request round trip through the daemon (`initialize`, which the hub answers from
 * memory), idle and during a streaming turn; and the agent's own pace (the gap between two
 * updates on the controller), which a first *live* update waits for. Each round's turn is
 * cancelled before the next one starts.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWarden } from './support/build-warden.js';
import { killGroup, serveClient as client, startServeDaemon, type ServeFrame } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, summarize, table, withDeadline, type Stats } from './support/measure.js';

const plan = { warmup: 2, repetitions: 41 };
/** How many updates the second kind of attach has missed (its replay). */
const behind = 20;
/** How many updates into a turn an attach is made once the turn streams steadily (past the turn's start). */
const steadyAfter = behind + 3;
const afterKey = 'acp-warden/after';
const seqKey = 'acp-warden/seq';
type Frame = ServeFrame;

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
    // When each update reached the controller: the agent's pace, which the first live update after an attach waits for.
    const gaps: number[] = [];
    let lastAt: bigint | undefined;
    controller.listeners.add((frame) => {
      const seq = frame.params?._meta?.[seqKey];
      if (frame.method !== 'session/update' || typeof seq !== 'number') return;
      const at = process.hrtime.bigint();
      if (seq === lastSeq + 1 && lastAt !== undefined) gaps.push(Number(at - lastAt));
      lastSeq = Math.max(lastSeq, seq);
      lastAt = at;
    });
    // The baseline's socket: open all along, attached to nothing.
    const prober = await client(url, token);
    await prober.request('initialize', initialize);
    /** Starts a turn; resolves once `into` of its updates reached the controller, with its cancel. */
    const streamingTurn = async (into = 3) => {
      const turn = controller.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] });
      const streaming = lastSeq + into;
      await withDeadline(new Promise<void>((resolve) => { const poll = () => (lastSeq >= streaming ? resolve() : setTimeout(poll, 1)); poll(); }), 'the turn to stream');
      return async () => {
        controller.send({ method: 'session/cancel', params: { sessionId } });
        check(['cancelled', 'end_turn'].includes(String((await turn).result?.stopReason)), 'the turn ended after its cancel');
      };
    };

    const answers = { early: [] as number[], steady: [] as number[] };
    /**
     * One attach of a fresh client `missed` updates behind the controller, `into` updates into a
     * turn: ns from `session/resume` sent to the first update after its cursor (`answered`: to its answer).
     */
    const attachFrom = (missed: number, into: number, answered?: number[]) => async (): Promise<number> => {
      // A client that never saw the session: open and initialized before the clock starts (its socket is not the attach).
      const observer = await client(url, token);
      await observer.request('initialize', initialize);
      const end = await streamingTurn(into);
      const after = lastSeq - missed;
      const first = new Promise<bigint>((resolve) => {
        const listener = (frame: Frame) => {
          const seq = frame.params?._meta?.[seqKey];
          if (frame.method !== 'session/update' || typeof seq !== 'number' || seq <= after) return;
          observer.listeners.delete(listener);
          // Behind: the first is history the controller had seen, from the replay.
          check(missed === 0 || seq <= after + missed, `the first update after the cursor came from the replay (${seq} after ${after})`);
          resolve(process.hrtime.bigint());
        };
        observer.listeners.add(listener);
      });
      const started = process.hrtime.bigint();
      const resumed = observer.request('session/resume', { sessionId, cwd: scratch, mcpServers: [], _meta: { [afterKey]: after } }).then((frame) => {
        answered?.push(Number(process.hrtime.bigint() - started));
        return frame;
      });
      const at = await withDeadline(first, 'the first live update after the attach');
      check((await resumed).error === undefined, 'session/resume answered with a result');
      await end();
      observer.socket.terminate();
      return Number(at - started);
    };
    const roundTrip = async (): Promise<number> => {
      const started = process.hrtime.bigint();
      check((await prober.request('initialize', initialize)).result !== undefined, 'initialize answered');
      return Number(process.hrtime.bigint() - started);
    };
    const roundTripStreaming = async (): Promise<number> => {
      const end = await streamingTurn(steadyAfter);
      const ns = await roundTrip();
      await end();
      return ns;
    };
    const stats = await measureInterleaved(plan, {
      attachEarly: attachFrom(0, 3, answers.early),
      attach: attachFrom(0, steadyAfter, answers.steady),
      attachBehind: attachFrom(behind, steadyAfter),
      roundTrip,
      roundTripStreaming,
    });
    // The warm-up rounds' answers are dropped as their times are.
    const [answeredEarly, answered] = [summarize(answers.early.slice(plan.warmup)), summarize(answers.steady.slice(plan.warmup))];
    const pace = summarize(gaps);
    const ms = (value: Stats) => `${(value.median / 1e6).toFixed(2)} ms (${(value.min / 1e6).toFixed(2)}–${(value.max / 1e6).toFixed(2)})`;
    const row = (what: string, value: Stats) => [what, ms(value), formatRatio(value.median / stats.roundTrip.median)];
    console.log(`${plan.repetitions} rounds after ${plan.warmup} warm-up, interleaved; median (min–max); goal: attach ≤ 5 ms`);
    console.log(table(['case', 'time', '/ request round trip'], [
      row(`session/resume after the last seq, ${steadyAfter} updates into the turn -> first live update`, stats.attach),
      row('  of which: session/resume -> its answer (attached, live from there)', answered),
      row('the same, 3 updates into the turn (its start: the 20 000-word prompt still in the works)', stats.attachEarly),
      row('  of which: session/resume -> its answer', answeredEarly),
      row(`session/resume ${behind} updates behind -> the first of them (replay)`, stats.attachBehind),
      row('a request round trip through the daemon (initialize)', stats.roundTrip),
      row('the same round trip during a streaming turn', stats.roundTripStreaming),
      row(`the agent's pace: one update to the next on the controller (${pace.repetitions} gaps)`, pace),
    ]));
    controller.socket.terminate();
    prober.socket.terminate();
  } finally {
    killGroup(daemon);
    rmSync(scratch, { recursive: true, force: true });
  }
}
