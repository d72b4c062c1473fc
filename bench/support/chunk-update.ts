/**
 * The update the relay and JSON-RPC benches send: an agent message chunk of a few words, about
 * 200 bytes as JSON (bench/support/flood-agent.mjs builds the same).
 */

/** Chunk `index`'s `update` (the `session/update` params' `update` member). */
export function chunkUpdate(index: number) {
  return {
    sessionUpdate: 'agent_message_chunk' as const,
    messageId: `msg_${String(index).padStart(8, '0')}`,
    content: { type: 'text' as const, text: `Chunk ${index}: the connection classifies each line once and hands it to its owner in order.` },
  };
}
