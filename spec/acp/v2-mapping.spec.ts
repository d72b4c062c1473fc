/**
 * ACP v2 as an edge maps it (issue 30, first slice): what warden journals (v1-shaped updates,
 * turn ends, initialize) becomes what a v2 client reads. Each mapped value is checked with the
 * SDK's own generated v2 schema (the official parser a v2 peer runs), over the updates real
 * agents sent (claude-agent-acp 0.101.0 and codex-acp, recorded against fake model servers:
 * spec/fixtures/acp-*.stdout.ndjson) and over every v1 kind; a diff's patch is applied by git.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { clientContextOfV2, initializeResponseToV2 } from '../../src/acp/v2-initialize.js';
import { idleState, requiresActionState, runningState } from '../../src/acp/v2-turn-state.js';
import { gitPatchOf, SESSION_PLAN_ID, updateToV2, type MessageIds } from '../../src/acp/v2-updates.js';
import { V2_AGENT_METHODS, V2_CLIENT_METHODS, V2_PROTOCOL_VERSION } from '../../src/protocol/methods-v2.js';

type Zod = { safeParse(value: unknown): { success: boolean; data?: unknown; error?: { message: string } } };
const require = createRequire(import.meta.url);
const sdkDist = require.resolve('@agentclientprotocol/sdk/schema/v2/schema.json').replace(/schema[\\/]v2[\\/]schema\.json$/u, 'dist');
const v2Zod = (await import(pathToFileURL(join(sdkDist, 'v2', 'schema', 'zod.gen.js')).href)) as Record<string, Zod>;
const v1Zod = (await import(pathToFileURL(join(sdkDist, 'v1', 'schema', 'zod.gen.js')).href)) as Record<string, Zod>;

/** Kinds v1 has and v2 does not: a mapped update never has them (v2's parser would take them as an unknown variant). */
const v1OnlyKinds = new Set(['tool_call', 'plan', 'current_mode_update']);

/**
 * Valid by the SDK's schema, and parsed whole: v2's parser is lenient (an unknown kind is an
 * unknown variant, a malformed member is dropped), so what it keeps must be all there was.
 */
function expectValid(schema: string, value: unknown, zod = v2Zod, whole = true): void {
  const parsed = (zod[schema] as Zod).safeParse(value);
  expect(parsed.success, `${schema}: ${JSON.stringify(value)}\n${parsed.error?.message ?? ''}`).to.equal(true);
  if (whole) expect(JSON.parse(JSON.stringify(parsed.data)), `${schema} kept all of ${JSON.stringify(value)}`).to.deep.equal(JSON.parse(JSON.stringify(value)));
  const kind = (value as { sessionUpdate?: string }).sessionUpdate;
  if (kind !== undefined) expect(v1OnlyKinds.has(kind), `${kind} is not a v2 kind`).to.equal(false);
}

const ids: MessageIds = { user: () => 'user-1', agent: () => 'agent-1', thought: () => 'thought-1' };
const frames = (name: string) =>
  readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { method?: string; params?: { update?: SessionUpdate }; id?: number; result?: unknown });
const recorded = ['acp-claude-agent-acp-tool-write-permission.stdout.ndjson', 'acp-codex-acp-tool-permission.stdout.ndjson'];

describe('ACP v2 mapping at the edge', () => {
  it('the v2 method tables are the SDK\'s: auth/login and logout, resume, tool_call/cancel and terminal/cancel toward the agent; no fs or terminal toward the client', () => {
    expect(V2_PROTOCOL_VERSION).to.equal(2);
    expect(V2_AGENT_METHODS).to.include({ auth_login: 'auth/login', auth_logout: 'auth/logout', session_resume: 'session/resume', tool_call_cancel: 'tool_call/cancel', terminal_cancel: 'terminal/cancel' });
    expect(Object.values(V2_AGENT_METHODS)).to.not.include('session/load');
    expect(Object.values(V2_CLIENT_METHODS).filter((method) => method.startsWith('fs/') || method.startsWith('terminal/'))).to.deep.equal([]);
  });

  for (const name of recorded) {
    it(`every update ${name.split('.')[0]} sent, mapped, is a v2 session/update the SDK's v2 schema takes`, () => {
      const updates = frames(name).flatMap((frame) => (frame.method === 'session/update' && frame.params?.update ? [frame.params.update] : []));
      expect(updates.length).to.be.greaterThan(3);
      for (const update of updates) for (const mapped of updateToV2(update, ids)) expectValid('zSessionUpdate', mapped);
    });
  }

  it('a tool call is one upsert kind (tool_call_update, same id and fields); chunks carry the message id the edge gives, or the agent\'s own', () => {
    const created = updateToV2({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Write a.txt', kind: 'edit', status: 'pending', rawInput: { path: 'a.txt' } }, ids);
    expect(created).to.deep.equal([{ sessionUpdate: 'tool_call_update', toolCallId: 't1', title: 'Write a.txt', kind: 'edit', status: 'pending', rawInput: { path: 'a.txt' } }]);
    expect(updateToV2({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } }, ids)).to.deep.equal([{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' }, messageId: 'agent-1' }]);
    expect(updateToV2({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'hm' } }, ids)[0]).to.include({ messageId: 'thought-1' });
    expect(updateToV2({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'do it' }, messageId: 'from-agent' } as SessionUpdate, ids)[0]).to.include({ messageId: 'from-agent' });
  });

  it('every v1 kind maps to a valid v2 update (plan with the session\'s plan id; a mode change shows nothing; commands, config, info, usage pass), and _meta passes', () => {
    const v1: SessionUpdate[] = [
      { sessionUpdate: 'plan', entries: [{ content: 'step', priority: 'high', status: 'pending' }], _meta: { kept: 1 } },
      { sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'review', description: 'Review', input: null }] },
      { sessionUpdate: 'session_info_update', title: 'A title' },
      { sessionUpdate: 'usage_update', used: 10, size: 100 },
      { sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'completed', content: [{ type: 'content', content: { type: 'text', text: 'done' } }] },
    ];
    for (const update of v1) {
      const mapped = updateToV2(update, ids);
      expect(mapped).to.have.length(1);
      expectValid('zSessionUpdate', mapped[0]);
    }
    expect(updateToV2(v1[0] as SessionUpdate, ids)).to.deep.equal([{ sessionUpdate: 'plan_update', _meta: { kept: 1 }, plan: { type: 'items', planId: SESSION_PLAN_ID, entries: [{ content: 'step', priority: 'high', status: 'pending' }] } }]);
    expect(updateToV2({ sessionUpdate: 'current_mode_update', currentModeId: 'plan' }, ids)).to.deep.equal([]);
    const config = updateToV2({ sessionUpdate: 'config_option_update', configOptions: [{ id: 'mode', name: 'Mode', type: 'select', currentValue: 'ask', options: [{ value: 'ask', name: 'Ask' }] }] }, ids);
    expectValid('zSessionUpdate', config[0]);
    expect(config).to.deep.equal([{ sessionUpdate: 'config_option_update', configOptions: [{ configId: 'mode', name: 'Mode', type: 'select', currentValue: 'ask', options: [{ value: 'ask', name: 'Ask' }] }] }]);
    expect(updateToV2(v1[1] as SessionUpdate, ids)).to.deep.equal([{ sessionUpdate: 'available_commands_update', availableCommands: [{ type: 'command', name: 'review', description: 'Review', input: null }] }]);
    expect(updateToV2({ sessionUpdate: 'available_commands_update', availableCommands: [{ name: 'debug', description: 'Debug', input: { hint: 'what' } }] }, ids)).to.deep.equal([{ sessionUpdate: 'available_commands_update', availableCommands: [{ type: 'command', name: 'debug', description: 'Debug', input: { type: 'text', hint: 'what' } }] }]);
  });

  it('a diff becomes its change (add or modify) and a git patch that git applies to the old text, giving the new one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-v2-patch-'));
    try {
      execFileSync('git', ['init', '-q', dir]);
      const cases = [
        { path: `${dir}/edit.txt`, oldText: 'one\ntwo\nthree\n', newText: 'one\n2\nthree\nfour\n' },
        { path: `${dir}/no-newline.txt`, oldText: 'a\nb', newText: 'a\nc' },
        { path: `${dir}/created.txt`, oldText: undefined, newText: 'fresh\nfile\n' },
        { path: `${dir}/emptied.txt`, oldText: 'gone\n', newText: '' },
      ];
      for (const { path, oldText, newText } of cases) {
        if (oldText !== undefined) writeFileSync(path, oldText);
        const [mapped] = updateToV2({ sessionUpdate: 'tool_call_update', toolCallId: 'd', content: [{ type: 'diff', path, ...(oldText === undefined ? {} : { oldText }), newText }] }, ids) as Array<{ content: Array<{ changes: unknown; patch: { text: string } }> }>;
        expectValid('zSessionUpdate', mapped);
        const diff = mapped?.content[0];
        expect(diff?.changes).to.deep.equal([{ operation: oldText === undefined ? 'add' : 'modify', path }]);
        expect(diff?.patch.text).to.equal(gitPatchOf(path, oldText, newText));
        const patchFile = join(dir, 'change.patch');
        writeFileSync(patchFile, diff?.patch.text ?? '');
        execFileSync('git', ['apply', '--unsafe-paths', `--directory=`, patchFile], { cwd: '/' });
        expect(readFileSync(path, 'utf8'), path).to.equal(newText);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a turn\'s states: running, requires_action, idle with its stop reason; a cut turn ends idle with stop reason error and the error naming its reason', () => {
    for (const update of [runningState(), requiresActionState(), idleState({ kind: 'stop', stopReason: 'end_turn' }), idleState({ kind: 'stop', stopReason: 'cancelled' })]) expectValid('zSessionUpdate', update);
    const crashed = idleState({ kind: 'error', error: { code: -32603, message: 'Internal error: the agent crashed', data: { reason: 'agent_crashed', exit: { kind: 'signal', signal: 'SIGKILL' } } } });
    expectValid('zSessionUpdate', crashed);
    expect(crashed).to.deep.equal({ sessionUpdate: 'state_update', state: 'idle', stopReason: 'error', error: { code: -32603, message: 'Internal error: the agent crashed', data: { reason: 'agent_crashed', exit: { kind: 'signal', signal: 'SIGKILL' } } } });
  });

  it('a v2 client\'s initialize becomes the context a v1 client would give (no fs, no terminal; terminal auth as a flag), its unknown capability keys and _meta kept', () => {
    const context = clientContextOfV2({ protocolVersion: 2, info: { name: 'zed', version: '1.0' }, capabilities: { auth: { terminal: {} }, elicitation: { form: {} }, subagents: {}, _meta: { 'x/y': 1 } } as never, _meta: { trace: 't' } });
    expect(context).to.deep.equal({
      protocolVersion: 2,
      clientInfo: { name: 'zed', version: '1.0' },
      clientCapabilities: { subagents: {}, fs: { readTextFile: false, writeTextFile: false }, terminal: false, session: { configOptions: { boolean: {} } }, plan: {}, auth: { terminal: true }, elicitation: { form: {} }, _meta: { 'x/y': 1 } },
      _meta: { trace: 't' },
    });
    // A v1 check of the core takes it (it drops what v1 does not name: warden keeps that for the agent).
    expectValid('zInitializeRequest', { protocolVersion: 1, clientCapabilities: context.clientCapabilities, clientInfo: context.clientInfo }, v1Zod, false);
    expect(clientContextOfV2({ protocolVersion: 2, info: { name: 'bare', version: '0' } }).clientCapabilities).to.deep.equal({ fs: { readTextFile: false, writeTextFile: false }, terminal: false, session: { configOptions: { boolean: {} } }, plan: {}, auth: { terminal: false } });
  });

  it('an agent\'s v1 initialize answer (claude-agent-acp\'s, recorded) as a v2 answer: info, presence-object capabilities, auth methods, _meta; valid by the SDK\'s v2 schema', () => {
    const answer = frames('acp-claude-agent-acp-tool-write-permission.stdout.ndjson').find((frame) => frame.id === 0)?.result as Parameters<typeof initializeResponseToV2>[0];
    const mapped = initializeResponseToV2(answer, { name: 'acp-warden', version: '0.0.0' });
    expectValid('zInitializeResponse', mapped);
    expect(mapped).to.deep.include({ protocolVersion: 2, info: { name: '@agentclientprotocol/claude-agent-acp', title: 'Claude Agent', version: '0.101.0' }, _meta: { steering: { supported: true } } });
    expect(mapped.capabilities?.session).to.deep.equal({ prompt: { image: {}, embeddedContext: {} }, mcp: { stdio: {}, http: {} }, delete: {}, additionalDirectories: {} });
    expect(mapped.capabilities?._meta).to.deep.equal({ claudeCode: { promptQueueing: true }, authStatus: {} });
    const bare = initializeResponseToV2({ protocolVersion: 1, agentCapabilities: { loadSession: true } }, { name: 'acp-warden', version: '1.2.3' });
    expectValid('zInitializeResponse', bare);
    expect(bare).to.deep.equal({ protocolVersion: 2, info: { name: 'acp-warden', version: '1.2.3' }, capabilities: { session: { prompt: {}, mcp: { stdio: {} } } } });
  });
});
