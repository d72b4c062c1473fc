#!/usr/bin/env node
// A fake ACP v1 agent that runs a subagent the way claude-agent-acp 0.101.0 does (its
// dist/native-subagents.js, "rfd" form): to a client that advertised
// `clientCapabilities.subagents`, a `session/prompt` whose text starts with "task" announces a
// child session on the parent with `subagent_update` (the child's `sessionId`, `title`,
// `description`, `capabilities: { cancel: {} }`, `state: { state: "running" }`), sends the
// child's own updates under the child's `sessionId` (a message chunk, a tool call and its
// completion), reports the child `idle` by another `subagent_update` on the parent, then
// answers in the parent. To a client that did not advertise it, the child's words come inline
// in the parent (claude-agent-acp's `forwardSubagentText`) and no child session exists.
// `continue` (a process started again, after `session/load`): the child of the session's first
// task says more under its id, not announced again. Anything else is answered with one chunk.
// `session/load` replays, as claude-agent-acp does for a child still running, the first task's
// child's announcement (to a client that takes subagents), then answers.
// `background` announces a child that goes on working after the parent's answer (as
// claude-agent-acp's background subagents do), advertising `cancel`; `background-fixed` one
// that does not advertise it. A `session/cancel` naming a running child (logged, as requests are)
// ends its work: a last chunk under the child's id, then the child `idle` on its parent.
//
// Usage: node spec/support/subagent-agent.mjs [--log FILE] [--quiet-load]
//   --log FILE  append one JSON line per request received ({ method, params }).
//   --quiet-load  `session/load` announces no child (an agent that does not re-announce its running children).
// NDJSON on stdio; exits when stdin ends.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const argv = process.argv.slice(2);
const logFile = argv.includes('--log') ? argv[argv.indexOf('--log') + 1] : undefined;
const quietLoad = argv.includes('--quiet-load');
let sessions = 0;
let children = 0;
let subagents = false;
const write = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const update = (sessionId, value) => write({ method: 'session/update', params: { sessionId, update: value } });
const text = (value) => ({ type: 'text', text: value });

/** Background children still working: child id -> its parent's id. */
const working = new Map();

function runInBackground(parent, cancellable) {
  const child = `${parent}-child-${++children}`;
  update(parent, { sessionUpdate: 'subagent_update', sessionId: child, title: 'Watch', description: 'Keep watching the files', ...(cancellable ? { capabilities: { cancel: {} } } : {}), state: { state: 'running' } });
  update(child, { sessionUpdate: 'agent_message_chunk', content: text('child: watching.') });
  working.set(child, parent);
}

function runTask(parent) {
  if (!subagents) {
    update(parent, { sessionUpdate: 'agent_message_chunk', content: text('child: looked at the files. ') });
    update(parent, { sessionUpdate: 'agent_message_chunk', content: text('done') });
    return;
  }
  const child = `${parent}-child-${++children}`;
  update(parent, { sessionUpdate: 'subagent_update', sessionId: child, title: 'Explore', description: 'Look at the files', capabilities: { cancel: {} }, state: { state: 'running' } });
  update(child, { sessionUpdate: 'agent_message_chunk', content: text('child: looked at the files.') });
  update(child, { sessionUpdate: 'tool_call', toolCallId: `${child}-read`, title: 'Read README.md', kind: 'read', status: 'in_progress' });
  update(child, { sessionUpdate: 'tool_call_update', toolCallId: `${child}-read`, status: 'completed' });
  update(parent, { sessionUpdate: 'subagent_update', sessionId: child, state: { state: 'idle' } });
  update(parent, { sessionUpdate: 'agent_message_chunk', content: text('done') });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.method === undefined) return;
  if (logFile) appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, method: message.method, params: message.params })}\n`);
  if (message.id === undefined) {
    const child = message.params?.sessionId;
    if (message.method === 'session/cancel' && working.has(child)) {
      update(child, { sessionUpdate: 'agent_message_chunk', content: text('child: stopped.') });
      update(working.get(child), { sessionUpdate: 'subagent_update', sessionId: child, state: { state: 'idle', stopReason: 'cancelled' } });
      working.delete(child);
    }
    return;
  }
  switch (message.method) {
    case 'initialize': {
      const given = message.params?.clientCapabilities?.subagents;
      subagents = typeof given === 'object' && given !== null && !Array.isArray(given);
      return write({ id: message.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [] } });
    }
    case 'session/new':
      return write({ id: message.id, result: { sessionId: `parent-${process.pid}-${++sessions}` } });
    case 'session/load':
      if (subagents && !quietLoad) update(message.params.sessionId, { sessionUpdate: 'subagent_update', sessionId: `${message.params.sessionId}-child-1`, title: 'Explore', state: { state: 'running' } });
      return write({ id: message.id, result: {} });
    case 'session/prompt': {
      const first = message.params.prompt.find((block) => block.type === 'text')?.text ?? '';
      if (first.startsWith('task')) runTask(message.params.sessionId);
      else if ((first === 'background' || first === 'background-fixed') && subagents) runInBackground(message.params.sessionId, first === 'background');
      else if (first === 'continue') update(`${message.params.sessionId}-child-1`, { sessionUpdate: 'agent_message_chunk', content: text('child: still here.') });
      else update(message.params.sessionId, { sessionUpdate: 'agent_message_chunk', content: text('hello') });
      return write({ id: message.id, result: { stopReason: 'end_turn' } });
    }
    default:
      return write({ id: message.id, result: {} });
  }
});
