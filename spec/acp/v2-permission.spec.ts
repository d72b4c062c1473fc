/**
 * A permission request as a v2 editor reads it (src/acp/v2-permission.ts): a v2 agent's own
 * question (its title, description and subject kind, carried through warden's v1-shaped core by
 * src/acp/v2-agent-permission.ts) comes back as the agent asked it; a v1 agent's request is
 * titled by its tool call, the tool call its subject. Each result is parsed by the SDK 2.4.0's
 * generated v2 schema, whole.
 */
import type { RequestPermissionRequest } from '@agentclientprotocol/sdk';
import type * as V2 from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { permissionRequestFromV2, V2_PERMISSION_META_KEY } from '../../src/acp/v2-agent-permission.js';
import { permissionRequestToV2 } from '../../src/acp/v2-permission.js';

type Zod = { safeParse(value: unknown): { success: boolean; data?: unknown; error?: { message: string } } };
const require = createRequire(import.meta.url);
const sdkDist = require.resolve('@agentclientprotocol/sdk/schema/v2/schema.json').replace(/schema[\\/]v2[\\/]schema\.json$/u, 'dist');
const v2Zod = (await import(pathToFileURL(join(sdkDist, 'v2', 'schema', 'zod.gen.js')).href)) as Record<string, Zod>;

/** `request` valid by the SDK's v2 schema and kept whole by its parser. */
function expectValidV2(request: V2.RequestPermissionRequest): void {
  const parsed = (v2Zod.zRequestPermissionRequest as Zod).safeParse(request);
  expect(parsed.success, `${JSON.stringify(request)}\n${parsed.error?.message ?? ''}`).to.equal(true);
  expect(JSON.parse(JSON.stringify(parsed.data))).to.deep.equal(JSON.parse(JSON.stringify(request)));
}

const options = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
] as V2.RequestPermissionRequest['options'];

/** A v2 agent's request as a v2 editor gets it behind warden: v2 → the core's v1 shape → v2. */
const throughWarden = (request: V2.RequestPermissionRequest) => permissionRequestToV2(permissionRequestFromV2(request, 'permission-7'));

describe('ACP v2 permission requests toward a v2 editor', () => {
  it("a v2 agent's title and description reach the editor, not its tool call's title; the tool call stays the subject", () => {
    const asked = {
      sessionId: 's1',
      title: 'Run command?',
      description: 'the test asks for it',
      subject: { type: 'tool_call', toolCall: { toolCallId: 'tool-1', title: 'touch new.txt', kind: 'execute', status: 'pending' } },
      options,
    } as V2.RequestPermissionRequest;
    const shown = throughWarden(asked);
    expectValidV2(shown);
    expect(shown).to.deep.equal(asked);
  });

  it("a v2 agent's command subject comes back as a command (its cwd and tool call id kept)", () => {
    const asked = { sessionId: 's1', title: 'Run `rm -rf build`?', subject: { type: 'command', command: 'rm -rf build', cwd: '/work/p', toolCallId: 'tool-2' }, options } as V2.RequestPermissionRequest;
    const shown = throughWarden(asked);
    expectValidV2(shown);
    expect(shown).to.deep.equal(asked);
  });

  it("a v2 agent's command subject without a tool call id, with a terminal and _meta, comes back exactly (no stand-in id, the terminal kept)", () => {
    const asked = {
      sessionId: 's1',
      title: 'Run `make`?',
      subject: { type: 'command', command: 'make', cwd: '/work/p', terminalId: 'term-3', _meta: { 'vendor/shell': 'bash' } },
      options,
    } as V2.RequestPermissionRequest;
    const core = permissionRequestFromV2(asked, 'permission-7');
    // The core (and a v1 editor) still sees a tool call: warden's stand-in id, the command as its raw input.
    expect(core.toolCall).to.deep.include({ toolCallId: 'permission-7', kind: 'execute', rawInput: { command: 'make', cwd: '/work/p' } });
    const shown = permissionRequestToV2(core);
    expectValidV2(shown);
    expect(shown).to.deep.equal(asked);
  });

  it('a v2 agent that names no subject gets none shown (not warden\'s stand-in tool call); its other _meta is kept', () => {
    const asked = { sessionId: 's1', title: 'Use the network?', options, _meta: { 'vendor/reason': 'fetch deps' } } as V2.RequestPermissionRequest;
    const shown = throughWarden(asked);
    expectValidV2(shown);
    expect(shown).to.deep.equal(asked);
  });

  it("a v1 agent's request: titled by its tool call (or 'Permission requested' without one), the tool call the subject, its content in v2 shapes, _meta as it was", () => {
    const v1: RequestPermissionRequest = {
      sessionId: 's1',
      toolCall: { toolCallId: 'call-9', title: 'Edit a.txt', kind: 'edit', content: [{ type: 'diff', path: '/work/p/a.txt', oldText: 'a', newText: 'b' }] },
      options: options as RequestPermissionRequest['options'],
      _meta: { 'vendor/x': 1 },
    };
    const shown = permissionRequestToV2(v1);
    expectValidV2(shown);
    expect(shown.title).to.equal('Edit a.txt');
    expect(shown).to.not.have.property('description');
    expect(shown.subject?.type).to.equal('tool_call');
    expect((shown.subject as { toolCall: { toolCallId: string } }).toolCall.toolCallId).to.equal('call-9');
    expect(shown._meta).to.deep.equal({ 'vendor/x': 1 });
    const untitled = permissionRequestToV2({ ...v1, toolCall: { toolCallId: 'call-10' }, _meta: undefined });
    expectValidV2(untitled);
    expect(untitled.title).to.equal('Permission requested');
    expect(untitled).to.not.have.property('_meta');
  });

  it(`a malformed ${V2_PERMISSION_META_KEY} (not an object) is ignored: the request is read as a v1 agent's`, () => {
    const shown = permissionRequestToV2({ sessionId: 's1', toolCall: { toolCallId: 'call-1', title: 'Read b.txt' }, options: options as RequestPermissionRequest['options'], _meta: { [V2_PERMISSION_META_KEY]: 'Run?' } });
    expectValidV2(shown);
    expect(shown.title).to.equal('Read b.txt');
    expect(shown.subject?.type).to.equal('tool_call');
  });
});
