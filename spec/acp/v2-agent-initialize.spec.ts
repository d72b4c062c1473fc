/**
 * `initialize` toward an agent when warden offers ACP v2 (issue 30, agent-facing): the request
 * warden builds (both shapes at once) is sent to the SDK's own protocol router, the negotiation
 * real v2 agents run (claude-agent-acp 0.101.0 and codex-acp 2.6.0 both serve through it): a
 * router with v1 and v2 picks v2 and its v2 agent reads warden's `info` and `capabilities`; a
 * router with v1 only picks v1 but reads the request as a v2 one downgraded (no client fs, no
 * terminal: pinned here, as it decides which agents are offered v2). A v2 answer is kept in v1's
 * terms, whole by the SDK's v1 schema.
 */
import { agent as v1Agent, ndJsonStream, type InitializeRequest } from '@agentclientprotocol/sdk';
import { agent as v2Agent, agentProtocolRouter, type InitializeRequest as V2InitializeRequest, type InitializeResponse as V2InitializeResponse } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentInitializeFromV2, initializeRequestOfferingV2 } from '../../src/acp/v2-agent-initialize.js';

type Zod = { safeParse(value: unknown): { success: boolean; data?: unknown; error?: { message: string } } };
const require = createRequire(import.meta.url);
const sdkDist = require.resolve('@agentclientprotocol/sdk/schema/v2/schema.json').replace(/schema[\\/]v2[\\/]schema\.json$/u, 'dist');
const v1Zod = (await import(pathToFileURL(join(sdkDist, 'v1', 'schema', 'zod.gen.js')).href)) as Record<string, Zod>;
const v2Zod = (await import(pathToFileURL(join(sdkDist, 'v2', 'schema', 'zod.gen.js')).href)) as Record<string, Zod>;

/** What claude-agent-acp 0.101.0 answers a v2 initialize (dist/v2/initialize.js), as the survey of it read. */
const claudeLikeAnswer: V2InitializeResponse = {
  protocolVersion: 2,
  info: { name: '@agentclientprotocol/claude-agent-acp', title: 'Claude Agent', version: '0.101.0' },
  capabilities: { session: { prompt: { image: {}, embeddedContext: {} }, mcp: { stdio: {}, http: {} }, delete: {}, additionalDirectories: {} } },
  authMethods: [{ methodId: 'claude-login', name: 'Log in with Claude', type: 'agent' }],
} as V2InitializeResponse;

const v1Answer = { protocolVersion: 1, agentCapabilities: { loadSession: true }, authMethods: [], agentInfo: { name: 'v1-only', version: '1' } };

/** The router on in-memory streams; `send` writes one request, resolves with its answer line. */
function routed(router: ReturnType<typeof agentProtocolRouter>): { send(request: unknown): Promise<Record<string, unknown>>; close(): Promise<void> } {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const fromAgent = new TransformStream<Uint8Array, Uint8Array>();
  const connection = router.connect(ndJsonStream(fromAgent.writable, toAgent.readable));
  const writer = toAgent.writable.getWriter();
  const reader = fromAgent.readable.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  return {
    async send(request) {
      await writer.write(new TextEncoder().encode(`${JSON.stringify(request)}\n`));
      for (;;) {
        const newline = buffered.indexOf('\n');
        if (newline >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          return JSON.parse(line) as Record<string, unknown>;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the router closed');
        buffered += decoder.decode(value, { stream: true });
      }
    },
    async close() {
      await writer.close().catch(() => undefined);
      await Promise.race([connection.closed, new Promise((resolve) => setTimeout(resolve, 1000))]);
    },
  };
}

const clientInfo = { name: 'acp-warden', version: '0.1.0' };
const capabilities = { fs: { readTextFile: true, writeTextFile: true }, terminal: true, elicitation: { form: {} }, session: { notices: {} } };

describe('initialize toward an agent, offering ACP v2', () => {
  it("a router with v1 and v2 (claude-agent-acp's, codex-acp's) picks v2: its agent reads warden's info and capabilities, and answers 2", async () => {
    let seen: V2InitializeRequest | undefined;
    const router = agentProtocolRouter()
      .withV1(v1Agent({ name: 'v1' }).onRequest('initialize', () => v1Answer as never))
      .withV2(
        v2Agent({ name: 'v2' }).onRequest('initialize', ({ params }) => {
          seen = params as V2InitializeRequest;
          return claudeLikeAnswer;
        }),
      );
    const peer = routed(router);
    try {
      const request = initializeRequestOfferingV2(clientInfo, capabilities);
      const answer = await peer.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: request });
      expect((answer.result as { protocolVersion?: number } | undefined)?.protocolVersion, JSON.stringify(answer)).to.equal(2);
      expect(seen?.info).to.deep.include(clientInfo);
      // v2 has no client fs, terminal or session capabilities: what it has (elicitation) went, and nothing was added.
      expect(seen?.capabilities).to.deep.equal({ elicitation: { form: {} } });
      expect((v2Zod.zInitializeResponse as Zod).safeParse(answer.result).success).to.equal(true);
    } finally {
      await peer.close();
    }
  });

  it('a router with v1 only picks v1 and answers 1, but reads the request as v2 downgraded: no client fs, no terminal (so v2 is offered only to agents set to speak it)', async () => {
    let seen: InitializeRequest | undefined;
    const router = agentProtocolRouter().withV1(
      v1Agent({ name: 'v1' }).onRequest('initialize', ({ params }) => {
        seen = params as InitializeRequest;
        return v1Answer as never;
      }),
    );
    const peer = routed(router);
    try {
      const answer = await peer.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeRequestOfferingV2(clientInfo, capabilities) });
      expect((answer.result as { protocolVersion?: number } | undefined)?.protocolVersion, JSON.stringify(answer)).to.equal(1);
      expect(seen?.clientInfo).to.deep.include(clientInfo);
      // The SDK's router maps a request for version 2 or later as a v2 one (v2InitializeToV1), whatever v1 members it also has.
      expect(seen?.clientCapabilities).to.deep.include({ fs: { readTextFile: false, writeTextFile: false }, terminal: false });
    } finally {
      await peer.close();
    }
  });

  it("a v2 answer in v1's terms: the v2 session baseline is load, list, resume and close; auth methods by id, with logout; whole by the SDK's v1 schema", () => {
    const kept = agentInitializeFromV2(claudeLikeAnswer);
    expect(kept.protocolVersion).to.equal(2);
    expect(kept.agentInfo).to.deep.equal(claudeLikeAnswer.info);
    expect(kept.agentCapabilities).to.deep.include({
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: false },
      sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {}, additionalDirectories: {} },
      auth: { logout: {} },
    });
    expect(kept.authMethods).to.deep.equal([{ id: 'claude-login', name: 'Log in with Claude' }]);
    const parsed = (v1Zod.zInitializeResponse as Zod).safeParse({ ...kept, protocolVersion: 1 });
    expect(parsed.success, parsed.error?.message).to.equal(true);
    expect(JSON.parse(JSON.stringify(parsed.data))).to.deep.equal(JSON.parse(JSON.stringify({ ...kept, protocolVersion: 1 })));
  });

  it('a v2 agent without session capabilities offers no sessions: no load, no session capabilities, no logout', () => {
    const kept = agentInitializeFromV2({ protocolVersion: 2, info: { name: 'bare', version: '1' } } as V2InitializeResponse);
    expect(kept.agentCapabilities).to.deep.equal({ loadSession: false, promptCapabilities: { image: false, audio: false, embeddedContext: false }, mcpCapabilities: { http: false, sse: false } });
    expect(kept.authMethods).to.deep.equal([]);
  });

  for (const name of ['acp-v2-claude-agent-acp-text.ndjson', 'acp-v2-codex-acp-text.ndjson']) {
    it(`the v2 initialize answer ${name.split('.')[0]} recorded, in v1's terms: sessions loadable, listed, resumed and closed, and whole by the SDK's v1 schema`, () => {
      const answer = readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => (JSON.parse(line) as { msg: { id?: number; result?: V2InitializeResponse } }).msg)
        .find((message) => message.id === 0 && message.result !== undefined)?.result as V2InitializeResponse;
      expect(answer.protocolVersion).to.equal(2);
      const kept = agentInitializeFromV2(answer);
      expect(kept.agentCapabilities).to.deep.include({ loadSession: true });
      expect(kept.agentCapabilities?.sessionCapabilities).to.deep.include({ list: {}, resume: {}, close: {} });
      expect(kept.agentInfo?.name).to.equal(answer.info.name);
      const parsed = (v1Zod.zInitializeResponse as Zod).safeParse({ ...kept, protocolVersion: 1 });
      expect(parsed.success, parsed.error?.message).to.equal(true);
    });
  }
});
