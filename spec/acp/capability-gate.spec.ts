/**
 * One capability gate for both ACP roles (issue 15, "Tidy as you go"): what a peer must have
 * advertised for an agent method, a session setup, prompt content and an agent -> client
 * request is decided in src/acp/capability-gate.ts; the agent client refuses on it (the agent
 * server is to, after its owner's merge). The client's side is driven over a memory transport
 * by a raw agent that asks for what was not advertised.
 */
import { expect } from 'chai';
import { createActor } from 'xstate';
import { agentClientLogic, closeSession, forkSession, initialize, newSession, resumeSession } from '../../src/acp/agent-client.js';
import { advertisesFork, clientAllows, missingAgentCapability, sessionSetupRefusal, unadvertisedContent } from '../../src/acp/capability-gate.js';
import { AGENT_METHODS, CLIENT_METHODS, PROTOCOL_VERSION, UNSTABLE_AGENT_METHODS } from '../../src/protocol/methods.js';
import { createMemoryTransportPair, type MemoryTransport } from '../../src/jsonrpc/memory-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';

describe('the capability gate', () => {
  describe('agent methods', () => {
    const cases: Array<[string, Record<string, unknown>, string | undefined]> = [
      [AGENT_METHODS.session_new, {}, undefined],
      [AGENT_METHODS.session_prompt, {}, undefined],
      [AGENT_METHODS.session_load, {}, 'loadSession'],
      [AGENT_METHODS.session_load, { loadSession: true }, undefined],
      [AGENT_METHODS.session_resume, { sessionCapabilities: {} }, 'sessionCapabilities.resume'],
      [AGENT_METHODS.session_resume, { sessionCapabilities: { resume: {} } }, undefined],
      [AGENT_METHODS.session_list, {}, 'sessionCapabilities.list'],
      [AGENT_METHODS.session_close, {}, 'sessionCapabilities.close'],
      [AGENT_METHODS.session_delete, { sessionCapabilities: { delete: {} } }, undefined],
      [AGENT_METHODS.logout, { auth: {} }, 'auth.logout'],
      [UNSTABLE_AGENT_METHODS.session_fork, { sessionCapabilities: { fork: null } }, 'sessionCapabilities.fork'],
      [UNSTABLE_AGENT_METHODS.session_fork, { sessionCapabilities: { fork: {} } }, undefined],
      ['_vendor/ext', {}, undefined],
    ];
    for (const [method, caps, missing] of cases) {
      it(`${method} with ${JSON.stringify(caps)}: ${missing ? `needs ${missing}` : 'may be called'}`, () => {
        expect(missingAgentCapability(caps, method)?.path).to.equal(missing);
      });
    }
    it('fork is marked unstable; the fork capability counts when it is any value but null', () => {
      expect(missingAgentCapability({}, UNSTABLE_AGENT_METHODS.session_fork)).to.deep.equal({ path: 'sessionCapabilities.fork', unstable: true });
      expect([advertisesFork({ sessionCapabilities: { fork: {} } as never }), advertisesFork({ sessionCapabilities: { fork: null } as never }), advertisesFork(undefined)]).to.deep.equal([true, false, false]);
    });
  });

  it('session setup: a relative cwd first, then additionalDirectories, then MCP transports the agent lacks', () => {
    expect(sessionSetupRefusal({}, { cwd: 'relative' })).to.deep.equal({ kind: 'cwd_not_absolute', cwd: 'relative' });
    expect(sessionSetupRefusal({}, { cwd: undefined })).to.deep.equal({ kind: 'cwd_not_absolute', cwd: undefined });
    expect(sessionSetupRefusal({}, { cwd: '/w', additionalDirectories: ['/x'], mcpServers: [{ type: 'http' }] })).to.deep.equal({ kind: 'additional_directories' });
    expect(sessionSetupRefusal({}, { cwd: '/w', additionalDirectories: [], mcpServers: [{ type: 'sse' }] })).to.deep.equal({ kind: 'mcp_transport', transport: 'sse' });
    expect(sessionSetupRefusal({ mcpCapabilities: { http: true }, sessionCapabilities: { additionalDirectories: {} } }, { cwd: '/w', additionalDirectories: ['/x'], mcpServers: [{ type: 'http' }, { name: 'stdio' }] })).to.equal(undefined);
  });

  it('prompt content: images, audio and embedded resources need their capability; text and links never do', () => {
    expect(unadvertisedContent({}, [{ type: 'text' }, { type: 'resource_link' }])).to.equal(undefined);
    expect(unadvertisedContent({ promptCapabilities: { image: true } }, [{ type: 'image' }, { type: 'audio' }])).to.equal('audio');
    expect(unadvertisedContent({}, [{ type: 'resource' }])).to.equal('resource');
  });

  it('agent -> client requests: each needs its client capability; permission and extensions need none', () => {
    const none = {};
    const all = { fs: { readTextFile: true, writeTextFile: true }, terminal: true, elicitation: { form: {}, url: {} } };
    for (const method of Object.values(CLIENT_METHODS).filter((method) => method !== CLIENT_METHODS.session_update && method !== CLIENT_METHODS.elicitation_complete)) {
      expect(clientAllows(all, method, {}), method).to.equal(true);
      expect(clientAllows(none, method, {}), method).to.equal(method === CLIENT_METHODS.session_request_permission);
    }
    expect(clientAllows({ elicitation: { form: {} } }, CLIENT_METHODS.elicitation_create, { mode: 'url' })).to.equal(false);
    expect(clientAllows({}, '_vendor/ask', {})).to.equal(true);
    expect(clientAllows(all, 'fs/delete_everything', {})).to.equal(false);
  });
});

describe('the agent client on the capability gate', () => {
  /** A client with `handler`, and the raw agent on the other end. */
  function clientWithRawAgent(handler: Record<string, unknown> = {}) {
    const [ours, theirs] = createMemoryTransportPair();
    const received: Array<Record<string, unknown>> = [];
    (theirs as MemoryTransport).start({ message: (value) => received.push(value as Record<string, unknown>), malformed: () => {}, closed: () => {} });
    const client = createActor(agentClientLogic, { input: { transport: ours, handler } }).start();
    const agent = theirs as MemoryTransport;
    /** Answers the client's `initialize` with these capabilities. */
    const initialized = async (agentCapabilities: Record<string, unknown>) => {
      const pending = initialize(client);
      await until(() => received.some((message) => message.method === AGENT_METHODS.initialize));
      const request = received.find((message) => message.method === AGENT_METHODS.initialize)!;
      agent.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { protocolVersion: PROTOCOL_VERSION, agentCapabilities, authMethods: [] } }));
      return pending;
    };
    return { client, agent, received, initialized };
  }

  async function until(check: () => boolean): Promise<void> {
    for (let round = 0; round < 1000 && !check(); round++) await new Promise((resolve) => setImmediate(resolve));
    expect(check(), 'waited 1000 rounds').to.equal(true);
  }

  async function rejection(promise: Promise<unknown>): Promise<RpcError> {
    const outcome = await promise.then(() => undefined, (error: unknown) => error);
    expect(outcome).to.be.instanceOf(RpcError);
    return outcome as RpcError;
  }

  it('refuses locally what the agent did not advertise, naming the capability; sends nothing', async () => {
    const { client, received, initialized } = clientWithRawAgent();
    try {
      await initialized({ sessionCapabilities: {} });
      const resumed = await rejection(resumeSession(client, { sessionId: 's', cwd: '/w' }));
      expect([resumed.code, resumed.message, resumed.failure]).to.deep.equal([-32601, 'The agent did not advertise sessionCapabilities.resume: session/resume is not available', 'local']);
      const forked = await rejection(forkSession(client, { sessionId: 's', cwd: '/w' }));
      expect(forked.message).to.equal('The agent did not advertise sessionCapabilities.fork (unstable): session/fork is not available');
      expect((await rejection(closeSession(client, 's'))).code).to.equal(-32601);
      const relative = await rejection(newSession(client, { cwd: 'w' }));
      expect([relative.code, relative.message]).to.deep.equal([-32602, 'session/new: cwd must be an absolute path']);
      const http = await rejection(newSession(client, { cwd: '/w', mcpServers: [{ type: 'http', name: 'x', url: 'http://127.0.0.1:1', headers: [] }] }));
      expect(http.message).to.equal('session/new: the agent does not accept http MCP servers (mcpCapabilities)');
      expect(received.map((message) => message.method)).to.deep.equal([AGENT_METHODS.initialize]);
    } finally {
      client.stop();
    }
  });

  it("answers -32601 to an agent's terminal/output when it did not advertise terminals (on main it was served)", async () => {
    const { client, agent, received } = clientWithRawAgent({ terminals: false });
    try {
      agent.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 'out-1', method: CLIENT_METHODS.terminal_output, params: { sessionId: 's', terminalId: 't' } }));
      await until(() => received.some((message) => message.id === 'out-1'));
      const answer = received.find((message) => message.id === 'out-1') as { error?: { code: number; message: string } };
      expect(answer.error?.code).to.equal(-32601);
      expect(answer.error?.message).to.equal(`Method not found: ${CLIENT_METHODS.terminal_output}`);
    } finally {
      client.stop();
    }
  });
});
