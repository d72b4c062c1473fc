#!/usr/bin/env node
// A reference ACP v2 agent built only with the official SDK's v2 agent app (`agent()` from
// '@agentclientprotocol/sdk/experimental/v2') behind the SDK's own protocol router
// (`agentProtocolRouter().withV2(...)`), the negotiation real v2 agents run. A test peer for
// warden's agent client speaking v2. NDJSON on stdio.
//
// Usage: node spec/support/v2-agent.mjs [--state-dir DIR] [--log FILE]
//   --state-dir DIR  keep each session's history in DIR/v2-agent-sessions.json, so that a
//                    restarted agent can `session/resume` (with or without replay) sessions of
//                    the process before it.
//   --log FILE       append one JSON line per request received ({ method, params }): the test
//                    reads what warden asked (warden keeps the agent's stderr to itself).
//
// `session/prompt` is inserted at once (answered `{ messageId }`, its `user_message` sent
// before) and the turn runs after the answer, reported by `state_update`s. What it does is
// chosen by the first word of the first text block:
//   hello (or anything else)  `running`, two agent_message_chunks of one message, `idle` end_turn.
//   tool     `running`; a tool call created (`tool_call_update`, in_progress) with two
//            `tool_call_content_chunk`s; `requires_action` and a permission request about it;
//            `running`; the tool call completed (allowed) or failed; "allowed" or "rejected"; `idle`.
//   fail     `running`, a chunk, then `idle` with stop reason `error` and the agent's error
//            (code -32050, data { kind: 'quota' }).
//   slow     `running`, a chunk, then nothing until `session/cancel`: `idle` cancelled.
//   die      `running`, then SIGKILL of itself (a kill -9 mid-turn).
//   work     `running`; tool call `<id>-cancellable` (in_progress, advertising `capabilities.cancel`),
//            tool call `<id>-fixed` (in_progress, not cancellable) and terminal `<id>-term`
//            (advertising `capabilities.cancel`); `tool_call/cancel` of the first ends it
//            `cancelled`, `terminal/cancel` of the terminal sets its `exitStatus`; once both came,
//            the fixed one completes, "done", `idle` end_turn (`session/cancel` ends it `cancelled`).
//   background  `running`; tool call `<id>-bg` (in_progress) and terminal `<id>-bgterm`, both
//            advertising `capabilities.cancel`; `idle` end_turn while both go on in the background;
//            a later `tool_call/cancel` / `terminal/cancel` ends them (`cancelled`, `exitStatus`).
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { agent, agentProtocolRouter, ndJsonStream, RequestError } from '@agentclientprotocol/sdk/experimental/v2';

const argv = process.argv.slice(2);
const flag = (name) => {
  const index = argv.indexOf(name);
  return index >= 0 ? argv[index + 1] : undefined;
};
const stateDir = flag('--state-dir');
const stateFile = stateDir ? join(stateDir, 'v2-agent-sessions.json') : undefined;
const logFile = flag('--log');
const log = (method, params) => {
  if (logFile) appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, method, params })}\n`);
};

/** Each session's history (its updates, state updates left out), by id. */
const sessions = new Map();
if (stateFile) {
  try {
    for (const [id, history] of Object.entries(JSON.parse(readFileSync(stateFile, 'utf8')))) sessions.set(id, history);
  } catch {
    // No store yet.
  }
}
const save = () => {
  if (!stateFile) return;
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(`${stateFile}.tmp`, JSON.stringify(Object.fromEntries(sessions)));
  renameSync(`${stateFile}.tmp`, stateFile);
};

/** What `session/cancel` wakes, by session. */
const cancels = new Map();
/** What `tool_call/cancel` and `terminal/cancel` wake, by tool call or terminal id (the cancellable ones of a `work` turn). */
const workCancels = new Map();
let counter = 0;
const nextId = (prefix) => `${prefix}-${process.pid}-${++counter}`;

const app = agent({ name: 'v2-agent' })
  .onRequest('initialize', ({ params }) => {
    log('initialize', params);
    return { protocolVersion: 2, info: { name: 'v2-agent', title: 'SDK v2 test agent', version: '1.0.0' }, capabilities: { session: { prompt: { embeddedContext: {} } } }, authMethods: [] };
  })
  .onRequest('session/new', ({ params }) => {
    log('session/new', params);
    const sessionId = nextId('session');
    sessions.set(sessionId, []);
    save();
    return { sessionId };
  })
  .onRequest('session/resume', async ({ params, client }) => {
    log('session/resume', params);
    const history = sessions.get(params.sessionId);
    if (!history) throw RequestError.resourceNotFound(params.sessionId);
    if (params.replayFrom?.type === 'start') for (const update of history) await client.notify('session/update', { sessionId: params.sessionId, update });
    // The current state, after the replay and before the answer (v2 asks it of a resume).
    await client.notify('session/update', { sessionId: params.sessionId, update: { sessionUpdate: 'state_update', state: 'idle' } });
    return {};
  })
  .onRequest('session/close', ({ params }) => {
    log('session/close', params);
    return {};
  })
  .onRequest('tool_call/cancel', ({ params }) => {
    log('tool_call/cancel', params);
    const wake = workCancels.get(params.toolCallId);
    if (!wake) throw RequestError.invalidParams({ toolCallId: params.toolCallId }, 'unknown, final or not cancellable');
    workCancels.delete(params.toolCallId);
    setImmediate(wake);
    return {};
  })
  .onRequest('terminal/cancel', ({ params }) => {
    log('terminal/cancel', params);
    const wake = workCancels.get(params.terminalId);
    if (!wake) throw RequestError.invalidParams({ terminalId: params.terminalId }, 'unknown, exited or not cancellable');
    workCancels.delete(params.terminalId);
    setImmediate(wake);
    return {};
  })
  .onNotification('session/cancel', ({ params }) => {
    log('session/cancel', params);
    cancels.get(params.sessionId)?.();
  })
  .onRequest('session/prompt', async ({ params, client }) => {
    log('session/prompt', params);
    const { sessionId } = params;
    const history = sessions.get(sessionId);
    if (!history) throw RequestError.resourceNotFound(sessionId);
    const send = async (update) => {
      if (update.sessionUpdate !== 'state_update') {
        history.push(update);
        save();
      }
      await client.notify('session/update', { sessionId, update });
    };
    const messageId = nextId('user');
    await send({ sessionUpdate: 'user_message', messageId, content: params.prompt });
    const text = params.prompt.find((block) => block.type === 'text')?.text ?? '';
    const word = text.trim().split(/\s+/u)[0]?.toLowerCase() ?? '';
    // The turn goes on after the answer: the prompt is only inserted.
    setImmediate(() => void turn(word, sessionId, send, client).catch((error) => process.stderr.write(`v2-agent: turn failed: ${error?.stack ?? error}\n`)));
    return { messageId };
  });

async function turn(word, sessionId, send, client) {
  const reply = nextId('agent');
  const say = (text) => send({ sessionUpdate: 'agent_message_chunk', messageId: reply, content: { type: 'text', text } });
  await send({ sessionUpdate: 'state_update', state: 'running' });
  switch (word) {
    case 'tool': {
      const toolCallId = nextId('tool');
      await send({ sessionUpdate: 'tool_call_update', toolCallId, title: 'List the files', kind: 'execute', status: 'in_progress' });
      await send({ sessionUpdate: 'tool_call_content_chunk', toolCallId, content: { type: 'content', content: { type: 'text', text: 'a.txt\n' } } });
      await send({ sessionUpdate: 'tool_call_content_chunk', toolCallId, content: { type: 'content', content: { type: 'text', text: 'b.txt\n' } } });
      await send({ sessionUpdate: 'state_update', state: 'requires_action' });
      const answer = await client.request('session/request_permission', {
        sessionId,
        title: 'Run ls?',
        description: 'The agent wants to list the files',
        subject: { type: 'tool_call', toolCall: { toolCallId } },
        options: [
          { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
          { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
        ],
      });
      await send({ sessionUpdate: 'state_update', state: 'running' });
      const allowed = answer.outcome.outcome === 'selected' && answer.outcome.optionId === 'allow';
      await send({ sessionUpdate: 'tool_call_update', toolCallId, status: allowed ? 'completed' : 'failed' });
      await say(allowed ? 'allowed' : 'rejected');
      break;
    }
    case 'fail':
      await say('trying');
      await send({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error: { code: -32050, message: 'the model is over its quota', data: { kind: 'quota' } } });
      return;
    case 'slow':
      await say('working');
      await new Promise((resolve) => cancels.set(sessionId, resolve));
      cancels.delete(sessionId);
      await send({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' });
      return;
    case 'die':
      process.kill(process.pid, 'SIGKILL');
      return;
    case 'background': {
      const id = nextId('bg');
      const [tool, term] = [`${id}-bg`, `${id}-bgterm`];
      await send({ sessionUpdate: 'tool_call_update', toolCallId: tool, title: 'Watch the tests', kind: 'execute', status: 'in_progress', capabilities: { cancel: {} } });
      await send({ sessionUpdate: 'terminal_update', terminalId: term, command: 'npm test -- --watch', capabilities: { cancel: {} } });
      workCancels.set(tool, () => void send({ sessionUpdate: 'tool_call_update', toolCallId: tool, status: 'cancelled', capabilities: null }));
      workCancels.set(term, () => void send({ sessionUpdate: 'terminal_update', terminalId: term, exitStatus: { exitCode: null, signal: 'SIGTERM' }, capabilities: null }));
      await say('watching');
      break;
    }
    case 'work': {
      const id = nextId('work');
      const [cancellable, fixed, term] = [`${id}-cancellable`, `${id}-fixed`, `${id}-term`];
      const toolCancelled = new Promise((resolve) => workCancels.set(cancellable, resolve));
      const termCancelled = new Promise((resolve) => workCancels.set(term, resolve));
      const sessionCancelled = new Promise((resolve) => cancels.set(sessionId, resolve));
      await send({ sessionUpdate: 'tool_call_update', toolCallId: cancellable, title: 'Index the repository', kind: 'search', status: 'in_progress', capabilities: { cancel: {} } });
      await send({ sessionUpdate: 'tool_call_update', toolCallId: fixed, title: 'Write the summary', kind: 'edit', status: 'in_progress' });
      await send({ sessionUpdate: 'terminal_update', terminalId: term, command: 'sleep 600', capabilities: { cancel: {} } });
      const both = Promise.all([
        toolCancelled.then(() => send({ sessionUpdate: 'tool_call_update', toolCallId: cancellable, status: 'cancelled', capabilities: null })),
        termCancelled.then(() => send({ sessionUpdate: 'terminal_update', terminalId: term, exitStatus: { exitCode: null, signal: 'SIGTERM' }, capabilities: null })),
      ]);
      if ((await Promise.race([both.then(() => 'done'), sessionCancelled.then(() => 'cancelled')])) === 'cancelled') {
        workCancels.delete(cancellable);
        workCancels.delete(term);
        await send({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' });
        return;
      }
      cancels.delete(sessionId);
      await send({ sessionUpdate: 'tool_call_update', toolCallId: fixed, status: 'completed' });
      await say('done');
      break;
    }
    default:
      await say('Hello');
      await say(' from v2');
  }
  await send({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'end_turn' });
}

const connection = agentProtocolRouter().withV2(app).connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
