import { ErrorCodes } from './error-codes.js';

/**
 * How a request ended without a result, from the caller's side:
 * - `error_response`: the peer answered with an error;
 * - `timed_out`: no answer within the method's deadline (code -32800, as ACP asks for
 *   internal cancellations);
 * - `cancelled`: cancelled by the caller (-32800; `$/cancel_request` was sent);
 * - `peer_lost`: the peer went away with the request outstanding (-32603, `data.exit`
 *   says how);
 * - `local`: refused before it was sent (the connection is closed, bad params).
 */
export type RpcFailure = 'error_response' | 'timed_out' | 'cancelled' | 'peer_lost' | 'local';

/** The JSON-RPC error object on the wire. */
export interface ErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * The one error class of the wire: a JSON-RPC error with `code`, `message` and `data`,
 * whether it came from the peer or is about to be sent to it. Thrown errors become wire
 * errors only through {@link toRpcError}.
 */
export class RpcError extends Error {
  override readonly name = 'RpcError';
  readonly code: number;
  readonly data: unknown;
  /** How the request ended, on the caller's side. */
  readonly failure: RpcFailure;

  constructor(code: number, message: string, data?: unknown, failure: RpcFailure = 'error_response') {
    super(message);
    this.code = code;
    this.data = data;
    this.failure = failure;
  }

  static parseError(data?: unknown): RpcError {
    return new RpcError(ErrorCodes.ParseError, 'Parse error', data);
  }

  static invalidRequest(detail?: string, data?: unknown): RpcError {
    return new RpcError(ErrorCodes.InvalidRequest, detail ? `Invalid request: ${detail}` : 'Invalid request', data);
  }

  static methodNotFound(method: string): RpcError {
    return new RpcError(ErrorCodes.MethodNotFound, `Method not found: ${method}`, { method });
  }

  static invalidParams(detail?: string, data?: unknown): RpcError {
    return new RpcError(ErrorCodes.InvalidParams, detail ? `Invalid params: ${detail}` : 'Invalid params', data);
  }

  static internalError(detail?: string, data?: unknown): RpcError {
    return new RpcError(ErrorCodes.InternalError, detail ? `Internal error: ${detail}` : 'Internal error', data);
  }

  static requestCancelled(data?: unknown, failure: RpcFailure = 'cancelled'): RpcError {
    return new RpcError(ErrorCodes.RequestCancelled, 'Request cancelled', data, failure);
  }

  static authRequired(data?: unknown): RpcError {
    return new RpcError(ErrorCodes.AuthRequired, 'Authentication required', data);
  }

  static resourceNotFound(what: string, data?: unknown): RpcError {
    return new RpcError(ErrorCodes.ResourceNotFound, `Resource not found: ${what}`, data);
  }

  /** An error received from the peer. */
  static fromErrorObject(error: unknown): RpcError {
    if (typeof error === 'object' && error !== null) {
      const { code, message, data } = error as Record<string, unknown>;
      if (typeof code === 'number' && Number.isInteger(code) && typeof message === 'string') {
        return new RpcError(code, message, data);
      }
    }
    return new RpcError(ErrorCodes.InternalError, 'The peer answered with a malformed error object', { error });
  }

  /** The error object for the wire. */
  toErrorObject(): ErrorObject {
    return this.data === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, data: this.data };
  }
}

/**
 * Maps anything thrown by a handler to the wire, in exactly one place: an `RpcError`
 * passes through; a validation error (one with `issues`, as zod's) becomes invalid params;
 * anything else an internal error, without its stack (which may name files and secrets).
 */
export function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (typeof error === 'object' && error !== null && Array.isArray((error as { issues?: unknown }).issues)) {
    const issues = (error as { issues: Array<{ path?: unknown[]; message?: string }> }).issues;
    const summary = issues
      .slice(0, 3)
      .map((issue) => `${issue.path && issue.path.length > 0 ? issue.path.join('.') : '(params)'}: ${issue.message ?? 'invalid'}`)
      .join('; ');
    return RpcError.invalidParams(summary, { issues });
  }
  return RpcError.internalError(error instanceof Error ? error.message : String(error));
}
