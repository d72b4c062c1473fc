/**
 * `warden serve`'s second endpoint: ACP over Streamable HTTP at `/acp` (the transport RFD's
 * single path, beside the WebSocket upgrade). A client POSTs each message (`initialize` first,
 * without `Acp-Connection-Id`: its answer is the POST's body, with the new connection's id in
 * the `Acp-Connection-Id` header), GETs `text/event-stream` for the messages the daemon sends
 * (the connection's stream, or one session's with `Acp-Session-Id`), and DELETEs the connection
 * when it leaves. Each connection is an {@link HttpConnection}: a transport handed to the
 * daemon's owner, a hub connection like any WebSocket. This module only speaks HTTP: access
 * (the same checks as the upgrade, on every request), methods, headers, bounded bodies.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { errorResponse } from '../jsonrpc/message.js';
import type { Transport } from '../jsonrpc/transport.js';
import { defaultKeepaliveIntervalMs } from '../jsonrpc/websocket-keepalive.js';
import { checkUpgrade, type AccessPolicy } from './access.js';
import { readBoundedBody } from './http-body.js';
import { corsHeaders, isPreflight, preflightHeaders } from './http-cors.js';
import { HttpConnection } from './http-connection.js';

/** The header naming an HTTP connection (the transport RFD's, as the SDK spells it). */
export const connectionIdHeader = 'Acp-Connection-Id';
/** The header naming the session a request or an event stream is for. */
export const sessionIdHeader = 'Acp-Session-Id';
/** The longest `Acp-Connection-Id` / `Acp-Session-Id` taken, in characters (the SDK server's `maxIdLength`). */
export const maxHeaderIdLength = 1024;

/** Options of {@link createHttpEndpoint}. */
export interface HttpEndpointOptions {
  readonly access: AccessPolicy;
  /** Receives each new connection's transport (on its `initialize`), with the request that opened it. */
  readonly accept: (transport: Transport, request: IncomingMessage) => void;
  /** The longest body read, in bytes: a longer one is answered 413. */
  readonly maxBodyBytes: number;
  /** Keepalive interval of each connection, ms (0: off); see {@link HttpConnection}. */
  readonly pingIntervalMs: number;
}

/** The Streamable HTTP endpoint. */
export interface HttpEndpoint {
  /** Answers one HTTP request at `/acp` that is not a WebSocket upgrade. */
  handle(request: IncomingMessage, response: ServerResponse): void;
  /** HTTP connections open now. */
  connections(): number;
  /** From now on an `initialize` without a connection is refused (503): the daemon is stopping. Open connections go on. */
  stopAccepting(): void;
}

/**
 * The Streamable HTTP endpoint of `warden serve`.
 *
 * @example
 * ```ts
 * const http = createHttpEndpoint({ access, accept: (transport) => owner.attachConnection(transport, peer), maxBodyBytes: 64 << 20, pingIntervalMs: 30_000 });
 * createServer((request, response) => http.handle(request, response));
 * ```
 */
export function createHttpEndpoint(options: HttpEndpointOptions): HttpEndpoint {
  const open = new Map<string, HttpConnection>();
  let accepting = true;

  const connectionOf = (request: IncomingMessage, response: ServerResponse): HttpConnection | undefined => {
    const id = headerOf(request, connectionIdHeader);
    if (id === undefined) return void answerText(response, 400, `missing ${connectionIdHeader}: a connection starts with a POST of initialize, whose answer names it`);
    const connection = open.get(id);
    if (!connection || connection.closed) return void answerText(response, 404, `unknown ${connectionIdHeader} (it ended, or never was): initialize a new connection`);
    connection.heard();
    return connection;
  };

  const post = async (request: IncomingMessage, response: ServerResponse) => {
    if (!isJson(request.headers['content-type'])) {
      request.resume();
      return answerText(response, 415, 'a POST to /acp carries one JSON-RPC message: Content-Type: application/json');
    }
    const body = await readBoundedBody(request, options.maxBodyBytes);
    if (!body.ok) {
      if (body.reason === 'aborted') return void response.destroy();
      return answerText(response, 413, `the message is ${body.bytes} bytes or more, over the daemon's limit of ${options.maxBodyBytes} (--max-line-mib)`, { Connection: 'close' });
    }
    let value: unknown;
    try {
      value = JSON.parse(body.text);
    } catch {
      return answerJson(response, 400, errorResponse(null, RpcError.parseError()));
    }
    // ACP has no batches; the transport RFD answers them 501.
    if (Array.isArray(value)) return answerJson(response, 501, errorResponse(null, RpcError.invalidRequest('batches are not supported')));
    if (headerOf(request, connectionIdHeader) === undefined) return initialize(request, response, value);
    const connection = connectionOf(request, response);
    if (!connection) return;
    const sessionHeader = headerOf(request, sessionIdHeader);
    const named = sessionNamed(value);
    if (named !== undefined && sessionHeader === undefined) {
      return answerText(response, 400, `missing ${sessionIdHeader}: a message naming a session (params.sessionId ${named}) carries it in that header too`);
    }
    if (sessionHeader !== undefined && named !== undefined && sessionHeader !== named) {
      return answerText(response, 400, `mismatched ${sessionIdHeader}: the header names ${sessionHeader}, the message's params.sessionId ${named}`);
    }
    if (!(await connection.post(value, sessionHeader))) return answerText(response, 404, `the connection ended before the message was read: initialize a new connection`);
    answerEmpty(response, 202);
  };

  const initialize = async (request: IncomingMessage, response: ServerResponse, value: unknown) => {
    const id = initializeId(value);
    if (id === undefined) return answerText(response, 400, `missing ${connectionIdHeader}: a connection starts with a POST of an initialize request (with an id), whose answer names it`);
    if (!accepting) return answerText(response, 503, 'warden serve is stopping: no new connection');
    const connection = new HttpConnection({ connectionId: randomUUID(), pingIntervalMs: options.pingIntervalMs, ended: (ended) => open.delete(ended) });
    open.set(connection.connectionId, connection);
    // A client that gives up on its initialize leaves no connection behind.
    const abandoned = () => connection.clientGone('the HTTP client went away before its initialize was answered');
    response.once('close', abandoned);
    options.accept(connection, request);
    const answer = await connection.initialize(value, id);
    response.off('close', abandoned);
    if (response.destroyed) return;
    if (!answer) return answerText(response, 503, 'the connection ended before initialize was answered');
    answerJson(response, 200, answer, { [connectionIdHeader]: connection.connectionId });
  };

  const get = (request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    if (!(request.headers.accept ?? '').toLowerCase().includes('text/event-stream')) {
      return answerText(response, 406, 'GET /acp is an event stream (Accept: text/event-stream, with Acp-Connection-Id) or a WebSocket upgrade');
    }
    const connection = connectionOf(request, response);
    if (!connection) return;
    const sessionId = headerOf(request, sessionIdHeader);
    response.socket?.setKeepAlive(true, options.pingIntervalMs || defaultKeepaliveIntervalMs); // a peer gone without a FIN is found by TCP
    const opened = connection.openStream(sessionId, response);
    if (opened === 'conflict') return answerText(response, 409, `this ${sessionId === undefined ? 'connection' : 'session'}'s event stream already has a receiver`);
    if (opened === 'limit') return answerText(response, 429, 'too many session event streams on this connection');
    if (opened === 'closed') return answerText(response, 404, `unknown ${connectionIdHeader} (it ended): initialize a new connection`);
  };

  const remove = (request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    const connection = connectionOf(request, response);
    if (!connection) return;
    connection.clientGone('the HTTP client closed its connection (DELETE)');
    answerEmpty(response, 202);
  };

  return {
    handle(request, response) {
      const access = checkUpgrade(request, options.access);
      // A browser's preflight carries no credentials: its origin passed when all that is missing is the token (the origin is checked first).
      if (isPreflight(request) && (access.ok || access.status === 401)) {
        request.resume();
        return answerEmpty(response, 204, preflightHeaders(request));
      }
      if (!access.ok) {
        request.resume();
        // A page of an allowed origin may read that it lacks the token; a foreign one learns nothing.
        const readable = access.status === 401 ? corsHeaders(request) : {};
        return answerText(response, access.status, access.body.trimEnd(), { ...readable, ...access.headers, Connection: 'close' });
      }
      // Every answer from here on (event streams included) is readable by the page of an allowed origin.
      for (const [name, value] of Object.entries(corsHeaders(request))) response.setHeader(name, value as string);
      for (const name of [connectionIdHeader, sessionIdHeader]) {
        if ((headerOf(request, name)?.length ?? 0) > maxHeaderIdLength) {
          request.resume();
          return answerText(response, 400, `${name} is over ${maxHeaderIdLength} characters`);
        }
      }
      if (request.method === 'POST') return void post(request, response).catch((error: unknown) => failed(response, error));
      if (request.method === 'GET') return get(request, response);
      if (request.method === 'DELETE') return remove(request, response);
      request.resume();
      answerText(response, 405, 'ACP over Streamable HTTP takes POST, GET and DELETE at /acp (and a browser preflight, OPTIONS)', { Allow: 'GET, POST, DELETE, OPTIONS' });
    },
    connections: () => open.size,
    stopAccepting() {
      accepting = false;
    },
  };
}

/** An unexpected failure while answering: 500, once; the daemon goes on. */
function failed(response: ServerResponse, error: unknown): void {
  if (response.headersSent) return void response.destroy();
  answerText(response, 500, `internal error: ${error instanceof Error ? error.message : String(error)}`);
}

function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === '' ? undefined : text;
}

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
}

/** The id of an `initialize` request, if `value` is one. */
function initializeId(value: unknown): string | number | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const message = value as { method?: unknown; id?: unknown };
  if (message.method !== 'initialize') return undefined;
  return typeof message.id === 'string' || (typeof message.id === 'number' && Number.isFinite(message.id)) ? message.id : undefined;
}

/** The `params.sessionId` a posted request or notification names. */
function sessionNamed(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !('method' in value)) return undefined;
  const params = (value as { params?: unknown }).params;
  const sessionId = typeof params === 'object' && params !== null ? (params as { sessionId?: unknown }).sessionId : undefined;
  return typeof sessionId === 'string' ? sessionId : undefined;
}

function answerText(response: ServerResponse, status: number, text: string, headers: OutgoingHttpHeaders = {}): void {
  const body = `${text}\n`;
  response.writeHead(status, STATUS_CODES[status], { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body), ...headers });
  response.end(body);
}

function answerJson(response: ServerResponse, status: number, value: unknown, headers: OutgoingHttpHeaders = {}): void {
  const body = JSON.stringify(value);
  response.writeHead(status, STATUS_CODES[status], { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  response.end(body);
}

function answerEmpty(response: ServerResponse, status: number, headers: OutgoingHttpHeaders = {}): void {
  response.writeHead(status, STATUS_CODES[status], { 'Content-Length': 0, ...headers });
  response.end();
}
