/**
 * A v2 agent's updates as the journal keeps them (issue 30, agent-facing v2): what
 * src/acp/v2-inbound.ts makes of each is a v1 update the SDK's v1 schema takes whole (but for
 * kinds v1 has not, kept as they came), and mapping out to v2 and back in gives the update
 * again, over every update real agents sent (claude-agent-acp 0.101.0 and codex-acp, recorded
 * against fake model servers) and over every v1 kind.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inboundState, turnEndFromV2, updateFromV2, V2_DIFF_META_KEY, V2_STATUS_META_KEY } from '../../src/acp/v2-inbound.js';
import { idleState, requiresActionState, runningState } from '../../src/acp/v2-turn-state.js';
import { updateToV2, type MessageIds } from '../../src/acp/v2-updates.js';

type Zod = { safeParse(value: unknown): { success: boolean; data?: unknown; error?: { message: string } } };
const require = createRequire(import.meta.url);
const sdkDist = require.resolve('@agentclientprotocol/sdk/schema/v2/schema.json').replace(/schema[\\/]v2[\\/]schema\.json$/u, 'dist');
const v1Zod = (await import(pathToFileURL(join(sdkDist, 'v1', 'schema', 'zod.gen.js')).href)) as Record<string, Zod>;

/** A v1 session/update the SDK's v1 schema takes, and keeps whole. */
function expectV1(update: SessionUpdate): void {
  const parsed = (v1Zod.zSessionNotification as Zod).safeParse({ sessionId: 's', update });
  expect(parsed.success, `${JSON.stringify(update)}\n${parsed.error?.message ?? ''}`).to.equal(true);
  expect(JSON.parse(JSON.stringify((parsed.data as { update: unknown }).update)), `kept all of ${JSON.stringify(update)}`).to.deep.equal(JSON.parse(JSON.stringify(update)));
}

const ids: MessageIds = { user: () => 'user-1', agent: () => 'agent-1', thought: () => 'thought-1' };
const recorded = ['acp-claude-agent-acp-tool-write-permission.stdout.ndjson', 'acp-codex-acp-tool-permission.stdout.ndjson'];
const updatesOf = (name: string): SessionUpdate[] =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { method?: string; params?: { update?: SessionUpdate } })
    .flatMap((frame) => (frame.method === 'session/update' && frame.params?.update ? [frame.params.update] : []));

/** What a v1 update is after going out to v2 and back: a chunk gains its message id, a diff becomes its patch as text; a mode change is not shown to v2. */
function roundTripOf(update: SessionUpdate, state = inboundState()): SessionUpdate[] {
  return updateToV2(update, ids).flatMap((v2) => updateFromV2(v2, state));
}

describe('ACP v2 agent updates, as the journal keeps them', () => {
  for (const name of recorded) {
    it(`every update ${name.split('.')[0]} sent comes back from v2 as it was (chunks with their message id), each a whole v1 update`, () => {
      const updates = updatesOf(name);
      expect(updates.length).to.be.greaterThan(3);
      const state = inboundState();
      for (const update of updates) {
        const back = roundTripOf(update, state);
        if (update.sessionUpdate === 'current_mode_update') {
          expect(back).to.deep.equal([]);
          continue;
        }
        expect(back, JSON.stringify(update)).to.have.length(1);
        back.forEach(expectV1);
        const chunk = update.sessionUpdate.endsWith('_chunk') && !('messageId' in update);
        const hasDiff = 'content' in update && Array.isArray(update.content) && update.content.some((item) => (item as { type?: string }).type === 'diff');
        if (hasDiff) continue; // below
        expect(back[0], JSON.stringify(update)).to.deep.equal(chunk ? { ...update, messageId: (back[0] as { messageId?: string }).messageId } : update);
      }
    });
  }

  it('a tool call is created by its first upsert (its title, else its name, else its id), then updated; a diff is its patch as text, the diff kept in _meta', () => {
    const state = inboundState();
    const created = updateFromV2({ sessionUpdate: 'tool_call_update', toolCallId: 't1', name: 'Write', kind: 'edit', status: 'pending' } as V2.SessionUpdate, state);
    expect(created).to.deep.equal([{ sessionUpdate: 'tool_call', toolCallId: 't1', name: 'Write', title: 'Write', kind: 'edit', status: 'pending' }]);
    expectV1(created[0] as SessionUpdate);
    const diff = { type: 'diff', changes: [{ operation: 'modify', path: '/w/a.txt' }], patch: { format: 'git_patch', text: 'diff --git a/w/a.txt b/w/a.txt\n--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1 +1 @@\n-old\n+new\n' } };
    const updated = updateFromV2({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', content: [diff] } as unknown as V2.SessionUpdate, state);
    expect(updated).to.have.length(1);
    expectV1(updated[0] as SessionUpdate);
    const content = (updated[0] as { content: Array<{ type: string; content: { text: string }; _meta: Record<string, unknown> }> }).content;
    expect(updated[0]).to.include({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed' });
    expect(content[0]?.content.text).to.equal(`\`\`\`diff\n${diff.patch.text}\`\`\``);
    expect(content[0]?._meta[V2_DIFF_META_KEY]).to.deep.equal({ changes: diff.changes, patch: diff.patch });
  });

  it('content chunks of a tool call append: each update carries the content so far (v1 replaces it whole)', () => {
    const state = inboundState();
    const text = (value: string) => ({ type: 'content', content: { type: 'text', text: value } });
    const first = updateFromV2({ sessionUpdate: 'tool_call_content_chunk', toolCallId: 't2', content: text('a') } as V2.SessionUpdate, state);
    const second = updateFromV2({ sessionUpdate: 'tool_call_content_chunk', toolCallId: 't2', content: text('b') } as V2.SessionUpdate, state);
    expect(first).to.deep.equal([{ sessionUpdate: 'tool_call', toolCallId: 't2', title: 't2', content: [text('a')] }]);
    expect(second).to.deep.equal([{ sessionUpdate: 'tool_call_update', toolCallId: 't2', content: [text('a'), text('b')] }]);
    [...first, ...second].forEach(expectV1);
  });

  it('a status v1 has no word for is the nearest one, the v2 status kept in _meta; a terminal is text naming it', () => {
    const state = inboundState();
    updateFromV2({ sessionUpdate: 'tool_call_update', toolCallId: 't3', title: 'Bash' } as V2.SessionUpdate, state);
    const cancelled = updateFromV2({ sessionUpdate: 'tool_call_update', toolCallId: 't3', status: 'cancelled', content: [{ type: 'terminal', terminalId: 'term-1' }] } as V2.SessionUpdate, state);
    expect(cancelled[0]).to.deep.include({ sessionUpdate: 'tool_call_update', status: 'failed', _meta: { [V2_STATUS_META_KEY]: 'cancelled' } });
    expect((cancelled[0] as { content: unknown[] }).content).to.deep.equal([{ type: 'content', content: { type: 'text', text: '(terminal term-1, run by the agent)' } }]);
    expectV1(cancelled[0] as SessionUpdate);
  });

  it('a whole message is one chunk per block with its id; a state update is not conversation; kinds v1 has not are kept as they came', () => {
    const state = inboundState();
    const message = updateFromV2({ sessionUpdate: 'agent_message', messageId: 'm1', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] } as V2.SessionUpdate, state);
    expect(message).to.deep.equal([
      { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: 'one' } },
      { sessionUpdate: 'agent_message_chunk', messageId: 'm1', content: { type: 'text', text: 'two' } },
    ]);
    message.forEach(expectV1);
    expect(updateFromV2({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'end_turn' } as V2.SessionUpdate, state)).to.deep.equal([]);
    const output = { sessionUpdate: 'terminal_output_chunk', terminalId: 'term-1', data: 'ls\n' } as V2.SessionUpdate;
    expect(updateFromV2(output, state)).to.deep.equal([output]);
  });

  it('a plan, commands and config options come back in v1 terms (every v1 kind out and in)', () => {
    const plan: SessionUpdate = { sessionUpdate: 'plan', entries: [{ content: 'step', priority: 'high', status: 'pending' }] };
    const commands: SessionUpdate = { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'web', description: 'Search', input: { hint: 'query' } }, { name: 'init', description: 'Init' }] };
    const config: SessionUpdate = { sessionUpdate: 'config_option_update', configOptions: [{ id: 'model', name: 'Model', type: 'select', currentValue: 'a', options: [{ value: 'a', name: 'A' }] }] } as SessionUpdate;
    for (const update of [plan, commands, config]) {
      const back = roundTripOf(update);
      expect(back).to.deep.equal([update]);
      back.forEach(expectV1);
    }
  });

  it("a v2 turn's end from its state: idle ends it with its stop reason or its error; running and requires_action do not; the edge's own states read back the same", () => {
    expect(turnEndFromV2(runningState())).to.equal(undefined);
    expect(turnEndFromV2(requiresActionState())).to.equal(undefined);
    expect(turnEndFromV2({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'cancelled' } as V2.SessionUpdate)).to.deep.equal({ kind: 'stop', stopReason: 'cancelled' });
    expect(turnEndFromV2({ sessionUpdate: 'state_update', state: 'idle' } as V2.SessionUpdate), 'an idle snapshot without a reason').to.deep.equal({ kind: 'stop', stopReason: 'end_turn' });
    const error = { code: -32000, message: 'Authentication required', data: { reason: 'auth' } };
    expect(turnEndFromV2({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error } as V2.SessionUpdate)).to.deep.equal({ kind: 'error', error });
    expect(turnEndFromV2({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error' } as V2.SessionUpdate)).to.deep.include({ kind: 'error' });
    for (const end of [{ kind: 'stop', stopReason: 'max_tokens' } as const, { kind: 'error', error: { code: -32603, message: 'Internal error: the agent crashed', data: { reason: 'agent_crashed' } } } as const]) {
      expect(turnEndFromV2(idleState(end))).to.deep.equal(end);
    }
    expect(turnEndFromV2({ sessionUpdate: 'agent_message_chunk', messageId: 'm', content: { type: 'text', text: 'x' } } as V2.SessionUpdate)).to.equal(undefined);
  });

  const v2Recordings = ['acp-v2-claude-agent-acp-text.ndjson', 'acp-v2-claude-agent-acp-tool-permission.ndjson', 'acp-v2-codex-acp-text.ndjson', 'acp-v2-codex-acp-tool-permission.ndjson'];
  for (const name of v2Recordings) {
    it(`every update of ${name.split('.')[0]} (a real adapter over v2) is kept as whole v1 updates, or as it came when v1 has no such kind; its turn ends by its idle state`, () => {
      const messages = readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => (JSON.parse(line) as { msg: { method?: string; params?: { update?: V2.SessionUpdate } } }).msg);
      const updates = messages.flatMap((message) => (message.method === 'session/update' && message.params?.update ? [message.params.update] : []));
      expect(updates.length).to.be.greaterThan(2);
      const state = inboundState();
      const v1Kinds = new Set(['user_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'plan', 'available_commands_update', 'current_mode_update', 'config_option_update', 'session_info_update', 'usage_update']);
      let ends = 0;
      for (const update of updates) {
        if (turnEndFromV2(update)) ends += 1;
        for (const kept of updateFromV2(update, state)) {
          if (v1Kinds.has(kept.sessionUpdate)) expectV1(kept);
          else expect(kept, 'kept as it came').to.deep.equal(update);
        }
      }
      expect(ends, 'the turn ended once').to.be.at.least(1);
    });
  }
});
