/**
 * Our client side drives an agent built only with the official SDK
 * (spec/support/sdk-agent.mjs), run as a real port: every method, permission, files,
 * terminals, cancel mid-permission, and the agent dying mid-prompt.
 */
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import {
  agentClientLogic,
  authenticate,
  cancelPrompt,
  closeSession,
  deleteSession,
  DRAIN_METHOD,
  drainReplay,
  forkSession,
  initialize,
  listSessions,
  loadSession,
  logout,
  newSession,
  prompt,
  resumeSession,
  setConfigOption,
  setMode,
  type ClientHandler,
} from '../../src/acp/agent-client.js';
import { cancelTerminal, cancelToolCall } from '../../src/acp/agent-client-cancel.js';
import { portTransport } from '../../src/jsonrpc/port-transport.js';
import type { Transport } from '../../src/jsonrpc/transport.js';
import { agentNotifications, agentRequests } from '../../src/protocol/methods.js';
import { schemaOf } from '../../src/acp/schemas.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { portLogic } from '../../src/port/port.js';
import { ReadGate, readGateOf } from '../../src/port/read-gate.js';
import { spawnedPid } from '../support/port-pid.js';
import { expectGroupGone, waitUntil } from '../support/processes.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));

interface Harness {
  readonly client: AnyActorRef;
  readonly port: AnyActorRef;
  readonly cwd: string;
}

const harnesses: Harness[] = [];

/** Every message our client sends, checked against the ACP schema of its method. */
const nonConforming: string[] = [];

function checked(transport: Transport): Transport {
  return {
    start: (sink) => transport.start(sink),
    close: () => transport.close(),
    send(message) {
      const method = (message as { method?: string }).method;
      const params = (message as { params?: unknown }).params;
      if (method && method in agentRequests) {
        const type = agentRequests[method as keyof typeof agentRequests].params;
        if (!schemaOf(type).safeParse(params ?? {}).success) nonConforming.push(`${method} ${JSON.stringify(params)}`);
      } else if (method && method in agentNotifications) {
        if (!schemaOf(agentNotifications[method as keyof typeof agentNotifications]).safeParse(params).success) nonConforming.push(`${method} ${JSON.stringify(params)}`);
      } else if (!method && 'result' in message && (message as { result: { outcome?: unknown } }).result?.outcome) {
        if (!schemaOf('RequestPermissionResponse').safeParse((message as { result: unknown }).result).success) nonConforming.push(`permission answer ${JSON.stringify(message)}`);
      }
      transport.send(message);
    },
  };
}

function startAgent(handler: ClientHandler = {}): Harness {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'warden-client-')));
  const port = createActor(portLogic, { input: { command: process.execPath, args: [sdkAgent] } });
  port.subscribe({ error: () => {} }); // an agent that dies is a test case here
  port.start();
  const client = createActor(agentClientLogic, { input: { transport: checked(portTransport(port)), handler } });
  client.start();
  const harness = { client, port, cwd };
  harnesses.push(harness);
  return harness;
}

async function collect(run: { updates: AsyncIterable<SessionUpdate> }): Promise<SessionUpdate[]> {
  const updates: SessionUpdate[] = [];
  for await (const update of run.updates) updates.push(update);
  return updates;
}

/** Once `count` updates of `run` have arrived (never a fixed wait); fails if it ends first. */
async function firstUpdates(run: { updates: AsyncIterable<SessionUpdate> }, count: number): Promise<void> {
  let seen = 0;
  for await (const _update of run.updates) if (++seen >= count) return;
  throw new Error(`the prompt ended after ${seen} of ${count} updates`);
}

function text(updates: SessionUpdate[]): string {
  return updates
    .filter((update) => update.sessionUpdate === 'agent_message_chunk')
    .map((update) => ((update as { content: { text?: string } }).content.text ?? ''))
    .join('');
}

const textPrompt = (value: string) => [{ type: 'text', text: value }];

describe('ACP client side driving an SDK-built agent', function () {
  afterEach(async () => {
    // Clean up first: a failed check below must not leave agents running.
    for (const { client, port, cwd } of harnesses.splice(0)) {
      // Learned before the stop: a port stopped before its first spawn would have no pid.
      const pid = await spawnedPid(port).catch((error: unknown) => error as Error);
      if (client.getSnapshot().status === 'active') client.stop();
      if (port.getSnapshot().status === 'active') port.stop();
      if (pid instanceof Error) throw pid;
      await expectGroupGone(pid);
      rmSync(cwd, { recursive: true, force: true });
    }
    expect(nonConforming.splice(0), 'messages our client sent that do not conform to ACP').to.deep.equal([]);
  });

  this.timeout(30_000);

  it('drainReplay while the read gate is closed (the editor stalls): a round waits past its deadline, and drains once the gate opens', async () => {
    const { client, port, cwd } = startAgent();
    let agentStderr = '';
    port.on('port.stderr', (event: { text: string }) => (agentStderr += event.text));
    await initialize(client);
    const session = await newSession(client, { cwd });
    // What a backed-up editor does in warden, where port and client share one system: the port stops reading.
    const holder = {};
    const gates = [readGateOf(port.system), readGateOf(client.system)];
    for (const gate of gates) gate.hold(holder);
    let outcome: Awaited<ReturnType<typeof drainReplay>> | undefined;
    const roundMs = 200;
    const drained = drainReplay(client, session.sessionId, { timeoutMs: roundMs }).then((result) => {
      outcome = result;
      return result;
    });
    // The agent got the round's request and answered it (stderr is read with the gate closed):
    // only the closed gate keeps that answer unread.
    await waitUntil(() => agentStderr.includes(`unknown request ${DRAIN_METHOD}`), 'the agent to answer the drain round', 20_000);
    // A control: a deadline five times the round's, begun after it, on a gate nobody holds.
    // Once it has expired, the round's would have too, had it run while the gate was closed.
    await new ReadGate().openDeadline(5 * roundMs).expired;
    expect(outcome).to.equal(undefined);
    for (const gate of gates) gate.release(holder);
    expect(await drained).to.deep.include({ drained: true, updates: 0 });
  });

  it('refuses methods before initialize, locally', async () => {
    const { client } = startAgent();
    const error = await listSessions(client).catch((caught: unknown) => caught);
    expect(error).to.be.instanceOf(RpcError).and.include({ failure: 'local' });
  });

  it('lifecycle: every stable method', async () => {
    const { client, cwd } = startAgent();
    const init = await initialize(client);
    expect(init.protocolVersion).to.equal(1);
    await authenticate(client, (init.authMethods?.[0] as { id: string }).id);
    const session = await newSession(client, { cwd });
    const modes = session.modes as { availableModes: Array<{ id: string }> };
    await setMode(client, session.sessionId, modes.availableModes[1]?.id as string);
    const options = await setConfigOption(client, session.sessionId, 'model', (session.configOptions as Array<{ options: Array<{ value: string }> }>)[0]?.options[1]?.value);
    expect(options.configOptions.length).to.be.greaterThan(0);
    const run = prompt(client, session.sessionId, textPrompt('hello'));
    const updates = await collect(run);
    expect((await run.result).stopReason).to.equal('end_turn');
    expect(updates.filter((update) => update.sessionUpdate === 'agent_message_chunk')).to.have.length(3);
    const first = await listSessions(client);
    expect(first.sessions).to.have.length(2);
    const second = await listSessions(client, { cursor: first.nextCursor as string });
    expect([...first.sessions, ...second.sessions].map((entry) => entry.sessionId)).to.include(session.sessionId);
    const loaded = await loadSession(client, { sessionId: session.sessionId, cwd });
    expect(loaded.replayed.map((update) => update.sessionUpdate)).to.deep.equal(['user_message_chunk', 'agent_message_chunk']);
    await resumeSession(client, { sessionId: session.sessionId, cwd });
    await closeSession(client, session.sessionId);
    await deleteSession(client, session.sessionId);
    await logout(client);
    // The SDK agent does not advertise the unstable fork: refused here, never sent.
    const fork = await forkSession(client, { sessionId: session.sessionId, cwd }).catch((caught: unknown) => caught);
    expect(fork).to.be.instanceOf(RpcError).and.include({ code: -32601, failure: 'local' });
  });

  it('permission: the policy decides, and the tool call follows', async () => {
    const seen: string[] = [];
    const { client, cwd } = startAgent({
      permission: (request) => {
        seen.push(request.toolCall.toolCallId);
        const allow = request.options.find((option) => option.kind === 'allow_once');
        return { outcome: 'selected', optionId: allow?.optionId as string };
      },
    });
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, textPrompt('permission'));
    const updates = await collect(run);
    expect((await run.result).stopReason).to.equal('end_turn');
    expect(seen).to.have.length(1);
    expect(updates.map((update) => `${update.sessionUpdate}:${(update as { status?: string }).status ?? ''}`)).to.include('tool_call_update:completed');
  });

  it('without a policy nothing runs: the first reject option is chosen', async () => {
    const { client, cwd } = startAgent();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, textPrompt('permission'));
    const updates = await collect(run);
    await run.result;
    expect(updates.map((update) => `${update.sessionUpdate}:${(update as { status?: string }).status ?? ''}`)).to.include('tool_call_update:failed');
  });

  it('files: served inside the session cwd, refused outside it', async () => {
    const { client, cwd } = startAgent();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, textPrompt('fs'));
    const said = text(await collect(run));
    expect((await run.result).stopReason).to.equal('end_turn');
    expect(readFileSync(join(cwd, 'notes.txt'), 'utf8')).to.equal('written by sdk-agent\nsecond line\n');
    expect(said).to.contain('written by sdk-agent');
    expect(said).to.match(/outside read refused: .* code -32602/u);
  });

  it('ACP v2 cancels toward a v1 agent: terminal/cancel of a terminal warden runs for it kills it (the agent sees it end); tool_call/cancel and an unknown terminal are -32602', async () => {
    const { client, cwd } = startAgent();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, textPrompt('longterminal'));
    const updates: SessionUpdate[] = [];
    let terminalId: string | undefined;
    for await (const update of run.updates) {
      updates.push(update);
      const content = (update as { content?: Array<{ type: string; terminalId?: string }> }).content;
      terminalId ??= Array.isArray(content) ? content.find((entry) => entry.type === 'terminal')?.terminalId : undefined;
      if (terminalId) break;
    }
    expect(terminalId, 'the terminal shown').to.be.a('string');
    const toolCall = await cancelToolCall(client, sessionId, `term-${terminalId}`).then(() => undefined, (error: RpcError) => error);
    expect(toolCall?.code).to.equal(-32602);
    expect(toolCall?.message).to.include('ACP v1');
    const unknown = await cancelTerminal(client, sessionId, 'no-such-terminal').then(() => undefined, (error: RpcError) => error);
    expect(unknown?.code).to.equal(-32602);
    expect(await cancelTerminal(client, sessionId, terminalId as string)).to.deep.equal({});
    updates.push(...(await collect(run)));
    expect((await run.result).stopReason).to.equal('end_turn');
    expect(text(updates)).to.equal('terminal ended: SIGKILL');
    // Ended: a second cancel is refused as v2 says (already exited).
    const again = await cancelTerminal(client, sessionId, terminalId as string).then(() => undefined, (error: RpcError) => error);
    expect(again?.code).to.equal(-32602);
  });

  it('terminals: run as ports, output returned, nothing left running', async () => {
    const { client, cwd, port } = startAgent();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, textPrompt('terminal'));
    const said = text(await collect(run));
    expect((await run.result).stopReason).to.equal('end_turn');
    expect(said).to.contain('terminal output: "hi\\n" exit 0');
    // The agent released its terminal: the client holds none.
    await waitUntil(() => client.getSnapshot().context.terminals === 0, 'the terminal to be released').catch(() => undefined);
    expect(client.getSnapshot().context.terminals).to.equal(0);
    void port;
  });

  it('cancel mid-permission: the pending permission is answered cancelled and the prompt ends cancelled', async () => {
    let asked!: () => void;
    const permissionAsked = new Promise<void>((resolve) => (asked = resolve));
    const { client, cwd } = startAgent({
      permission: () => {
        asked();
        return new Promise(() => {}); // the user never answers
      },
    });
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, textPrompt('permission'));
    await permissionAsked;
    cancelPrompt(client, sessionId);
    expect((await run.result).stopReason).to.equal('cancelled');
  });

  it('cancel of a streaming prompt ends it cancelled, and the next prompt works', async () => {
    const { client, cwd } = startAgent();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const controller = new AbortController();
    const run = prompt(client, sessionId, textPrompt('slow'), { signal: controller.signal });
    await firstUpdates(run, 1); // streaming
    controller.abort();
    expect((await run.result).stopReason).to.equal('cancelled');
    const next = prompt(client, sessionId, textPrompt('hello'));
    expect((await next.result).stopReason).to.equal('end_turn');
  });

  it('a prompt signal aborted after its prompt ended does not cancel the next prompt', async () => {
    const { client, cwd } = startAgent();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const controller = new AbortController();
    const first = prompt(client, sessionId, textPrompt('hello'), { signal: controller.signal });
    await first.result;
    const second = prompt(client, sessionId, textPrompt('slow'));
    controller.abort();
    // Streaming on past the late abort: two updates in, its own cancel.
    await firstUpdates(second, 2);
    second.cancel();
    const updates = await collect(second);
    expect((await second.result).stopReason).to.equal('cancelled');
    expect(updates.length).to.be.greaterThan(1); // it streamed until its own cancel, not stopped at once
  });

  it('refuses locally what the agent did not offer: an unknown auth method, audio content', async () => {
    const { client, cwd } = startAgent();
    await initialize(client);
    expect(await authenticate(client, 'nope').catch((caught: unknown) => caught)).to.include({ code: -32602, failure: 'local' });
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, [{ type: 'audio', data: 'AA==', mimeType: 'audio/wav' }]);
    expect(await run.result.catch((caught: unknown) => caught)).to.include({ code: -32602, failure: 'local' });
  });

  it('the agent dying mid-prompt settles the prompt with peer_lost and its exit', async () => {
    const { client, cwd } = startAgent();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd });
    const run = prompt(client, sessionId, textPrompt('die'));
    const updates = await collect(run);
    const error = (await run.result.catch((caught: unknown) => caught)) as RpcError;
    expect(error).to.be.instanceOf(RpcError).and.include({ failure: 'peer_lost' });
    expect((error.data as { exit: { reason: unknown } }).exit.reason).to.deep.equal({ kind: 'exited', code: 7 });
    expect(updates.length).to.be.greaterThan(0);
    expect(client.getSnapshot().status).to.equal('done');
  });
});
