/**
 * The chaos suite's editor answers permission requests the way a careful user does: allow
 * this call once, chosen by kind. Claude's and Codex's adapters list `allow_always` first;
 * picking by position would give the whole session a standing permission.
 */
import { expect } from 'chai';
import { permissionOptions } from '../../src/adapters/session-outcomes.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { ChaosEditor } from './chaos-editor.js';

/** Sends one permission request from the agent side and resolves with the editor's answer. */
async function answerTo(options: ReadonlyArray<{ optionId: string; name: string; kind: string }>): Promise<unknown> {
  const [editorSide, agentSide] = createMemoryTransportPair();
  const answer = new Promise<unknown>((resolve) => {
    agentSide.start({ message: (value) => resolve(value), malformed: () => undefined, closed: () => undefined });
  });
  const editor = new ChaosEditor(editorSide);
  agentSide.send({ jsonrpc: '2.0', id: 7, method: 'session/request_permission', params: { sessionId: 's1', toolCall: { toolCallId: 't1', title: 'Write notes.txt' }, options } });
  const reply = await answer;
  expect(editor.permissionsAsked).to.equal(1);
  agentSide.close();
  return reply;
}

describe('chaos editor: permission answers', () => {
  it('Claude\'s and Codex\'s options (allow_always first): answers allow_once', async () => {
    const reply = await answerTo(permissionOptions('Always allow'));
    expect(reply).to.deep.equal({ jsonrpc: '2.0', id: 7, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
  });

  it('options without allow_once (allow_always, reject_once): cancelled, never the standing allow', async () => {
    const reply = await answerTo([{ optionId: 'always', name: 'Always', kind: 'allow_always' }, { optionId: 'no', name: 'No', kind: 'reject_once' }]);
    expect(reply).to.deep.equal({ jsonrpc: '2.0', id: 7, result: { outcome: { outcome: 'cancelled' } } });
  });
});
