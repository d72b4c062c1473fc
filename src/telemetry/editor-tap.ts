/**
 * Reads the facts of sessions off the editor's connection, for the session traces: a
 * transport around the editor's (stdio for `warden acp`) that passes every message through
 * unchanged, except one: a `session/prompt`'s `_meta.traceparent` (and `tracestate`) becomes
 * the turn span's, so that the agent, which gets the turn's trace context from there, joins
 * warden's trace under the turn (the turn itself is the child of the editor's traceparent).
 * Each request is served inside its span's context, so that a process spawned while serving
 * it is started in it (spawn-trace-env.ts).
 *
 * Several connections may share one {@link SessionTraces} (`warden serve`: every client of the
 * daemon): each tap scopes the JSON-RPC ids of its connection (two clients both send id 1),
 * and may name its peer (`acp_warden.client.peer` on the session and turn spans it starts).
 *
 * Observing never breaks the protocol: a bug here is reported once on OpenTelemetry's
 * diagnostic log (stderr) and the message goes on as it came.
 */
import { context as otelContext, diag, type Context } from '@opentelemetry/api';
import { AGENT_METHODS, CLIENT_METHODS, UNSTABLE_AGENT_METHODS } from '../protocol/methods.js';
import type { JsonRpcMessage } from '../jsonrpc/message.js';
import type { Transport, TransportSink } from '../jsonrpc/transport.js';
import type { SessionRequestKind, SessionTraces } from './session-traces.js';
import { traceHeadersOf } from './trace-meta.js';

type Message = { readonly id?: unknown; readonly method?: unknown; readonly params?: unknown; readonly result?: unknown; readonly error?: unknown };
type Params = Record<string, unknown> & { readonly sessionId?: unknown; readonly _meta?: unknown };

interface Connection {
  readonly number: number;
  readonly peer: string | undefined;
}

/** A JSON-RPC id of this connection, as the shared traces key it. */
const scoped = (connection: Connection, id: unknown): unknown => [connection.number, id];

const sessionRequests: Readonly<Record<string, SessionRequestKind>> = {
  [AGENT_METHODS.session_new]: 'new',
  [AGENT_METHODS.session_load]: 'load',
  [AGENT_METHODS.session_resume]: 'resume',
  [UNSTABLE_AGENT_METHODS.session_fork]: 'fork',
};

/** Options of {@link tapEditorTransport}. */
export interface EditorTapOptions {
  /** Who is on the other end (`127.0.0.1:50412 (Zed/0.180)`): `acp_warden.client.peer` on the spans this connection starts. */
  readonly peer?: string | undefined;
}

/** Numbers the taps, so that each connection's JSON-RPC ids are its own in the shared traces. */
let nextConnection = 0;

/** `transport`, with what passes through it told to `traces`. */
export function tapEditorTransport(transport: Transport, traces: SessionTraces, options: EditorTapOptions = {}): Transport {
  const connection: Connection = { number: nextConnection++, peer: options.peer };
  let reported = false;
  const safely = <T>(work: () => T, fallback: T): T => {
    try {
      return work();
    } catch (error) {
      if (!reported) {
        reported = true;
        diag.error(`acp-warden telemetry could not read a message (telemetry goes on without it): ${error instanceof Error ? error.message : String(error)}`);
      }
      return fallback;
    }
  };
  const tapped: Transport = {
    start(sink: TransportSink) {
      transport.start({
        ...sink,
        message(value: unknown) {
          const seen = safely(() => fromEditor(value, traces, connection), undefined);
          if (seen) otelContext.with(seen.context, () => sink.message(seen.value));
          else sink.message(value);
        },
      });
    },
    send(message: JsonRpcMessage) {
      safely(() => toEditor(message as Message, traces, connection), undefined);
      transport.send(message);
    },
    close: () => transport.close(),
  };
  if (transport.holdReading) tapped.holdReading = (held) => transport.holdReading?.(held);
  return tapped;
}

/** A message from the editor: the context to serve it in (and the message, its `_meta` rewritten for a prompt), or `undefined`. */
function fromEditor(value: unknown, traces: SessionTraces, connection: Connection): { context: Context; value: unknown } | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const message = value as Message;
  if (message.id === undefined || message.id === null) return undefined;
  if (message.method === undefined) {
    // The editor's answer to warden's request: a permission's, if it was one.
    traces.permissionAnswered(scoped(connection, message.id), message.result, message.error);
    return undefined;
  }
  const params = (typeof message.params === 'object' && message.params !== null ? message.params : {}) as Params;
  if (message.method === AGENT_METHODS.initialize) return { context: traces.initializeAsked(scoped(connection, message.id)), value };
  const kind = typeof message.method === 'string' ? sessionRequests[message.method] : undefined;
  if (kind) {
    const sessionId = kind === 'load' || kind === 'resume' ? (typeof params.sessionId === 'string' ? params.sessionId : undefined) : undefined;
    return { context: traces.sessionAsked(scoped(connection, message.id), kind, sessionId, params._meta, connection.peer), value };
  }
  if (message.method === AGENT_METHODS.session_prompt && typeof params.sessionId === 'string') {
    const context = traces.turnAsked(scoped(connection, message.id), params.sessionId, params._meta, connection.peer);
    const meta = typeof params._meta === 'object' && params._meta !== null ? (params._meta as Record<string, unknown>) : {};
    const { tracestate: _editors, ...kept } = meta;
    return { context, value: { ...message, params: { ...params, _meta: { ...kept, ...traceHeadersOf(context) } } } };
  }
  return undefined;
}

/** A message warden sends the editor. */
function toEditor(message: Message, traces: SessionTraces, connection: Connection): void {
  if (message.method === undefined) {
    if (message.id !== undefined && message.id !== null) traces.answered(scoped(connection, message.id), message.result, message.error as { code?: unknown; message?: unknown } | undefined);
    return;
  }
  const params = message.params as { sessionId?: unknown; update?: unknown; toolCall?: unknown; _meta?: Record<string, unknown> } | undefined;
  if (typeof params?.sessionId !== 'string') return;
  if (message.method === CLIENT_METHODS.session_update && typeof params.update === 'object' && params.update !== null) {
    traces.update(params.sessionId, params.update as Record<string, unknown>, params._meta);
  } else if (message.method === CLIENT_METHODS.session_request_permission && message.id !== undefined) {
    traces.permissionAsked(scoped(connection, message.id), params.sessionId, params.toolCall as { toolCallId?: unknown; title?: unknown } | undefined);
  }
}
