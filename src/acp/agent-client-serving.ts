/**
 * Serving the agent's requests and notifications on the client side: what the client
 * advertises and accepts (its method table), permission requests decided by the handler's
 * policy (or refused by default), file access confined to each session's workspace,
 * terminals as supervised ports, elicitation, or everything relayed in a proxy; session
 * updates handed to the prompt that waits for them and emitted to the owner.
 */
import type { ClientCapabilities, CreateElicitationRequest, RequestPermissionRequest, RequestPermissionResponse, SessionUpdate } from '@agentclientprotocol/sdk';
import { respond, respondError, type MethodTable, type ParamsParser } from '../jsonrpc/connection.js';
import type { JsonRpcId } from '../jsonrpc/message.js';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { CLIENT_METHODS, clientNotifications, clientRequests } from '../protocol/methods.js';
import { clientAllows } from './capability-gate.js';
import { isHotSessionUpdate } from './hot-update-check.js';
import { subagentKinds } from './subagent-updates.js';
import { parserOf } from './schemas.js';
import type { Terminals } from './terminals.js';
import { readTextFile, writeTextFile } from './workspace-fs.js';
import type { ClientHandler } from './agent-client-contract.js';
import { sync, type Live, type SessionInfo } from './agent-client-state.js';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { permissionRequestFromV2 } from './v2-agent-permission.js';
import { v2InboundTypes, v2ParserOf } from './v2-agent-schemas.js';
import { inboundState, turnEndFromV2, updateFromV2 } from './v2-inbound.js';

/** The capabilities a handler's policies serve. */
export function advertised(handler: ClientHandler): ClientCapabilities {
  const fs = handler.fs !== false;
  return {
    fs: { readTextFile: fs, writeTextFile: fs },
    terminal: handler.terminals !== false,
    ...(handler.elicitation ? { elicitation: { form: {} } } : {}),
    ...(handler.notices ? { session: { notices: {} } } : {}),
  };
}

/**
 * The client's method table: each request and notification of the agent parsed by its schema.
 * With `mode` (a client that may speak v2), what a v2 agent sends is parsed by v2's schemas
 * once `mode.v2` is set (v2-agent-schemas.ts); without it, the v1 table as it always was.
 */
export function methodTable(mode?: { readonly v2: boolean }): MethodTable {
  const table = v1MethodTable();
  if (!mode) return table;
  const requests = { ...table.requests };
  const notifications = { ...table.notifications };
  for (const [method, type] of Object.entries(v2InboundTypes)) {
    const into = method === CLIENT_METHODS.session_update || method === 'elicitation/complete' ? notifications : requests;
    const v1 = into[method];
    const v2 = v2ParserOf(type);
    into[method] = (params) => (mode.v2 ? v2(params) : typeof v1 === 'function' ? v1(params) : params);
  }
  return { requests, notifications };
}

function v1MethodTable(): { requests: Record<string, ParamsParser | true>; notifications: Record<string, ParamsParser | true> } {
  const requests: Record<string, ParamsParser> = {};
  for (const [method, types] of Object.entries(clientRequests)) requests[method] = parserOf(types.params);
  const notifications: Record<string, ParamsParser> = {};
  for (const [method, type] of Object.entries(clientNotifications)) notifications[method] = parserOf(type);
  // The hot kinds skip the schema when it would only copy them (hot-update-check.ts); the rest,
  // and anything malformed, is validated in full, with the same verdicts and errors.
  const fullUpdate = notifications[CLIENT_METHODS.session_update] as ParamsParser;
  // A `subagent_update` and the messages between sessions (sent only to a client that advertised `subagents`) are in v1's unstable surface only.
  const subagentUpdate = parserOf(clientNotifications[CLIENT_METHODS.session_update] as string, 'unstable');
  notifications[CLIENT_METHODS.session_update] = (params) => (isHotSessionUpdate(params) ? params : isSubagentUpdate(params) ? subagentUpdate(params) : fullUpdate(params));
  return { requests, notifications };
}

function isSubagentUpdate(params: unknown): boolean {
  const kind = (params as { update?: { sessionUpdate?: unknown } } | undefined)?.update?.sessionUpdate;
  return typeof kind === 'string' && subagentKinds.has(kind);
}

/** Serves one request of the agent and answers it (an error thrown is the error answer). */
export async function onAgentRequest(live: Live, id: JsonRpcId, method: string, params: Record<string, unknown>): Promise<void> {
  const session = live.sessions.get(params.sessionId as string);
  try {
    const result = await serve(live, id, method, params, session);
    if (result !== undefined) respond(live.connection, id, result);
  } catch (error) {
    respondError(live.connection, id, error);
  }
}

async function serve(live: Live, id: JsonRpcId, method: string, params: Record<string, unknown>, session: SessionInfo | undefined): Promise<unknown> {
  const handler = live.input.handler ?? {};
  const roots = session?.roots ?? [];
  if (live.mode.v2) {
    // v2 has no client files or terminals (its terminals are the agent's): never served.
    if (method.startsWith('fs/') || method.startsWith('terminal/')) throw RpcError.methodNotFound(method);
    // Its permission requests are asked in v1's shape, the one every policy and editor takes; the answer is the same in both.
    if (method === CLIENT_METHODS.session_request_permission) params = permissionRequestFromV2(params as unknown as V2.RequestPermissionRequest, `permission-${String(id)}`) as unknown as Record<string, unknown>;
  }
  if (handler.relay) return handler.relay(method, params);
  // What we did not advertise is not served, whatever the handler could do (capability-gate.ts).
  if (!clientAllows(live.capabilities, method, params)) throw RpcError.methodNotFound(method);
  switch (method) {
    case CLIENT_METHODS.session_request_permission: {
      if (!session || session.prompt?.cancelled) return { outcome: { outcome: 'cancelled' } };
      session.permissions.add(id);
      const request = params as unknown as RequestPermissionRequest;
      const outcome = handler.permission ? await handler.permission(request) : defaultPermission(request);
      // A cancel may have answered it meanwhile: then this answer is not sent (exactly once).
      if (!session.permissions.delete(id)) return undefined;
      return { outcome };
    }
    case CLIENT_METHODS.fs_read_text_file:
      return readTextFile(params as { path: string; line?: number; limit?: number }, roots, typeof handler.fs === 'object' ? { ...handler.fs.limits, linkStores: handler.fs.linkStores } : undefined);
    case CLIENT_METHODS.fs_write_text_file:
      return writeTextFile(params as { path: string; content: string }, roots);
    case CLIENT_METHODS.terminal_create:
      if (!session) throw RpcError.resourceNotFound(`session ${String(params.sessionId)}`, { sessionId: params.sessionId });
      return live.terminals.create(params as Parameters<Terminals['create']>[0], roots, terminalEnv(handler)).finally(() => sync(live));
    case CLIENT_METHODS.terminal_output:
      return live.terminals.output(params as { sessionId: string; terminalId: string });
    case CLIENT_METHODS.terminal_wait_for_exit:
      return live.terminals.waitForExit(params as { sessionId: string; terminalId: string });
    case CLIENT_METHODS.terminal_kill:
      return live.terminals.kill(params as { sessionId: string; terminalId: string });
    case CLIENT_METHODS.terminal_release:
      return live.terminals.release(params as { sessionId: string; terminalId: string }).finally(() => sync(live));
    case CLIENT_METHODS.elicitation_create:
      // Only form mode is advertised, and only with a handler.
      if (!handler.elicitation) throw RpcError.methodNotFound(method);
      return handler.elicitation(params as unknown as CreateElicitationRequest);
    default:
      throw RpcError.methodNotFound(method);
  }
}

function terminalEnv(handler: ClientHandler): 'isolated' | 'inherit' {
  return typeof handler.terminals === 'object' && handler.terminals.env === 'inherit' ? 'inherit' : 'isolated';
}

/** Without a policy, nothing runs: the first reject option, or cancelled. */
function defaultPermission(request: RequestPermissionRequest): RequestPermissionResponse['outcome'] {
  const reject = request.options.find((option) => option.kind === 'reject_once') ?? request.options.find((option) => option.kind === 'reject_always');
  return reject ? { outcome: 'selected', optionId: reject.optionId } : { outcome: 'cancelled' };
}

/** A notification of the agent: a session update goes to its prompt run and to the owner. */
export function onAgentNotification(live: Live, method: string, params: unknown): void {
  if (method === CLIENT_METHODS.session_update && live.mode.v2) {
    const { sessionId, update } = params as { sessionId: string; update: V2.SessionUpdate };
    let state = live.inbound.get(sessionId);
    if (!state) live.inbound.set(sessionId, (state = inboundState()));
    for (const mapped of updateFromV2(update, state)) deliverUpdate(live, sessionId, mapped);
    const end = turnEndFromV2(update);
    const run = live.sessions.get(sessionId)?.prompt;
    if (end && run && !run.done) run.turn?.resolve(end);
    return;
  }
  if (method === CLIENT_METHODS.session_update) {
    const { sessionId, update } = params as { sessionId: string; update: SessionUpdate };
    deliverUpdate(live, sessionId, update);
    return;
  }
  live.scope.emit({ type: 'acp.notification', method, params });
}

/** A session update (v1's shape) to the session's prompt run and to the owner. */
function deliverUpdate(live: Live, sessionId: string, update: SessionUpdate): void {
  const run = live.sessions.get(sessionId)?.prompt;
  if (run && !run.done && run.keep) {
    run.updates.push(update);
    for (const wake of run.wake.splice(0)) wake();
  }
  live.input.onUpdate?.(sessionId, update);
  live.scope.emit({ type: 'acp.update', sessionId, update });
}
