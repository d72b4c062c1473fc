/**
 * What a turn is doing, and what the port's hang watchdog is told of it (`port.busy`), in one
 * place for every adapter: the CLI-session skeleton (cli-session.ts: Claude Code, Codex) and
 * the ACP passthrough (passthrough/). A long tool run is held to the watchdog's longer limit,
 * silence while the agent owes output to the shorter one, and a wait for the editor (or the
 * user) to none; the port is told only when one of those facts changes.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';

/** The status of a tool call that has not ended. */
export type RunningToolStatus = 'pending' | 'in_progress';

/** The tool calls of one turn that have not ended, by id (`toolCallId`, or the CLI's own id). */
export type TurnActivity = Readonly<Record<string, RunningToolStatus>>;

/** A turn with no tool call running. */
export const quietTurn: TurnActivity = Object.freeze({});

/** The tool calls one CLI line starts and ends (ids), as a CLI mapping reads them (claude/mapping.ts, codex/mapping.ts). */
export interface ToolRuns {
  readonly started: readonly string[];
  readonly ended: readonly string[];
}

/** A line that starts and ends no tool call. */
export const noToolRuns: ToolRuns = Object.freeze({ started: Object.freeze([]), ended: Object.freeze([]) });

const isRunning = (status: unknown): status is RunningToolStatus => status === 'pending' || status === 'in_progress';

function withStatus(activity: TurnActivity, id: string, status: RunningToolStatus): TurnActivity {
  return activity[id] === status ? activity : { ...activity, [id]: status };
}

function withoutTool(activity: TurnActivity, id: string): TurnActivity {
  if (!(id in activity)) return activity;
  const { [id]: _ended, ...rest } = activity;
  return rest;
}

/**
 * The activity after `update`: a `tool_call` starts a tool call (ACP's default status is
 * `pending`), a `tool_call_update` moves it (no status: it keeps the one it had), and
 * `completed` or `failed` ends it. Any other update leaves the activity as it is.
 */
export function activityAfter(activity: TurnActivity, update: SessionUpdate): TurnActivity {
  if (update.sessionUpdate !== 'tool_call' && update.sessionUpdate !== 'tool_call_update') return activity;
  const { toolCallId } = update;
  const status = update.status ?? (update.sessionUpdate === 'tool_call' ? 'pending' : activity[toolCallId]);
  return isRunning(status) ? withStatus(activity, toolCallId, status) : withoutTool(activity, toolCallId);
}

/**
 * The activity after a CLI line's tool runs: those it ends no longer run, those it starts
 * (and does not end in the same line) run. A line with none leaves the activity as it is.
 */
export function activityAfterRuns(activity: TurnActivity, runs: ToolRuns): TurnActivity {
  let after = activity;
  for (const id of runs.ended) after = withoutTool(after, id);
  for (const id of runs.started) if (!runs.ended.includes(id)) after = withStatus(after, id, after[id] ?? 'in_progress');
  return after;
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

/** What the port's hang watchdog is told (`port.busy`; while `toolRunning`, it allows `toolIdleMs` of silence). */
export interface WatchdogHint {
  readonly busy: boolean;
  readonly toolRunning: boolean;
  /** A turn is open (the agent owes output or waits for the editor or the user): a CLI over its soft memory limit is recycled only once none is. */
  readonly turnOpen: boolean;
}

/** What a port knows before it is told anything (a new port starts so). */
export const quietHint: WatchdogHint = Object.freeze({ busy: false, toolRunning: false, turnOpen: false });

/** The facts of a turn the watchdog hint is made of. */
export interface TurnFacts {
  /** The agent owes output: a request to it is outstanding (a handshake, a prompt). */
  readonly owes: boolean;
  /** The agent waits for an answer of the editor (any request it made): it owes nothing meanwhile. */
  readonly awaitsEditor: boolean;
  /** The agent waits for the user (a permission request): none of its tools counts as running. */
  readonly awaitsUser: boolean;
  /** The tool calls of its turns. */
  readonly activities: Iterable<TurnActivity>;
}

/** The watchdog hint of a turn: busy while the agent owes output and waits for nobody; `toolRunning` while a tool runs and the user is not asked; `turnOpen` while any of it holds. */
export function watchdogHint(facts: TurnFacts): WatchdogHint {
  return { busy: facts.owes && !facts.awaitsEditor && !facts.awaitsUser, toolRunning: isToolRunning(facts.activities, facts.awaitsUser), turnOpen: facts.owes || facts.awaitsEditor || facts.awaitsUser };
}

/** Whether the port, told `told` last, should be told `now`: only a change is news. */
export function isNews(told: WatchdogHint, now: WatchdogHint): boolean {
  return told.busy !== now.busy || told.toolRunning !== now.toolRunning || told.turnOpen !== now.turnOpen;
}
