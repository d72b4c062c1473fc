/**
 * The passthrough's state machine (src/adapters/passthrough/machine.ts) against the
 * SDK-built agent (spec/support/sdk-agent.mjs), run for real: the states it goes through
 * when the agent dies mid-prompt, dies again while its session is re-attached, or keeps
 * dying until its supervisor gives up; a prompt that arrives while it recovers; and what
 * the port's hang watchdog is told during a turn with a tool call and a permission request.
 */
import { expect } from 'chai';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef, type InspectionEvent } from 'xstate';
import { agentClientLogic, cancelPrompt, initialize, newSession, prompt } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { createAcpPassthrough, type AcpPassthroughOptions } from '../../src/adapters/acp-passthrough.js';
import { watchdogHintOf, type PassthroughContext } from '../../src/adapters/passthrough/context.js';
import { quietTurn, type TurnActivity } from '../../src/adapters/turn-activity.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { processesWhere, waitUntil } from '../support/processes.js';
import { driveAgent, resultOf, type Driver } from './native-driver.js';

const sdkAgent = fileURLToPath(new URL('../support/sdk-agent.mjs', import.meta.url));
const running: Array<{ stop(): void; dir: string }> = [];
const backoff = { minDelay: 50, maxDelay: 200 };

/**
 * An agent process that runs the sdk-agent behind it and dies (SIGKILL of the agent, exit 9)
 * on the first `session/resume` it is sent while the marker file exists, removing it: a crash
 * while the passthrough re-attaches the session.
 */
const dyingOnResume = `
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
const [marker, ...agent] = process.argv.slice(2);
const child = spawn(process.execPath, agent, { stdio: ['pipe', 'inherit', 'inherit'] });
let pending = '';
process.stdin.on('data', (chunk) => {
  pending += chunk;
  for (let end = pending.indexOf('\\n'); end >= 0; end = pending.indexOf('\\n')) {
    const line = pending.slice(0, end + 1);
    pending = pending.slice(end + 1);
    if (line.includes('"session/resume"') && existsSync(marker)) {
      rmSync(marker);
      child.kill('SIGKILL');
      process.exit(9);
    }
    child.stdin.write(line);
  }
});
process.stdin.on('end', () => child.stdin.end());
child.on('exit', (code) => process.exit(code ?? 1));
`;

/** An agent process that exits at once (code 3) while the marker file exists, else runs the sdk-agent. */
const exitingAtStart = `
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
const [marker, ...agent] = process.argv.slice(2);
if (existsSync(marker)) {
  process.stderr.write('refusing to start\\n');
  process.exit(3);
}
const child = spawn(process.execPath, agent, { stdio: 'inherit' });
child.on('exit', (code) => process.exit(code ?? 1));
`;

function listAgents(): number[] {
  return processesWhere((cmdline) => cmdline.includes('warden-pass-machine-'));
}

const tempDir = () => realpathSync(mkdtempSync(join(tmpdir(), 'warden-pass-machine-')));

/** The state value as a path (`recovering.reattaching`). */
const pathOf = (value: unknown): string => (typeof value === 'string' ? value : Object.entries(value as Record<string, unknown>).map(([key, inner]) => `${key}.${pathOf(inner)}`)[0] as string);

/** The passthrough driven as the host drives it, with every state it goes through recorded. */
async function drive(options: Partial<AcpPassthroughOptions> & { readonly command?: readonly string[] } = {}): Promise<{ driver: Driver; sessionId: string; dir: string; states: string[] }> {
  const dir = options.command ? (options.cwd as string) : tempDir();
  const args = options.command ?? [sdkAgent, '--state-dir', dir];
  const driver = driveAgent(createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args, restart: { backoff }, ...options }));
  running.push({ stop: () => driver.stop(), dir });
  const states: string[] = [pathOf(driver.actor.getSnapshot().value)];
  driver.actor.subscribe((snapshot: { value: unknown }) => {
    const path = pathOf(snapshot.value);
    if (states.at(-1) !== path) states.push(path);
  });
  resultOf(await driver.answer(driver.request('initialize', 'initialize', { protocolVersion: 1, clientCapabilities: {} })));
  const { sessionId } = resultOf(await driver.answer(driver.request('session.new', 'session/new', { cwd: dir, mcpServers: [] }))) as { sessionId: string };
  return { driver, sessionId, dir, states };
}

const turn = (driver: Driver, sessionId: string, text: string) => driver.answer(driver.request('session.prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text }] }));
const textOf = (output: unknown) => ((output as { update?: { content?: { text?: string } } }).update?.content?.text ?? '');

describe('the ACP passthrough as a state machine', function () {
  this.timeout(60_000);

  afterEach(async () => {
    for (const { stop, dir } of running.splice(0)) {
      stop();
      rmSync(dir, { recursive: true, force: true });
    }
    await waitUntil(() => listAgents().length === 0, 'no agent process left', 20_000).catch(() => undefined);
    expect(listAgents(), 'agent processes left').to.deep.equal([]);
  });

  it('boots on initialize, and a crash mid-prompt (--on-crash fail) goes ready → recovering (awaiting the restart, initializing, re-attaching) → ready', async () => {
    const { driver, sessionId, states } = await drive({ crash: { onCrash: 'fail' } });
    expect(states).to.deep.equal(['idle', 'booting.starting', 'booting.initializing', 'ready']);
    expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
    await driver.waitFor((output) => output.type === 'session.recovered', 'session.recovered');
    await waitUntil(() => states.at(-1) === 'ready', 'ready again');
    expect(states.slice(4)).to.deep.equal(['recovering.awaitingRestart', 'recovering.initializing', 'recovering.reattaching', 'ready']);
    expect(resultOf(await turn(driver, sessionId, 'hello'))).to.deep.equal({ stopReason: 'end_turn' });
    // Nothing is owed once every request is answered (the one the crash failed included).
    expect((driver.actor.getSnapshot().context as PassthroughContext).inFlight).to.equal(0);
  });

  it('a prompt sent while it recovers (the crashed one failed: --on-crash fail) waits, and runs on the re-attached session once it is ready', async () => {
    const { driver, sessionId, states } = await drive({ crash: { onCrash: 'fail' } });
    let during: { requestId: string; state: string } | undefined;
    const subscription = driver.actor.subscribe((snapshot: { value: unknown }) => {
      // Sent the moment the machine starts recovering, before the agent process is back.
      if (during || !pathOf(snapshot.value).startsWith('recovering')) return;
      during = { requestId: driver.request('session.prompt', 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] }), state: pathOf(snapshot.value) };
    });
    expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
    await waitUntil(() => during !== undefined, 'the prompt sent while recovering');
    subscription.unsubscribe();
    const { requestId, state } = during as { requestId: string; state: string };
    expect(state).to.equal('recovering.awaitingRestart');
    expect(resultOf(await driver.answer(requestId))).to.deep.equal({ stopReason: 'end_turn' });
    const recovered = driver.outputs.findIndex((output) => output.type === 'session.recovered');
    const answered = driver.outputs.findIndex((output) => output.type === 'acp.respond' && output.requestId === requestId);
    expect(recovered, 'session.recovered').to.be.greaterThan(-1);
    expect(answered, 'answered after the session was re-attached').to.be.greaterThan(recovered);
    expect(driver.outputs.slice(recovered, answered).filter((output) => output.type === 'acp.update').map(textOf)).to.deep.equal(['Hello', ', ', 'world!']);
    expect(states).to.include('recovering.reattaching');
  });

  it('the agent dies again while its session is re-attached: recovering starts over after the next restart, then the session is recovered (2 restarts)', async () => {
    const dir = tempDir();
    const marker = join(dir, 'die-on-resume');
    const wrapper = join(dir, 'dying-on-resume.mjs');
    writeFileSync(wrapper, dyingOnResume);
    writeFileSync(marker, '');
    const { driver, sessionId, states } = await drive({ cwd: dir, command: [wrapper, marker, sdkAgent, '--state-dir', dir], crash: { onCrash: 'fail' } });
    expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
    await driver.waitFor((output) => output.type === 'session.recovered', 'session.recovered');
    expect(driver.lifecycle().map((output) => `${output.type}:${(output as { restarts: number }).restarts}`)).to.deep.equal(['session.restarting:0', 'session.restarting:1', 'session.recovered:2']);
    const restarting = driver.lifecycle()[1] as { exit: { reason: unknown } };
    expect(restarting.exit.reason).to.deep.equal({ kind: 'exited', code: 9 });
    expect(states.slice(4)).to.deep.equal([
      'recovering.awaitingRestart',
      'recovering.initializing',
      'recovering.reattaching',
      'recovering.awaitingRestart',
      'recovering.initializing',
      'recovering.reattaching',
      'ready',
    ]);
    expect(resultOf(await turn(driver, sessionId, 'hello'))).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('restart intensity exceeded: failed (every request refused), then a new session starts the agent again: restarting → ready', async () => {
    const { driver, sessionId, dir, states } = await drive({ restart: { intensity: 0, backoff } });
    expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
    await driver.waitFor((output) => output.type === 'session.failed', 'session.failed');
    expect(pathOf(driver.actor.getSnapshot().value)).to.equal('failed');
    const refused = await turn(driver, sessionId, 'hello');
    expect((refused as { error: { data: { reason: string } } }).error.data.reason).to.equal('agent_failed');
    const again = resultOf(await driver.answer(driver.request('session.new', 'session/new', { cwd: dir, mcpServers: [] }))) as { sessionId: string };
    expect(resultOf(await turn(driver, again.sessionId, 'hello'))).to.deep.equal({ stopReason: 'end_turn' });
    expect(states.slice(4)).to.deep.equal(['recovering.awaitingRestart', 'failed', 'restarting.starting', 'restarting.initializing', 'ready']);
  });

  it('given up, a new session that cannot bring the agent back is refused after one attempt (no restart loop); the next one can', async () => {
    const dir = tempDir();
    const marker = join(dir, 'refuse-start');
    const wrapper = join(dir, 'exiting-at-start.mjs');
    writeFileSync(wrapper, exitingAtStart);
    const { driver, sessionId, states } = await drive({ cwd: dir, command: [wrapper, marker, sdkAgent, '--state-dir', dir], restart: { intensity: 0, backoff } });
    expect((await turn(driver, sessionId, 'die')).type).to.equal('acp.error');
    await driver.waitFor((output) => output.type === 'session.failed', 'session.failed');
    writeFileSync(marker, '');
    const from = states.length;
    const refused = await driver.answer(driver.request('session.new', 'session/new', { cwd: dir, mcpServers: [] }));
    expect((refused as { error: { data: { reason: string } } }).error.data.reason).to.equal('agent_failed');
    expect((refused as { error: { message: string } }).error.message).to.contain('restart intensity');
    expect(states.slice(from)).to.deep.equal(['restarting.starting', 'restarting.initializing', 'recovering.awaitingRestart', 'failed']);
    rmSync(marker);
    const again = resultOf(await driver.answer(driver.request('session.new', 'session/new', { cwd: dir, mcpServers: [] }))) as { sessionId: string };
    expect(resultOf(await turn(driver, again.sessionId, 'hello'))).to.deep.equal({ stopReason: 'end_turn' });
  });

  it("an agent that cannot be started: the editor's initialize is refused naming why, and it is idle again", async () => {
    const dir = tempDir();
    const driver = driveAgent(createAcpPassthrough({ name: 'nowhere', executable: join(dir, 'no-such-agent'), restart: { backoff } }));
    running.push({ stop: () => driver.stop(), dir });
    const answer = await driver.answer(driver.request('initialize', 'initialize', { protocolVersion: 1, clientCapabilities: {} }));
    expect(answer.type).to.equal('acp.error');
    expect((answer as { error: { message: string } }).error.message).to.contain('nowhere could not start');
    expect(pathOf(driver.actor.getSnapshot().value)).to.equal('idle');
  });

  describe("the port's hang watchdog hint (port.busy)", () => {
    it('during a turn with a tool call and a permission request: busy, toolRunning while the tool call is pending, neither while the user is asked', async () => {
      const dir = tempDir();
      const hints: Array<{ busy: boolean; toolRunning?: boolean }> = [];
      const inspect = (event: InspectionEvent) => {
        if (event.type === '@xstate.event' && event.event.type === 'port.busy') hints.push({ busy: event.event.busy, toolRunning: event.event.toolRunning });
      };
      const [editorSide, agentSide] = createMemoryTransportPair();
      const agent = createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args: [sdkAgent, '--state-dir', dir], restart: { backoff } });
      const server = createActor(agentServerLogic, { input: { transport: agentSide, agent }, inspect }).start();
      let asked = 0;
      const client: AnyActorRef = createActor(agentClientLogic, {
        input: {
          transport: editorSide,
          handler: {
            permission: (request) => {
              asked++;
              return { outcome: 'selected', optionId: request.options.find((option) => option.kind === 'allow_once')?.optionId as string };
            },
          },
        },
      }).start();
      running.push({ stop: () => (client.stop(), server.stop()), dir });
      await initialize(client);
      const { sessionId } = await newSession(client, { cwd: dir });
      hints.length = 0;
      const handle = prompt(client, sessionId, [{ type: 'text', text: 'permission' }]);
      for await (const _update of handle.updates) {
        // drained
      }
      expect(await handle.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(asked).to.equal(1);
      await waitUntil(() => hints.at(-1)?.busy === false, 'the watchdog disarmed after the turn');
      expect(hints).to.deep.equal([
        { busy: true, toolRunning: false }, // the prompt: the agent owes output
        { busy: true, toolRunning: true }, // its tool call is pending
        { busy: false, toolRunning: false }, // the permission request waits for the user
        { busy: true, toolRunning: true }, // allowed: the tool runs
        { busy: true, toolRunning: false }, // completed
        { busy: false, toolRunning: false }, // the turn is answered
      ]);
    });

    it('a cancelled turn whose tool the agent last said runs: busy, not toolRunning (a frozen agent is caught after hangAfter, not the tool limit), until the next turn', async () => {
      const dir = tempDir();
      const hints: Array<{ busy: boolean; toolRunning?: boolean }> = [];
      const inspect = (event: InspectionEvent) => {
        if (event.type === '@xstate.event' && event.event.type === 'port.busy') hints.push({ busy: event.event.busy, toolRunning: event.event.toolRunning });
      };
      const [editorSide, agentSide] = createMemoryTransportPair();
      const agent = createAcpPassthrough({ name: 'sdk-agent', executable: process.execPath, args: [sdkAgent, '--state-dir', dir], restart: { backoff } });
      const server = createActor(agentServerLogic, { input: { transport: agentSide, agent }, inspect }).start();
      const client: AnyActorRef = createActor(agentClientLogic, { input: { transport: editorSide, handler: {} } }).start();
      running.push({ stop: () => (client.stop(), server.stop()), dir });
      await initialize(client);
      const { sessionId } = await newSession(client, { cwd: dir });
      hints.length = 0;
      // `tool N`: a tool call in_progress, then N ms in which the agent ignores the cancel (as one frozen mid-tool).
      const handle = prompt(client, sessionId, [{ type: 'text', text: 'tool 1500' }]);
      await waitUntil(() => hints.at(-1)?.toolRunning === true, 'the tool runs');
      cancelPrompt(client, sessionId);
      await waitUntil(() => hints.at(-1)?.toolRunning === false, 'the cancelled turn no longer counts its tool');
      expect(hints.at(-1)).to.deep.equal({ busy: true, toolRunning: false });
      for await (const _update of handle.updates) {
        // drained
      }
      await handle.result;
      await waitUntil(() => hints.at(-1)?.busy === false, 'the watchdog disarmed after the turn');
      // The next turn counts its own tools again.
      const next = prompt(client, sessionId, [{ type: 'text', text: 'tool 300' }]);
      const from = hints.length;
      for await (const _update of next.updates) {
        // drained
      }
      expect(await next.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(hints.slice(from)).to.deep.include({ busy: true, toolRunning: true });
    });

    it('is computed from the context and the tools tracked: busy while a request is owed and no relay waits; toolRunning unless a permission is asked; a turn open while anything is owed or waited for', () => {
      const context = { inFlight: 0, relays: {}, cancelledTurns: {} } as unknown as PassthroughContext;
      const running = { t1: 'in_progress' } as const;
      const none = new Map<string, TurnActivity>();
      const tools = (entries: Record<string, TurnActivity>) => new Map(Object.entries(entries));
      expect(watchdogHintOf(context, false, none)).to.deep.equal({ busy: false, toolRunning: false, turnOpen: false });
      expect(watchdogHintOf(context, true, none)).to.deep.equal({ busy: true, toolRunning: false, turnOpen: true });
      expect(watchdogHintOf({ ...context, inFlight: 1 }, false, none)).to.deep.equal({ busy: true, toolRunning: false, turnOpen: true });
      expect(watchdogHintOf({ ...context, inFlight: 1 }, false, tools({ s: running, t: quietTurn }))).to.deep.equal({ busy: true, toolRunning: true, turnOpen: true });
      expect(watchdogHintOf({ ...context, inFlight: 1, relays: { 'relay-1': 'fs/read_text_file' } }, false, tools({ s: running }))).to.deep.equal({ busy: false, toolRunning: true, turnOpen: true });
      expect(watchdogHintOf({ ...context, inFlight: 1, relays: { 'relay-1': 'session/request_permission' } }, false, tools({ s: running }))).to.deep.equal({ busy: false, toolRunning: false, turnOpen: true });
      expect(watchdogHintOf({ ...context, inFlight: 1, cancelledTurns: { s: true } }, false, tools({ s: running }))).to.deep.equal({ busy: true, toolRunning: false, turnOpen: true });
      expect(watchdogHintOf({ ...context, inFlight: 2, cancelledTurns: { s: true } }, false, tools({ s: running, t: running }))).to.deep.equal({ busy: true, toolRunning: true, turnOpen: true });
    });
  });
});
