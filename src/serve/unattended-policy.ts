/**
 * What happens to the agent's permission request of a session no controller is attached to
 * (`warden serve --unattended`): `wait` keeps it until a controller attaches (it is sent to
 * that one) or the timeout passes; `deny` answers at once. A request that times out is denied.
 * Denied = the first option that rejects (`reject_once`, else `reject_always`), or `cancelled`
 * when the agent offered none.
 */
import type { RequestPermissionRequest, RequestPermissionResponse } from '@agentclientprotocol/sdk';

/** `warden serve --unattended`: the policy, and how long `wait` waits (ms; then denied). */
export interface UnattendedPolicy {
  readonly policy: 'wait' | 'deny';
  readonly timeoutMs: number;
}

/** The default: wait up to 10 minutes for a controller, then deny. */
export const defaultUnattendedPolicy: UnattendedPolicy = { policy: 'wait', timeoutMs: 10 * 60 * 1000 };

/** The answer that denies a permission request (see the module's doc). */
export function denied(params: unknown): RequestPermissionResponse {
  const options = (params as Partial<RequestPermissionRequest> | undefined)?.options ?? [];
  const reject = options.find((option) => option.kind === 'reject_once') ?? options.find((option) => option.kind === 'reject_always');
  return reject ? { outcome: { outcome: 'selected', optionId: reject.optionId } } : { outcome: { outcome: 'cancelled' } };
}
