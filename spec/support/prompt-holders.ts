/**
 * Counts the holders of one prompt: the layers that keep a record of it while it is in flight
 * (issue 29: "a prompt has six holders"). A real host serves the SDK's client over a stdio
 * transport, as `warden acp` serves its stdin and stdout (`stdio`), or a WebSocket client
 * through its hub, as `warden serve` does (`serve`), with the fake Claude Code CLI; its
 * turn stalls before its `result` line, so once the editor has the turn's first update the
 * prompt is in flight, and stays so while each layer is asked, through its read-only
 * inspection accessor, whether it holds the prompt's request (by the key the agent server gave
 * it, or on the serve path by the hub's key for it at the host; the editor's JSON-RPC connection
 * by its unanswered incoming requests, the prompt being the only one; the agent server by a map
 * of its own, unless its record is the tag it keeps on the connection's). Then the editor leaves
 * and the host stops.
 */
import { fileURLToPath } from 'node:url';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { createHost } from '../../src/index.js';
import { requestsInFlight } from '../../src/acp/server-live.js';
import { connectionStats, requestTag } from '../../src/jsonrpc/connection.js';
import type { JsonRpcId } from '../../src/jsonrpc/message.js';
import { hostRecordsOf, sessionMachinesOf } from '../../src/host/host-agent.js';
import { holdsPrompt, promptIdsOf } from '../../src/session/session-prompts.js';
import { owedRequestsOf } from '../../src/adapters/adapter-agent-live.js';
import { hubPromptsOf, promptOfKey } from '../../src/serve/hub-live.js';
import { stdioEditor, webSocketEditor } from './prompt-path.js';

/** The paths counted: `warden acp`'s stdio, and a WebSocket client of `warden serve`'s hub. */
export type PromptHoldersPath = 'stdio' | 'serve';

const fakeClaude = fileURLToPath(new URL('./fake-claude.mjs', import.meta.url));

/** A turn that stalls this long before its end: longer than any run of this count. */
const stallMs = 600_000;

/** The logic name of an actor (`config.name` of hand-written logic, the machine's id). */
function logicOf(ref: AnyActorRef): string | undefined {
  const logic = (ref as unknown as { logic?: { config?: { name?: string; id?: string }; id?: string } }).logic;
  return logic?.config?.name ?? logic?.id;
}

function parentOf(ref: AnyActorRef): AnyActorRef | undefined {
  return (ref as unknown as { _parent?: AnyActorRef })._parent;
}

/** Each layer that holds the in-flight prompt, named with the record that holds it. */
export async function promptHolders(path: PromptHoldersPath = 'stdio'): Promise<readonly string[]> {
  const actors = new Set<AnyActorRef>();
  const host = createHost({
    store: ':memory:',
    defaultAgent: 'claude',
    agentOptions: { agentCommand: fakeClaude, env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_LOOP: '1', FAKE_CLAUDE_STALL_MS: String(stallMs) } },
    inspect: { next: (event: InspectionEvent) => void actors.add(event.actorRef as AnyActorRef) },
    permission: () => ({ outcome: 'cancelled' }),
  });
  const editor = path === 'serve' ? await webSocketEditor(host) : stdioEditor(host);
  try {
    const sessionId = await editor.newSession();
    let answer: Promise<unknown> | undefined;
    await new Promise<void>((updated) => {
      answer = editor.prompt(sessionId, 'hello', updated);
    });
    // Answered only when the editor leaves (the host stops): not part of the count.
    void answer?.catch(() => {});
    const live = [...actors].filter((ref) => ref.getSnapshot().status === 'active');
    const server = live.find((ref) => logicOf(ref) === 'acpAgentServer' && [...requestsInFlight(ref).values()].some((request) => request.method === 'session/prompt'));
    if (!server) throw new Error('no agent server has the prompt in flight');
    const [serverKey] = [...requestsInFlight(server)].find(([, request]) => request.method === 'session/prompt') as [string, unknown];
    const holders: string[] = [];
    const connection = live.find((ref) => ref.id === 'connection' && parentOf(ref) === server);
    if (connection && connectionStats(connection).incoming > 0) holders.push('JSON-RPC connection (incoming)');
    // The agent server's record of it: its own map, unless it keeps its key as a tag on the connection's record.
    if (!connection || requestTag(connection, (requestsInFlight(server).get(serverKey) as { rpcId: JsonRpcId }).rpcId) === undefined) holders.push('agent server (pending)');
    const hostAgent = live.find((ref) => logicOf(ref) === 'hostAgent');
    if (!hostAgent) throw new Error('no host agent');
    const machine = sessionMachinesOf(hostAgent).get(sessionId);
    // Through the hub, the host knows the prompt by the hub's key for it: one it keeps, or the prompt's address.
    let key = serverKey;
    const hub = live.find((ref) => logicOf(ref) === 'connectionHub');
    if (hub) {
      const atHub = hubPromptsOf(hub).find((prompt) => prompt.requestId === serverKey);
      for (const record of atHub?.records ?? []) holders.push(`hub (${record})`);
      key = atHub?.hostKey ?? (machine ? promptIdsOf(machine) : []).find((id) => promptOfKey(id)?.requestId === serverKey) ?? serverKey;
    }
    for (const record of hostRecordsOf(hostAgent, key)) holders.push(`host agent (${record})`);
    if (machine && holdsPrompt(machine, key)) holders.push('session actor (its prompts)');
    const adapterAgent = live.find((ref) => logicOf(ref) === 'adapterAgent');
    if (adapterAgent && owedRequestsOf(adapterAgent, sessionId).has(key)) holders.push('adapter agent (session.pending)');
    const adapter = live.find((ref) => {
      const context = (ref.getSnapshot() as { context?: { prompt?: { requestId?: string }; queued?: { requestId?: string } } }).context;
      return ref.id === 'adapter' && (context?.prompt?.requestId === key || context?.queued?.requestId === key);
    });
    if (adapter) holders.push('session adapter (its prompt)');
    return holders;
  } finally {
    await editor.close();
    await host.stop();
  }
}
