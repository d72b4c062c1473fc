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
// `thread/list` is answered wherever it comes (a short-lived app-server that does only
// initialize, initialized, thread/list, as the adapter's lister does; or between a
// session's requests) from the threads "on disk": the store FAKE_CODEX_THREADS, an ndjson
// file with one thread per line (`{id, cwd, preview, name?, createdAt?, updatedAt, source?, originator?}`,
// the last line of an id wins), which tests seed with threads warden never started and to
// which every fake app-server adds the threads it runs a turn in (Codex writes a thread's
// rollout with its first turn). Answers follow Codex 0.171.0 as recorded in
// spec/fixtures/codex-app-server-thread-list.ndjson (the real app-server against the fake
// OpenAI server, paths rewritten as in ../shared/fixtures): the threads as `Thread` objects
// shaped like the recorded ones; interactive sources only (`vscode`, `cli`) unless
// `sourceKinds` says otherwise; exact `cwd` filter (one path or several); `searchTerm` on the
// title; sorted by `sortKey` (`created_at` by default, or `updated_at`), newest first; `limit`
// (default 25); `nextCursor` `<ISO time>|<thread id>` of the page's last thread, null on the
// last page; a cursor it did not make is `{"code":-32600,"message":"invalid cursor: <it>"}`.
// With a store, `thread/start` makes a fresh thread id (each session its own thread), and
// `thread/resume` of a thread not in the store fails as a thread without a rollout does.
//
// Environment:
//   FAKE_CODEX_FIXTURE     hello | tool-approval
//   FAKE_CODEX_ARGV_LOG    a file to append {pid, args} to, one line per start
//   FAKE_CODEX_METHOD_LOG  a file to append each method received (and its threadId) to
//   FAKE_CODEX_PARAMS_LOG  a file to append each request received to, one JSON line { pid, method, params }
//   FAKE_CODEX_CRASH_AFTER kill -9 itself after printing this many lines of a turn, on the
//                          first start only (the log tells restarts apart)
//   FAKE_CODEX_NO_ROLLOUT  comma-separated thread ids that have no rollout (`thread/resume` fails)
//   FAKE_CODEX_THREADS     the thread store (see above); without it `thread/list` lists nothing
//   FAKE_CODEX_LIST_FAULT  `hang`: never answer `thread/list`; `exit`: exit 1 instead (stderr says why)
//   FAKE_CODEX_OUTPUT_BYTES  a commandExecution item/completed carries this many more characters of
//                          aggregatedOutput (a command that printed a lot)
//   FAKE_CODEX_TOOL_MS     each command or patch runs this long: silence before its item/completed
//   FAKE_CODEX_RATE_LIMITS  answer this many turn/start requests with a turn that fails at once,
//                          its error naming HTTP 429 (then replay as usual)
//   FAKE_CODEX_STALL_MS    silence before each turn/completed, no tool running (a hang while Codex owes output)
//   FAKE_CODEX_APPROVAL_BYTES  a requestApproval carries this many more characters in params.command;
//                          the answer it gets goes to FAKE_CODEX_ANSWER_LOG (one JSON line each) when set
import { randomUUID } from 'node:crypto';
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
const store = process.env.FAKE_CODEX_THREADS;
const sameMethod = (expected, actual) => expected === actual || (expected === 'thread/start' && actual === 'thread/resume');
const logMethod = (received) => {
  const detail = received.method === 'thread/list' ? received.params ?? null : received.params?.threadId ?? null;
  if (process.env.FAKE_CODEX_METHOD_LOG) appendFileSync(process.env.FAKE_CODEX_METHOD_LOG, `${received.method} ${JSON.stringify(detail)}\n`);
  if (process.env.FAKE_CODEX_PARAMS_LOG) appendFileSync(process.env.FAKE_CODEX_PARAMS_LOG, `${JSON.stringify({ pid: process.pid, method: received.method, params: received.params ?? null })}\n`);
};

// ---- the thread store and thread/list
const listTranscript = readFixture('codex-app-server-thread-list.ndjson');
const threadTemplate = listTranscript.find((entry) => entry.dir === 'recv' && entry.msg.result?.data?.length > 0).msg.result.data[0];
/** The threads on disk, by id. */
function storedThreads() {
  const threads = new Map();
  if (!store || !existsSync(store)) return threads;
  for (const line of readFileSync(store, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const thread = JSON.parse(line);
    threads.set(thread.id, { ...threads.get(thread.id), ...thread });
  }
  return threads;
}
const now = () => Math.floor(Date.now() / 1000);
/** A stored thread as Codex 0.171.0 lists it. */
function asThread(stored) {
  const createdAt = stored.createdAt ?? stored.updatedAt;
  const stamp = new Date(createdAt * 1000).toISOString().slice(0, 19).replaceAll(':', '-');
  return {
    ...threadTemplate,
    id: stored.id,
    sessionId: stored.id,
    preview: stored.preview ?? '',
    name: stored.name ?? null,
    cwd: stored.cwd,
    createdAt,
    updatedAt: stored.updatedAt,
    recencyAt: stored.updatedAt,
    source: stored.source ?? 'vscode',
    originator: stored.originator ?? threadTemplate.originator,
    path: `/home/user/.codex/sessions/${stamp.slice(0, 10).replaceAll('-', '/')}/rollout-${stamp}-${stored.id}.jsonl`,
    status: { type: 'notLoaded' },
    turns: [],
  };
}
/** The answer to `thread/list` (a result, or an error). */
function threadList(params = {}) {
  const key = params.sortKey === 'updated_at' ? 'updatedAt' : 'createdAt';
  const cwds = params.cwd == null ? undefined : [params.cwd].flat();
  const sources = Array.isArray(params.sourceKinds) && params.sourceKinds.length > 0 ? params.sourceKinds : ['cli', 'vscode'];
  const term = typeof params.searchTerm === 'string' ? params.searchTerm : undefined;
  const ascending = params.sortDirection === 'asc';
  const order = (a, b) => (a[key] - b[key] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) * (ascending ? 1 : -1);
  let threads = [...storedThreads().values()].map(asThread)
    .filter((thread) => sources.includes(thread.source))
    .filter((thread) => !cwds || cwds.includes(thread.cwd))
    .filter((thread) => !term || (thread.name ?? thread.preview).includes(term))
    .sort(order);
  if (typeof params.cursor === 'string') {
    const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)\|(.+)$/u.exec(params.cursor);
    const at = match ? Date.parse(match[1]) / 1000 : NaN;
    if (!match || Number.isNaN(at)) return { error: { code: -32600, message: `invalid cursor: ${params.cursor}` } };
    const after = { [key]: Math.floor(at), id: match[2] };
    threads = threads.filter((thread) => order(thread, after) > 0);
  }
  const limit = typeof params.limit === 'number' && params.limit > 0 ? params.limit : 25;
  const page = threads.slice(0, limit);
  const last = page.at(-1);
  const cursorOf = (thread) => `${new Date(thread[key] * 1000).toISOString()}|${thread.id}`;
  return {
    result: {
      data: page,
      nextCursor: threads.length > limit && last ? cursorOf(last) : null,
      backwardsCursor: page[0] ? new Date(page[0][key] * 1000).toISOString() : null,
    },
  };
}
/** A fresh thread id, shaped as Codex's (UUIDv7: the time first). */
function freshThreadId() {
  const hex = Date.now().toString(16).padStart(12, '0') + '7' + randomUUID().replaceAll('-', '').slice(13, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
const hasRollout = (threadId) => !noRollout.has(threadId) && (!store || storedThreads().has(threadId));
let threadCwd;
/** Codex writes a thread's rollout with its first turn: the thread is on disk (and listed) from then on. */
function turnStarted(received) {
  if (!store) return;
  const threadId = received.params?.threadId;
  const known = storedThreads().get(threadId);
  if (known) {
    appendFileSync(store, `${JSON.stringify({ id: threadId, updatedAt: Math.max(now(), known.updatedAt) })}\n`);
    return;
  }
  const text = (received.params?.input ?? []).find((item) => item.type === 'text')?.text ?? '';
  appendFileSync(store, `${JSON.stringify({ id: threadId, cwd: threadCwd, preview: text, createdAt: now(), updatedAt: now(), source: 'vscode' })}\n`);
}
/** The host's next message, answering `thread/list` (anywhere) and a `thread/resume` of a thread without a rollout (where a thread is expected) on the way. */
/** FAKE_CODEX_RATE_LIMITS: how many turn/start requests are still answered with a turn failed by a 429. */
let rateLimitsLeft = Number(process.env.FAKE_CODEX_RATE_LIMITS ?? 0);

async function nextExpecting(method) {
  for (;;) {
    const received = await next();
    if (received?.method === 'turn/start' && rateLimitsLeft > 0) {
      // Refused by the provider: the turn starts and fails at once, its error naming the 429; the thread waits for the next turn/start.
      rateLimitsLeft -= 1;
      logMethod(received);
      const turn = { id: `turn-rate-limited-${rateLimitsLeft}`, items: [], status: 'inProgress', error: null };
      const threadId = received.params?.threadId;
      print({ id: received.id, result: { turn } });
      print({ method: 'turn/started', params: { threadId, turn } });
      print({ method: 'turn/completed', params: { threadId, turn: { ...turn, status: 'failed', error: { message: 'unexpected status 429 Too Many Requests: rate limit reached', codexErrorInfo: null } } } });
      continue;
    }
    if (received?.method === 'thread/list') {
      logMethod(received);
      if (process.env.FAKE_CODEX_LIST_FAULT === 'hang') continue;
      if (process.env.FAKE_CODEX_LIST_FAULT === 'exit') {
        process.stderr.write('fake-codex: thread/list failed on purpose\n');
        process.exit(1);
      }
      print({ ...threadList(received.params ?? {}), id: received.id });
      continue;
    }
    if (method === 'thread/start' && received?.method === 'thread/resume' && !hasRollout(received.params?.threadId)) {
      logMethod(received);
      print({ error: { code: -32600, message: `no rollout found for thread id ${received.params.threadId}` }, id: received.id });
      continue;
    }
    return received;
  }
}

// The thread the transcript started, and the one this process speaks of instead (the one the
// host resumed, or a fresh one when there is a store).
const recordedThread = transcript.find((entry) => entry.dir === 'recv' && entry.msg.result?.thread?.id)?.msg.result.thread.id;
let resumedThread;
const speaksOfResumed = (message) => (resumedThread && recordedThread ? JSON.parse(JSON.stringify(message).replaceAll(recordedThread, resumedThread)) : message);
const ids = new Map(); // recorded request id -> the host's id
const outputBytes = Number(process.env.FAKE_CODEX_OUTPUT_BYTES ?? 0);
const approvalBytes = Number(process.env.FAKE_CODEX_APPROVAL_BYTES ?? 0);
/** A printed line, with the knobs' big payloads put in. */
function enlarged(message) {
  const item = message.params?.item;
  if (outputBytes > 0 && message.method === 'item/completed' && item?.type === 'commandExecution') {
    return { ...message, params: { ...message.params, item: { ...item, aggregatedOutput: `${item.aggregatedOutput ?? ''}${'x'.repeat(outputBytes)}` } } };
  }
  if (approvalBytes > 0 && /requestApproval$/.test(message.method ?? '')) {
    return { ...message, params: { ...message.params, command: `${message.params?.command ?? ''} ${'x'.repeat(approvalBytes)}` } };
  }
  return message;
}
let printedInTurn = -Infinity; // counting starts with the first turn
for (const entry of transcript) {
  const message = entry.msg;
  if (entry.dir === 'recv') {
    const isResponse = message.method === undefined && message.id !== undefined;
    const out = isResponse && ids.has(message.id) ? { ...message, id: ids.get(message.id) } : message;
    await new Promise((resolve) => setTimeout(resolve, 2));
    const toolEnds = message.method === 'item/completed' && ['commandExecution', 'fileChange'].includes(message.params?.item?.type);
    const silence = toolEnds ? Number(process.env.FAKE_CODEX_TOOL_MS ?? 0) : message.method === 'turn/completed' ? Number(process.env.FAKE_CODEX_STALL_MS ?? 0) : 0;
    if (silence > 0) await new Promise((resolve) => setTimeout(resolve, silence));
    print(enlarged(speaksOfResumed(out)));
    if (++printedInTurn >= crashAfter) process.kill(process.pid, 'SIGKILL');
    continue;
  }
  const received = await nextExpecting(message.method);
  if (received === undefined) process.exit(0);
  if (received.method === 'thread/resume' && typeof received.params?.threadId === 'string') resumedThread = received.params.threadId;
  else if (received.method === 'thread/start' && store) resumedThread = freshThreadId();
  if (received.method === 'thread/start' || received.method === 'thread/resume') threadCwd = received.params?.cwd;
  if (message.method !== undefined) {
    if (!sameMethod(message.method, received.method)) fail(`expected ${message.method}, got ${received.method ?? 'a response'}`);
    logMethod(received);
    if (message.id !== undefined) ids.set(message.id, received.id);
    if (received.method === 'turn/start') {
      printedInTurn = 0;
      turnStarted(received);
    }
  } else if (received.method !== undefined || received.id === undefined) {
    fail(`expected a response to request ${message.id}, got ${received.method}`);
  } else if (process.env.FAKE_CODEX_ANSWER_LOG) {
    appendFileSync(process.env.FAKE_CODEX_ANSWER_LOG, `${JSON.stringify(received)}\n`);
  }
}
// Serve interrupts and further requests with empty answers until stdin ends.
for (;;) {
  const received = await nextExpecting(undefined);
  if (received === undefined) break;
  if (received.id !== undefined && received.method) print({ id: received.id, result: {} });
}
process.exit(0);
