/**
 * The turn-aware hang watchdog of a port (src/port/watchdog.ts), against the fake CLI and
 * under a SimulatedClock: silence counts only while the agent owes output (busy, no
 * permission pending); while a tool runs, the longer `toolIdleMs` applies. The fake CLI
 * prints nothing unless asked, so the simulated time is all the silence there is; an echo
 * answered proves the process was not killed.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor, SimulatedClock, type Actor } from 'xstate';
import { loadExeca, portLogic, writeToPort, type PortEmitted, type PortError, type PortInput } from '../../src/port/index.js';
import { expectGroupGone, waitUntil } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));

const idleMs = 1000;
const toolIdleMs = 60_000;

interface Harness {
  readonly clock: SimulatedClock;
  readonly actor: Actor<typeof portLogic>;
  readonly ended: Promise<unknown>;
  /** An echo round trip: resolves once answered (the process lives), rejects when it cannot be written. */
  echo(): Promise<void>;
}

const started: Array<{ actor: Actor<typeof portLogic>; pgid: number | undefined }> = [];

function startPort(watchdog: PortInput['watchdog']): Harness {
  const clock = new SimulatedClock();
  const actor = createActor(portLogic, { clock, input: { command: process.execPath, args: [fakeCli], watchdog } });
  const answered = new Set<number>();
  actor.on('port.message', (event: Extract<PortEmitted, { type: 'port.message' }>) => answered.add((event.message as { id: number }).id));
  const ended = new Promise<unknown>((resolve) => actor.subscribe({ complete: () => resolve(undefined), error: (error) => resolve(error) }));
  actor.start();
  started.push({ actor, pgid: actor.getSnapshot().context.pid });
  let nextId = 1;
  return {
    clock,
    actor,
    ended,
    async echo() {
      const id = nextId++;
      await writeToPort(actor, { message: { jsonrpc: '2.0', id, method: 'echo', params: {} } });
      await waitUntil(() => answered.has(id), `the answer to echo ${id}`, 20_000);
    },
  };
}

describe('port watchdog that knows the turn', function () {
  this.timeout(60_000);
  // The first spawn of a process waits for execa to load (spec/port/first-spawn.spec.ts): loaded
  // first, a port has its pid at once, and the process group recorded for the leak check is real.
  before(() => loadExeca());

  afterEach(async () => {
    for (const { actor, pgid } of started.splice(0)) {
      if (actor.getSnapshot().status === 'active') actor.stop();
      await expectGroupGone(pgid);
    }
  });

  it('silent while the agent owes output (busy, no tool running): hung at idleMs', async () => {
    const { clock, actor, ended, echo } = startPort({ idleMs, toolIdleMs });
    await echo(); // its first line: the start allowance is over
    actor.send({ type: 'port.busy', busy: true });
    clock.increment(idleMs - 1);
    await echo(); // not yet: still alive (and the answer is output, so the count starts again)
    clock.increment(idleMs);
    const error = (await ended) as PortError;
    expect(error.reason).to.deep.equal({ kind: 'hung', idleMs });
  });

  it('silent while a tool runs: not hung at idleMs, hung at toolIdleMs', async () => {
    const { clock, actor, ended, echo } = startPort({ idleMs, toolIdleMs });
    await echo();
    actor.send({ type: 'port.busy', busy: true, toolRunning: true });
    expect(actor.getSnapshot().context.toolRunning).to.equal(true);
    clock.increment(idleMs * 5);
    expect(actor.getSnapshot().status).to.equal('active');
    clock.increment(toolIdleMs - idleMs * 5 - 1);
    await echo(); // 1 ms short of toolIdleMs of silence: alive
    clock.increment(toolIdleMs);
    const error = (await ended) as PortError;
    expect(error.reason).to.deep.equal({ kind: 'hung', idleMs: toolIdleMs });
  });

  it('once the tool has ended, the agent owes output again: hung at idleMs', async () => {
    const { clock, actor, ended, echo } = startPort({ idleMs, toolIdleMs });
    await echo();
    actor.send({ type: 'port.busy', busy: true, toolRunning: true });
    clock.increment(idleMs * 3);
    actor.send({ type: 'port.busy', busy: true, toolRunning: false });
    clock.increment(idleMs);
    const error = (await ended) as PortError;
    expect(error.reason).to.deep.equal({ kind: 'hung', idleMs });
  });

  it('a permission pending (busy false) is never a hang, however long, with or without a tool', async () => {
    const { clock, actor, echo } = startPort({ idleMs, toolIdleMs });
    await echo();
    actor.send({ type: 'port.busy', busy: true, toolRunning: true });
    actor.send({ type: 'port.busy', busy: false });
    clock.increment(toolIdleMs * 10);
    await echo();
    actor.send({ type: 'port.busy', busy: false, toolRunning: true });
    clock.increment(toolIdleMs * 10);
    await echo();
    expect(actor.getSnapshot().status).to.equal('active');
  });

  it('toolIdleMs defaults to 30 minutes, and is never shorter than idleMs', async () => {
    const first = startPort({ idleMs });
    await first.echo();
    first.actor.send({ type: 'port.busy', busy: true, toolRunning: true });
    first.clock.increment(30 * 60_000 - 1);
    await first.echo();
    first.clock.increment(30 * 60_000);
    expect(((await first.ended) as PortError).reason).to.deep.equal({ kind: 'hung', idleMs: 30 * 60_000 });

    const second = startPort({ idleMs: 5000, toolIdleMs: 10 });
    await second.echo();
    second.actor.send({ type: 'port.busy', busy: true, toolRunning: true });
    second.clock.increment(5000);
    expect(((await second.ended) as PortError).reason).to.deep.equal({ kind: 'hung', idleMs: 5000 });
  });

  it('refuses a toolIdleMs that is not a positive number, naming the option', async () => {
    const actor = createActor(portLogic, { input: { command: process.execPath, watchdog: { idleMs, toolIdleMs: 0 } } });
    const failed = new Promise<unknown>((resolve) => actor.subscribe({ error: resolve }));
    actor.start();
    const error = (await failed) as Error;
    expect(error).to.be.instanceOf(TypeError);
    expect(error.message).to.match(/watchdog\.toolIdleMs/u);
  });
});
