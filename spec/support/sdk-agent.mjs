#!/usr/bin/env node
// A reference ACP v1 agent built only with the official SDK (@agentclientprotocol/sdk),
// used as a test peer for acp-warden's own ACP client side. Speaks NDJSON on stdio.
//
// Usage: node spec/support/sdk-agent.mjs [--require-auth] [--state-dir DIR] [--no-resume] [--replay-after-answer] [--refuse-v2] [--additional-directories] [--log FILE]
//   --require-auth   session/new, load, resume and list fail with -32000 until `authenticate`.
//   --state-dir DIR  persist the session store to DIR/sdk-agent-sessions.json, so that a
//                    restarted agent can session/load or session/resume earlier sessions.
//   --no-resume      advertise no session/resume (as Gemini CLI 0.61.0): a client re-attaches
//                    with session/load.
//   --replay-after-answer
//                    session/load streams the history without waiting for it, each update
//                    written after the previous one, and answers at once (as Gemini CLI
//                    0.61.0's loadSession does): all but the first update come after the answer.
//   --refuse-v2      an initialize asking for protocol version 2 or later is refused -32022
//                    (supported: [1]), as a v1 agent that says so; a v1 one is served.
//   --additional-directories
//                    advertise sessionCapabilities.additionalDirectories (sessions take them).
//   --log FILE       append each diagnostic line (as on stderr) to FILE too: for a test whose
//                    agent runs under warden, which keeps the agent's stderr to itself. Lines
//                    `setup clientCapabilities JSON` give what initialize brought and session/new,
//                    load and resume (mcpServers, additionalDirectories) were sent.
//
// Behaviour of session/prompt is chosen by the first word (lower-cased) of the first text
// block: hello | permission | fs | read PATH | write PATH TEXT | terminal | longterminal | slow | die |
// screenshot N | bigreply N | tool N | stall N | anything else (echo). `read PATH` asks the
// client for the file and says "read: CONTENT" or "read refused: CODE MESSAGE DATA-as-JSON";
// `write PATH TEXT` writes TEXT and says "written" or "write refused: …" the same way. `longterminal`: a
// terminal running `sleep 600` (shown in an in_progress tool call), waited for, then "terminal ended: SIGNAL". `tool N`: a tool call in_progress, N ms of silence, completed;
// `stall N`: N ms of silence before the answer (no tool running). `screenshot N` sends one agent_message_chunk with an image of N base64
// characters (fakeImageBase64 of fixture-replay.mjs), then says "done"; `bigreply N` answers the
// prompt with N characters of padding in the response's _meta (one answer line that long).
// `ratelimited N [MS]`: the session's first N such prompts fail -32603 with data.reason
// `rate_limited` (data.retryAfterMs MS when given, data.details "API Error: 429 …"), then it answers.
// `innerdead` (with --state-dir): the first process so asked answers it and every later prompt
// -32603 data.details "Claude Code process exited with code 1"; a restarted one answers it.
// Only ACP messages go to stdout; diagnostics go to stderr ("unknown request METHOD" for each
// request it answers -32601). Exits 0 when stdin ends.
import { Readable, Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { agent, methods, ndJsonStream, PROTOCOL_VERSION, RequestError } from '@agentclientprotocol/sdk';
import { fakeImageBase64 } from './fixture-replay.mjs';

const argv = process.argv.slice(2);
const flag = (name) => {
  const index = argv.indexOf(name);
  return index >= 0 ? argv[index + 1] : undefined;
};
const requireAuth = argv.includes('--require-auth');
const noResume = argv.includes('--no-resume');
const replayAfterAnswer = argv.includes('--replay-after-answer');
const refuseV2 = argv.includes('--refuse-v2');
const takesDirectories = argv.includes('--additional-directories');
const stateDir = flag('--state-dir');
const stateFile = stateDir ? join(stateDir, 'sdk-agent-sessions.json') : undefined;

const logFile = flag('--log');
const log = (...parts) => {
  const line = `[sdk-agent ${process.pid}] ${parts.join(' ')}\n`;
  process.stderr.write(line);
  if (logFile) appendFileSync(logFile, line);
};

// ---------------------------------------------------------------------------------------------
// Static catalogue
// ---------------------------------------------------------------------------------------------

const AUTH_METHOD = { id: 'sdk-agent-login', name: 'SDK agent login', description: 'Always succeeds' };

const MODES = [
  { id: 'default', name: 'Default', description: 'Ask before acting' },
  { id: 'plan', name: 'Plan', description: 'Plan only, no edits' },
];

const CONFIG_CATALOGUE = [
  {
    id: 'model',
    name: 'Model',
    description: 'Which fake model answers',
    category: 'model',
    values: [
      { value: 'fake-large', name: 'Fake Large', description: 'The big one' },
      { value: 'fake-small', name: 'Fake Small', description: 'The fast one' },
    ],
  },
  {
    id: 'effort',
    name: 'Reasoning effort',
    category: 'thought_level',
    values: [
      { value: 'low', name: 'Low' },
      { value: 'medium', name: 'Medium' },
      { value: 'high', name: 'High' },
    ],
  },
];
const DEFAULT_CONFIG = { model: 'fake-large', effort: 'medium' };
const PAGE_SIZE = 2;

// ---------------------------------------------------------------------------------------------
// Session store (in memory, optionally persisted)
// ---------------------------------------------------------------------------------------------

/** @typedef {{sessionId: string, cwd: string, additionalDirectories?: string[], title: string|null,
 *   updatedAt: string, modeId: string, config: Record<string,string>,
 *   history: import('@agentclientprotocol/sdk').SessionUpdate[]}} StoredSession */

/** @returns {Map<string, StoredSession>} */
function seedStore() {
  const historyCwd = join(tmpdir(), 'sdk-agent-history');
  const store = new Map();
  for (let n = 1; n <= 3; n += 1) {
    const sessionId = `stored-${n}`;
    store.set(sessionId, {
      sessionId,
      cwd: historyCwd,
      title: `Stored session ${n}`,
      updatedAt: new Date(Date.UTC(2026, 0, n)).toISOString(),
      modeId: 'default',
      config: { ...DEFAULT_CONFIG },
      history: [
        { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: `earlier question ${n}` } },
        { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `earlier answer ${n}` } },
      ],
    });
  }
  return store;
}

/** @returns {Map<string, StoredSession>} */
function loadStore() {
  if (stateFile) {
    try {
      const entries = JSON.parse(readFileSync(stateFile, 'utf8'));
      return new Map(entries.map((session) => [session.sessionId, session]));
    } catch (error) {
      if (error.code !== 'ENOENT') log('cannot read state file:', error.message);
    }
  }
  return seedStore();
}

const store = loadStore();
function saveStore() {
  if (!stateFile) return;
  mkdirSync(stateDir, { recursive: true });
  const temporary = `${stateFile}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify([...store.values()], null, 1));
  renameSync(temporary, stateFile);
}
saveStore();

/** Sessions live on this connection: sessionId → { turn?: {controller: AbortController} }. */
const active = new Map();
/** Set by `innerdead`: every prompt fails as an adapter's whose inner CLI died. */
let innerCliDead = false;
/** How many `ratelimited` prompts each session failed so far. */
const rateLimitedSoFar = new Map();
let authenticated = false;
/** @type {import('@agentclientprotocol/sdk').ClientCapabilities} */
let clientCapabilities = {};

const modeState = (session) => ({ currentModeId: session.modeId, availableModes: MODES });
const configOptions = (session) =>
  CONFIG_CATALOGUE.map(({ values, ...option }) => ({
    ...option,
    type: 'select',
    currentValue: session.config[option.id] ?? DEFAULT_CONFIG[option.id],
    options: values,
  }));
const sessionSetup = (session) => ({ modes: modeState(session), configOptions: configOptions(session) });

function checkAuth() {
  if (requireAuth && !authenticated) throw RequestError.authRequired({ authMethods: [AUTH_METHOD.id] });
}
function checkAbsolute(field, value) {
  if (!isAbsolute(value)) throw RequestError.invalidParams({ [field]: value }, `${field} must be an absolute path`);
}
function stored(sessionId) {
  const session = store.get(sessionId);
  if (!session) throw RequestError.sessionNotFound(sessionId);
  return session;
}
function activeSession(sessionId) {
  if (!active.has(sessionId)) throw RequestError.sessionNotFound(sessionId);
  return stored(sessionId);
}
function cancelTurn(sessionId) {
  active.get(sessionId)?.turn?.controller.abort('session/cancel');
}
const touch = (session) => {
  session.updatedAt = new Date().toISOString();
};

// ---------------------------------------------------------------------------------------------
// Helpers used while a prompt runs
// ---------------------------------------------------------------------------------------------

const sleep = (ms, signal) =>
  new Promise((done) => {
    if (signal?.aborted) return done();
    const timer = setTimeout(done, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        done();
      },
      { once: true },
    );
  });
const errorSummary = (error) =>
  error instanceof RequestError || typeof error?.code === 'number'
    ? { code: error.code, message: error.message }
    : { code: null, message: String(error?.message ?? error) };

/**
 * Builds the per-turn toolkit: `update` sends a session/update; `say` an agent text chunk
 * (collected for the history).
 */
function turnKit(client, sessionId) {
  const messageId = randomUUID();
  const said = [];
  const update = (payload) => client.notify(methods.client.session.update, { sessionId, update: payload });
  const say = (text) => {
    said.push(text);
    return update({ sessionUpdate: 'agent_message_chunk', messageId, content: { type: 'text', text } });
  };
  return { update, say, said };
}

async function runHello({ say }) {
  for (const text of ['Hello', ', ', 'world!']) await say(text);
  return 'end_turn';
}

async function runPermission({ client, sessionId, update, say, turnSignal }) {
  const toolCallId = `perm-${randomUUID()}`;
  await update({
    sessionUpdate: 'tool_call',
    toolCallId,
    title: 'Write notes.txt',
    kind: 'edit',
    status: 'pending',
    rawInput: { path: 'notes.txt', content: 'hello' },
  });
  let response;
  try {
    response = await client.request(methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId, title: 'Write notes.txt', kind: 'edit', status: 'pending' },
      options: [
        { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
        { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
      ],
    });
  } catch (error) {
    const { code, message } = errorSummary(error);
    await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' });
    await say(`permission request failed: ${code} ${message}`);
    return turnSignal.aborted ? 'cancelled' : 'end_turn';
  }
  const outcome = response.outcome;
  if (outcome.outcome === 'cancelled' || turnSignal.aborted) {
    await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' });
    return 'cancelled';
  }
  if (outcome.optionId === 'allow_once') {
    await update({
      sessionUpdate: 'tool_call_update',
      toolCallId,
      status: 'completed',
      rawOutput: { written: true },
    });
    await say('permission granted: allow_once');
  } else {
    await update({ sessionUpdate: 'tool_call_update', toolCallId, status: 'failed' });
    await say(`permission denied: ${outcome.optionId}`);
  }
  return 'end_turn';
}

async function runFs({ client, session, sessionId, say }) {
  const fs = clientCapabilities.fs ?? {};
  if (!fs.readTextFile || !fs.writeTextFile) {
    await say('fs not supported by client');
    return 'end_turn';
  }
  const notes = join(session.cwd, 'notes.txt');
  const content = 'written by sdk-agent\nsecond line\n';
  try {
    await client.request(methods.client.fs.writeTextFile, { sessionId, path: notes, content });
    const read = await client.request(methods.client.fs.readTextFile, { sessionId, path: notes });
    await say(`read back: ${read.content}`);
  } catch (error) {
    const { code, message } = errorSummary(error);
    await say(`fs round trip failed: ${code} ${message}`);
  }
  const outside = resolve(session.cwd, '../../etc/passwd');
  try {
    const read = await client.request(methods.client.fs.readTextFile, { sessionId, path: outside });
    await say(`outside read allowed: ${outside} (${read.content.length} chars)`);
  } catch (error) {
    const { code } = errorSummary(error);
    await say(`outside read refused: ${outside} code ${code}`);
  }
  return 'end_turn';
}

/** `read PATH` and `write PATH TEXT`: one fs request of the agent, its outcome said. */
async function runFsRequest({ client, sessionId, say }, word, text) {
  const [, path = '', ...rest] = text.trim().split(/\s+/);
  try {
    if (word === 'read') {
      const read = await client.request(methods.client.fs.readTextFile, { sessionId, path });
      await say(`read: ${read.content}`);
    } else {
      await client.request(methods.client.fs.writeTextFile, { sessionId, path, content: rest.join(' ') });
      await say('written');
    }
  } catch (error) {
    const { code, message } = errorSummary(error);
    await say(`${word} refused: ${code} ${message} ${JSON.stringify(error?.data ?? null)}`);
  }
  return 'end_turn';
}

async function runTerminal({ client, session, sessionId, update, say }) {
  if (!clientCapabilities.terminal) {
    await say('terminal not supported by client');
    return 'end_turn';
  }
  const terminal = await client.createTerminal({
    sessionId,
    command: 'sh',
    args: ['-c', 'echo hi'],
    cwd: session.cwd,
    outputByteLimit: 4096,
  });
  try {
    const exit = await terminal.waitForExit();
    const output = await terminal.currentOutput();
    await update({
      sessionUpdate: 'tool_call',
      toolCallId: `term-${terminal.id}`,
      title: 'echo hi',
      kind: 'execute',
      status: 'completed',
      rawInput: { command: 'sh', args: ['-c', 'echo hi'] },
      content: [{ type: 'terminal', terminalId: terminal.id }],
    });
    await terminal.release();
    await say(`terminal output: ${JSON.stringify(output.output)} exit ${exit.exitCode ?? exit.signal}`);
  } catch (error) {
    await terminal.release().catch(() => {});
    throw error;
  }
  return 'end_turn';
}

/** `longterminal`: a terminal running `sleep 600`, shown at once (a tool call with it), waited for until it ends (killed by the client), then released. */
async function runLongTerminal({ client, session, sessionId, update, say }) {
  const terminal = await client.createTerminal({ sessionId, command: 'sleep', args: ['600'], cwd: session.cwd });
  await update({ sessionUpdate: 'tool_call', toolCallId: `term-${terminal.id}`, title: 'sleep 600', kind: 'execute', status: 'in_progress', content: [{ type: 'terminal', terminalId: terminal.id }] });
  const exit = await terminal.waitForExit();
  await terminal.release();
  await say(`terminal ended: ${exit.exitCode ?? exit.signal}`);
  return 'end_turn';
}

async function runSlow({ say, turnSignal, requestSignal }) {
  const deadline = Date.now() + 120_000;
  for (let tick = 1; Date.now() < deadline; tick += 1) {
    if (turnSignal.aborted) return 'cancelled';
    if (requestSignal.aborted) throw RequestError.requestCancelled({ reason: '$/cancel_request' });
    await say(`tick ${tick} `);
    await sleep(50, AbortSignal.any([turnSignal, requestSignal]));
  }
  return 'end_turn';
}

async function runDie({ say }) {
  await say('about to die');
  log('exiting with code 7 mid-prompt');
  process.exit(7);
}

// ---------------------------------------------------------------------------------------------
// The agent app
// ---------------------------------------------------------------------------------------------

const app = agent({ name: 'sdk-agent' })
  .onRequest(methods.agent.initialize, ({ params }) => {
    clientCapabilities = params.clientCapabilities ?? {};
    log('initialize', `protocolVersion=${params.protocolVersion}`);
    log('setup clientCapabilities', JSON.stringify({ clientCapabilities }));
    if (refuseV2 && params.protocolVersion >= 2) throw RequestError.unsupportedProtocolVersion(params.protocolVersion, [1]);
    return {
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { list: {}, ...(noResume ? {} : { resume: {} }), close: {}, delete: {}, ...(takesDirectories ? { additionalDirectories: {} } : {}) },
        auth: { logout: {} },
      },
      authMethods: [AUTH_METHOD],
      agentInfo: { name: 'sdk-agent', title: 'SDK test agent', version: '1.0.0' },
    };
  })
  .onRequest(methods.agent.authenticate, ({ params }) => {
    if (params.methodId !== AUTH_METHOD.id) {
      throw RequestError.invalidParams({ methodId: params.methodId }, 'unknown auth method');
    }
    authenticated = true;
    return {};
  })
  .onRequest(methods.agent.logout, () => {
    authenticated = false;
    return {};
  })
  .onRequest(methods.agent.session.new, ({ params }) => {
    log('setup session/new', JSON.stringify({ mcpServers: params.mcpServers, additionalDirectories: params.additionalDirectories }));
    checkAuth();
    checkAbsolute('cwd', params.cwd);
    const sessionId = `sess-${randomUUID()}`;
    const session = {
      sessionId,
      cwd: params.cwd,
      additionalDirectories: params.additionalDirectories,
      title: null,
      updatedAt: new Date().toISOString(),
      modeId: MODES[0].id,
      config: { ...DEFAULT_CONFIG },
      history: [],
    };
    store.set(sessionId, session);
    saveStore();
    active.set(sessionId, {});
    return { sessionId, ...sessionSetup(session) };
  })
  .onRequest(methods.agent.session.load, async ({ params, client }) => {
    log('setup session/load', JSON.stringify({ mcpServers: params.mcpServers, additionalDirectories: params.additionalDirectories }));
    checkAuth();
    checkAbsolute('cwd', params.cwd);
    const session = stored(params.sessionId);
    cancelTurn(params.sessionId);
    const replay = async () => {
      for (const update of session.history) {
        await client.notify(methods.client.session.update, { sessionId: session.sessionId, update });
      }
    };
    if (replayAfterAnswer) void replay().catch((error) => log('replay failed:', error.message));
    else await replay();
    session.cwd = params.cwd;
    active.set(session.sessionId, {});
    return sessionSetup(session);
  })
  .onRequest(methods.agent.session.resume, ({ params }) => {
    if (noResume) throw RequestError.methodNotFound(methods.agent.session.resume);
    log('setup session/resume', JSON.stringify({ mcpServers: params.mcpServers, additionalDirectories: params.additionalDirectories }));
    checkAuth();
    checkAbsolute('cwd', params.cwd);
    const session = stored(params.sessionId);
    session.cwd = params.cwd;
    if (!active.has(session.sessionId)) active.set(session.sessionId, {});
    return sessionSetup(session);
  })
  .onRequest(methods.agent.session.list, ({ params }) => {
    checkAuth();
    const all = [...store.values()]
      .filter((session) => !params.cwd || session.cwd === params.cwd)
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.sessionId.localeCompare(b.sessionId));
    let offset = 0;
    if (params.cursor) {
      offset = Number.parseInt(Buffer.from(params.cursor, 'base64url').toString('utf8'), 10);
      if (!Number.isInteger(offset) || offset < 0) {
        throw RequestError.invalidParams({ cursor: params.cursor }, 'bad cursor');
      }
    }
    const page = all.slice(offset, offset + PAGE_SIZE).map((session) => ({
      sessionId: session.sessionId,
      cwd: session.cwd,
      ...(session.additionalDirectories?.length ? { additionalDirectories: session.additionalDirectories } : {}),
      title: session.title,
      updatedAt: session.updatedAt,
    }));
    const next = offset + PAGE_SIZE;
    return {
      sessions: page,
      ...(next < all.length ? { nextCursor: Buffer.from(String(next)).toString('base64url') } : {}),
    };
  })
  .onRequest(methods.agent.session.close, ({ params }) => {
    activeSession(params.sessionId);
    cancelTurn(params.sessionId);
    active.delete(params.sessionId);
    return {};
  })
  .onRequest(methods.agent.session.delete, ({ params }) => {
    cancelTurn(params.sessionId);
    active.delete(params.sessionId);
    store.delete(params.sessionId);
    saveStore();
    return {};
  })
  .onRequest(methods.agent.session.setMode, ({ params }) => {
    const session = activeSession(params.sessionId);
    if (!MODES.some((mode) => mode.id === params.modeId)) {
      throw RequestError.invalidParams({ modeId: params.modeId }, 'unknown mode');
    }
    session.modeId = params.modeId;
    saveStore();
    return {};
  })
  .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
    const session = activeSession(params.sessionId);
    const option = CONFIG_CATALOGUE.find((entry) => entry.id === params.configId);
    if (!option) throw RequestError.invalidParams({ configId: params.configId }, 'unknown config option');
    if (typeof params.value !== 'string' || !option.values.some((entry) => entry.value === params.value)) {
      throw RequestError.invalidParams({ configId: params.configId, value: params.value }, 'invalid value');
    }
    session.config[option.id] = params.value;
    saveStore();
    return { configOptions: configOptions(session) };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client, signal }) => {
    const session = activeSession(params.sessionId);
    const slot = active.get(params.sessionId);
    if (slot.turn) throw RequestError.invalidRequest({ sessionId: params.sessionId }, 'a prompt is already running');
    for (const block of params.prompt) {
      if (block.type === 'audio') throw RequestError.invalidParams({ type: 'audio' }, 'audio prompts are not supported');
    }
    const text = params.prompt.find((block) => block.type === 'text')?.text ?? '';
    const word = text.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
    const controller = new AbortController();
    slot.turn = { controller };
    const sessionId = params.sessionId;
    const kit = turnKit(client, sessionId);
    const context = { ...kit, client, session, sessionId, turnSignal: controller.signal, requestSignal: signal };
    log('prompt', sessionId, JSON.stringify(word));
    // Its inner CLI is dead (claude-agent-acp #338): every prompt is answered so until a restart.
    if (innerCliDead) throw RequestError.internalError({ details: 'Claude Code process exited with code 1' });
    try {
      let stopReason;
      switch (word) {
        case 'hello':
          stopReason = await runHello(context);
          break;
        case 'permission':
          stopReason = await runPermission(context);
          break;
        case 'fs':
          stopReason = await runFs(context);
          break;
        case 'read':
        case 'write':
          stopReason = await runFsRequest(context, word, text);
          break;
        case 'terminal':
          stopReason = await runTerminal(context);
          break;
        case 'longterminal':
          stopReason = await runLongTerminal(context);
          break;
        case 'slow':
          stopReason = await runSlow(context);
          break;
        case 'die':
          stopReason = await runDie(context);
          break;
        case 'screenshot': {
          const data = fakeImageBase64(Number(text.trim().split(/\s+/)[1]));
          await client.notify(methods.client.session.update, { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'image', mimeType: 'image/png', data } } });
          await kit.say('done');
          stopReason = 'end_turn';
          break;
        }
        case 'tool': {
          // A tool call that runs N ms without a word (a build, a test suite), then completes.
          const toolCallId = `tool-${randomUUID()}`;
          await client.notify(methods.client.session.update, { sessionId, update: { sessionUpdate: 'tool_call', toolCallId, title: 'a long build', kind: 'execute', status: 'in_progress' } });
          await new Promise((resolve) => setTimeout(resolve, Number(text.trim().split(/\s+/)[1])));
          await client.notify(methods.client.session.update, { sessionId, update: { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' } });
          await kit.say('built');
          stopReason = 'end_turn';
          break;
        }
        case 'stall':
          // Silent for N ms while it owes the answer (no tool running): a hang to the watchdog.
          await new Promise((resolve) => setTimeout(resolve, Number(text.trim().split(/\s+/)[1])));
          await kit.say('late');
          stopReason = 'end_turn';
          break;
        case 'ratelimited': {
          // `ratelimited N [MS]`: the first N prompts so worded in this session fail as a provider's
          // rate limit does (data.reason rate_limited, retryAfterMs MS when given), then it answers.
          const [, times = '1', wait] = text.trim().split(/\s+/);
          const failed = rateLimitedSoFar.get(sessionId) ?? 0;
          if (failed < Number(times)) {
            rateLimitedSoFar.set(sessionId, failed + 1);
            throw RequestError.internalError({ reason: 'rate_limited', ...(wait !== undefined ? { retryAfterMs: Number(wait) } : {}), details: 'API Error: 429 rate limit reached' });
          }
          await kit.say('answered after the rate limit');
          stopReason = 'end_turn';
          break;
        }
        case 'innerdead':
          // The first process so asked (a marker in --state-dir) loses its inner CLI: this prompt
          // and every later one fail as claude-agent-acp's do then; a restarted process answers.
          if (stateDir && !existsSync(join(stateDir, 'inner-cli-died'))) {
            writeFileSync(join(stateDir, 'inner-cli-died'), '');
            innerCliDead = true;
            throw RequestError.internalError({ details: 'Claude Code process exited with code 1' });
          }
          await kit.say('answered after the restart');
          stopReason = 'end_turn';
          break;
        case 'bigreply':
          await kit.say('answering big');
          return { stopReason: 'end_turn', _meta: { padding: '.'.repeat(Number(text.trim().split(/\s+/)[1])) } };
        default:
          await kit.say(text);
          stopReason = 'end_turn';
      }
      if (controller.signal.aborted) stopReason = 'cancelled';
      return { stopReason };
    } finally {
      if (slot.turn?.controller === controller) slot.turn = undefined;
      session.history.push(
        { sessionUpdate: 'user_message_chunk', content: { type: 'text', text } },
        { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: kit.said.join('') } },
      );
      if (!session.title) session.title = text.slice(0, 40) || null;
      touch(session);
      if (store.has(sessionId)) saveStore();
    }
  })
  .onNotification(methods.agent.session.cancel, ({ params }) => {
    log('cancel', params.sessionId);
    cancelTurn(params.sessionId);
  })
  // Any other request (warden's `_acp-warden/drain` among them) is unknown, as to any agent;
  // the stderr line lets a test see that it came and was answered.
  .onRequest('*', ({ method }) => {
    log('unknown request', method);
    throw RequestError.methodNotFound(method);
  });

const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
process.stdout.on('error', (error) => log('stdout error:', error.message));
connection.closed.then(() => {
  log('connection closed (stdin ended); exiting');
  process.exit(0);
});
