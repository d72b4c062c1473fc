/**
 * A raw editor for agent-side tests: our own JSON-RPC connection over an in-memory pair,
 * recording every update and client request, checking every result against the ACP schema.
 */
import { expect } from 'chai';
import { createActor, type SimulatedClock } from 'xstate';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { agentRequests, unstableAgentRequests } from '../../src/protocol/methods.js';
import type { NativeAgent } from '../../src/protocol/native-agent.js';
import { schemaOf } from '../../src/acp/schemas.js';
import {
  connectionLogic,
  createMemoryTransportPair,
  respond,
  RpcError,
  sendNotification,
  sendRequest,
  type ConnectionEmitted,
} from '../../src/jsonrpc/index.js';

export interface Editor {
  request(method: string, params?: unknown): Promise<unknown>;
  notify(method: string, params?: unknown): void;
  updates: Array<{ sessionId: string; update: { sessionUpdate: string; [key: string]: unknown } }>;
  clientRequests: Array<{ id: string | number; method: string; params: unknown }>;
  answerClient(id: string | number, result: unknown): void;
  server: ReturnType<typeof createActor<typeof agentServerLogic>>;
}

export function start(agent: NativeAgent, clock?: SimulatedClock): Editor {
  const [editorSide, agentSide] = createMemoryTransportPair();
  const server = createActor(agentServerLogic, { input: { transport: agentSide, agent }, ...(clock ? { clock } : {}) });
  server.start();
  const editor = createActor(connectionLogic, { input: { transport: editorSide } }).start();
  const updates: Editor['updates'] = [];
  const clientRequests: Editor['clientRequests'] = [];
  editor.on('rpc.notification', (event: Extract<ConnectionEmitted, { type: 'rpc.notification' }>) => {
    if (event.method === 'session/update') updates.push(event.params as Editor['updates'][number]);
  });
  editor.on('rpc.request', (event: Extract<ConnectionEmitted, { type: 'rpc.request' }>) => clientRequests.push({ id: event.id, method: event.method, params: event.params }));
  return {
    server,
    updates,
    clientRequests,
    async request(method, params = {}) {
      const result = await sendRequest(editor, method, params);
      const types = agentRequests[method as keyof typeof agentRequests];
      const unstable = unstableAgentRequests[method as keyof typeof unstableAgentRequests];
      // Conformance: every result the server sends is a valid ACP result.
      if (types) expect(schemaOf(types.result).safeParse(result).success, `${method} result conforms`).to.equal(true);
      if (unstable) expect(schemaOf(unstable.result, 'unstable').safeParse(result).success, `${method} result conforms`).to.equal(true);
      return result;
    },
    notify: (method, params = {}) => sendNotification(editor, method, params),
    answerClient: (id, result) => respond(editor, id, result),
  };
}

export async function errorOf(promise: Promise<unknown>): Promise<RpcError> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error);
  expect(outcome).to.be.instanceOf(RpcError);
  return outcome as RpcError;
}

export async function initialized(agent: NativeAgent, clientCapabilities: Record<string, unknown> = {}, clock?: SimulatedClock) {
  const editor = start(agent, clock);
  await editor.request('initialize', { protocolVersion: 1, clientCapabilities, clientInfo: { name: 'test-editor', version: '1' } });
  return editor;
}

