/**
 * JSON-RPC 2.0 messages and their classification. A pure function decides what a parsed
 * value is; everything else in the connection works from its verdict.
 */
import { RpcError } from './rpc-error.js';

/** A request id: JSON-RPC allows strings and numbers (and null, which we never send). */
export type JsonRpcId = string | number;

/** A request: expects exactly one response with the same id. */
export interface RequestMessage {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params?: unknown;
}

/** A notification: no id, no response. */
export interface NotificationMessage {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: unknown;
}

/** A response: a result or an error for one request id. */
export type ResponseMessage =
  | { readonly jsonrpc: '2.0'; readonly id: JsonRpcId | null; readonly result: unknown }
  | { readonly jsonrpc: '2.0'; readonly id: JsonRpcId | null; readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } };

/** Any message on the wire. */
export type JsonRpcMessage = RequestMessage | NotificationMessage | ResponseMessage;

/** The error answer to request `id` (`null`: the request could not be read, so its id is unknown). */
export function errorResponse(id: JsonRpcId | null, error: RpcError): ResponseMessage {
  return { jsonrpc: '2.0', id, error: error.toErrorObject() };
}

/** The notification that cancels a request sent earlier (`params.requestId`). */
export const CANCEL_REQUEST_METHOD = '$/cancel_request';

/** A request to send. */
export function requestMessage(id: JsonRpcId, method: string, params?: unknown): RequestMessage {
  return { jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) };
}

/** A notification to send. */
export function notificationMessage(method: string, params?: unknown): NotificationMessage {
  return { jsonrpc: '2.0', method, ...(params !== undefined ? { params } : {}) };
}

/** The answer to request `id`: its result, or an error object as the peer gave it. */
export function responseMessage(id: JsonRpcId, answer: { readonly result: unknown } | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } }): ResponseMessage {
  return 'error' in answer ? { jsonrpc: '2.0', id, error: answer.error } : { jsonrpc: '2.0', id, result: answer.result };
}

/** What a parsed value turned out to be. */
export type Classified =
  | { readonly kind: 'request'; readonly message: RequestMessage }
  | { readonly kind: 'notification'; readonly message: NotificationMessage }
  | { readonly kind: 'response'; readonly id: JsonRpcId; readonly result?: unknown; readonly error?: unknown; readonly isError: boolean }
  /** Not valid; `id` is the request id to answer with, when one could be read. */
  | { readonly kind: 'invalid'; readonly error: RpcError; readonly id: JsonRpcId | null; readonly respond: boolean };

function isId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Classifies one parsed JSON value (never throws). */
export function classify(value: unknown): Classified {
  if (Array.isArray(value)) {
    return { kind: 'invalid', error: RpcError.invalidRequest('batches are not supported'), id: null, respond: true };
  }
  if (typeof value !== 'object' || value === null) {
    return { kind: 'invalid', error: RpcError.invalidRequest('a message must be a JSON object'), id: null, respond: true };
  }
  const message = value as Record<string, unknown>;
  const id = message.id;
  const idForReply = isId(id) ? id : null;
  if (message.jsonrpc !== '2.0') {
    return { kind: 'invalid', error: RpcError.invalidRequest('"jsonrpc" must be "2.0"'), id: idForReply, respond: true };
  }
  if ('method' in message) {
    if (typeof message.method !== 'string' || message.method.length === 0) {
      return { kind: 'invalid', error: RpcError.invalidRequest('"method" must be a non-empty string'), id: idForReply, respond: true };
    }
    const params = message.params;
    if (params !== undefined && (typeof params !== 'object' || params === null)) {
      return { kind: 'invalid', error: RpcError.invalidRequest('"params" must be an object or an array'), id: idForReply, respond: 'id' in message };
    }
    if (!('id' in message)) return { kind: 'notification', message: message as unknown as NotificationMessage };
    if (!isId(id)) {
      return { kind: 'invalid', error: RpcError.invalidRequest('"id" must be a string or a number'), id: null, respond: true };
    }
    return { kind: 'request', message: message as unknown as RequestMessage };
  }
  const hasResult = 'result' in message;
  const hasError = 'error' in message;
  if ((hasResult || hasError) && isId(id)) {
    if (hasResult === hasError) {
      return { kind: 'invalid', error: RpcError.invalidRequest('a response has either "result" or "error"'), id, respond: false };
    }
    return hasError
      ? { kind: 'response', id, error: message.error, isError: true }
      : { kind: 'response', id, result: message.result, isError: false };
  }
  if ((hasResult || hasError) && id === null) {
    // The peer could not read one of our messages (a parse error answered with id null).
    return { kind: 'invalid', error: RpcError.fromErrorObject(message.error), id: null, respond: false };
  }
  return { kind: 'invalid', error: RpcError.invalidRequest('neither a request, a notification nor a response'), id: idForReply, respond: true };
}

/** Describes a message for logs by its type and keys only: messages can carry credentials. */
export function describeMessage(value: unknown): string {
  if (Array.isArray(value)) return `array(${value.length})`;
  if (typeof value !== 'object' || value === null) return typeof value;
  const method = (value as { method?: unknown }).method;
  const keys = Object.keys(value).sort().join(',');
  return typeof method === 'string' ? `${method} {${keys}}` : `{${keys}}`;
}
