/**
 * The pure parts of the v2 editor edge: `initialize`'s negotiation by the SDK router's rules
 * (src/acp/v2-negotiation.ts) and a v2 editor's requests as the core's (src/acp/v2-requests.ts).
 * The wire behaviour is spec/acp/v2-editor.spec.ts's.
 */
import { expect } from 'chai';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { negotiate } from '../../src/acp/v2-negotiation.js';
import { coreResultToV2, v2RequestToCore } from '../../src/acp/v2-requests.js';
import { turnMessageIds, userMessageId } from '../../src/acp/v2-message-ids.js';

describe('ACP v2 editor edge: negotiation and request mapping', () => {
  it('negotiates as the SDK router: 2+ is v2, 1 is v1, 0 is -32022; a v1-only endpoint and a malformed version keep the legacy path', () => {
    expect(negotiate(2, 1, [1, 2], undefined)).to.deep.equal({ kind: 'v2' });
    expect(negotiate(3, 'a', [1, 2], undefined)).to.deep.equal({ kind: 'v2' });
    expect(negotiate(1, 1, [1, 2], undefined)).to.deep.equal({ kind: 'legacy' });
    const refused = negotiate(0, 1, [2, 1], undefined);
    expect(refused.kind).to.equal('refused');
    const error = (refused as { error: RpcError }).error;
    expect([error.code, error.data]).to.deep.equal([-32022, { requested: 0, supported: [1, 2] }]);
    expect(negotiate(0, 1, [1], undefined)).to.deep.equal({ kind: 'legacy' });
    expect(negotiate(7, 1, [1], undefined)).to.deep.equal({ kind: 'legacy' });
    expect(negotiate('2', 1, [1, 2], undefined)).to.deep.equal({ kind: 'legacy' });
    expect(negotiate(2.5, 1, [1, 2], undefined)).to.deep.equal({ kind: 'legacy' });
  });

  it('v2 ids are strings or integers; a repeated initialize of a v2 connection must ask for 2 or later', () => {
    const fractional = negotiate(2, 1.5, [1, 2], undefined);
    expect((fractional as { error: RpcError }).error.code).to.equal(-32600);
    expect(negotiate(2, 3, [1, 2], 2)).to.deep.equal({ kind: 'v2' });
    const lower = negotiate(1, 3, [1, 2], 2);
    expect((lower as { error: RpcError }).error.message).to.contain('a repeated initialize must request protocol version 2 or later');
  });

  it('maps v2 requests onto the core: auth, resume with and without replay, an unknown cursor refused, config option types', () => {
    expect(v2RequestToCore('auth/login', { methodId: 'm' })).to.deep.equal({ method: 'authenticate', params: { methodId: 'm' } });
    expect(v2RequestToCore('auth/logout', {})).to.deep.equal({ method: 'logout', params: {} });
    expect(v2RequestToCore('session/resume', { sessionId: 's', cwd: '/w' })).to.deep.equal({ method: 'session/resume', params: { sessionId: 's', cwd: '/w', mcpServers: [] } });
    expect(v2RequestToCore('session/resume', { sessionId: 's', cwd: '/w', replayFrom: { type: 'start' } })).to.deep.equal({ method: 'session/load', params: { sessionId: 's', cwd: '/w', mcpServers: [] } });
    const cursor = v2RequestToCore('session/resume', { sessionId: 's', cwd: '/w', replayFrom: { type: '_seq', after: 4 } });
    expect((cursor as RpcError).code).to.equal(-32602);
    expect(v2RequestToCore('session/set_config_option', { sessionId: 's', configId: 'model', type: 'id', value: 'x' })).to.deep.equal({ method: 'session/set_config_option', params: { sessionId: 's', configId: 'model', value: 'x' } });
    expect(v2RequestToCore('session/set_config_option', { sessionId: 's', configId: 'b', type: 'boolean', value: true })).to.deep.equal({ method: 'session/set_config_option', params: { sessionId: 's', configId: 'b', type: 'boolean', value: true } });
    expect(v2RequestToCore('session/prompt', { sessionId: 's', prompt: [] })).to.deep.equal({ method: 'session/prompt', params: { sessionId: 's', prompt: [] } });
  });

  it('answers config options by configId, without modes; message ids follow the prompt entry\'s seq', () => {
    const option = { id: 'model', name: 'Model', type: 'select', currentValue: 'a', options: [] };
    expect(coreResultToV2('session/new', { sessionId: 's', modes: { currentModeId: 'x', availableModes: [] }, configOptions: [option] })).to.deep.equal({ sessionId: 's', configOptions: [{ configId: 'model', name: 'Model', type: 'select', currentValue: 'a', options: [] }] });
    expect(coreResultToV2('session/list', { sessions: [] })).to.deep.equal({ sessions: [] });
    const ids = turnMessageIds(12);
    expect([userMessageId(12), ids.user(), ids.agent(), ids.thought()]).to.deep.equal(['user-12', 'user-12', 'agent-12', 'thought-12']);
  });
});
