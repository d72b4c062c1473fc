#!/usr/bin/env node
// A minimal ACP agent for bench/relay.ts: NDJSON JSON-RPC on stdio. It answers `initialize`,
// `session/new` (always session `sess_flood`) and `session/prompt`, which it answers with
// COUNT `session/update` notifications (agent_message_chunk, built once at start so that
// building them is not timed) written to stdout in one go, then `end_turn`. Anything else
// gets `{}`. Exits when stdin ends.
// Usage: node bench/support/flood-agent.mjs COUNT
import { readStdinLines, writeStdoutSync } from '../../spec/support/stdio-lines.mjs';

const count = Number(process.argv[2] ?? 1000);
const sessionId = 'sess_flood';

/** The params of update `index`: the same shape as bench/jsonrpc.ts's payload. */
const updateParams = (index) => ({
  sessionId,
  update: {
    sessionUpdate: 'agent_message_chunk',
    messageId: `msg_${String(index).padStart(8, '0')}`,
    content: { type: 'text', text: `Chunk ${index}: the connection classifies each line once and hands it to its owner in order.` },
  },
});

const flood = Buffer.from(
  Array.from({ length: count }, (_, index) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: updateParams(index) })).join('\n') + '\n',
);

// Synchronous writes, retried on EAGAIN: the whole flood is in the pipe as fast as it drains.
const out = writeStdoutSync;
const reply = (id, result) => out(Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`));

const answers = {
  initialize: () => ({ protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'flood-agent', version: '0.0.0' } }),
  'session/new': () => ({ sessionId }),
  'session/prompt': () => {
    out(flood);
    return { stopReason: 'end_turn' };
  },
};

readStdinLines((line) => {
  const message = JSON.parse(line);
  if (message.id === undefined || message.method === undefined) return; // notifications, answers
  reply(message.id, (answers[message.method] ?? (() => ({})))(message.params));
}, () => process.exit(0));
