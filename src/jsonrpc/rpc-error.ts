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

/**
 * The `data.reason` vocabulary: why warden refused or ended a request, as a word a program can
 * switch on (the message is for people). Each reason has its code, the caller-side failure it
 * implies, and when it happens; docs/reference/errors.md lists the same table. Make the error with
 * {@link RpcError.because}, never with a `reason` string by hand.
 */
export const rpcReasons = Object.freeze({
  timeout: { code: ErrorCodes.RequestCancelled, failure: 'timed_out', when: 'a request warden sent had no answer within its deadline (`data.timeoutMs`)' },
  cancelled: { code: ErrorCodes.RequestCancelled, failure: 'cancelled', when: 'the caller cancelled a request warden sent (`$/cancel_request` went to the peer)' },
  aborted: { code: ErrorCodes.RequestCancelled, failure: 'cancelled', when: "the caller's `AbortSignal` was aborted before the request was sent" },
  closed: { code: ErrorCodes.InternalError, failure: 'local', when: 'the connection was closed before the request could be sent' },
  unwritable: { code: ErrorCodes.InternalError, failure: 'local', when: 'the request could not be written (its params do not encode as JSON)' },
  input_ended: { code: ErrorCodes.InternalError, failure: 'peer_lost', when: "the peer's output ended (EOF) with the request outstanding: it can no longer answer" },
  peer_lost: { code: ErrorCodes.InternalError, failure: 'peer_lost', when: 'the peer went away with the request outstanding (`data.exit` says how)' },
  too_deep: { code: ErrorCodes.InvalidParams, failure: 'error_response', when: "a message's params (or an answer's result or error) nest objects and arrays deeper than the limit (`data.maxDepth`, 128), refused unread: a request's sender is answered -32602; an answer warden waited for fails its request -32603" },
  line_too_long: { code: ErrorCodes.InvalidRequest, failure: 'error_response', when: "a message was over the line limit and dropped unread (`data.bytes`, `data.limitBytes`): a request's sender is answered -32600; an answer warden waited for fails its request -32603" },
  shutdown: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'warden is shutting down (or the editor closed its input and the drain gave up): every request still waiting is answered; also the journaled end of a turn a killed warden left open, written when its session is restored (`data.continuations` when it was continuing the turn after its agent crashed)' },
  agent_starting: { code: ErrorCodes.InternalError, failure: 'error_response', when: "the session's agent process is (re)starting; try again in a moment" },
  agent_crashed: { code: ErrorCodes.InternalError, failure: 'error_response', when: "the agent process died during the request, a prompt in flight (`data.exit`: the typed exit reason, `{ kind: 'hung', idleMs }`, `{ kind: 'memory_exceeded', limit: 'hard', limitBytes, rssBytes }`; `data.stderrTail`; `data.restarts`: before this one); it is restarted and the session resumed" },
  agent_failed: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'a native ACP agent kept failing and was given up (the next session/new starts it again)' },
  start_failed: { code: ErrorCodes.InternalError, failure: 'error_response', when: "the session's agent process could not start" },
  session_failed: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'more restarts than the intensity allows: the session was given up (`data.restarts`); session/load or session/resume starts it again' },
  session_closed: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'the session was closed while the request waited (or while it was being loaded or resumed)' },
  session_deleted: { code: ErrorCodes.ResourceNotFound, failure: 'error_response', when: 'the session was deleted while it was being loaded or resumed' },
  session_moved: { code: ErrorCodes.InternalError, failure: 'error_response', when: "another host of a shared store took the session (this one's lease ran out): its journal refused this host's write, or its lease check found the session another host's, so the agent here was stopped (`data.owner`: the id of the host that owns it now, `data.ownerName`: its machine name, `data.epoch`: the session's epoch; null where the store has none)" },
  lease_lost: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'a shared store: this host went two leases without renewing its lease (frozen, cut off from the database) and could not check the session is still its own, so it stopped the agent; session/resume starts it again' },
  host_lost: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'the journaled end of a turn whose host was lost (killed, frozen, cut off) and whose session another host of a shared store took over (`data.previousOwner`; `data.continuations` as for `shutdown`)' },
  session_owned: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'another warden that still runs has the session live (`data.owner`)' },
  list_failed: { code: ErrorCodes.InternalError, failure: 'error_response', when: 'the agent stopped before it listed its sessions' },
  not_controller: { code: ErrorCodes.InvalidRequest, failure: 'error_response', when: "`warden serve`: the connection observes the session; only its controller may prompt, cancel, set mode or config, close or delete it (`data.controller`; take control with `_acp-warden/take_control`)" },
  not_attached: { code: ErrorCodes.InvalidRequest, failure: 'error_response', when: '`warden serve`: the connection has not attached the session (`session/load` or `session/resume` it first)' },
  no_controller: { code: ErrorCodes.InternalError, failure: 'error_response', when: "`warden serve`: the agent asked a client for something (a file, a terminal) in a session no client controls now" },
  idempotency_key_reused: { code: ErrorCodes.InvalidParams, failure: 'error_response', when: "`session/prompt`: the idempotency key was used for another prompt in the session (another digest of its content blocks); `data.idempotencyKey`, and `data.promptSeq`: the seq of the key's prompt entry when journaled" },
  file_too_large: { code: ErrorCodes.InvalidParams, failure: 'error_response', when: 'an `fs/read_text_file` (file or line range) is over the read limit (`data.maxReadBytes`)' },
} as const satisfies Record<string, { readonly code: number; readonly failure: RpcFailure; readonly when: string }>);

/** One word of the `data.reason` vocabulary ({@link rpcReasons}). */
export type RpcReason = keyof typeof rpcReasons;

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

  /**
   * An error for one reason of the vocabulary: its code (unless `code` says otherwise), the
   * message as given, `data` = `{ reason, ...details }`.
   *
   * @example
   * ```ts
   * RpcError.because('agent_starting', 'claude is (re)starting; try again in a moment').toErrorObject();
   * // { code: -32603, message: 'claude is (re)starting; try again in a moment', data: { reason: 'agent_starting' } }
   * ```
   */
  static because(reason: RpcReason, message: string, details: Readonly<Record<string, unknown>> = {}, overrides: { readonly code?: number; readonly failure?: RpcFailure } = {}): RpcError {
    const entry = rpcReasons[reason];
    return new RpcError(overrides.code ?? entry.code, message, { reason, ...details }, overrides.failure ?? entry.failure);
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
