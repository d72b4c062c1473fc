/**
 * Failure records toward ACP v2 clients (src/acp/v2-errors.ts), read back with the SDK 2.4.0's
 * own v2 schema as a v2 client reads them: a record whose `data` names the session besides its
 * `reason` loses the reason under that schema (taken for -32002's session-not-found shape), so
 * warden leaves the session's id out of it toward v2; ACP's own shapes stay as they are.
 */
import { expect } from 'chai';
import { v2SchemaOf } from '../../src/acp/v2-agent-schemas.js';
import { v2ErrorObject } from '../../src/acp/v2-errors.js';
import { idleState } from '../../src/acp/v2-turn-state.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';

/** The `error` of an idle `state_update` carrying `error`, as the SDK's v2 schema parses it. */
function asV2ClientReadsIt(error: ReturnType<RpcError['toErrorObject']>): { code: number; message: string; data?: Record<string, unknown> } {
  const notification = { sessionId: 's1', update: { sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error } };
  const parsed = v2SchemaOf('UpdateSessionNotification').parse(notification) as { update: { error: { code: number; message: string; data?: Record<string, unknown> } } };
  return parsed.update.error;
}

describe('v2 failure records (v2-errors.ts)', () => {
  const failed = RpcError.because('session_failed', 'claude kept failing and the session was closed', { sessionId: 's1', restarts: 1 }).toErrorObject();

  it('the SDK\'s v2 schema drops the reason of a record whose data also names the session (why the shaping exists)', () => {
    expect(asV2ClientReadsIt(failed).data).to.deep.equal({ sessionId: 's1' });
  });

  it('an idle state_update\'s record keeps its reason and details through the SDK\'s v2 schema; the session is the notification\'s', () => {
    const idle = idleState({ kind: 'error', error: failed }) as unknown as { error: ReturnType<RpcError['toErrorObject']> };
    expect(asV2ClientReadsIt(idle.error)).to.deep.equal({ code: -32603, message: 'claude kept failing and the session was closed', data: { reason: 'session_failed', restarts: 1 } });
  });

  it('keeps ACP\'s own shapes and anything without a session id as they are', () => {
    const notFound = RpcError.resourceNotFound('session s1', { sessionId: 's1' }).toErrorObject();
    expect(v2ErrorObject(notFound)).to.equal(notFound);
    const onlySession = { code: -32603, message: 'x', data: { sessionId: 's1', _meta: { a: 1 } } };
    expect(v2ErrorObject(onlySession)).to.equal(onlySession);
    const crashed = RpcError.because('agent_crashed', 'the agent stopped', { exit: { kind: 'hung', idleMs: 1000 } }).toErrorObject();
    expect(v2ErrorObject(crashed)).to.equal(crashed);
    for (const data of [undefined, null, 'text', [1, 2]]) expect(v2ErrorObject({ code: -32603, message: 'x', data }).data).to.equal(data);
  });
});
