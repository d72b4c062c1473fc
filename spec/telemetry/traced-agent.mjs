#!/usr/bin/env node
// A fake native ACP agent for the telemetry specs. It appends one JSON line per fact to
// $TRACED_AGENT_LOG: `{ event: 'start', pid, traceparent }` (its TRACEPARENT at spawn), and
// `{ event: 'prompt', pid, text, meta }` (each session/prompt's _meta). A prompt starts a tool
// call, completes it, asks the editor's permission and ends `end_turn`; a prompt
// whose text is "hang" starts its tool call and then never answers (the spec kills it).
import { appendFileSync } from 'node:fs';
import { readStdinLines } from '../support/stdio-lines.mjs';

const log = (fact) => appendFileSync(process.env.TRACED_AGENT_LOG, `${JSON.stringify({ pid: process.pid, ...fact })}\n`);
const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
log({ event: 'start', traceparent: process.env.TRACEPARENT ?? null, tracestate: process.env.TRACESTATE ?? null });

let nextId = 1;
const asked = new Map();
const ask = (method, params) => new Promise((resolve) => {
  const id = `agent-${nextId++}`;
  asked.set(id, resolve);
  write({ jsonrpc: '2.0', id, method, params });
});
let sessions = 0;

async function prompt(message) {
  const { sessionId, prompt: content, _meta: meta } = message.params;
  const text = content.map((block) => block.text ?? '').join('');
  log({ event: 'prompt', text, meta: meta ?? null });
  const toolCallId = `tool-${message.id}`;
  write({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'tool_call', toolCallId, title: 'Read file', kind: 'read', status: 'pending' } } });
  if (text === 'hang') return;
  // Completed before the permission is asked: the tool call's span ends before the permission's starts.
  write({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'tool_call_update', toolCallId, status: 'completed' } } });
  const answer = await ask('session/request_permission', { sessionId, toolCall: { toolCallId, title: 'Read file' }, options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }, { optionId: 'reject', name: 'Reject', kind: 'reject_once' }] });
  write({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `permission: ${answer?.outcome?.optionId ?? 'none'}` } } } });
  write({ jsonrpc: '2.0', id: message.id, result: { stopReason: 'end_turn' } });
}

readStdinLines((line) => {
  const message = JSON.parse(line);
  if (message.method === undefined) {
    asked.get(message.id)?.(message.result);
    asked.delete(message.id);
    return;
  }
  switch (message.method) {
    case 'initialize':
      write({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [], agentInfo: { name: 'traced-agent', version: '0.0.0' } } });
      break;
    case 'session/new':
      write({ jsonrpc: '2.0', id: message.id, result: { sessionId: `traced-${++sessions}` } });
      break;
    case 'session/prompt':
      void prompt(message);
      break;
    case 'session/cancel':
      break;
    default:
      if (message.id !== undefined) write({ jsonrpc: '2.0', id: message.id, result: {} });
  }
}, () => process.exit(0));
