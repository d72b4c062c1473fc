/**
 * A turn that ended with a rate-limit or overload error (issue 32): the agent did not die, the
 * model provider refused for now. Such a turn is sent again after a wait instead of failing,
 * when no tool call started in it (a side effect may have happened otherwise), at most
 * `--rate-limit-retries` times, and never counts against restart intensity. Pure: what each
 * agent's failure looks like (the shapes below, from /work/shared/fixtures) and how long to wait.
 *
 * - Claude Code stream-json: a `result` line with `is_error: true` and `api_error_status` 429
 *   (rate limited) or 529 (overloaded);
 * - Codex app-server: a turn that ended `failed` (or an `error` notification) whose
 *   `error.message` names HTTP 429, 529, "rate limit" or "overloaded";
 * - a native ACP agent: a `session/prompt` error whose `data.reason` is `rate_limited` or
 *   `overloaded` (with `data.retryAfterMs` when the agent knows it), or whose message or
 *   `data.details` names HTTP 429 / 529, "rate limit" or "overloaded".
 */

/** A rate-limit or overload the agent reported: which, and the wait it asked for, if any. */
export interface RateLimit {
  readonly kind: 'rate_limited' | 'overloaded';
  /** The wait the agent named (`retryAfterMs`), in ms. */
  readonly retryAfterMs?: number;
}

/** How many times one turn is sent again after rate limits before the error is answered (`--rate-limit-retries`). 0: never. */
export const defaultRateLimitRetries = 3;

/** A CLI session's event that ends a rate limit's wait (raised delayed: rate-limited-turn.ts, cli-session.ts). */
export const RATE_LIMIT_RETRY_EVENT = 'cli.rateLimitRetry';

/** The id of that delayed event, to cancel it. */
export const RATE_LIMIT_RETRY_ID = 'cli.rateLimitRetry';

/** The first wait when the agent names none, in ms: doubled each retry (1 s, 2 s, 4 s, …). */
export const rateLimitBaseDelayMs = 1000;

/** The longest wait warden picks itself, in ms (a `retryAfterMs` the agent names is kept as given). */
export const rateLimitMaxDelayMs = 30_000;

/** The wait before retry number `retry` (1 for the first): `retryAfterMs` when named, else the doubling backoff, capped. */
export function rateLimitDelayMs(limit: RateLimit, retry: number): number {
  if (limit.retryAfterMs !== undefined) return limit.retryAfterMs;
  return Math.min(rateLimitMaxDelayMs, rateLimitBaseDelayMs * 2 ** Math.max(0, retry - 1));
}

/** Whether a turn that hit `limit` is sent again: retries left and no tool call started in it. */
export function retriesRateLimit(retriesDone: number, maxRetries: number, toolStarted: boolean): boolean {
  return !toolStarted && retriesDone < maxRetries;
}

/** The notice the editor sees before a retry: "rate limited, retrying in 2 s (1 of 3)". */
export function rateLimitNoticeText(limit: RateLimit, delayMs: number, retry: number, maxRetries: number): string {
  const what = limit.kind === 'overloaded' ? 'overloaded' : 'rate limited';
  const wait = delayMs < 1000 ? `${delayMs} ms` : `${delayMs % 1000 === 0 ? delayMs / 1000 : (delayMs / 1000).toFixed(1)} s`;
  return `The model provider is ${what}, retrying in ${wait} (${retry} of ${maxRetries}).`;
}

/** The kind an HTTP status or a text names: 429 / "rate limit" rate limited, 529 / "overloaded" overloaded. */
function kindInText(text: string): RateLimit['kind'] | undefined {
  if (/\b529\b|overloaded/iu.test(text)) return 'overloaded';
  if (/\b429\b|rate[ _-]?limit|too many requests/iu.test(text)) return 'rate_limited';
  return undefined;
}

function kindOfStatus(status: unknown): RateLimit['kind'] | undefined {
  return status === 429 ? 'rate_limited' : status === 529 ? 'overloaded' : undefined;
}

const record = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {});

/** A Claude Code stream-json `result` line's rate limit: `is_error` with `api_error_status` 429 or 529. */
export function claudeResultRateLimit(line: unknown): RateLimit | undefined {
  const result = record(line);
  if (result.type !== 'result' || result.is_error !== true) return undefined;
  const kind = kindOfStatus(result.api_error_status);
  return kind ? { kind } : undefined;
}

/** A Codex app-server turn error's rate limit (`turn.error` of a failed turn, or an `error` notification's `error`): its message names 429/529, a rate limit or an overload. */
export function codexErrorRateLimit(error: unknown): RateLimit | undefined {
  const fields = record(error);
  const kind = kindOfStatus(fields.httpStatusCode) ?? (typeof fields.message === 'string' ? kindInText(fields.message) : undefined);
  return kind ? { kind } : undefined;
}

/** A native ACP agent's `session/prompt` error's rate limit: `data.reason` `rate_limited`/`overloaded` (with `data.retryAfterMs`), or 429/529, a rate limit or an overload named in its message or `data.details`. */
export function acpErrorRateLimit(error: unknown): RateLimit | undefined {
  const fields = record(error);
  const data = record(fields.data);
  const retryAfterMs = typeof data.retryAfterMs === 'number' && Number.isFinite(data.retryAfterMs) && data.retryAfterMs >= 0 ? data.retryAfterMs : undefined;
  const named = data.reason === 'rate_limited' || data.reason === 'overloaded' ? data.reason : undefined;
  const text = [fields.message, data.details, data.message].filter((part): part is string => typeof part === 'string').join(' ');
  const kind = named ?? kindOfStatus(data.status) ?? kindInText(text);
  if (!kind) return undefined;
  return { kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}
