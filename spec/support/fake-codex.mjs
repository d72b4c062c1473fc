#!/usr/bin/env node
// A fake `codex app-server`: replays a recorded transcript (spec/fixtures/
// codex-app-server-<FAKE_CODEX_FIXTURE>.ndjson, entries {dir: "send"|"recv", msg}) against
// whoever drives it. "send" entries are awaited (matched by method, or as a response);
// "recv" entries are printed, with response ids rewritten to the ids the host used.
// `thread/resume` is accepted where the transcript started a thread, as codex app-server
// 0.171.0 answers it: the recorded thread, under the id asked for (and every later line
// speaks of that thread); or, for a thread that has no rollout on disk (the real one writes
// it with the first turn), `{"error":{"code":-32600,"message":"no rollout found for thread
// id <id>"}}`, after which a `thread/start` is awaited again.
//
// Environment:
//   FAKE_CODEX_FIXTURE     hello | tool-approval
//   FAKE_CODEX_ARGV_LOG    a file to append {pid, args} to, one line per start
//   FAKE_CODEX_METHOD_LOG  a file to append each method received (and its threadId) to
//   FAKE_CODEX_CRASH_AFTER kill -9 itself after printing this many lines of a turn, on the
//                          first start only (the log tells restarts apart)
//   FAKE_CODEX_NO_ROLLOUT  comma-separated thread ids that have no rollout (`thread/resume` fails)
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { failer, print, readFixture, stdinMessages } from './fixture-replay.mjs';

const fixture = process.env.FAKE_CODEX_FIXTURE ?? 'hello';
const transcript = readFixture(`codex-app-server-${fixture}.ndjson`);
const log = process.env.FAKE_CODEX_ARGV_LOG;
const restarted = Boolean(log && existsSync(log) && readFileSync(log, 'utf8').trim().length > 0);
if (log) appendFileSync(log, `${JSON.stringify({ pid: process.pid, args: process.argv.slice(2) })}\n`);
const crashAfter = restarted ? Infinity : Number(process.env.FAKE_CODEX_CRASH_AFTER ?? Infinity);

const fail = failer(`fake-codex (${fixture})`);
const next = stdinMessages();

const noRollout = new Set((process.env.FAKE_CODEX_NO_ROLLOUT ?? '').split(',').filter(Boolean));
const sameMethod = (expected, actual) => expected === actual || (expected === 'thread/start' && actual === 'thread/resume');
const logMethod = (received) => {
  if (process.env.FAKE_CODEX_METHOD_LOG) appendFileSync(process.env.FAKE_CODEX_METHOD_LOG, `${received.method} ${JSON.stringify(received.params?.threadId ?? null)}\n`);
};
// The thread the transcript started, and the one the host resumed instead (if it did).
const recordedThread = transcript.find((entry) => entry.dir === 'recv' && entry.msg.result?.thread?.id)?.msg.result.thread.id;
let resumedThread;
const speaksOfResumed = (message) => (resumedThread && recordedThread ? JSON.parse(JSON.stringify(message).replaceAll(recordedThread, resumedThread)) : message);
const ids = new Map(); // recorded request id -> the host's id
let printedInTurn = -Infinity; // counting starts with the first turn
for (const entry of transcript) {
  const message = entry.msg;
  if (entry.dir === 'recv') {
    const isResponse = message.method === undefined && message.id !== undefined;
    const out = isResponse && ids.has(message.id) ? { ...message, id: ids.get(message.id) } : message;
    await new Promise((resolve) => setTimeout(resolve, 2));
    print(speaksOfResumed(out));
    if (++printedInTurn >= crashAfter) process.kill(process.pid, 'SIGKILL');
    continue;
  }
  let received = await next();
  // A thread without a rollout cannot be resumed: the host may start one instead.
  while (message.method === 'thread/start' && received?.method === 'thread/resume' && noRollout.has(received.params?.threadId)) {
    logMethod(received);
    print({ error: { code: -32600, message: `no rollout found for thread id ${received.params.threadId}` }, id: received.id });
    received = await next();
  }
  if (received === undefined) process.exit(0);
  if (received.method === 'thread/resume' && typeof received.params?.threadId === 'string') resumedThread = received.params.threadId;
  if (message.method !== undefined) {
    if (!sameMethod(message.method, received.method)) fail(`expected ${message.method}, got ${received.method ?? 'a response'}`);
    logMethod(received);
    if (message.id !== undefined) ids.set(message.id, received.id);
    if (received.method === 'turn/start') printedInTurn = 0;
  } else if (received.method !== undefined || received.id === undefined) {
    fail(`expected a response to request ${message.id}, got ${received.method}`);
  }
}
// Serve interrupts and further requests with empty answers until stdin ends.
for (;;) {
  const received = await next();
  if (received === undefined) break;
  if (received.id !== undefined && received.method) print({ id: received.id, result: {} });
}
process.exit(0);
