/**
 * A CLI session that owns its port (src/adapters/port-link.ts): given the port in
 * `port.started`, the Claude Code session adapter reads the fake CLI's lines straight from
 * the port and writes to it itself, with no adapter agent in between; after the port is
 * replaced (the old one killed, a new one started), it binds to the new one and the old
 * one's events no longer reach it.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import type { AgentRequestEvent } from '../../src/protocol/native-agent.js';
import type { SessionAdapterOutput } from '../../src/adapters/adapter.js';
import { claudeSessionMachine } from '../../src/adapters/claude/adapter.js';
import { loadExeca, portLogic } from '../../src/port/index.js';
import { expectGroupGone, waitUntil } from '../support/processes.js';
import { eventContext } from './native-driver.js';

const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

describe('a CLI session that owns its port', function () {
  this.timeout(60_000);
  // The first spawn of a process waits for execa to load (spec/port/first-spawn.spec.ts): loaded
  // first, a port has its pid at once, and the process group recorded for the leak check is real.
  before(() => loadExeca());
  const ports: AnyActorRef[] = [];
  const groups: Array<number | undefined> = [];

  afterEach(async () => {
    for (const port of ports.splice(0)) if (port.getSnapshot().status === 'active') port.stop();
    for (const pgid of groups.splice(0)) await expectGroupGone(pgid);
  });

  function startPort(): AnyActorRef {
    const port = createActor(portLogic, {
      input: { command: process.execPath, args: [fakeClaude, '-p'], env: { explicit: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_LOOP: '1' } } },
    });
    port.subscribe({ error: () => {} }); // a killed CLI ends its port with an error: expected here
    port.start();
    ports.push(port);
    groups.push(port.getSnapshot().context.pid);
    return port;
  }

  it('reads the lines from its port and writes to it, alone; after the port is replaced, binds to the new one', async () => {
    const session = createActor(claudeSessionMachine).start();
    const outputs: SessionAdapterOutput[] = [];
    session.on('*', (output: SessionAdapterOutput) => outputs.push(output));
    const answered = (requestId: string) => outputs.find((output) => (output.type === 'acp.respond' || output.type === 'acp.error') && output.requestId === requestId);
    const prompt = (requestId: string): AgentRequestEvent => ({ type: 'session.prompt', requestId, method: 'session/prompt', params: { sessionId: 's1', prompt: [{ type: 'text', text: 'hello' }] }, context: eventContext });

    const first = startPort();
    session.send({ type: 'adapter.start', requestId: 'new', sessionId: 's1', params: { cwd: process.cwd(), mcpServers: [] }, context: eventContext });
    session.send({ type: 'port.started', pid: first.getSnapshot().context.pid as number, restarts: 0, port: first });
    await waitUntil(() => answered('new') !== undefined, 'session/new answered after the handshake');
    session.send(prompt('p1'));
    await waitUntil(() => answered('p1') !== undefined, 'the first prompt answered');
    expect(answered('p1')).to.deep.include({ type: 'acp.respond', result: { stopReason: 'end_turn' } });
    expect(first.getSnapshot().context.linesIn, 'lines the session read from its port').to.be.greaterThan(3);

    // The port dies: the session hears it from the port itself, and waits for the next one.
    const exited = new Promise<void>((resolve) => first.on('port.exited', () => resolve()));
    process.kill(first.getSnapshot().context.pid as number, 'SIGKILL');
    await exited;
    await waitUntil(() => session.getSnapshot().value === 'waitingForCli', 'the session to wait for its CLI');

    const second = startPort();
    session.send({ type: 'port.started', pid: second.getSnapshot().context.pid as number, restarts: 1, port: second });
    await waitUntil(() => session.getSnapshot().value === 'ready', 'the handshake with the new CLI');
    session.send(prompt('p2'));
    await waitUntil(() => answered('p2') !== undefined, 'the prompt on the new CLI answered');
    expect(answered('p2')).to.deep.include({ type: 'acp.respond', result: { stopReason: 'end_turn' } });
    // Each CLI was told by the session itself: initialize, then the prompt.
    expect(second.getSnapshot().context.bytesWritten).to.be.greaterThan(0);
    session.stop();
  });
});
