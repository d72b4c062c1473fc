/**
 * The tool calls running in a session's turn, by id: kept beside the session machine (keyed by
 * its actor, a live record never in its snapshot, as session-prompts.ts keeps its prompts), so
 * that an agent's tool call is no event to the machine and the machine is off each update's
 * path. The host reports each tool call update here (`toolCallReported`, a pure transition);
 * the machine forgets them when its turns are over or its agent restarts (`toolCallsEnded`).
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type { AnyActorRef } from 'xstate';

const none: readonly string[] = Object.freeze([]);

const running = new WeakMap<AnyActorRef, readonly string[]>();

/** The tool calls running after `update`: a `tool_call` starts one (unless it completed or failed already), a completed or failed `tool_call_update` ends it. */
export function toolCallsAfter(before: readonly string[], update: SessionUpdate): readonly string[] {
  switch (update.sessionUpdate) {
    case 'tool_call':
      return update.status === 'completed' || update.status === 'failed' || before.includes(update.toolCallId) ? before : [...before, update.toolCallId];
    case 'tool_call_update':
      return update.status === 'completed' || update.status === 'failed' ? before.filter((id) => id !== update.toolCallId) : before;
    default:
      return before;
  }
}

/** Session machine `machine`'s agent reported `update` (any kind: only tool calls change anything here). */
export function toolCallReported(machine: AnyActorRef, update: SessionUpdate): void {
  const before = running.get(machine) ?? none;
  const after = toolCallsAfter(before, update);
  if (after !== before) running.set(machine, after);
}

/** The tool calls of session machine `machine`'s turn in flight that have not completed or failed, by id. */
export function toolCallsRunning(machine: AnyActorRef): readonly string[] {
  return running.get(machine) ?? none;
}

/** Session machine `machine`'s turns are over (or its agent restarts): no tool call of them runs any more. */
export function toolCallsEnded(machine: AnyActorRef): void {
  running.delete(machine);
}
