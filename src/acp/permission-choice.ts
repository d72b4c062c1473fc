/**
 * The answer a program that allows tool calls (the demo, `warden chaos`, test editors) gives
 * to `session/request_permission`: the option of kind `allow_once`, chosen by kind, never by
 * position. Claude's and Codex's lists start with `allow_always`, which would allow every later
 * call of the tool for the whole session; a list with no `allow_once` is answered `cancelled`.
 */
import type { PermissionOption, RequestPermissionOutcome } from '@agentclientprotocol/sdk';

/**
 * The outcome that allows this one tool call: `selected` with the `allow_once` option, or
 * `cancelled` when the agent offered none (no standing permission is given by accident).
 *
 * @param options - the request's options, in the agent's order
 */
export function allowOnce(options: ReadonlyArray<{ readonly optionId: string; readonly kind: PermissionOption['kind'] | string }>): RequestPermissionOutcome {
  const once = options.find((option) => option.kind === 'allow_once');
  return once ? { outcome: 'selected', optionId: once.optionId } : { outcome: 'cancelled' };
}
