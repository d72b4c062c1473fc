/**
 * What a turn is doing, from its session updates: which tool calls are running. The port's
 * hang watchdog is told (`port.busy` with `toolRunning`) so that a long tool run is held to
 * the longer limit, and silence while the agent owes output to the shorter one.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';

/** The status of a tool call that has not ended. */
export type RunningToolStatus = 'pending' | 'in_progress';

/** The tool calls of one turn that have not ended, by `toolCallId`. */
export type TurnActivity = Readonly<Record<string, RunningToolStatus>>;

/** A turn with no tool call running. */
export const quietTurn: TurnActivity = Object.freeze({});

const isRunning = (status: unknown): status is RunningToolStatus => status === 'pending' || status === 'in_progress';

/**
 * The activity after `update`: a `tool_call` starts a tool call (ACP's default status is
 * `pending`), a `tool_call_update` moves it (no status: it keeps the one it had), and
 * `completed` or `failed` ends it. Any other update leaves the activity as it is.
 */
export function activityAfter(activity: TurnActivity, update: SessionUpdate): TurnActivity {
  if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return activity;
  const { toolCallId } = update;
  const status = update.status ?? (update.sessionUpdate === 'tool_call' ? 'pending' : activity[toolCallId]);
  if (isRunning(status)) return activity[toolCallId] === status ? activity : { ...activity, [toolCallId]: status };
  if (!(toolCallId in activity)) return activity;
  const { [toolCallId]: _ended, ...rest } = activity;
  return rest;
}

/**
 * Whether a tool runs: some tool call of the turns is `pending` or `in_progress`, and no
 * permission request waits for the user (then the agent waits, it does not work).
 */
export function isToolRunning(activities: Iterable<TurnActivity>, permissionPending: boolean): boolean {
  if (permissionPending) return false;
  for (const activity of activities) if (Object.keys(activity).length > 0) return true;
  return false;
}
