#!/usr/bin/env node
// A fake ACP agent with a lot to say: each `session/prompt` is answered with COUNT
// `session/update`s (agent_message_chunk), each about SIZE bytes of text starting with
// "#<index> ", written as a real agent does (stdout.write, waiting for 'drain' when the pipe
// is full), then `end_turn`. Anything else gets `{}` (initialize: a minimal answer).
// Usage: stream-agent COUNT SIZE
// With STREAM_AGENT_INIT_GATE=PATH, `initialize` is slow: the agent writes PATH.asked and
// answers only once PATH exists (the test opens the gate).
const count = Number(process.argv[2] ?? 1000);
const size = Number(process.argv[3] ?? 1000);
const filler = 'x'.repeat(Math.max(0, size - 16));

const write = (message) => (process.stdout.write(`${JSON.stringify(message)}\n`) ? undefined : new Promise((resolve) => process.stdout.once('drain', resolve)));

async function prompt(id, sessionId) {
  for (let index = 0; index < count; index++) {
    const waiting = write({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `#${index} ${filler}` } } } });
    if (waiting) await waiting;
  }
  await write({ jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } });
}

import { existsSync, writeFileSync } from 'node:fs';
import { readStdinLines } from './stdio-lines.mjs';

const initGate = process.env.STREAM_AGENT_INIT_GATE;
const gateOpen = () => new Promise((resolve) => {
  writeFileSync(`${initGate}.asked`, '');
  const poll = setInterval(() => {
    if (!existsSync(initGate)) return;
    clearInterval(poll);
    resolve();
  }, 50);
});

let sessions = 0;
const answer = (message) => {
  switch (message.method) {
    case 'initialize':
      if (initGate) return gateOpen().then(() => write({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'stream-agent', version: '0.0.0' } } }));
      return write({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'stream-agent', version: '0.0.0' } } });
    case 'session/new':
      return write({ jsonrpc: '2.0', id: message.id, result: { sessionId: `stream-${process.pid}-${++sessions}` } });
    case 'session/prompt':
      return prompt(message.id, message.params.sessionId);
    default:
      return write({ jsonrpc: '2.0', id: message.id, result: {} });
  }
};

readStdinLines((line) => {
  const message = JSON.parse(line);
  if (message.id === undefined || message.method === undefined) return; // notifications, answers
  void answer(message);
}, () => process.exit(0));
