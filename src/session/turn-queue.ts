/**
 * A session's turns, decided: the FIFO queue of prompts, the turn with the agent, its cancel
 * and cancel grace, and how each prompt is answered. Pure functions over plain data (the
 * session machine keeps a {@link Turns} in its context and carries out the commands they
 * return: it sends the turn to the agent and answers the editor).
 *
 * One prompt at a time goes to the agent; the others wait, oldest first. `session/cancel`
 * answers every waiting prompt `cancelled` at once and cancels the running one on the agent;
 * the agent then has the cancel grace to answer it (whatever it answers, a cancelled prompt
 * ends `cancelled`), after which the session answers it `cancelled` itself, drops what the
 * agent still says of that turn, and the next prompt starts.
 *
 * One carries out its decisions: the session machine (session-machine.ts, with its prompts in
 * session-prompts.ts), for the host's sessions and for a bare native agent's alike (the agent
 * server runs one per session of such an agent: src/acp/bare-turns.ts).
 */
import type { ErrorObject } from '../jsonrpc/rpc-error.js';

/** The turns of one session. */
export interface Turns {
  /** Prompts waiting for the running one to end (request ids), oldest first. */
  readonly waiting: readonly string[];
  /** The prompt with the agent, not answered yet. */
  readonly running: string | undefined;
  /** The running prompt was cancelled: it ends `cancelled`, whatever the agent answers. */
  readonly cancelled: boolean;
  /** Prompts answered without the agent (the cancel grace ran out, the session closed) whose answer the agent still owes: dropped when it comes. */
  readonly abandoned: readonly string[];
  /** A cancelled turn was answered: what the agent still says of a turn is dropped until the next prompt starts. */
  readonly quiet: boolean;
}

/** What the session machine tells its host to do about its turns. */
export type TurnCommand =
  /** Send this prompt to the agent (it was journaled nowhere yet: the host journals it now). */
  | { readonly type: 'turn.start'; readonly requestId: string }
  /** Cancel the running prompt on the agent (`session/cancel`). */
  | { readonly type: 'turn.cancelAgent'; readonly requestId: string }
  /** Answer this prompt to the editor with `result`. */
  | { readonly type: 'turn.answer'; readonly requestId: string; readonly result: unknown }
  /** Answer this prompt to the editor with `error`. */
  | { readonly type: 'turn.fail'; readonly requestId: string; readonly error: ErrorObject }
  /** The running turn was cancelled while it waited for a permission: the agent gets `cancelled` for it. */
  | { readonly type: 'turn.permissionCancelled'; readonly requestId: string };

/** A decision: the turns after it, what to do, and the cancel grace to arm or disarm. */
export interface TurnDecision {
  readonly turns: Turns;
  readonly commands: readonly TurnCommand[];
  /** Arm the cancel grace of this prompt. */
  readonly arm?: string;
  /** Disarm the cancel grace of this prompt (it was answered). */
  readonly disarm?: string;
}

/** No turn at all. */
export const noTurns: Turns = { waiting: [], running: undefined, cancelled: false, abandoned: [], quiet: false };

/** The stop reason of a cancelled prompt (ACP: it MUST end with it). */
const cancelled = { stopReason: 'cancelled' } as const;

/** Updates that belong to a turn (what the agent says while it works): dropped while the turns are quiet. */
const turnUpdates: ReadonlySet<string> = new Set(['agent_message_chunk', 'agent_thought_chunk', 'user_message_chunk', 'tool_call', 'tool_call_update', 'plan']);

/** Whether an update (its `sessionUpdate` kind) is a cancelled turn's, come after its prompt was answered: it is dropped. */
export const lateTurnUpdate = (turns: Turns, sessionUpdate: string): boolean => turns.quiet && turnUpdates.has(sessionUpdate);

/**
 * Another request came on the session (a load replays its history, a mode change reports it):
 * what the agent says from now on answers it, not the cancelled turn, so the quiet ends.
 */
export const sessionAsked = (turns: Turns): Turns => (turns.quiet ? { ...turns, quiet: false } : turns);

/** Whether the agent owes an answer to prompt `requestId` of these turns (the running one, or an abandoned one). */
export const owesAnswer = (turns: Turns, requestId: string): boolean => turns.running === requestId || turns.abandoned.includes(requestId);

/** Prompts the agent has and has not answered (the running one and the abandoned ones). */
export const inFlight = (turns: Turns): number => (turns.running ? 1 : 0) + turns.abandoned.length;

/** A prompt came: it starts when no other one runs, else it waits its turn. */
export function promptCame(turns: Turns, requestId: string): TurnDecision {
  if (turns.running) return { turns: { ...turns, waiting: [...turns.waiting, requestId] }, commands: [] };
  return { turns: { ...turns, running: requestId, cancelled: false, quiet: false }, commands: [{ type: 'turn.start', requestId }] };
}

/** The oldest waiting prompt starts, when nothing runs. */
function next(decision: TurnDecision): TurnDecision {
  const { turns } = decision;
  const [first, ...rest] = turns.waiting;
  if (turns.running || first === undefined) return decision;
  return {
    ...decision,
    turns: { ...turns, waiting: rest, running: first, cancelled: false, quiet: false },
    commands: [...decision.commands, { type: 'turn.start', requestId: first }],
  };
}

/**
 * A cancel: of one prompt (`requestId`: a `$/cancel_request`), which ends alone when it is
 * still waiting; or of the session (`session/cancel`, a close), which ends every waiting one.
 * The running one is cancelled on the agent (once), its grace armed; `permission`: it waits
 * for a permission, which the agent gets `cancelled`.
 */
export function cancelCame(turns: Turns, requestId: string | undefined, permission: boolean): TurnDecision {
  if (requestId !== undefined && turns.waiting.includes(requestId)) {
    return { turns: { ...turns, waiting: turns.waiting.filter((id) => id !== requestId) }, commands: [{ type: 'turn.answer', requestId, result: cancelled }] };
  }
  if (requestId !== undefined && requestId !== turns.running) return { turns, commands: [] };
  const commands: TurnCommand[] = requestId === undefined ? turns.waiting.map((id) => ({ type: 'turn.answer', requestId: id, result: cancelled }) as const) : [];
  const waiting = requestId === undefined ? [] : turns.waiting;
  if (!turns.running || turns.cancelled) return { turns: { ...turns, waiting }, commands };
  const running = turns.running;
  commands.push({ type: 'turn.cancelAgent', requestId: running });
  if (permission) commands.push({ type: 'turn.permissionCancelled', requestId: running });
  return { turns: { ...turns, waiting, cancelled: true }, commands, arm: running };
}

/**
 * The agent answered a prompt (`error` or `result`). The running one is answered (a cancelled
 * one `cancelled`, whatever the agent said) and the next starts; an abandoned one's answer is dropped.
 */
export function promptAnswered(turns: Turns, requestId: string, result: unknown, error: ErrorObject | undefined): TurnDecision {
  if (turns.abandoned.includes(requestId)) return { turns: { ...turns, abandoned: turns.abandoned.filter((id) => id !== requestId) }, commands: [] };
  if (turns.running !== requestId) return { turns, commands: [] };
  const answer: TurnCommand = turns.cancelled
    ? { type: 'turn.answer', requestId, result: { ...(typeof result === 'object' && result !== null ? result : {}), ...cancelled } }
    : error
      ? { type: 'turn.fail', requestId, error }
      : { type: 'turn.answer', requestId, result };
  return next({ turns: { ...turns, running: undefined, cancelled: false, quiet: turns.cancelled }, commands: [answer], disarm: requestId });
}

/** The cancel grace of a prompt ran out: answered `cancelled` now, its turn's late updates dropped, the next prompt starts. */
export function graceOver(turns: Turns, requestId: string): TurnDecision {
  if (turns.running !== requestId || !turns.cancelled) return { turns, commands: [] };
  return next({
    turns: { ...turns, running: undefined, cancelled: false, quiet: true, abandoned: [...turns.abandoned, requestId] },
    commands: [{ type: 'turn.answer', requestId, result: cancelled }],
  });
}

/** The session closed: every prompt is answered `cancelled` now (the running one is cancelled on the agent too). */
export function sessionClosed(turns: Turns): TurnDecision {
  const commands: TurnCommand[] = turns.waiting.map((requestId) => ({ type: 'turn.answer', requestId, result: cancelled }) as const);
  if (!turns.running) return { turns: { ...turns, waiting: [] }, commands };
  if (!turns.cancelled) commands.push({ type: 'turn.cancelAgent', requestId: turns.running });
  commands.push({ type: 'turn.answer', requestId: turns.running, result: cancelled });
  return { turns: { ...noTurns, abandoned: [...turns.abandoned, turns.running], quiet: true }, commands, disarm: turns.running };
}

/** The session failed (`error`, naming why): every prompt not answered yet gets it. */
export function sessionFailed(turns: Turns, error: ErrorObject): TurnDecision {
  const commands: TurnCommand[] = [];
  // A cancelled prompt still ends `cancelled`.
  if (turns.running) commands.push(turns.cancelled ? { type: 'turn.answer', requestId: turns.running, result: cancelled } : { type: 'turn.fail', requestId: turns.running, error });
  for (const requestId of turns.waiting) commands.push({ type: 'turn.fail', requestId, error });
  return {
    turns: { ...noTurns, abandoned: [...turns.abandoned, ...(turns.running ? [turns.running] : [])] },
    commands,
    ...(turns.running ? { disarm: turns.running } : {}),
  };
}
