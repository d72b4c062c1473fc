/**
 * Absurdly nested input through a real `warden acp` (issue 28, defect 9): a prompt whose
 * `_meta` is 20,000 levels deep was answered -32603 "the journal failed: Maximum call stack
 * size exceeded". Bad input is -32602 naming the depth limit, refused at the wire before
 * anything is journaled, and the connection goes on.
 */
import { expect } from 'chai';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { maxParamsDepth } from '../../src/jsonrpc/depth-limit.js';
import { openSession, PipeEditor, pipeEditorWorld } from '../support/pipe-editor.js';

/** `{"a":{"a":…1…}}`, `levels` objects deep, written as text (JSON.stringify would recurse). */
const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

describe('warden acp: params nested past the depth limit', function () {
  this.timeout(120_000);
  const world = pipeEditorWorld('warden-deep-', {});

  it('a prompt 20,000 levels deep in _meta is answered -32602 naming the limit (a notification that deep dropped), nothing of it journaled, the next prompt served; the limit is exact', async () => {
    const editor = (world.editor = PipeEditor.launch({ args: ['--agent', 'demo', '--store', world.store, '--env', 'DEMO_WORD_DELAY_MS=0'] }));
    const sessionId = await openSession(editor, world.dir);
    const first = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first' }] });
    expect(first.result?.stopReason, JSON.stringify(first.error)).to.equal('end_turn');

    // Deep inside a content block, whose JSON the journal writes (where the stack overflowed).
    const answer = editor.answer('deep');
    editor.writeLine(`{"jsonrpc":"2.0","id":"deep","method":"session/prompt","params":{"sessionId":${JSON.stringify(sessionId)},"prompt":[{"type":"text","text":"too deep","_meta":${nested(20_000)}}]}}`);
    const refused = await answer;
    expect(refused.error?.code, JSON.stringify(refused).slice(0, 2000)).to.equal(-32602);
    expect(refused.error?.message).to.contain(`nested deeper than ${maxParamsDepth} levels`).and.to.contain('send flatter JSON');
    expect(refused.error?.data).to.deep.equal({ reason: 'too_deep', maxDepth: maxParamsDepth, method: 'session/prompt' });

    // A notification that deep is dropped (nothing to answer), and the connection goes on.
    editor.writeLine(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":${JSON.stringify(sessionId)},"_meta":${nested(20_000)}}}`);
    const next = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'next' }] });
    expect(next.result?.stopReason, JSON.stringify(next.error)).to.equal('end_turn');
    // The limit itself: params exactly maxParamsDepth deep are served, one level more refused.
    const at = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'at the limit' }], _meta: JSON.parse(nested(maxParamsDepth - 1)) as unknown });
    expect(at.result?.stopReason, JSON.stringify(at.error)).to.equal('end_turn');
    const past = await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'too deep by one' }], _meta: JSON.parse(nested(maxParamsDepth)) as unknown });
    expect(past.error?.code, JSON.stringify(past)).to.equal(-32602);
    expect(editor.running).to.equal(true);
    expect((await editor.close()).code).to.equal(0);

    // The journal holds the three served prompts and nothing of the refused ones.
    const journal = sqliteJournal(world.store);
    try {
      const prompts = journal.entries(sessionId).filter((record) => record.entry.kind === 'prompt');
      expect(prompts.map((record) => JSON.stringify(record.entry)).join('\n')).to.not.contain('too deep');
      expect(prompts.map((record) => (record.entry.kind === 'prompt' && record.entry.prompt[0]?.type === 'text' ? record.entry.prompt[0].text : undefined))).to.deep.equal(['first', 'next', 'at the limit']);
    } finally {
      journal.close();
    }
  });
});
