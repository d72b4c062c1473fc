/**
 * An error as an ACP v2 client reads it. v2's schema gives `Error.data` as a union whose first
 * members are ACP's own shapes (-32022's `{ requested, supported }`, -32002's `{ sessionId }`),
 * then any value; a client that parses with it (the SDK 2.4.0's v2 client does) takes every
 * `data` holding a `sessionId` for the session-not-found shape and drops the other keys: the
 * `reason` of warden's failure records, `exit`, `restarts`. So toward v2, `data` that says more
 * than the session's id leaves the id out (the notification or the request names the session
 * already) and keeps the rest whole; a -32002 keeps ACP's shape.
 */
import { ErrorCodes } from '../jsonrpc/error-codes.js';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';

/** `error` with its `data` in a shape a v2 client keeps whole (see the module's doc). */
export function v2ErrorObject(error: ErrorObject): ErrorObject {
  const { data } = error;
  if (error.code === ErrorCodes.ResourceNotFound || data === null || typeof data !== 'object' || Array.isArray(data) || !('sessionId' in data)) return error;
  const { sessionId: _named, ...rest } = data as Record<string, unknown>;
  if (Object.keys(rest).every((key) => key === '_meta')) return error;
  return { ...error, data: rest };
}
