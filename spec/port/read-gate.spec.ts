/**
 * A port under its system's read gate (src/port/read-gate.ts), against the fake CLI: while the
 * gate is held (the editor reads slowly) the port does not read the CLI's stdout and its
 * watchdog does not count the silence; released, it reads everything that waited, in order,
 * and the watchdog counts again from then.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor, SimulatedClock } from 'xstate';
import { loadExeca, portLogic, portStats, writeToPort, type PortEmitted, type PortError } from '../../src/port/index.js';
import { readGateOf } from '../../src/port/read-gate.js';
import { expectGroupGone, waitUntil } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));

describe('port under the read gate', function () {
  this.timeout(60_000);
  // The first spawn of a process waits for execa to load (spec/port/first-spawn.spec.ts): loaded
  // first, a port has its pid at once, and the process group recorded for the leak check is real.
  before(() => loadExeca());

  it('held: stdout waits in the pipe and silence is no hang; released: every line, in order, then the watchdog counts again', async () => {
    const clock = new SimulatedClock();
    const actor = createActor(portLogic, { clock, input: { command: process.execPath, args: [fakeCli], watchdog: { idleMs: 1000, startupMs: 1000 } } });
    const messages: Array<{ id?: number; method?: string; params?: { index: number }; result?: unknown }> = [];
    actor.on('port.message', (event: Extract<PortEmitted, { type: 'port.message' }>) => messages.push(event.message as (typeof messages)[number]));
    const ended = new Promise<unknown>((resolve) => actor.subscribe({ complete: () => resolve(undefined), error: (error) => resolve(error) }));
    actor.start();
    const pgid = actor.getSnapshot().context.pid;
    try {
      await writeToPort(actor, { message: { jsonrpc: '2.0', id: 1, method: 'echo', params: {} } });
      await waitUntil(() => messages.some((message) => message.id === 1), 'the echo');
      const gate = readGateOf(actor.system);
      gate.hold('slow editor');
      expect(actor.getSnapshot().context.readPaused).to.equal(true);
      actor.send({ type: 'port.busy', busy: true });
      const count = 20_000; // about 1.2 MB: far more than a pipe holds
      await writeToPort(actor, { message: { jsonrpc: '2.0', id: 2, method: 'stream', params: { count } } });
      // A negative check: the port reads nothing while held, so no event can say so; the wait is its point.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(portStats(actor)?.linesIn ?? 0, 'lines read while held').to.be.below(count);
      clock.increment(10_000); // ten idle periods, busy: not a hang while we are the ones not reading
      expect(actor.getSnapshot().status).to.equal('active');
      gate.release('slow editor');
      expect(actor.getSnapshot().context.readPaused).to.equal(false);
      await waitUntil(() => messages.some((message) => message.id === 2), 'the end of the stream', 30_000);
      const indices = messages.filter((message) => message.method === 'update').map((message) => message.params?.index);
      expect(indices).to.deep.equal(Array.from({ length: count }, (_, index) => index));
      clock.increment(1000); // now silent and busy for idleMs: hung
      const error = (await ended) as PortError;
      expect(error.reason).to.deep.equal({ kind: 'hung', idleMs: 1000 });
    } finally {
      if (actor.getSnapshot().status === 'active') actor.stop();
      await expectGroupGone(pgid);
    }
  });
});
