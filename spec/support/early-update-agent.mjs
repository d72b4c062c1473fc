#!/usr/bin/env node
// A fake ACP agent that speaks before it answers: on `session/new` it writes a session/update
// (available_commands_update) for the new session *before* the answer naming it (the ordering
// case the serve survey found: over the SDK's Streamable HTTP client such an update can only
// arrive once the client knows the session). `session/prompt` streams three words, then
// end_turn. `initialize` answers protocol 1 with no capabilities; anything else gets `{}`.
// NDJSON on stdio; exits when stdin ends.
import { createInterface } from 'node:readline';

let sessions = 0;
const write = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const update = (sessionId, value) => write({ method: 'session/update', params: { sessionId, update: value } });

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined || message.method === undefined) return;
  if (message.method === 'initialize') return write({ id: message.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] } });
  if (message.method === 'session/new') {
    const sessionId = `early-${++sessions}`;
    update(sessionId, { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'early', description: 'sent before the answer to session/new' }] });
    return write({ id: message.id, result: { sessionId } });
  }
  if (message.method === 'session/prompt') {
    for (const word of ['one ', 'two ', 'three']) update(message.params.sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: word } });
    return write({ id: message.id, result: { stopReason: 'end_turn' } });
  }
  write({ id: message.id, result: {} });
});
