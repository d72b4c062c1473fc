/**
 * Rate limits and dead inner CLIs (issue 32), pure: which agent failures are a rate limit or an
 * overload (src/adapters/rate-limit.ts), the wait before each retry, and which ACP errors report
 * an adapter's inner CLI dead (src/adapters/inner-cli-dead.ts). Shapes from /work/shared/fixtures.
 */
import { expect } from 'chai';
import {
  acpErrorRateLimit,
  claudeResultRateLimit,
  codexErrorRateLimit,
  rateLimitDelayMs,
  rateLimitNoticeText,
  retriesRateLimit,
} from '../../src/adapters/rate-limit.js';
import { innerCliDeathOf } from '../../src/adapters/inner-cli-dead.js';

/** A Claude Code stream-json `result` line of an API error, shaped as the recorded one (shared fixtures, claude-stream-json-api-error.ndjson), its status as given. */
function claudeErrorResult(status: number): Record<string, unknown> {
  return { type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', stop_reason: 'stop_sequence', num_turns: 1, api_error_status: status, api_error_type: 'rate_limit_error', result: `API Error: ${status} fake`, session_id: 's' };
}

describe('rate limits and dead inner CLIs: detection and backoff', () => {
  it('Claude Code: an error result with api_error_status 429 is rate limited, 529 overloaded, 400 neither', () => {
    expect(claudeResultRateLimit(claudeErrorResult(429))).to.deep.equal({ kind: 'rate_limited' });
    expect(claudeResultRateLimit(claudeErrorResult(529))).to.deep.equal({ kind: 'overloaded' });
    expect(claudeResultRateLimit(claudeErrorResult(400))).to.equal(undefined);
    expect(claudeResultRateLimit({ ...claudeErrorResult(429), is_error: false })).to.equal(undefined);
  });

  it('Codex: a turn error naming 429 or an overload is a rate limit; the recorded 400 is not', () => {
    expect(codexErrorRateLimit({ message: 'unexpected status 429 Too Many Requests: rate limit reached' })).to.deep.equal({ kind: 'rate_limited' });
    expect(codexErrorRateLimit({ message: '{"error":{"message":"model overloaded","type":"server_error"}}' })).to.deep.equal({ kind: 'overloaded' });
    expect(codexErrorRateLimit({ message: '{"error":{"message":"fake server: forced 400 error","type":"invalid_request_error","param":null,"code":null}}' })).to.equal(undefined);
  });

  it('ACP: data.reason rate_limited keeps retryAfterMs; a 429 in the message counts; other errors do not', () => {
    expect(acpErrorRateLimit({ code: -32603, message: 'Internal error', data: { reason: 'rate_limited', retryAfterMs: 1500 } })).to.deep.equal({ kind: 'rate_limited', retryAfterMs: 1500 });
    expect(acpErrorRateLimit({ code: -32603, message: 'API Error: 429 {"type":"error"}' })).to.deep.equal({ kind: 'rate_limited' });
    expect(acpErrorRateLimit({ code: -32603, message: 'Internal error', data: { details: 'API Error: 529 Overloaded' } })).to.deep.equal({ kind: 'overloaded' });
    expect(acpErrorRateLimit({ code: -32603, message: 'Internal error', data: { details: 'Claude Code process exited with code 1' } })).to.equal(undefined);
  });

  it('the wait: retryAfterMs when given, else 1 s, 2 s, 4 s … capped at 30 s; retried only with retries left and no tool started', () => {
    expect([1, 2, 3, 4].map((retry) => rateLimitDelayMs({ kind: 'rate_limited' }, retry))).to.deep.equal([1000, 2000, 4000, 8000]);
    expect(rateLimitDelayMs({ kind: 'rate_limited' }, 10)).to.equal(30_000);
    expect(rateLimitDelayMs({ kind: 'rate_limited', retryAfterMs: 1500 }, 3)).to.equal(1500);
    expect(retriesRateLimit(0, 3, false)).to.equal(true);
    expect(retriesRateLimit(3, 3, false)).to.equal(false);
    expect(retriesRateLimit(0, 3, true)).to.equal(false);
    expect(retriesRateLimit(0, 0, false)).to.equal(false);
    expect(rateLimitNoticeText({ kind: 'rate_limited' }, 2000, 2, 3)).to.equal('The model provider is rate limited, retrying in 2 s (2 of 3).');
  });

  it('a dead inner CLI (claude-agent-acp #338): "process exited with code 1" and "Query closed before response received" match; a rate limit does not', () => {
    expect(innerCliDeathOf({ code: -32603, message: 'Internal error', data: { details: 'Claude Code process exited with code 1' } })).to.equal('Claude Code process exited with code 1');
    expect(innerCliDeathOf({ code: -32603, message: 'Query closed before response received' })).to.equal('Query closed before response received');
    expect(innerCliDeathOf({ code: -32603, message: 'API Error: 429 rate limited' })).to.equal(undefined);
    expect(innerCliDeathOf({ code: -32602, message: 'Invalid params' })).to.equal(undefined);
  });
});
