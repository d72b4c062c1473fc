/**
 * The editor's requests forwarded to the agent: a callback actor of the passthrough machine
 * (`agentRequests`) takes each one (`request.forward`), asks the agent through its ACP
 * client, and reports the answer back as `request.settled` (with the session it opened or
 * deleted). A request the agent process died under fails naming the crash (`agent_crashed`).
 *
 * One actor for all of them, not one child per request: XState copies a machine's children
 * on every spawn and stop, which with a thousand requests in flight (an editor pipelining
 * them) cost 3 ms a request.
 */
import { fromCallback, type AnyActorRef } from 'xstate';
import {
  authenticate,
  closeSession,
  deleteSession,
  drainReplay,
  forkSession,
  listSessions,
  loadSession,
  logout,
  newSession,
  prompt,
  resumeSession,
  setConfigOption,
  setMode,
} from '../../acp/agent-client.js';
import { cancelTerminal, cancelToolCall } from '../../acp/agent-client-cancel.js';
import type { AgentRequestEvent } from '../../protocol/native-agent.js';
import { RpcError, toRpcError, type ErrorObject } from '../../jsonrpc/rpc-error.js';
import type { PortExit } from '../../port/port-exit.js';
import type { OpenedSession, PassthroughContext, RequestSettled } from './context.js';
import { handlesOf } from './handles.js';

/** A request to forward to the agent. */
export interface ForwardCommand {
  readonly type: 'request.forward';
  readonly request: AgentRequestEvent;
  /** The agent serves `session/close` (else the passthrough answers it alone). */
  readonly agentCloses: boolean;
}

/**
 * The error an editor gets for a request that failed, naming a crash of the agent as such:
 * `data` is flat, as every `data.reason` error's (docs/reference/errors.md): `reason`, then `exit` (the
 * port's typed exit reason, as a CLI session's crashed prompt names it), `stderrTail` and
 * `restarts` (how many restarts came before the process that died).
 */
export function requestFailure(name: string, error: unknown, restarts: number): ErrorObject {
  const rpc = toRpcError(error);
  if (rpc.failure !== 'peer_lost') return rpc.toErrorObject();
  const exit = portExitOf((rpc.data as { exit?: unknown } | undefined)?.exit);
  const how = exit ? ` (${exit.reason.kind})` : '';
  const details = exit ? { exit: exit.reason, stderrTail: exit.stderrTail, restarts } : { restarts };
  return RpcError.because('agent_crashed', `Internal error: ${name} stopped during the request${how}; acp-warden restarts it and re-attaches the session`, details).toErrorObject();
}

/** The port's exit a lost connection carries (jsonrpc/port-transport.ts), if it is one. */
function portExitOf(exit: unknown): Pick<PortExit, 'reason' | 'stderrTail'> | undefined {
  const candidate = exit as Partial<PortExit> | undefined;
  return typeof candidate?.reason === 'object' && candidate.reason !== null && typeof candidate.reason.kind === 'string'
    ? { reason: candidate.reason, stderrTail: typeof candidate.stderrTail === 'string' ? candidate.stderrTail : '' }
    : undefined;
}

/** The client of the agent process now, or the error of a request that finds it gone. */
export function clientOf(owner: AnyActorRef): AnyActorRef {
  const client = handlesOf(owner).client;
  if (!client) throw RpcError.because('agent_crashed', `${handlesOf(owner).options.name} is not running`, {}, { failure: 'peer_lost' });
  return client;
}

const openedBy = (sessionId: string, params: Record<string, unknown>): OpenedSession => ({
  sessionId,
  cwd: params.cwd as string,
  ...(params.additionalDirectories ? { additionalDirectories: params.additionalDirectories as string[] } : {}),
  mcpServers: (params.mcpServers as unknown[] | undefined) ?? [],
});

type Answered = Pick<RequestSettled, 'opened' | 'deleted'> & { readonly result: unknown };

/** Asks the agent; what the editor is answered. */
async function ask(client: AnyActorRef, request: AgentRequestEvent, agentCloses: boolean): Promise<Answered> {
  const { params } = request;
  const sessionId = params.sessionId as string;
  switch (request.type) {
    case 'session.new': {
      const result = await newSession(client, params as never);
      return { result, opened: openedBy(result.sessionId, params) };
    }
    case 'session.load': {
      const { response } = await loadSession(client, params as never);
      // Answered once the replay is over, as ACP promises: the host (which replayed its
      // journal) drops the agent's replay until this answer.
      await drainReplay(client, sessionId);
      return { result: response, opened: openedBy(sessionId, params) };
    }
    case 'session.resume':
      return { result: await resumeSession(client, params as never), opened: openedBy(sessionId, params) };
    case 'session.fork': {
      const result = await forkSession(client, params as never);
      return { result, opened: openedBy(result.sessionId, params) };
    }
    case 'session.list':
      return { result: await listSessions(client, params as never) };
    case 'session.close':
      if (agentCloses) await closeSession(client, sessionId);
      return { result: {} };
    case 'session.delete':
      await deleteSession(client, sessionId);
      return { result: {}, deleted: sessionId };
    case 'session.setMode':
      await setMode(client, sessionId, params.modeId as string);
      return { result: {} };
    case 'session.setConfigOption':
      return { result: await setConfigOption(client, sessionId, params.configId as string, params.value) };
    case 'authenticate':
      await authenticate(client, params.methodId as string);
      return { result: {} };
    case 'logout':
      await logout(client);
      return { result: {} };
    case 'toolCall.cancel':
      return { result: await cancelToolCall(client, sessionId, params.toolCallId as string) };
    case 'terminal.cancel':
      return { result: await cancelTerminal(client, sessionId, params.terminalId as string) };
    case 'session.prompt':
      // The turn's W3C trace context (the editor's, or warden's turn span when telemetry is on) goes on to the agent; nothing else of the editor's _meta does.
      return { result: await prompt(client, sessionId, params.prompt as unknown[], { keepUpdates: false, ...traceMetaOf(params) }).result };
    default:
      throw RpcError.methodNotFound(request.method);
  }
}

/** One forwarded request: asks the agent; how it settled (never rejects). */
async function forward(owner: AnyActorRef, { request, agentCloses }: ForwardCommand): Promise<RequestSettled> {
  const sessionId = typeof request.params.sessionId === 'string' ? request.params.sessionId : undefined;
  const about = { type: 'request.settled', requestId: request.requestId, method: request.method, ...(sessionId ? { sessionId } : {}) } as const;
  let settled: RequestSettled;
  try {
    const { result, ...rest } = await ask(clientOf(owner), request, agentCloses);
    settled = { ...about, answer: { result: result ?? {} }, ...rest };
  } catch (error) {
    settled = { ...about, answer: { error: requestFailure(handlesOf(owner).options.name, error, (owner.getSnapshot().context as PassthroughContext).restarts) } };
  }
  return settled;
}

/**
 * Forwards one request to the agent now (its line is written before this returns) and reports
 * how it settled with `report`, after the updates the agent sent before its answer; an answer
 * for a passthrough that was stopped (`ended()`) reaches nobody.
 */
export function forwardRequest(owner: AnyActorRef, command: ForwardCommand, report: (settled: RequestSettled) => void, ended: () => boolean): void {
  // `forward` never rejects.
  void forward(owner, command).then((settled) => {
    if (ended()) return;
    handlesOf(owner).flushUpdates(); // a prompt's updates before its answer
    report(settled);
  });
}

/** The requests of one passthrough actor, forwarded as they come, answered as the agent answers. */
export const agentRequestsLogic = fromCallback<ForwardCommand, { readonly owner: AnyActorRef }>(({ input: { owner }, sendBack, receive }) => {
  let ended = false;
  receive((command) => forwardRequest(owner, command, sendBack, () => ended));
  return () => {
    ended = true;
  };
});

/** `{ meta }` with the `traceparent` and `tracestate` of a request's `_meta`, or nothing when it has none. */
function traceMetaOf(params: Record<string, unknown>): { meta?: Record<string, string> } {
  const meta = params._meta as Record<string, unknown> | undefined;
  if (typeof meta !== 'object' || meta === null || typeof meta.traceparent !== 'string') return {};
  return { meta: { traceparent: meta.traceparent, ...(typeof meta.tracestate === 'string' ? { tracestate: meta.tracestate } : {}) } };
}
