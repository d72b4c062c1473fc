/**
 * What a continuation tells an agent whose process died mid-turn (issue 32): the tool calls of
 * the turn as warden saw them (src/adapters/cut-turn.ts) and the words sent
 * (src/adapters/continuation-text.ts), pure, from the outputs an adapter emits.
 */
import { expect } from 'chai';
import type { SessionAdapterOutput } from '../../src/adapters/adapter.js';
import { noTurnTools, toolsAfterAnswer, toolsAfterOutput, type TurnTools } from '../../src/adapters/cut-turn.js';
import { continuationRequest, continuationText, promptTextOf } from '../../src/adapters/continuation-text.js';
import { crashPolicyOf } from '../../src/adapters/crash-policy.js';
import type { AgentRequestEvent } from '../../src/protocol/native-agent.js';

const update = (fields: Record<string, unknown>): SessionAdapterOutput => ({ type: 'acp.update', sessionId: 's', update: fields as never });
const asked = (key: string, toolCallId: string, title: string): SessionAdapterOutput => ({ type: 'acp.clientRequest', key, method: 'session/request_permission', params: { sessionId: 's', toolCall: { toolCallId, title } } });
const after = (outputs: SessionAdapterOutput[], tools: TurnTools = noTurnTools) => outputs.reduce(toolsAfterOutput, tools);

describe('a cut turn: its tool calls as warden saw them, and the continuation', () => {
  it('a tool call announced and not ended: started (it may have partly run); its title from the later update', () => {
    const tools = after([update({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Bash', status: 'pending' }), update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', title: '`make test`', status: 'in_progress' })]);
    expect(tools).to.deep.equal([{ id: 't1', title: '`make test`', state: 'started' }]);
  });

  it('completed and failed calls keep the start of their result, on one line, without code fences', () => {
    const tools = after([
      update({ sessionUpdate: 'tool_call', toolCallId: 't1', title: '`echo hi`', status: 'pending' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: '```\nhi\nthere\n```' } }] }),
      update({ sessionUpdate: 'tool_call', toolCallId: 't2', title: 'Read a.txt', status: 'pending' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 't2', status: 'failed', rawOutput: 'ENOENT' }),
    ]);
    expect(tools).to.deep.equal([
      { id: 't1', title: '`echo hi`', state: 'completed', result: 'hi there' },
      { id: 't2', title: 'Read a.txt', state: 'failed', result: 'ENOENT' },
    ]);
    const long = after([update({ sessionUpdate: 'tool_call_update', toolCallId: 't3', status: 'completed', rawOutput: 'x'.repeat(1000) })]);
    expect(long[0]?.result).to.equal(`${'x'.repeat(400)}…`);
  });

  it('a permission asked stays asked (it never ran) until answered: allowed it is started, rejected or cancelled it is refused', () => {
    const pending = after([update({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Write new.txt', status: 'pending' }), asked('k1', 't1', 'Write'), update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'pending' })]);
    expect(pending).to.deep.equal([{ id: 't1', title: 'Write new.txt', state: 'asked', askedAs: 'k1' }]);
    expect(toolsAfterAnswer(pending, 'k1', { outcome: { outcome: 'selected', optionId: 'allow' } }, false)).to.deep.equal([{ id: 't1', title: 'Write new.txt', state: 'started' }]);
    expect(toolsAfterAnswer(pending, 'k1', { outcome: { outcome: 'selected', optionId: 'reject' } }, false)[0]?.state).to.equal('refused');
    expect(toolsAfterAnswer(pending, 'k1', { outcome: { outcome: 'cancelled' } }, false)[0]?.state).to.equal('refused');
    expect(toolsAfterAnswer(pending, 'k1', undefined, true)[0]?.state).to.equal('refused');
    expect(toolsAfterAnswer(pending, 'other', { outcome: { outcome: 'selected', optionId: 'allow' } }, false)).to.equal(pending);
  });

  it('outputs that are not about tool calls change nothing (the same record)', () => {
    const tools = after([update({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'x', status: 'pending' })]);
    expect(toolsAfterOutput(tools, update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } }))).to.equal(tools);
    expect(toolsAfterOutput(tools, { type: 'port.write', message: {} })).to.equal(tools);
  });

  it('the continuation: from the host, not the user; one line per cut call saying what is known; then the request', () => {
    const tools: TurnTools = [
      { id: 'a', title: 'Write new.txt', state: 'asked', askedAs: 'k' },
      { id: 'b', title: 'Edit b.ts', state: 'refused' },
      { id: 'c', title: '`make test`', state: 'started' },
      { id: 'd', title: '`echo hi`', state: 'completed', result: 'hi' },
      { id: 'e', title: 'Read a.txt', state: 'failed', result: 'ENOENT' },
    ];
    expect(continuationText('Claude Code', 'killed', tools, [{ type: 'text', text: 'fix the build' }]).split('\n')).to.deep.equal([
      '[acp-warden] The Claude Code process crashed (killed) during your previous turn and was restarted by the host (acp-warden) with this conversation resumed. This message is from the host, not the user: nobody interrupted you on purpose.',
      'Tool calls cut by the crash, as the host saw them:',
      '- Write new.txt: its permission request was never answered, so it did not run.',
      '- Edit b.ts: the permission was refused, so it did not run.',
      '- `make test`: it was approved or running when the process died, so it may have partly run; its outcome is unknown.',
      '- `echo hi`: it completed before the crash; its result began: hi.',
      '- Read a.txt: it failed before the crash: ENOENT.',
      "Your history may mark these calls as interrupted or aborted without saying whether they ran. Check the current state (files, processes) before repeating any action, then continue the task from where your history shows and finish your answer to the user's request:",
      'fix the build',
    ]);
  });

  it("the prompt quoted: its text, other blocks named, cut to 600 characters", () => {
    expect(promptTextOf([{ type: 'text', text: 'look at' }, { type: 'resource_link', uri: 'file:///a.ts', name: 'a.ts' }, { type: 'image', data: '', mimeType: 'image/png' }])).to.equal('look at\n[file:///a.ts]\n[image]');
    expect(promptTextOf([{ type: 'text', text: 'y'.repeat(700) }])).to.equal(`${'y'.repeat(600)}…`);
  });

  it('what continues a cut prompt: the same request when sent again; else the same request id with the continuation as its only block', () => {
    const request = { type: 'session.prompt', requestId: 'r1', method: 'session/prompt', params: { sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] } } as unknown as AgentRequestEvent;
    expect(continuationRequest('Codex', { request, continuations: 1, exit: 'killed', resend: true }, noTurnTools)).to.equal(request);
    const continued = continuationRequest('Codex', { request, continuations: 1, exit: 'killed', resend: false }, [{ id: 'c', title: 'ls', state: 'started' }]);
    expect(continued.requestId).to.equal('r1');
    const blocks = continued.params.prompt as Array<{ type: string; text: string }>;
    expect(blocks).to.have.length(1);
    expect(blocks[0]?.text).to.match(/^\[acp-warden\] The Codex process crashed \(killed\)/u);
  });

  it('the policy: continue for an agent that resumes, fail for one that does not, at most 2 continuations; what is given wins', () => {
    expect(crashPolicyOf(true)).to.deep.equal({ onCrash: 'continue', maxContinuations: 2 });
    expect(crashPolicyOf(false)).to.deep.equal({ onCrash: 'fail', maxContinuations: 2 });
    expect(crashPolicyOf(true, { onCrash: 'retry', maxContinuations: 0 })).to.deep.equal({ onCrash: 'retry', maxContinuations: 0 });
  });
});
