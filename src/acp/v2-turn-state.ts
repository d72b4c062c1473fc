/**
 * A turn's state as an ACP v2 client reads it: `state_update` updates. In v2 a prompt's answer
 * only says the prompt was taken (its `messageId`); the turn's progress and its end are states
 * of the session: `running` while the agent works, `requires_action` while a permission waits
 * on a client, `idle` at the end with the turn's stop reason. A turn warden cut (the agent
 * crashed or hung, the host was lost, the session failed) ends `idle` with stop reason
 * `error` and the same error a v1 client gets as the prompt's answer: its `data.reason` names
 * the failure (docs/reference/errors.md), never a bare internal error.
 */
import type { StopReason } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import type { ErrorObject } from '../jsonrpc/rpc-error.js';
import { v2ErrorObject } from './v2-errors.js';

/** How a turn ended, as the journal holds it (its `stop` or `error` entry). */
export type TurnEnd = { readonly kind: 'stop'; readonly stopReason: StopReason } | { readonly kind: 'error'; readonly error: ErrorObject };

/** The session works on a turn. */
export function runningState(): V2.SessionUpdate {
  return { sessionUpdate: 'state_update', state: 'running' };
}

/** The turn waits for a client's answer (a permission). */
export function requiresActionState(): V2.SessionUpdate {
  return { sessionUpdate: 'state_update', state: 'requires_action' };
}

/** The turn ended: `idle` with its stop reason, or with `error` and the error that cut it. */
export function idleState(end: TurnEnd): V2.SessionUpdate {
  if (end.kind === 'stop') return { sessionUpdate: 'state_update', state: 'idle', stopReason: end.stopReason } as V2.SessionUpdate;
  const { code, message, data } = v2ErrorObject(end.error);
  return { sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error: { code, message, ...(data === undefined ? {} : { data }) } } as V2.SessionUpdate;
}
