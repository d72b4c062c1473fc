/**
 * The raw ACP v2 exchanges recorded from the real adapters (claude-agent-acp 0.101.0 and
 * codex-acp 2.6.0 with the SDK 2.4.0 v2 client, no warden: spec/support/record-acp-v2.ts,
 * spec/fixtures/acp-v2-*.ndjson) stay honest: every message parses with the SDK's generated
 * v2 schema of its method (requests and notifications by method, responses by the method of
 * the request they answer), every session update is a kind the v2 schema names, and each
 * recording holds the turn it claims (idle at the end; a permission asked and answered).
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type Zod = { safeParse(value: unknown): { success: boolean; error?: { message: string } } };
const require = createRequire(import.meta.url);
const v2JsonSchema = require.resolve('@agentclientprotocol/sdk/schema/v2/schema.json');
const v2Zod = (await import(pathToFileURL(v2JsonSchema.replace(/schema[\\/]v2[\\/]schema\.json$/u, join('dist', 'v2', 'schema', 'zod.gen.js'))).href)) as Record<string, Zod>;
/** The update kinds the v2 schema names (its SessionUpdate variants). */
const v2UpdateKinds = new Set(
  (JSON.parse(readFileSync(v2JsonSchema, 'utf8')).$defs.SessionUpdate.anyOf as Array<{ properties?: { sessionUpdate?: { const?: string } } }>)
    .map((variant) => variant.properties?.sessionUpdate?.const)
    .filter((kind): kind is string => kind !== undefined),
);

/** The v2 schema names (request or notification params, response result) of each method recorded. */
const schemasOf: Record<string, { params: string; result?: string }> = {
  initialize: { params: 'zInitializeRequest', result: 'zInitializeResponse' },
  'session/new': { params: 'zNewSessionRequest', result: 'zNewSessionResponse' },
  'session/set_config_option': { params: 'zSetSessionConfigOptionRequest', result: 'zSetSessionConfigOptionResponse' },
  'session/prompt': { params: 'zPromptRequest', result: 'zPromptResponse' },
  'session/close': { params: 'zCloseSessionRequest', result: 'zCloseSessionResponse' },
  'session/request_permission': { params: 'zRequestPermissionRequest', result: 'zRequestPermissionResponse' },
  'session/update': { params: 'zUpdateSessionNotification' },
};

interface Recorded {
  dir: 'send' | 'recv';
  t_ms: number;
  msg: { id?: number | string; method?: string; params?: any; result?: unknown; error?: unknown };
}

const fixtures = join(import.meta.dirname, '..', 'fixtures');
const recordings = readdirSync(fixtures).filter((name) => /^acp-v2-.+\.ndjson$/u.test(name)).sort();

function parsed(schema: string, value: unknown, where: string): void {
  const zod = v2Zod[schema];
  expect(zod, `the SDK's v2 schema ${schema}`).to.not.equal(undefined);
  const result = (zod as Zod).safeParse(value);
  expect(result.success, `${where}: ${schema}: ${result.error?.message}`).to.equal(true);
}

describe('recorded ACP v2 exchanges of the real adapters (spec/fixtures/acp-v2-*.ndjson)', () => {
  it('there is a text and a tool-permission recording of each adapter', () => {
    expect(recordings).to.have.members([
      'acp-v2-claude-agent-acp-text.ndjson',
      'acp-v2-claude-agent-acp-tool-permission.ndjson',
      'acp-v2-codex-acp-text.ndjson',
      'acp-v2-codex-acp-tool-permission.ndjson',
    ]);
  });

  for (const name of recordings) {
    it(`${name}: every message parses with the SDK's v2 schema of its method, in a whole v2 turn`, () => {
      const lines = readFileSync(join(fixtures, name), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Recorded);
      /** The method of each request still unanswered, by direction and id. */
      const pending = new Map<string, string>();
      const kinds: string[] = [];
      for (const [index, { dir, msg }] of lines.entries()) {
        const where = `${name}:${index + 1}`;
        expect(msg, where).to.include({ jsonrpc: '2.0' });
        if (msg.method !== undefined) {
          if (msg.method.startsWith('_')) continue; // an extension (claude's and codex's `_auth/status_update`)
          const schemas = schemasOf[msg.method];
          expect(schemas, `${where}: a method this spec knows: ${msg.method}`).to.not.equal(undefined);
          parsed((schemas as { params: string }).params, msg.params, where);
          if (msg.id !== undefined) pending.set(`${dir}:${msg.id}`, msg.method);
          if (msg.method === 'session/update') {
            const kind = msg.params.update.sessionUpdate as string;
            expect(v2UpdateKinds, `${where}: update kind ${kind}`).to.include(kind);
            kinds.push(kind === 'state_update' ? `state_update:${msg.params.update.state}` : kind);
          }
        } else {
          // A response travels the other way from its request.
          const key = `${dir === 'send' ? 'recv' : 'send'}:${msg.id}`;
          const method = pending.get(key);
          expect(method, `${where}: answers a recorded request`).to.not.equal(undefined);
          pending.delete(key);
          expect(msg.error, `${where}: ${method} answered with an error`).to.equal(undefined);
          parsed(schemasOf[method as string]?.result as string, msg.result, where);
        }
      }
      expect([...pending.values()], 'requests left unanswered').to.deep.equal([]);
      expect(lines[0]?.msg).to.deep.include({ method: 'initialize' });
      expect(lines[0]?.msg.params.protocolVersion).to.equal(2);
      const initialized = lines.find((line) => line.dir === 'recv' && line.msg.id === lines[0]?.msg.id);
      expect((initialized?.msg.result as { protocolVersion?: number }).protocolVersion).to.equal(2);
      expect(kinds).to.include('state_update:running');
      expect(kinds.at(-1)).to.equal('state_update:idle');
      if (name.includes('tool-permission')) {
        expect(kinds).to.include.members(['tool_call_update', 'state_update:requires_action']);
        expect(lines.filter((line) => line.msg.method === 'session/request_permission')).to.have.length(1);
      }
    });
  }
});
