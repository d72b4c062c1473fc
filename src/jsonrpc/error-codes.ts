/**
 * JSON-RPC 2.0 error codes, and the ones ACP adds. Literal-typed constants, declared once.
 */
export const ErrorCodes = Object.freeze({
  /** Invalid JSON was received. */
  ParseError: -32700,
  /** The JSON sent is not a valid request object (batches included: ACP has none). */
  InvalidRequest: -32600,
  /** The method does not exist or is not available. */
  MethodNotFound: -32601,
  /** Invalid method parameters. */
  InvalidParams: -32602,
  /** Internal error; also a peer that died with requests outstanding. */
  InternalError: -32603,
  /** The request was cancelled (`$/cancel_request`, or locally: a timeout). */
  RequestCancelled: -32800,
  /** ACP: authentication required. */
  AuthRequired: -32000,
  /** ACP: resource (session) not found. */
  ResourceNotFound: -32002,
} as const);

/** One of the codes above, or any other integer a peer sends. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes] | number;
