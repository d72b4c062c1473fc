/**
 * A stalled observer next to a streaming controller (issue 16: a slow client pauses only
 * itself): a warm `warden serve --agent demo` (built from src/, SQLite journal), three sessions
 * on it, each with its own controller over a raw `ws` socket; one alone (the baseline), one with
 * an observer that reads everything, one with an observer whose socket is paused for the whole
 * run (it reads nothing: the daemon's cursor for it stops at the transport's high-water mark and
 * the updates wait in the journal). Timed: the controller's turn (2 000 streamed words of 1 KB,
 * `DEMO_WORD_DELAY_MS=0`) from the prompt sent to its answer. Rounds interleaved. At the end,
 * before the stalled observer reads again: how far behind the daemon holds it (its `delivered`
 * seq against the last one) and the daemon's resident memory; then it catches up, checked
 * complete and in order.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildWarden } from './support/build-warden.js';
import { killGroup, serveClient, startServeDaemon, type ServeClient, type ServeFrame } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, table, type Stats } from './support/measure.js';

const plan = { warmup: 2, repetitions: 9 };
const wordCount = 2_000;
const wordBytes = 1_000;
const words = Array.from({ length: wordCount }, (_, n) => `w${n}-${'x'.repeat(wordBytes)}`).join(' ');
const initialize = { protocolVersion: 1, clientCapabilities: {} };
const seqKey = 'acp-warden/seq';
const turnEndKey = 'acp-warden/turnEnded';

/** The seqs of `sessionId`'s updates a client got, and how many turn ends. */
function follow(client: ServeClient, sessionId: string): { seqs: number[]; turnEnds: () => number } {
  const seqs: number[] = [];
  let ends = 0;
  client.listeners.add((frame: ServeFrame) => {
    if (frame.method !== 'session/update' || frame.params?.sessionId !== sessionId) return;
    const seq = frame.params._meta?.[seqKey];
    if (typeof seq === 'number') seqs.push(seq);
    if (frame.params.update?._meta?.[turnEndKey] !== undefined) ends++;
  });
  return { seqs, turnEnds: () => ends };
}

/** Polls `condition` until it holds; fails after `deadlineMs` (catching up on a long backlog takes longer than a request). */
async function until(condition: () => boolean, what: string, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`benchmark timed out after ${deadlineMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resident memory of `pid`, MiB. */
const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/u.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

export async function serveSlowObserver(): Promise<void> {
  console.log(`\n## A stalled observer does not slow the controller: warden serve --agent demo, a turn of ${wordCount} words of ${wordBytes / 1000} KB, controller alone / with a reading observer / with an observer that reads nothing`);
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-slow-observer-'));
  let daemon: ChildProcess | undefined;
  const clients: ServeClient[] = [];
  try {
    const main = buildWarden(join(scratch, 'build'));
    const env = { ...process.env, XDG_STATE_HOME: join(scratch, 'state'), HOME: scratch };
    const started = await startServeDaemon(main, env, ['--store', join(scratch, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=0', '--keepalive', '0']);
    daemon = started.child;
    const token = readFileSync(join(scratch, 'state', 'acp-warden', 'token'), 'utf8').trim();
    const open = async () => {
      const client = await serveClient(started.url, token);
      clients.push(client);
      await client.request('initialize', initialize);
      return client;
    };

    /** A session with its controller, and an observer attached by session/load when asked. */
    const session = async (observer: 'none' | 'reading' | 'stalled') => {
      const controller = await open();
      const sessionId = (await controller.request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
      let watcher: ServeClient | undefined;
      if (observer !== 'none') {
        watcher = await open();
        check((await watcher.request('session/load', { sessionId, cwd: scratch, mcpServers: [] })).error === undefined, 'the observer attached');
        if (observer === 'stalled') watcher.socket.pause();
      }
      const watched = watcher ? follow(watcher, sessionId) : undefined;
      const mine = follow(controller, sessionId);
      let turns = 0;
      const turn = async (): Promise<number> => {
        const begun = process.hrtime.bigint();
        const answer = await controller.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: words }] });
        const ns = Number(process.hrtime.bigint() - begun);
        check(answer.result?.stopReason === 'end_turn', `the turn ended (${JSON.stringify(answer.result ?? answer.error)})`);
        turns++;
        // The reading observer keeps up between rounds (untimed), so that each round starts alike.
        if (observer === 'reading') await until(() => (watched as ReturnType<typeof follow>).turnEnds() === turns, 'the reading observer to see the turn end');
        return ns;
      };
      return { sessionId, turn, watcher, watched, mine, turns: () => turns };
    };

    const alone = await session('none');
    const reading = await session('reading');
    const stalled = await session('stalled');
    const rssBefore = rssMiB(started.child.pid as number);
    const stats = await measureInterleaved(plan, { alone: alone.turn, reading: reading.turn, stalled: stalled.turn });

    // Before it reads again: where the daemon holds the stalled observer, and what the daemon holds in memory.
    const probe = await open();
    const listed = (await probe.request('_acp-warden/sessions', {})).result as { sessions: Array<{ sessionId: string; clients: Array<{ role: string; delivered?: number }> }> };
    const held = listed.sessions.find((entry) => entry.sessionId === stalled.sessionId)?.clients.find((entry) => entry.role === 'observer')?.delivered ?? 0;
    const last = Math.max(...stalled.mine.seqs);
    const backlogMiB = (stalled.turns() * words.length * 2) / (1024 * 1024);
    const rss = rssMiB(started.child.pid as number);
    check(held < last, `the stalled observer was held behind (delivered ${held}, last ${last})`);
    (stalled.watcher as ServeClient).socket.resume();
    const watched = stalled.watched as ReturnType<typeof follow>;
    await until(() => watched.turnEnds() === stalled.turns(), 'the stalled observer to catch up', 300_000);
    check(watched.seqs.every((seq, index) => index === 0 || seq > (watched.seqs[index - 1] as number)), 'the stalled observer got every update in order, once');

    const ms = (value: Stats, of: 'median' | 'min' | 'max') => `${(value[of] / 1e6).toFixed(0)} ms`;
    const row = (label: string, value: Stats) => [label, `${ms(value, 'median')} (${ms(value, 'min')}–${ms(value, 'max')})`, formatRatio(value.median / stats.alone.median)];
    console.log(`${plan.repetitions} turns each after ${plan.warmup} warm-up, interleaved; the controller's turn, median (min–max); goal: with an observer ≈ 1× alone`);
    console.log(table(['case', 'controller turn', '/ alone'], [
      row('controller alone (baseline)', stats.alone),
      row('+ an observer that reads everything', stats.reading),
      row('+ an observer that reads nothing (socket paused)', stats.stalled),
    ]));
    console.log(`the stalled observer at the end: delivered up to seq ${held} of ${last} (its ${stalled.turns()} turns, about ${backlogMiB.toFixed(0)} MiB of prompts and answers, waiting in the journal); daemon resident memory then ${rss.toFixed(0)} MiB (${rssBefore.toFixed(0)} MiB before the first turn); caught up afterwards, in order`);
  } finally {
    for (const client of clients) client.socket.terminate();
    killGroup(daemon);
    rmSync(scratch, { recursive: true, force: true });
  }
}
