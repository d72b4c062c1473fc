/**
 * The `messageId`s a v2 editor sees, derived from the journal so that a replay
 * (`session/resume` with `replayFrom: {type:"start"}`) shows the ids the live turn showed.
 *
 * The rule: a turn is named by the journal `seq` of its `prompt` entry, N. The user's message
 * of that turn is `user-N` (the `session/prompt` answer, the `user_message` upsert live, the
 * replayed `user_message_chunk`s); the agent's message in that turn is `agent-N`, its thought
 * `thought-N` (every chunk of the turn appends to them). Updates before any prompt of the
 * session (an agent's greeting) belong to turn 0. An agent that names its own message ids in
 * its chunks keeps them (v1 lets it). The ids are unique within a session, as v2 asks.
 */
import type { MessageIds } from './v2-updates.js';

/** The user's message of the turn whose prompt entry is journal seq `promptSeq`. */
export function userMessageId(promptSeq: number): string {
  return `user-${promptSeq}`;
}

/** The message ids of the turn whose prompt entry is journal seq `promptSeq` (see the module comment). */
export function turnMessageIds(promptSeq: number): MessageIds {
  return { user: () => userMessageId(promptSeq), agent: () => `agent-${promptSeq}`, thought: () => `thought-${promptSeq}` };
}
