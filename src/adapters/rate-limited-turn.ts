/**
 * A CLI session's turn (Claude Code, Codex) that a rate limit or an overload ended before any tool
 * call (issue 32, rate-limit.ts): kept as a cut prompt that is sent again as is, once the wait is
 * over (a delayed `cli.rateLimitRetry` on the machine's clock; cli-session.ts sends it), with a
 * "Rate limited" notice. What the session's `finishTurn` assigns, emits and raises.
 */
import type { CutPrompt } from './crash-policy.js';
import type { CliEnqueue, CliSessionContext } from './cli-session.js';
import type { TurnTools } from './cut-turn.js';
import type { AgentRequestEvent } from '../protocol/native-agent.js';
import { RATE_LIMIT_RETRY_EVENT, RATE_LIMIT_RETRY_ID, rateLimitDelayMs, rateLimitNoticeText, retriesRateLimit, type RateLimit } from './rate-limit.js';


/** The notice's title before a rate-limit retry (as the passthrough's). */
export const RATE_LIMITED_TITLE = 'Rate limited';

/** The prompt in flight, as a CLI session keeps it. */
interface PromptNow {
  readonly cancelled: boolean;
  readonly request?: AgentRequestEvent;
  readonly continuations?: number;
  readonly rateLimitRetries?: number;
}

/** The retry of a turn `limit` ended: the cut to keep, the wait, the notice's update; `undefined` when it is answered as before (cancelled, a tool started, no retries left). */
export function rateLimitedTurn(prompt: PromptNow, limit: RateLimit | undefined, tools: TurnTools, maxRetries: number) {
  if (!limit || prompt.cancelled || !prompt.request) return undefined;
  const done = prompt.rateLimitRetries ?? 0;
  if (!retriesRateLimit(done, maxRetries, tools.length > 0)) return undefined;
  const retry = done + 1;
  const delayMs = rateLimitDelayMs(limit, retry);
  const cut: CutPrompt = { request: prompt.request, continuations: prompt.continuations ?? 0, exit: limit.kind, resend: true, rateLimitRetries: retry };
  const notice = { sessionUpdate: 'notice', severity: 'warning', title: RATE_LIMITED_TITLE, description: rateLimitNoticeText(limit, delayMs, retry, maxRetries) };
  return { cut, delayMs, notice };
}

/**
 * At the end of a turn (its prompt `prompt`, taken off the context by the caller) that `limit`
 * ended: keeps it to send again after the wait, tells the editor, and schedules the retry.
 * `true` when it did (the caller answers nothing), `false` when the turn is answered as before.
 */
export function retryRateLimitedTurn(context: CliSessionContext, prompt: PromptNow, limit: RateLimit | undefined, enqueue: CliEnqueue<CliSessionContext>): boolean {
  const limited = rateLimitedTurn(prompt, limit, context.turnTools, context.rateLimitRetries);
  if (!limited) return false;
  enqueue.assign({ cut: limited.cut, rateLimitWaiting: true });
  if (context.sessionId) enqueue.emit({ type: 'acp.update', sessionId: context.sessionId, update: limited.notice as never });
  enqueue.later(RATE_LIMIT_RETRY_EVENT, limited.delayMs, RATE_LIMIT_RETRY_ID);
  return true;
}
