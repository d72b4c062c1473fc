/**
 * What arrives from the peer: each message classified once; requests and notifications
 * checked against the method table and emitted to the owner in arrival order; answers
 * matched to our requests; malformed, too deep or oversized input answered with the right
 * error (or dropped and reported) while the connection keeps going.
 */
import { maxParamsDepth, nestsDeeperThan } from './depth-limit.js';
import { CANCEL_REQUEST_METHOD, classify, describeMessage, errorResponse, type Classified, type JsonRpcId } from './message.js';
import { RpcError, toRpcError } from './rpc-error.js';
import type { OversizeLine } from './transport.js';
import { ErrorCodes } from './error-codes.js';
import type { ParamsParser } from './connection-contract.js';
import { holdReading, idKey, send, type IncomingRequest, type Live } from './connection-state.js';
import { settle } from './connection-outgoing.js';

/** Handles one message from the peer. */
export function receive(live: Live, value: unknown): void {
  if (live.closed) return;
  live.lastActivity = live.now();
  const verdict = classify(value);
  const emit = live.scope.emit;
  if (verdict.kind !== 'invalid' && nestsDeeperThan(verdict.kind === 'response' ? (verdict.isError ? verdict.error : verdict.result) : verdict.message.params, maxParamsDepth)) {
    refuseTooDeep(live, verdict);
    return;
  }
  switch (verdict.kind) {
    case 'response':
      onResponse(live, verdict.id, verdict.isError, verdict.isError ? verdict.error : verdict.result);
      return;
    case 'request': {
      const { id, method, params } = verdict.message;
      const key = idKey(id);
      const inUse = live.incoming.get(key);
      if (inUse) {
        refuseIdInUse(live, inUse, method, params);
        return;
      }
      const parsed = parseParams(live.input.methods?.requests, method, params);
      if (parsed.kind === 'unknown') {
        send(live, { jsonrpc: '2.0', id, error: RpcError.methodNotFound(method).toErrorObject() });
        return;
      }
      if (parsed.kind === 'invalid') {
        send(live, { jsonrpc: '2.0', id, error: parsed.error.toErrorObject() });
        return;
      }
      live.incoming.set(key, { id, method, params, tag: undefined });
      emit({ type: 'rpc.request', id, method, params: parsed.params });
      return;
    }
    case 'notification': {
      const { method, params } = verdict.message;
      if (method === CANCEL_REQUEST_METHOD) {
        const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
        if ((typeof requestId === 'string' || typeof requestId === 'number') && live.incoming.has(idKey(requestId))) {
          emit({ type: 'rpc.cancelRequested', id: requestId });
        }
        return;
      }
      const parsed = parseParams(live.input.methods?.notifications, method, params);
      if (parsed.kind === 'unknown') {
        emit({ type: 'rpc.dropped', reason: 'unknown_notification', detail: method });
        return;
      }
      if (parsed.kind === 'invalid') {
        emit({ type: 'rpc.dropped', reason: 'invalid_notification', detail: `${method}: ${parsed.error.message}` });
        return;
      }
      emit({ type: 'rpc.notification', method, params: parsed.params });
      return;
    }
    case 'invalid':
      if (verdict.respond) {
        send(live, { jsonrpc: '2.0', id: verdict.id, error: verdict.error.toErrorObject() });
      } else {
        emit({ type: 'rpc.dropped', reason: verdict.id === null ? 'peer_error' : 'invalid_response', detail: `${verdict.error.message} (${describeMessage(value)})` });
      }
      return;
  }
}

/**
 * A message nested deeper than {@link maxParamsDepth}, refused before anything else reads it
 * (nearly everything after the parse recurses): a request is answered -32602 by its id; an
 * answer to one of our requests fails that request; a notification is dropped and reported.
 */
function refuseTooDeep(live: Live, verdict: Exclude<Classified, { kind: 'invalid' }>): void {
  const detail = `nested deeper than ${maxParamsDepth} levels of objects and arrays, the limit of every message, so it was refused unread`;
  if (verdict.kind === 'response') {
    const entry = live.outgoing.get(verdict.id);
    if (!entry) {
      live.scope.emit({ type: 'rpc.dropped', reason: 'too_deep', detail: `an answer (id ${JSON.stringify(verdict.id)}) nobody waits for: ${detail}` });
      return;
    }
    live.outgoing.delete(verdict.id);
    settle(live, verdict.id, entry, 'failed');
    entry.reject(RpcError.because('too_deep', `The answer to ${entry.method} was not read: its ${verdict.isError ? 'error' : 'result'} is ${detail}`, { maxDepth: maxParamsDepth, method: entry.method }, { code: ErrorCodes.InternalError, failure: 'local' }));
    return;
  }
  const { method } = verdict.message;
  if (verdict.kind === 'notification') {
    live.scope.emit({ type: 'rpc.dropped', reason: 'too_deep', detail: `${method}: its params are ${detail}` });
    return;
  }
  send(live, errorResponse(verdict.message.id, RpcError.because('too_deep', `Invalid params: ${method}: the params are ${detail}; send flatter JSON`, { maxDepth: maxParamsDepth, method })));
}

/**
 * A line over the transport's limit, dropped unread: a request is answered -32600 by its id
 * (when its start or end showed it; else with id null), naming the limit; an answer to one of
 * our requests fails that request; a notification is dropped and reported.
 */
export function onOversize(live: Live, line: OversizeLine): void {
  if (live.closed) return;
  try {
    answerOversize(live, line);
  } finally {
    holdReading(live);
  }
}

function answerOversize(live: Live, line: OversizeLine): void {
  live.lastActivity = live.now();
  live.malformed += 1;
  const { id, kind, method } = line.envelope;
  const detail = `a message of ${line.bytes} bytes is over the limit of ${line.limit} bytes per line, so it was dropped unread`;
  const details = { bytes: line.bytes, limitBytes: line.limit, ...(method ? { method } : {}) };
  if (kind === 'response' && id !== null) {
    const entry = live.outgoing.get(id);
    if (!entry) {
      live.scope.emit({ type: 'rpc.dropped', reason: 'line_too_long', detail: `an answer (id ${JSON.stringify(id)}) nobody waits for: ${detail}` });
      return;
    }
    live.outgoing.delete(id);
    settle(live, id, entry, 'failed');
    entry.reject(RpcError.because('line_too_long', `The answer to ${entry.method} was not read: ${detail}`, { ...details, method: entry.method }, { code: ErrorCodes.InternalError, failure: 'local' }));
    return;
  }
  if (kind === 'notification' || kind === 'response') {
    live.scope.emit({ type: 'rpc.dropped', reason: 'line_too_long', detail: `${method ?? 'an answer without id'}: ${detail}` });
    return;
  }
  send(live, { jsonrpc: '2.0', id, error: RpcError.because('line_too_long', `Invalid request: ${method ? `${method}: ` : ''}${detail}`, details).toErrorObject() });
}

type ParsedParams = { readonly kind: 'ok'; readonly params: unknown } | { readonly kind: 'unknown' } | { readonly kind: 'invalid'; readonly error: RpcError };

/** Checks `params` of `method` against a method table (no table: anything goes). */
function parseParams(table: Readonly<Record<string, ParamsParser | true>> | undefined, method: string, params: unknown): ParsedParams {
  if (!table) return { kind: 'ok', params };
  const parser = Object.hasOwn(table, method) ? table[method] : undefined;
  if (parser === undefined) return { kind: 'unknown' };
  if (parser === true) return { kind: 'ok', params };
  try {
    return { kind: 'ok', params: parser(params) };
  } catch (error) {
    return { kind: 'invalid', error: toRpcError(asParamsError(error)) };
  }
}

/** A thrown parser error is an invalid-params error, whatever its class. */
function asParamsError(error: unknown): unknown {
  if (error instanceof RpcError) return error;
  if (typeof error === 'object' && error !== null && Array.isArray((error as { issues?: unknown }).issues)) return error;
  return RpcError.invalidParams(error instanceof Error ? error.message : String(error));
}

function onResponse(live: Live, id: JsonRpcId, isError: boolean, payload: unknown): void {
  const entry = live.outgoing.get(id);
  if (!entry) {
    if (live.abandoned.delete(id)) return; // the answer to a request we stopped waiting for
    live.scope.emit({ type: 'rpc.dropped', reason: 'unmatched_response', detail: `no request with id ${JSON.stringify(id)} is pending` });
    return;
  }
  live.outgoing.delete(id);
  if (isError) {
    settle(live, id, entry, 'failed');
    entry.reject(RpcError.fromErrorObject(payload));
  } else {
    settle(live, id, entry, 'answered');
    entry.resolve(payload);
  }
}

/**
 * A request whose id is owed an answer already. The same request again (method and params
 * equal: a network or a proxy delivered it twice) is dropped, reported: the first copy's answer
 * answers it. Another request under that id is refused `-32600` with `id: null`, since an answer
 * carrying the id would settle the peer's first request, which still runs.
 */
function refuseIdInUse(live: Live, inUse: IncomingRequest, method: string, params: unknown): void {
  const detail = `request id ${JSON.stringify(inUse.id)} is already in use`;
  if (method === inUse.method && JSON.stringify(params) === JSON.stringify(inUse.params)) {
    live.scope.emit({ type: 'rpc.dropped', reason: 'duplicate_request', detail: `${detail}: the same ${method} again, answered once` });
    return;
  }
  send(live, { jsonrpc: '2.0', id: null, error: RpcError.invalidRequest(`${detail} by a ${inUse.method} still being answered; use a new id`, { id: inUse.id }).toErrorObject() });
}
