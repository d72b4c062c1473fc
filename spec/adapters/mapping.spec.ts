import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { emptyTurn, skippedLineOf, stopReasonOf, toolResult, updatesOf, userContent } from '../../src/adapters/claude/mapping.js';
import { commandTitle, decisionFor, errorMessageOf } from '../../src/adapters/codex/mapping.js';
import { StderrRing } from '../../src/port/stderr-ring.js';

describe('Codex mapping details found with the real CLI', () => {
  const offered = ['accept', { acceptWithExecpolicyAmendment: { execpolicy_amendment: ['touch', '/p'] } }, 'cancel'];

  it('chooses the approval decision among the ones Codex offered', () => {
    expect(decisionFor({ outcome: 'selected', optionId: 'allow' }, offered)).to.equal('accept');
    expect(decisionFor({ outcome: 'selected', optionId: 'allow_always' }, offered)).to.deep.equal(offered[1]);
    // Refusing one call is decline even when not offered: cancel would abort the whole turn.
    expect(decisionFor({ outcome: 'selected', optionId: 'reject' }, offered)).to.equal('decline');
    expect(decisionFor({ outcome: 'cancelled' }, offered)).to.equal('cancel');
    expect(decisionFor({ outcome: 'selected', optionId: 'reject' }, ['accept', 'decline', 'cancel'])).to.equal('decline');
    expect(decisionFor({ outcome: 'selected', optionId: 'allow_always' }, ['accept', 'acceptForSession'])).to.equal('acceptForSession');
  });

  it('shows commands and errors as people read them', () => {
    expect(commandTitle("/bin/bash -lc 'touch /p/new.txt'")).to.equal('`touch /p/new.txt`');
    expect(errorMessageOf('{"error":{"message":"fake OpenAI server: ERROR400 requested","type":"invalid_request_error"}}')).to.equal('fake OpenAI server: ERROR400 requested');
    expect(errorMessageOf('plain text')).to.equal('plain text');
  });

  it('keeps terminal colour codes out of crash reports', () => {
    const ring = new StderrRing();
    ring.push(Buffer.from('\u001b[2m2026-11-30\u001b[0m \u001b[31mERROR\u001b[0m failed\n'));
    expect(ring.tail()).to.equal('2026-11-30 ERROR failed');
  });
});


describe('Claude mapping details', () => {
  it('TodoWrite becomes a plan with the complete list', () => {
    const { updates } = updatesOf({
      type: 'assistant',
      message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'TodoWrite', input: { todos: [{ content: 'write tests', status: 'in_progress' }, { content: 'ship', status: 'pending', priority: 'high' }] } }] },
    }, emptyTurn);
    expect(updates.find((update) => update.sessionUpdate === 'plan')).to.deep.equal({
      sessionUpdate: 'plan',
      entries: [
        { content: 'write tests', status: 'in_progress', priority: 'medium' },
        { content: 'ship', status: 'pending', priority: 'high' },
      ],
    });
  });

  it('prompt blocks: images as base64 or URL, links as Markdown, embedded resources as context', () => {
    expect(userContent([
      { type: 'text', text: 'look' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'image', data: '', mimeType: 'image/png', uri: 'https://example.com/a.png' },
      { type: 'resource_link', name: 'spec', uri: 'file:///w/spec.md' },
      { type: 'resource', resource: { uri: 'file:///w/a.ts', text: 'let a = 1;' } },
    ] as never)).to.deep.equal([
      { type: 'text', text: 'look' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
      { type: 'text', text: '[spec](file:///w/spec.md)' },
      { type: 'text', text: '[file:///w/a.ts](file:///w/a.ts)' },
      { type: 'text', text: '<context ref="file:///w/a.ts">\nlet a = 1;\n</context>' },
    ]);
  });

  it('thinking deltas become thought chunks, and the full thinking block is not repeated', () => {
    const streamed = updatesOf({ type: 'stream_event', api_message_id: 'm2', event: { type: 'content_block_delta', delta: { type: 'thinking_delta', thinking: 'hmm' } } }, emptyTurn);
    expect(streamed.updates).to.deep.equal([{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hmm' } }]);
    const full = updatesOf({ type: 'assistant', message: { id: 'm2', content: [{ type: 'thinking', thinking: 'hmm' }] } }, streamed.memory);
    expect(full.updates).to.deep.equal([]);
  });
});

describe('Claude lines too long to read, and tool results with images', () => {
  /** The `result` line recorded from Claude Code 2.1.332 (its `type` comes after the `result` text). */
  const recordedResult = (): Record<string, unknown> => {
    const lines = readFileSync(new URL('../fixtures/claude-stream-json-tool-bash-readonly.transcript.ndjson', import.meta.url), 'utf8').trim().split('\n');
    return (JSON.parse(lines.at(-1) as string) as { msg: Record<string, unknown> }).msg;
  };
  const headOf = (message: Record<string, unknown>) => Buffer.from(JSON.stringify(message)).subarray(0, 4096).toString('utf8');

  it('knows a skipped result line by its head, and reads its stop reason there', () => {
    const result = recordedResult();
    const skipped = skippedLineOf(headOf({ ...result, result: 'x'.repeat(100_000) }));
    expect(skipped.kind).to.equal('result');
    if (skipped.kind !== 'result') return;
    expect(stopReasonOf(skipped.result, false)).to.deep.equal({ stopReason: 'end_turn' });
    const refused = skippedLineOf(headOf({ ...result, stop_reason: 'refusal', result: 'x'.repeat(100_000) }));
    expect(refused.kind === 'result' && stopReasonOf(refused.result, false)).to.deep.equal({ stopReason: 'refusal' });
  });

  it('knows a skipped tool result by its tool_use_id; other lines are only lost', () => {
    expect(skippedLineOf('{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_9","type":"tool_result","content":[{"type":"image","source":{"data":"iVBOR'))
      .to.deep.equal({ kind: 'toolResult', toolUseId: 'toolu_9' });
    expect(skippedLineOf('{"type":"assistant","message":{"content":[{"type":"text","text":"long')).to.deep.equal({ kind: 'other' });
  });

  it('maps a Read tool result with an image to ACP image content, without the base64 again in rawOutput', () => {
    const data = 'iVBORw0KGgo'.repeat(100);
    const update = toolResult(
      { tool_use_id: 'toolu_1', type: 'tool_result', content: [{ type: 'image', source: { type: 'base64', data, media_type: 'image/png' } }] },
      { type: 'image', file: { base64: data, type: 'image/png', originalSize: 825 } },
    ) as { content?: unknown; rawOutput?: unknown };
    expect(update.content).to.deep.equal([{ type: 'content', content: { type: 'image', data, mimeType: 'image/png' } }]);
    expect(update.rawOutput).to.deep.equal({ type: 'image', file: { type: 'image/png', originalSize: 825 } });
  });
});
