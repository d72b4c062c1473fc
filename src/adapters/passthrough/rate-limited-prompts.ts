/**
 * The passthrough's prompts a rate limit ended (issue 32, rate-limit.ts): which failed prompt is
 * sent again after a wait instead of failing, and the notice the editor sees meanwhile. The
 * waiting prompt is kept as a cut prompt (`context.cut`, sent as is), so a cancel during the wait
 * ends it `cancelled` and an agent restart during the wait sends it once its session is back.
 * Pure: the machine (machine.ts) applies it and schedules the retry on its clock.
 */
import type { AgentHandlerOutput } from '../../protocol/native-agent.js';
import type { ErrorObject } from '../../jsonrpc/rpc-error.js';
import { acpErrorRateLimit, defaultRateLimitRetries, rateLimitDelayMs, rateLimitNoticeText, retriesRateLimit } from '../rate-limit.js';
import type { TurnTools } from '../cut-turn.js';
import type { PassthroughContext, PromptInFlight } from './context.js';
import type { PassthroughCut } from './cut-prompts.js';

/** The notice's title before a rate-limit retry. */
export const RATE_LIMITED_NOTICE_TITLE = 'Rate limited';

/** A prompt to send again after `delayMs`, and the notice that says so. */
export interface RateLimitedRetry {
  readonly cut: PassthroughCut;
  readonly delayMs: number;
  readonly notice: AgentHandlerOutput;
}

/**
 * The prompt `prompt`, failed with `error`, as a retry after a rate limit: when the error is a
 * rate limit or an overload, no tool call started in the turn, the editor did not cancel it, its
 * session is open and retries are left (`--rate-limit-retries`); else `undefined`.
 */
export function rateLimitedRetryOf(context: PassthroughContext, prompt: PromptInFlight, error: ErrorObject, tools: TurnTools): RateLimitedRetry | undefined {
  const limit = acpErrorRateLimit(error);
  if (!limit || prompt.cancelled || !(prompt.sessionId in context.sessions)) return undefined;
  const done = prompt.rateLimitRetries ?? 0;
  const max = context.crash.rateLimitRetries ?? defaultRateLimitRetries;
  if (!retriesRateLimit(done, max, tools.length > 0)) return undefined;
  const retry = done + 1;
  const delayMs = rateLimitDelayMs(limit, retry);
  const cut: PassthroughCut = { request: prompt.request, continuations: prompt.continuations, exit: limit.kind, resend: true, error, rateLimitRetries: retry };
  const notice: AgentHandlerOutput = {
    type: 'acp.update',
    sessionId: prompt.sessionId,
    update: { sessionUpdate: 'notice', severity: 'warning', title: RATE_LIMITED_NOTICE_TITLE, description: rateLimitNoticeText(limit, delayMs, retry, max) } as never,
  };
  return { cut, delayMs, notice };
}

/** The id of session `sessionId`'s delayed retry, to cancel it. */
export const rateLimitRetryId = (sessionId: string): string => `rateLimitRetry:${sessionId}`;
