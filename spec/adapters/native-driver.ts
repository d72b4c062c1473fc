/**
 * Drives a native agent's handler directly, as the host does: handler events in, every
 * output kept in order (ACP answers and updates, an `acp.updates` as its updates one by one,
 * and the session lifecycle outputs the agent server ignores). Not a spec file: the adapter specs use it.
 */
import { createActor, type AnyActorRef } from 'xstate';
import type { AgentEventContext, AgentHandlerOutput, AgentRequestEvent, NativeAgent, SessionLifecycleOutput } from '../../src/protocol/native-agent.js';
import { waitUntil } from '../support/processes.js';

/** What the driven agent is told about its client. */
export const eventContext: AgentEventContext = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'driver', version: '1' } };

type Answer = Extract<AgentHandlerOutput, { type: 'acp.respond' | 'acp.error' }>;
type Lifecycle = SessionLifecycleOutput['type'];

/** A native agent's handler, running, with what it emitted. */
export interface Driver {
  readonly actor: AnyActorRef;
  readonly outputs: AgentHandlerOutput[];
  /** Sends an ACP request event; returns its request id. */
  request(type: AgentRequestEvent['type'], method: string, params: Record<string, unknown>): string;
  /** The answer to `requestId` (`acp.respond` or `acp.error`), waited for. */
  answer(requestId: string, timeoutMs?: number): Promise<Answer>;
  /** The lifecycle outputs so far, in order (of one session, if given). */
  lifecycle(sessionId?: string): SessionLifecycleOutput[];
  /** Waits until an output matching `predicate` was emitted; returns the first one. */
  waitFor<T extends AgentHandlerOutput>(predicate: (output: AgentHandlerOutput) => output is T, what: string, timeoutMs?: number): Promise<T>;
  waitFor(predicate: (output: AgentHandlerOutput) => boolean, what: string, timeoutMs?: number): Promise<AgentHandlerOutput>;
  stop(): void;
}

const lifecycleTypes: readonly Lifecycle[] = ['session.restarting', 'session.recovered', 'session.failed', 'session.resumeState'];

/** Starts `agent`'s handler and records its outputs. */
export function driveAgent(agent: NativeAgent): Driver {
  const actor = createActor(agent.logic, { input: agent.input });
  const outputs: AgentHandlerOutput[] = [];
  // Several updates as one output (`acp.updates`) are kept one by one, as the host reads them.
  actor.on('*', (output: AgentHandlerOutput) => {
    if (output.type !== 'acp.updates') outputs.push(output);
    else for (const { sessionId, update } of output.updates) outputs.push({ type: 'acp.update', sessionId, update });
  });
  actor.start();
  let next = 1;
  const find = (predicate: (output: AgentHandlerOutput) => boolean) => outputs.find(predicate);
  const driver: Driver = {
    actor,
    outputs,
    request(type, method, params) {
      const requestId = `req-${next++}`;
      actor.send({ type, requestId, method, params, context: eventContext } satisfies AgentRequestEvent);
      return requestId;
    },
    async answer(requestId, timeoutMs = 20_000) {
      const isAnswer = (output: AgentHandlerOutput): output is Answer => (output.type === 'acp.respond' || output.type === 'acp.error') && output.requestId === requestId;
      await waitUntil(() => find(isAnswer) !== undefined, `the answer to ${requestId}`, timeoutMs);
      return find(isAnswer) as Answer;
    },
    lifecycle(sessionId) {
      return outputs.filter((output): output is SessionLifecycleOutput => lifecycleTypes.includes(output.type as Lifecycle) && (sessionId === undefined || (output as { sessionId: string }).sessionId === sessionId));
    },
    async waitFor(predicate: (output: AgentHandlerOutput) => boolean, what: string, timeoutMs = 20_000) {
      await waitUntil(() => find(predicate) !== undefined, what, timeoutMs);
      return find(predicate) as AgentHandlerOutput;
    },
    stop: () => actor.stop(),
  };
  return driver;
}

/** The result of an answer that must be a success. */
export function resultOf(answer: Answer): Record<string, unknown> {
  if (answer.type !== 'acp.respond') throw new Error(`expected a result, got the error ${JSON.stringify(answer.error)}`);
  return answer.result as Record<string, unknown>;
}
