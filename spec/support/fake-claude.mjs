#!/usr/bin/env node
// A fake `claude` CLI: replays a recorded stream-json transcript (spec/fixtures/
// claude-stream-json-<FAKE_CLAUDE_FIXTURE>.transcript.ndjson) against whoever drives it.
// Lines the transcript sent to the CLI ("in") are awaited and checked by type; lines it
// printed ("out") are printed in order. Extra control requests (initialize, set_model,
// set_permission_mode, and get_settings, get_context_usage, which the Claude Agent SDK sends)
// are answered when they are not in the transcript, and `auth status --json` prints an
// API-key login, as Claude Code 2.1.332 does (shortened). Started with
// `--resume=<id>` (or `--resume <id>`), it goes on under that session id, as Claude Code 2.1.332 does (every
// recorded session id printed becomes <id>); a <id> it has no conversation for ends it as
// the real CLI does: "No conversation found with session ID: <id>" on stderr, a `result`
// error_during_execution naming it on stdout, exit 1, before any handshake.
//
// Environment:
//   FAKE_CLAUDE_FIXTURE   fixture name: hello | partial | tool-write-permission-allow | ...
//   FAKE_CLAUDE_ARGV_LOG  a file to append this start's pid and argv to (one JSON line per start)
//   FAKE_CLAUDE_RATE_LIMITS  answer this many user messages (not tool results) with a 429 API error
//                         `result` line (is_error, api_error_status 429), then replay as usual
//   FAKE_CLAUDE_CRASH_ALWAYS=1  kill -9 itself at once, every start (a crash loop)
//   FAKE_CLAUDE_CRASH_AFTER  kill -9 itself after printing this many "out" lines of a turn,
//                         unless started with --resume (so that the restart completes)
//   FAKE_CLAUDE_CRASH_RESUMED=1  with CRASH_AFTER: crash when started with --resume too (a turn cut again)
//   FAKE_CLAUDE_RESUME_GATE  a file: started with --resume, read nothing from stdin until it exists
//                         (a restart held while the test does something meanwhile)
//   FAKE_CLAUDE_CRASH_CWD  with CRASH_ALWAYS / CRASH_AFTER: crash only in a working directory
//                         whose path contains this (one session of several crashes)
//   FAKE_CLAUDE_DELAY_MS  pause between printed lines of a turn (default 2)
//   FAKE_CLAUDE_NO_CONVERSATION  comma-separated session ids with no saved conversation
//   FAKE_CLAUDE_EOF_LOG   a file to append this process's pid to when its stdin closes (a graceful stop)
//   FAKE_CLAUDE_USER_LOG  a file to append the session_id of each user message to (one line each)
//   FAKE_CLAUDE_CONTROL_LOG  a file to append, in the order they came, one JSON line per set_permission_mode
//                         or set_model control request ({ pid, subtype, mode, model }) and per user message
//                         ({ pid, type: 'user' }): which settings each process got before which prompt
//   FAKE_CLAUDE_LEAK_VARS  comma-separated variable names: after the first line of a turn (not when resumed),
//                         print their values inside longer stderr lines, then exit 1 (redaction tests)
//   FAKE_CLAUDE_CONTENT_LOG  a file to append each user message's content blocks to, one JSON line
//                         per message: [{ type, bytes, sha256 }] (bytes and hash of the text or image data)
//   FAKE_CLAUDE_CRASH_ONCE  a file: only the first process to reach FAKE_CLAUDE_CRASH_AFTER crashes
//                         (it creates the file), whether resumed or not
//   FAKE_CLAUDE_TEXT_LOG  a file to append each user message's text to, one JSON line per message:
//                         { pid, resumed, text } (the text blocks joined), to assert what a continuation said
//   FAKE_CLAUDE_LOOP=1    after the transcript, every further prompt replays its turn(s) again
//                         (from the first recorded user line), for as many prompts as come
//   FAKE_CLAUDE_TOOL_IMAGE_BYTES  every printed `user` line with a tool_result carries instead a PNG
//                         of this many base64 characters (fakeImageBase64), as Claude Code's Read tool
//                         on an image returns it: an image block in the tool_result's content and the
//                         same base64 in tool_use_result.file (so the line is about twice that long)
//   FAKE_CLAUDE_RESULT_PAD_BYTES  the `result` line of each turn carries this many more characters
//                         in its `result` text (Claude Code repeats the turn's final text there)
//   FAKE_CLAUDE_TOOL_MS   each tool runs this long: silence before every printed `user` line with a
//                         tool_result (Claude Code prints nothing while its tool runs)
//   FAKE_CLAUDE_STALL_MS  silence before each turn's `result` line, no tool running (the model stalls
//                         while the agent owes output: a hang)
//   FAKE_CLAUDE_LEAK_MB_PER_S  from the first user message on (not when resumed), keep and touch this
//                         many MB a second (Buffer allocations, every 100 ms): Claude Code's memory leak
//   FAKE_CLAUDE_LEAK_UP_TO_MB  stop leaking once this much is kept (default: never)
//   FAKE_CLAUDE_SETSID_LOG  at the first user message (not when resumed), start `setsid sleep 300` (a
//                         tool in its own session, as Claude Code runs Bash) and append its pid to this file
// Faults on request (SIGUSR2, a crash loop per working directory): see fault-signals.mjs.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import { crashWhenAsked, installFaultSignal, liveOn } from './fault-signals.mjs';
import { failer, fakeImageBase64, print, readFixture, stdinMessages } from './fixture-replay.mjs';

const fixture = process.env.FAKE_CLAUDE_FIXTURE ?? 'hello';
const transcript = readFixture(`claude-stream-json-${fixture}.transcript.ndjson`);
const args = process.argv.slice(2);
// `--resume=<id>` (what warden passes) or `--resume <id>`, as the real CLI takes both.
const resumeArg = args.findIndex((arg) => arg === '--resume' || arg.startsWith('--resume='));
const resumed = resumeArg >= 0;
const resumedId = resumed ? (args[resumeArg] === '--resume' ? args[resumeArg + 1] : args[resumeArg].slice('--resume='.length)) : undefined;
if (process.env.FAKE_CLAUDE_ARGV_LOG) appendFileSync(process.env.FAKE_CLAUDE_ARGV_LOG, `${JSON.stringify({ pid: process.pid, args })}\n`);
// A CLI that cannot even start: dies at once, every time.
const crashesHere = !process.env.FAKE_CLAUDE_CRASH_CWD || process.cwd().includes(process.env.FAKE_CLAUDE_CRASH_CWD);
if (process.env.FAKE_CLAUDE_CRASH_ALWAYS === '1' && crashesHere) process.kill(process.pid, 'SIGKILL');
crashWhenAsked();
const faults = installFaultSignal();
if (args[0] === 'auth' && args[1] === 'status') {
  print({ loggedIn: true, authMethod: 'api_key', apiProvider: 'firstParty', apiKeySource: 'ANTHROPIC_API_KEY' });
  process.exit(0);
}
if (resumedId && (process.env.FAKE_CLAUDE_NO_CONVERSATION ?? '').split(',').includes(resumedId)) {
  const why = `No conversation found with session ID: ${resumedId}`;
  process.stderr.write(`${why}\n`);
  print({ type: 'result', subtype: 'error_during_execution', duration_ms: 0, duration_api_ms: 0, is_error: true, num_turns: 0, stop_reason: null, session_id: resumedId, total_cost_usd: 0, errors: [why] });
  process.exit(1);
}
// The recorded session id, printed as the resumed one.
const recordedId = transcript.find((entry) => entry.dir === 'out' && entry.msg.type === 'system' && entry.msg.subtype === 'init')?.msg.session_id;
const asResumed = (message) => (resumedId && recordedId ? JSON.parse(JSON.stringify(message).replaceAll(recordedId, resumedId)) : message);
// FAKE_CLAUDE_CRASH_ONCE=FILE: only the first process to reach the crash point crashes (it creates FILE first).
const crashedOnce = process.env.FAKE_CLAUDE_CRASH_ONCE !== undefined && existsSync(process.env.FAKE_CLAUDE_CRASH_ONCE);
const crashAfter = (resumed && process.env.FAKE_CLAUDE_CRASH_RESUMED !== '1') || !crashesHere || crashedOnce ? Infinity : Number(process.env.FAKE_CLAUDE_CRASH_AFTER ?? Infinity);
const delayMs = Number(process.env.FAKE_CLAUDE_DELAY_MS ?? 2);
const toolImageBytes = Number(process.env.FAKE_CLAUDE_TOOL_IMAGE_BYTES ?? 0);
const resultPadBytes = Number(process.env.FAKE_CLAUDE_RESULT_PAD_BYTES ?? 0);
const toolMs = Number(process.env.FAKE_CLAUDE_TOOL_MS ?? 0);
// FAKE_CLAUDE_STALL_FIRST=1: only a CLI not resumed stalls (a restarted one answers at once).
const stallMs = resumed && process.env.FAKE_CLAUDE_STALL_FIRST === '1' ? 0 : Number(process.env.FAKE_CLAUDE_STALL_MS ?? 0);
const isToolResult = (message) => message.type === 'user' && Array.isArray(message.message?.content) && message.message.content.some((block) => block.type === 'tool_result');

/** A printed line, with the knobs' big payloads put in. */
function enlarged(message) {
  if (toolImageBytes > 0 && message.type === 'user' && Array.isArray(message.message?.content) && message.message.content.some((block) => block.type === 'tool_result')) {
    const data = fakeImageBase64(toolImageBytes);
    const content = message.message.content.map((block) => (block.type === 'tool_result' ? { ...block, content: [{ type: 'image', source: { type: 'base64', data, media_type: 'image/png' } }] } : block));
    const file = { base64: data, type: 'image/png', originalSize: Math.floor((data.length * 3) / 4), dimensions: { originalWidth: 1920, originalHeight: 1080, displayWidth: 1920, displayHeight: 1080 } };
    return { ...message, message: { ...message.message, content }, tool_use_result: { type: 'image', file } };
  }
  if (resultPadBytes > 0 && message.type === 'result') return { ...message, result: `${message.result ?? ''}${'.'.repeat(resultPadBytes)}` };
  return message;
}

// An initialize answer for transcripts that did not record one.
const cannedInit = (() => {
  const source = readFixture('claude-stream-json-tool-write-permission-allow.transcript.ndjson').find((entry) => entry.msg.type === 'control_response');
  return source.msg.response.response;
})();

const fail = failer(`fake-claude (${fixture})`);
const read = stdinMessages();
const gate = resumed ? process.env.FAKE_CLAUDE_RESUME_GATE : undefined;
/** The next message from stdin; a resumed start first waits for its gate file (polled: a test creates it). */
/** FAKE_CLAUDE_RATE_LIMITS: how many user messages are still answered with a 429 API error result. */
let rateLimitsLeft = Number(process.env.FAKE_CLAUDE_RATE_LIMITS ?? 0);

async function next() {
  while (gate && !existsSync(gate)) await new Promise((resolve) => setTimeout(resolve, 20));
  for (;;) {
    const message = await read();
    if (rateLimitsLeft <= 0 || message?.type !== 'user' || isToolResult(message)) return message;
    // Refused by the provider, as the recorded API error's result but with status 429; the CLI waits for the next message.
    rateLimitsLeft -= 1;
    print({ type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', stop_reason: 'stop_sequence', num_turns: 1, duration_ms: 1, duration_api_ms: 0, total_cost_usd: 0, session_id: message.session_id || 'rate-limited', api_error_status: 429, api_error_type: 'rate_limit_error', result: 'API Error: 429 rate_limit_error' });
  }
}

const kind = (message) => [message.type, message.request?.subtype ?? message.response?.subtype ?? ''].join(':');

/** Answers what the transcript does not cover; `true` when handled. */
function answerExtra(message, expected) {
  if (message.type !== 'control_request') return false;
  if (expected && kind(expected) === kind(message)) return false;
  const subtype = message.request?.subtype;
  if (subtype === 'initialize') {
    print({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: cannedInit } });
    return true;
  }
  if (subtype === 'get_settings') {
    print({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: { effective: {}, sources: [], applied: {} } } });
    return true;
  }
  if (subtype === 'get_context_usage') {
    const usage = { categories: [], totalTokens: 0, maxTokens: 1_000_000, rawMaxTokens: 1_000_000, percentage: 0 };
    print({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: usage } });
    return true;
  }
  if (subtype === 'set_model' || subtype === 'set_permission_mode') {
    logControl({ pid: process.pid, subtype, mode: message.request.mode, model: message.request.model });
    print({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: {} } });
    return true;
  }
  if (subtype === 'interrupt') {
    print({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: { still_queued: [] } } });
    return true;
  }
  return false;
}

let printedInTurn = 0;

/** Stdin ended: the host's graceful stop, or the fake's own closing (then it lives on, silent). */
async function stdinEnded() {
  if (faults.stdinClosed) await liveOn();
  // Its stdin closed: the graceful stop (tests check it came before any signal).
  if (process.env.FAKE_CLAUDE_EOF_LOG) appendFileSync(process.env.FAKE_CLAUDE_EOF_LOG, `${process.pid}\n`);
  process.exit(0);
}

/** One line of FAKE_CLAUDE_CONTROL_LOG. */
function logControl(line) {
  if (process.env.FAKE_CLAUDE_CONTROL_LOG) appendFileSync(process.env.FAKE_CLAUDE_CONTROL_LOG, `${JSON.stringify(line)}\n`);
}

/** What FAKE_CLAUDE_LEAK_MB_PER_S keeps. */
const leaked = [];

/** Leaks at FAKE_CLAUDE_LEAK_MB_PER_S, up to FAKE_CLAUDE_LEAK_UP_TO_MB. */
function startLeaking() {
  const step = Math.max(1, Math.round(Number(process.env.FAKE_CLAUDE_LEAK_MB_PER_S) / 10)) * 1024 * 1024;
  const cap = Number(process.env.FAKE_CLAUDE_LEAK_UP_TO_MB ?? Infinity) * 1024 * 1024;
  const timer = setInterval(() => {
    if (leaked.length * step >= cap) clearInterval(timer);
    else leaked.push(Buffer.alloc(step, 1));
  }, 100);
  timer.unref();
}

function userLine(message) {
  // FAKE_CLAUDE_LEAK_ALWAYS=1: a resumed CLI leaks too (a leak in every life).
  if ((!resumed || process.env.FAKE_CLAUDE_LEAK_ALWAYS === '1') && printedInTurn === 0 && process.env.FAKE_CLAUDE_LEAK_MB_PER_S && leaked.length === 0) startLeaking();
  if (!resumed && process.env.FAKE_CLAUDE_SETSID_LOG) {
    const tool = spawn('setsid', ['sleep', '300'], { stdio: 'ignore' });
    appendFileSync(process.env.FAKE_CLAUDE_SETSID_LOG, `${tool.pid}\n`);
  }
  printedInTurn = 0;
  logControl({ pid: process.pid, type: 'user' });
  if (process.env.FAKE_CLAUDE_USER_LOG) appendFileSync(process.env.FAKE_CLAUDE_USER_LOG, `${message.session_id}\n`);
  if (process.env.FAKE_CLAUDE_TEXT_LOG) {
    const content = typeof message.message?.content === 'string' ? [{ type: 'text', text: message.message.content }] : message.message?.content ?? [];
    const text = content.filter((block) => block.type === 'text').map((block) => block.text).join('\n');
    appendFileSync(process.env.FAKE_CLAUDE_TEXT_LOG, `${JSON.stringify({ pid: process.pid, resumed, text })}\n`);
  }
  if (process.env.FAKE_CLAUDE_CONTENT_LOG) {
    const content = typeof message.message?.content === 'string' ? [{ type: 'text', text: message.message.content }] : message.message?.content ?? [];
    const blocks = content.map((block) => {
      const data = block.type === 'image' ? block.source?.data ?? '' : block.text ?? '';
      return { type: block.type, bytes: Buffer.byteLength(data), sha256: createHash('sha256').update(data).digest('hex') };
    });
    appendFileSync(process.env.FAKE_CLAUDE_CONTENT_LOG, `${JSON.stringify(blocks)}\n`);
  }
}

/** A CLI that dumps secrets into longer diagnostic lines (as an HTTP client's debug output does) and dies mid-turn. */
function leakAndDie(names) {
  for (const name of names) {
    const value = process.env[name] ?? '';
    process.stderr.write(`[api] POST /v1/messages failed: 401 for ${name}=${value} (source: env)\n`);
    process.stderr.write(`[api] retry 1/1 with x-api-key ${value} and header "Authorization: Bearer ${value}"; config said token=${value},\n`);
  }
  process.stderr.write('[api] giving up\n');
  process.exit(1);
}

/** Plays `entries`: prints the "out" lines, awaits the "in" lines. */
async function replay(entries) {
for (const entry of entries) {
  if (entry.dir === 'skip') continue;
  if (entry.dir === 'out') {
    if (entry.msg.type === 'control_response' && entry.msg.response?.request_id?.startsWith('interrupt')) continue; // answered live
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const silence = isToolResult(entry.msg) ? toolMs : entry.msg.type === 'result' ? stallMs : 0;
    if (silence > 0) await new Promise((resolve) => setTimeout(resolve, silence));
    print(enlarged(asResumed(entry.msg)));
    if (++printedInTurn >= crashAfter) {
      if (process.env.FAKE_CLAUDE_CRASH_ONCE) appendFileSync(process.env.FAKE_CLAUDE_CRASH_ONCE, `${process.pid}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
    if (process.env.FAKE_CLAUDE_LEAK_VARS && !resumed && printedInTurn === 1) leakAndDie(process.env.FAKE_CLAUDE_LEAK_VARS.split(','));
    continue;
  }
  // An "in" line: wait for the host to send the same kind of line.
  for (;;) {
    const message = await next();
    if (message === undefined) await stdinEnded();
    if (answerExtra(message, entry.msg)) continue;
    if (kind(message) !== kind(entry.msg)) fail(`expected ${kind(entry.msg)}, got ${kind(message)}`);
    if (message.type === 'control_request' && message.request?.subtype === 'initialize') {
      // Answer with the recorded response under the host's request id.
      const recorded = transcript.find((line) => line.dir === 'out' && line.msg.type === 'control_response' && line.msg.response?.request_id === entry.msg.request_id);
      print({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: recorded?.msg.response.response ?? cannedInit } });
      recorded && (recorded.dir = 'skip');
    }
    if (message.type === 'control_request' && message.request?.subtype === 'interrupt') {
      print({ type: 'control_response', response: { subtype: 'success', request_id: message.request_id, response: { still_queued: [] } } });
    }
    if (message.type === 'user') userLine(message);
    break;
  }
}
}

await replay(transcript);
// With FAKE_CLAUDE_LOOP, the turns again (fresh copies: replay marks answered lines).
const firstUser = transcript.findIndex((entry) => entry.dir === 'in' && entry.msg.type === 'user');
const turns = () => JSON.parse(JSON.stringify(transcript.slice(firstUser + 1)));
// The transcript is done: serve extra control requests until stdin ends.
for (;;) {
  const message = await next();
  if (message === undefined) {
    if (faults.stdinClosed) await liveOn();
    break;
  }
  if (answerExtra(message, undefined)) continue;
  if (process.env.FAKE_CLAUDE_LOOP === '1' && firstUser >= 0 && message.type === 'user') {
    userLine(message);
    await replay(turns());
    continue;
  }
  fail(`unexpected ${kind(message)} after the transcript ended`);
}
process.exit(fixture === 'api-error' ? 1 : 0);
