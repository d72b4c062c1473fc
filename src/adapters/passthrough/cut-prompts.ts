/**
 * The passthrough's prompts cut by the agent's death (issue 32, `--on-crash`): which failed
 * prompt is continued once its session is re-attached instead of failing, and what answers the
 * cut ones when their session cannot be continued. Pure: the machine (machine.ts) applies them.
 */
import type { AgentHandlerOutput } from '../../protocol/native-agent.js';
import type { ErrorObject } from '../../jsonrpc/rpc-error.js';
import { describePortExit, type PortExitReason } from '../../port/port-exit.js';
import { crashPolicyOf, type CrashPolicy, type CutPrompt } from '../crash-policy.js';
import type { TurnTools } from '../cut-turn.js';
import { CONTINUED_NOTICE_TITLE, continuedNoticeText } from '../continuation-text.js';
import type { PassthroughContext, PromptInFlight } from './context.js';

/** A cut prompt of the passthrough: what continues it, and the error that answers it if it cannot be. */
export type PassthroughCut = CutPrompt & { readonly error: ErrorObject };

/**
 * The crash policy of the passthrough's agent: as given, else `continue` when the agent can take
 * a session back after its restart (it advertises `session/resume` or `loadSession`), else `fail`.
 */
export function crashPolicyNow(context: PassthroughContext): CrashPolicy {
  const capabilities = context.downstream?.agentCapabilities;
  return crashPolicyOf(Boolean(capabilities?.loadSession || capabilities?.sessionCapabilities?.resume), context.crash);
}

/** The exit a crash error names (`data.exit`, the port's typed reason), for the continuation and its notice. */
function exitText(exit: unknown): string {
  if (typeof exit === 'object' && exit !== null && typeof (exit as { kind?: unknown }).kind === 'string') {
    try {
      return describePortExit(exit as PortExitReason);
    } catch {
      // not a port exit
    }
  }
  return 'the agent process ended';
}

/**
 * The prompt `prompt`, failed with `error`, as a cut prompt to continue: when the error is the
 * agent's death (`agent_crashed`), the policy continues, the editor did not cancel it, its
 * session is still open and its continuations are not used up; else `undefined` (answered as is).
 */
export function cutOfCrash(context: PassthroughContext, prompt: PromptInFlight, error: ErrorObject, tools: TurnTools): PassthroughCut | undefined {
  const data = error.data as { reason?: unknown; exit?: unknown } | undefined;
  const { onCrash, maxContinuations } = crashPolicyNow(context);
  const continuations = prompt.continuations + 1;
  if (data?.reason !== 'agent_crashed' || onCrash === 'fail' || prompt.cancelled || !(prompt.sessionId in context.sessions) || continuations > maxContinuations) return undefined;
  return { request: prompt.request, continuations, exit: exitText(data.exit), resend: onCrash === 'retry' || tools.length === 0, error };
}

/** The "Answer restarted" notice of a cut prompt, for session `sessionId`. */
export function cutNotice(context: PassthroughContext, sessionId: string, cut: PassthroughCut): AgentHandlerOutput {
  const description = continuedNoticeText(context.name, cut.exit, cut.continuations, crashPolicyNow(context).maxContinuations, cut.resend);
  return { type: 'acp.update', sessionId, update: { sessionUpdate: 'notice', severity: 'warning', title: CONTINUED_NOTICE_TITLE, description } as never };
}

/** The answers of the cut prompts of `sessionIds` (their sessions are over): the crash's error, as without a continuation. */
export function cutAnswers(context: PassthroughContext, sessionIds: readonly string[]): AgentHandlerOutput[] {
  return sessionIds.flatMap((sessionId) => {
    const cut = context.cut[sessionId];
    return cut ? [{ type: 'acp.error', requestId: cut.request.requestId, error: cut.error } as const] : [];
  });
}
