/**
 * Ports against real subprocesses: the fake agent CLI in spec/support/fake-cli.mjs.
 * Every test checks that no process it started is left (its process group, via /proc).
 */
import { expect } from 'chai';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, SimulatedClock, type Actor } from 'xstate';
import {
  portLogic,
  portStats,
  PortError,
  PortWriteError,
  writeToPort,
  type PortEmitted,
  type PortExit,
  type PortInput,
} from '../../src/port/index.js';
import { createSupervisor, whichChildren } from '../../src/supervision/index.js';
import { loadExeca } from '../../src/port/execa-loader.js';
import { expectGroupGone, groupMembers, isAlive, waitUntil } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));

type PortActor = Actor<typeof portLogic>;

interface Harness {
  readonly actor: PortActor;
  readonly events: PortEmitted[];
  readonly messages: Array<Record<string, unknown>>;
  /** Resolves when the actor ends: its output, or its error. */
  readonly ended: Promise<{ output?: unknown; error?: unknown }>;
  request(method: string, params?: unknown): Promise<Record<string, unknown>>;
}

const started: PortActor[] = [];
const groups: Array<number | undefined> = [];
/** Ports started without a pid: each must end spawn_failed, having no process group to leave behind. */
const unspawned: PortActor[] = [];

/** A port on the fake CLI; with `clock`, its timers (the watchdog's) run on that clock. */
function startPort(input: Partial<PortInput> = {}, cliArgs: string[] = [], clock?: SimulatedClock): Harness {
  const actor = createActor(portLogic, { ...(clock ? { clock } : {}), input: { command: process.execPath, args: [fakeCli, ...cliArgs], ...input } });
  const events: PortEmitted[] = [];
  const messages: Array<Record<string, unknown>> = [];
  actor.on('*', (event: PortEmitted) => {
    events.push(event);
    if (event.type === 'port.message') messages.push(event.message as Record<string, unknown>);
  });
  const ended = new Promise<{ output?: unknown; error?: unknown }>((resolve) => {
    actor.subscribe({
      complete: () => resolve({ output: actor.getSnapshot().output }),
      error: (error) => resolve({ error }),
    });
  });
  actor.start();
  started.push(actor);
  // Execa is loaded (the before hook): the pid is there at once; a port without one must fail to spawn (checked after each).
  const pid = actor.getSnapshot().context.pid;
  if (pid === undefined) unspawned.push(actor);
  else groups.push(pid);
  let nextId = 1;
  return {
    actor,
    events,
    messages,
    ended,
    async request(method, params = {}) {
      const id = nextId++;
      await writeToPort(actor, { message: { jsonrpc: '2.0', id, method, params } });
      await waitUntil(() => messages.some((message) => message.id === id), `a response to ${method}`);
      return messages.find((message) => message.id === id) as Record<string, unknown>;
    },
  };
}

describe('port', () => {
  // The first spawn of a process waits for execa to load (spec/port/first-spawn.spec.ts);
  // these cases are about ports whose spawn is synchronous, as every later one is.
  before(() => loadExeca());
  afterEach(async () => {
    const noPid = unspawned.splice(0);
    for (const actor of noPid) await waitUntil(() => actor.getSnapshot().status !== 'active', 'a port without a pid to end', 10_000).catch(() => undefined);
    for (const actor of started.splice(0)) if (actor.getSnapshot().status === 'active') actor.stop();
    for (const pgid of groups.splice(0)) await expectGroupGone(pgid);
    for (const actor of noPid) expect((actor.getSnapshot().error as PortError | undefined)?.reason.kind, 'a port started without a pid failed to spawn').to.equal('spawn_failed');
  });

  describe('lifecycle', () => {
    it('spawns the CLI in its own process group and records pid, start time and command line', async () => {
      const { actor, request } = startPort();
      const { context, value } = actor.getSnapshot();
      expect(value).to.equal('running');
      expect(context.pid).to.be.a('number');
      expect(context.startedAt).to.be.closeTo(Date.now(), 10_000);
      expect(context.command).to.deep.equal([process.execPath, fakeCli]);
      const answer = await request('pid');
      expect(answer.result).to.deep.equal({ pid: context.pid, pgid: context.pid });
      expect(groupMembers(context.pid as number)).to.deep.equal([context.pid]);
    });

    it('serves a normal request/response and emits each line once, in order', async () => {
      const { request, messages } = startPort();
      const answer = await request('stream', { count: 5 });
      expect(answer).to.deep.equal({ jsonrpc: '2.0', id: 1, result: { streamed: 5 } });
      expect(messages.slice(0, 5).map((message) => (message.params as { index: number }).index)).to.deep.equal([0, 1, 2, 3, 4]);
      expect(messages).to.have.length(6);
    });

    it('fault injection: an injected line is handled as if the process printed it (garbage counted as non-JSON), real lines are untouched', async () => {
      const { actor, events, request } = startPort({ parse: 'json' });
      actor.send({ type: 'port.injectLine', line: 'garbage {' });
      actor.send({ type: 'port.injectLine', line: '{"jsonrpc":"2.0","method":"injected"}' });
      const answer = await request('stream', { count: 2 });
      expect(answer.result).to.deep.equal({ streamed: 2 });
      expect(events.filter((event) => event.type === 'port.nonJson')).to.have.length(1);
      expect(events.some((event) => event.type === 'port.message' && (event.message as { method?: string }).method === 'injected')).to.equal(true);
      expect(portStats(actor)?.nonJsonLines).to.equal(1);
    });

    it('asked to stop before it started: it stays stopping (never running) and ends stopped', async () => {
      const actor = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli] } });
      const phases: string[] = [];
      actor.subscribe((snapshot) => phases.push(String(snapshot.value)));
      const ended = new Promise((resolve) => actor.subscribe({ complete: () => resolve(actor.getSnapshot().output), error: resolve }));
      actor.send({ type: 'supervisor.shutdown' });
      actor.start();
      // Execa is loaded: the spawn happens in start(), so there is a group to check.
      groups.push(actor.getSnapshot().context.pid);
      const output = (await ended) as { kind: string; detail: PortExit };
      expect(phases).to.not.include('running');
      expect(output.kind).to.equal('shutdown');
      expect(output.detail.reason.kind).to.equal('stopped');
    });

    it('ends done with a normal exit on code 0, and in error with a typed reason otherwise', async () => {
      const ok = startPort();
      void writeToPort(ok.actor, { message: { jsonrpc: '2.0', id: 1, method: 'exit', params: { code: 0 } } });
      const okEnd = await ok.ended;
      expect((okEnd.output as PortExit).reason).to.deep.equal({ kind: 'exited', code: 0 });

      const bad = startPort({}, ['--stderr', 'starting up']);
      void writeToPort(bad.actor, { message: { jsonrpc: '2.0', id: 1, method: 'crash' } });
      const badEnd = await bad.ended;
      expect(PortError.is(badEnd.error)).to.equal(true);
      const error = badEnd.error as PortError;
      expect(error.reason).to.deep.equal({ kind: 'exited', code: 3 });
      expect(error.exitCode).to.equal(3);
      expect(error.shortMessage).to.match(/^Agent process failed with exit code 3: .*fake-cli\.mjs --stderr 'starting up'$/u);
      expect(error.message).to.contain('fatal: the fake agent crashed on purpose');
      expect(error.stderrTail).to.contain('starting up');
    });

    it('kill -9 mid-stream: the exit is reported as signaled after the lines already sent', async () => {
      const { actor, request, ended, messages } = startPort();
      await request('stream', { count: 3 });
      process.kill(actor.getSnapshot().context.pid as number, 'SIGKILL');
      const { error } = await ended;
      expect((error as PortError).reason).to.deep.equal({ kind: 'signaled', signal: 'SIGKILL' });
      expect(messages).to.have.length(4);
      expect(actor.getSnapshot().value).to.equal('exited');
    });
  });

  describe('framing', () => {
    it('counts garbage and half-JSON lines, skips empty ones, and keeps serving', async () => {
      const { request, events, actor } = startPort();
      const answer = await request('garbage');
      expect(answer.result).to.deep.equal({ garbage: 3 });
      const nonJson = events.filter((event) => event.type === 'port.nonJson');
      expect(nonJson.map((event) => (event as { preview: string }).preview)).to.deep.equal([
        'this is not json', '{"jsonrpc":"2.0","method":"half', '[1,2',
      ]);
      expect((await request('echo', { still: 'alive' })).result).to.deep.equal({ still: 'alive' });
      expect(portStats(actor)?.nonJsonLines).to.equal(3);
    });

    it('a 10 MB line against a 1 MB limit: reported, the CLI killed as broken, memory bounded', async () => {
      const { actor, ended, events } = startPort({ maxLineBytes: 1024 * 1024 });
      await writeToPort(actor, { message: { jsonrpc: '2.0', id: 1, method: 'huge', params: { bytes: 10 * 1024 * 1024 } } });
      const { error } = await ended;
      expect((error as PortError).reason).to.deep.equal({ kind: 'oversize_line', limit: 1024 * 1024 });
      expect(events.filter((event) => event.type === 'port.oversize')).to.have.length(1);
      expect(events.some((event) => event.type === 'port.message')).to.equal(false);
    });

    it('with the skip policy, drops the long line and keeps serving', async () => {
      const { request, events } = startPort({ maxLineBytes: 64 * 1024, oversize: 'skip' });
      await writeToPort(startedLast(), { message: { jsonrpc: '2.0', id: 99, method: 'huge', params: { bytes: 300 * 1024 } } });
      expect((await request('echo', { after: 'huge' })).result).to.deep.equal({ after: 'huge' });
      expect(events.filter((event) => event.type === 'port.oversize')).to.have.length(1);
    });

    it('delivers a partial last line at exit (and counts it when it is cut JSON)', async () => {
      const whole = startPort();
      void writeToPort(whole.actor, { message: { jsonrpc: '2.0', id: 1, method: 'partialExit', params: { text: '{"jsonrpc":"2.0","method":"bye"}', code: 0 } } });
      await whole.ended;
      expect(whole.messages).to.deep.equal([{ jsonrpc: '2.0', method: 'bye' }]);

      const cut = startPort();
      void writeToPort(cut.actor, { message: { jsonrpc: '2.0', id: 1, method: 'partialExit', params: { text: '{"jsonrpc":"2.0","met', code: 1 } } });
      const { error } = await cut.ended;
      expect((error as PortError).reason).to.deep.equal({ kind: 'exited', code: 1 });
      expect(cut.events.filter((event) => event.type === 'port.nonJson')).to.have.length(1);
    });

    it('a large final write right before exit arrives whole', async () => {
      const { actor, ended, messages } = startPort();
      const lines = 5000;
      void writeToPort(actor, { message: { jsonrpc: '2.0', id: 1, method: 'bigFinal', params: { lines, width: 1000 } } });
      const { output } = await ended;
      expect((output as PortExit).reason).to.deep.equal({ kind: 'exited', code: 0 });
      expect(messages).to.have.length(lines + 1);
      expect(messages.at(-1)).to.deep.equal({ jsonrpc: '2.0', method: 'last', params: { lines } });
      expect((messages[lines - 1]?.params as { index: number }).index).to.equal(lines - 1);
    });
  });

  describe('writes', () => {
    const closesItsInput = ['-c', 'exec 0<&-; exec "$0" "$@"', process.execPath, fakeCli, '--ignore-eof', '--banner', '{"ready":true}'];

    it('EPIPE when the CLI closes its stdin becomes an event and a typed write error, never a crash (inputClosed: keep)', async () => {
      // The shell closes the CLI's end of the pipe (fd 0) and runs it: the CLI lives on, the
      // host's writes hit a pipe nobody reads. (Closing fd 0 from inside Node aborts Node.)
      const { actor, events } = startPort({ command: '/bin/sh', args: closesItsInput, inputClosed: 'keep' });
      await waitUntil(() => events.some((event) => event.type === 'port.message'), 'the CLI to start');
      let failure: unknown;
      for (let attempt = 0; attempt < 50 && !failure; attempt++) {
        await writeToPort(actor, { message: { jsonrpc: '2.0', method: 'noise', params: 'x'.repeat(65536) } }).catch((error: unknown) => {
          failure = error;
        });
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(failure).to.be.instanceOf(PortWriteError).with.property('code', 'stdin_closed');
      expect(events.some((event) => event.type === 'port.writeError')).to.equal(true);
      expect(actor.getSnapshot().context.stdinClosed).to.equal(true);
      expect(actor.getSnapshot().status).to.equal('active');
    });

    it('by default a CLI that closed its stdin and lives on is killed as broken (input_closed), its group gone', async () => {
      const { actor, events, ended } = startPort({ command: '/bin/sh', args: closesItsInput });
      await waitUntil(() => events.some((event) => event.type === 'port.message'), 'the CLI to start');
      const pid = actor.getSnapshot().context.pid;
      void writeToPort(actor, { message: { jsonrpc: '2.0', method: 'noise', params: 'x'.repeat(65536) } }).catch(() => undefined);
      const { error } = await ended;
      expect((error as PortError).reason).to.deep.equal({ kind: 'input_closed' });
      expect((error as PortError).message).to.match(/closed its input/u);
      await expectGroupGone(pid);
    });

    it('a CLI that exits normally while a write to it meets EPIPE still ends with its own exit, not input_closed', async () => {
      // Answering its last line races its exit: the write often fails before Node has seen the exit.
      for (let round = 0; round < 5; round++) {
        const { actor, ended } = startPort({ command: '/bin/sh', args: ['-c', 'read x; echo "{}"; exit 0'] });
        void writeToPort(actor, { message: { jsonrpc: '2.0', method: 'first' } }).catch(() => undefined);
        const reply = () => void writeToPort(actor, { message: { jsonrpc: '2.0', method: 'reply', params: 'x'.repeat(65536) } }).catch(() => undefined);
        actor.on('port.message', reply);
        const { output, error } = await ended;
        expect(error, `round ${round}: ${String((error as Error | undefined)?.message)}`).to.equal(undefined);
        expect((output as PortExit).reason).to.deep.equal({ kind: 'exited', code: 0 });
      }
    });

    it('a write after exit fails with not_running', async () => {
      const { actor, ended } = startPort();
      void writeToPort(actor, { message: { jsonrpc: '2.0', id: 1, method: 'exit', params: { code: 0 } } });
      await ended;
      const error = await writeToPort(actor, { line: '{}' }).catch((caught: unknown) => caught);
      expect(error).to.be.instanceOf(PortWriteError).with.property('code', 'not_running');
    });

    it('a write sent while the port is ending is rejected, never left pending', async () => {
      const { actor, ended } = startPort();
      let pending: Promise<unknown> | undefined;
      actor.on('port.exited', () => {
        pending = writeToPort(actor, { line: '{}' }).catch((error: unknown) => error);
      });
      void writeToPort(actor, { message: { jsonrpc: '2.0', id: 1, method: 'exit', params: { code: 0 } } });
      await ended;
      expect(await pending).to.be.instanceOf(PortWriteError).with.property('code', 'not_running');
    });

    it('refuses a line with a newline inside (it would be two messages)', async () => {
      const { actor } = startPort();
      const error = await writeToPort(actor, { line: '{}\n{}' }).catch((caught: unknown) => caught);
      expect(error).to.be.instanceOf(PortWriteError).with.property('code', 'invalid_message');
      expect(actor.getSnapshot().status).to.equal('active');
    });
  });

  describe('spawn failures', () => {
    it('ENOENT names the executable and says how to fix it', async () => {
      const { ended } = startPort({ command: 'no-such-agent-cli-here', args: [] });
      const { error } = await ended;
      const reason = (error as PortError).reason;
      expect(reason).to.include({ kind: 'spawn_failed', code: 'ENOENT' });
      expect((reason as { hint: string }).hint).to.contain('"no-such-agent-cli-here" not found').and.contain('--agent-command');
    });

    it('EACCES says the file is not executable', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'warden-'));
      const file = join(dir, 'not-executable');
      writeFileSync(file, '#!/bin/sh\necho hi\n');
      chmodSync(file, 0o644);
      const { ended } = startPort({ command: file, args: [] });
      const { error } = await ended;
      rmSync(dir, { recursive: true, force: true });
      expect((error as PortError).reason).to.include({ kind: 'spawn_failed', code: 'EACCES' });
      expect((error as PortError).message).to.contain('chmod +x');
    });

    it('a spawn the OS refuses before starting (E2BIG: a 3 MB argument) ends the port, never leaves it starting', async () => {
      const { ended } = startPort({ args: [fakeCli, 'x'.repeat(3 * 1024 * 1024)] });
      const { error } = await ended;
      expect((error as PortError).reason).to.include({ kind: 'spawn_failed' });
    });

    it('under a supervisor, a missing executable is a start failure carrying the hint', () => {
      const sup = createActor(createSupervisor({ children: [{ id: 'agent', start: { logic: portLogic, input: { command: 'no-such-agent-cli-here' } } }] }));
      sup.start();
      const output = sup.getSnapshot().output as { kind: string; detail: { failedToStartChild: string; cause: PortError } };
      expect(output.kind).to.equal('shutdown');
      expect(output.detail.failedToStartChild).to.equal('agent');
      expect(output.detail.cause.message).to.contain('"no-such-agent-cli-here" not found');
    });

    it('a missing working directory is a spawn failure naming it', async () => {
      const { ended } = startPort({ cwd: '/no/such/dir' });
      const { error } = await ended;
      expect((error as PortError).reason).to.include({ kind: 'spawn_failed' });
      expect((error as PortError).message).to.contain('/no/such/dir');
    });
  });

  describe('shutdown', () => {
    it('a graceful stop closes stdin first; a CLI that exits on EOF ends stopped, done', async () => {
      const { actor, ended } = startPort();
      actor.send({ type: 'supervisor.shutdown' });
      expect(actor.getSnapshot().value).to.equal('stopping');
      const { output } = await ended;
      expect(output).to.deep.include({ kind: 'shutdown' });
      expect(((output as { detail: PortExit }).detail.reason)).to.deep.equal({ kind: 'stopped', code: 0, signal: null });
    });

    it('a CLI that ignores EOF and SIGTERM gets SIGKILL after the grace periods', async () => {
      const { actor, ended, request } = startPort({ shutdown: { stdinGraceMs: 100, killAfterMs: 200 } }, ['--ignore-eof']);
      await request('echo'); // its signal handlers are installed
      const startedAt = Date.now();
      actor.send({ type: 'supervisor.shutdown' });
      const { output } = await ended;
      expect(((output as { detail: PortExit }).detail.reason)).to.deep.equal({ kind: 'stopped', code: null, signal: 'SIGKILL' });
      expect(Date.now() - startedAt).to.be.at.least(250);
    });

    it('a stopped (SIGSTOP) CLI is continued with its SIGTERM, so a graceful stop does not wait for the SIGKILL', async () => {
      const { actor, ended, request } = startPort({ shutdown: { stdinGraceMs: 100, killAfterMs: 3_000 } });
      await request('echo');
      process.kill(actor.getSnapshot().context.pid as number, 'SIGSTOP');
      actor.send({ type: 'supervisor.shutdown' });
      const { output } = await ended;
      // Without the SIGCONT the stopped process sees neither EOF nor SIGTERM and is SIGKILLed after 3 s.
      expect(((output as { detail: PortExit }).detail.reason as { signal: string | null }).signal).to.not.equal('SIGKILL');
    });

    it('a grandchild dies with the group, on a graceful stop and on a crash', async () => {
      const first = startPort();
      const tool = (await first.request('grandchild')).result as { pid: number };
      expect(isAlive(tool.pid)).to.equal(true);
      first.actor.send({ type: 'supervisor.shutdown' });
      await first.ended;
      await waitUntil(() => !isAlive(tool.pid), 'the grandchild to die with the stop');

      const second = startPort();
      const tool2 = (await second.request('grandchild')).result as { pid: number };
      process.kill(second.actor.getSnapshot().context.pid as number, 'SIGKILL');
      await second.ended;
      await waitUntil(() => !isAlive(tool2.pid), 'the grandchild to die with the crash');
    });

    it("XState's stop() kills the whole group at once", async () => {
      const { actor, request } = startPort();
      const tool = (await request('grandchild')).result as { pid: number };
      const pid = actor.getSnapshot().context.pid;
      actor.stop();
      await expectGroupGone(pid);
      expect(isAlive(tool.pid)).to.equal(false);
    });
  });

  describe('watchdog', () => {
    it('SIGSTOP hang: no output while busy kills the CLI and reports hung', async () => {
      const { actor, ended, request } = startPort({ watchdog: { idleMs: 300 } });
      await request('echo');
      process.kill(actor.getSnapshot().context.pid as number, 'SIGSTOP');
      actor.send({ type: 'port.busy', busy: true });
      void writeToPort(actor, { message: { jsonrpc: '2.0', id: 2, method: 'echo' } });
      const { error } = await ended;
      expect((error as PortError).reason).to.deep.equal({ kind: 'hung', idleMs: 300 });
    });

    it('before the first line, silence up to startupMs is allowed (a slow start is not a hang); after it, idleMs', async () => {
      // On a simulated clock: the silence is counted by the watchdog's own timers, not by a sleep.
      const clock = new SimulatedClock();
      const { actor, ended, request } = startPort({ watchdog: { idleMs: 200, startupMs: 1500 } }, [], clock);
      actor.send({ type: 'port.busy', busy: true });
      clock.increment(700); // 3.5× idleMs, silent, busy
      expect(actor.getSnapshot().status).to.equal('active');
      await request('echo'); // its first line
      process.kill(actor.getSnapshot().context.pid as number, 'SIGSTOP');
      // The watchdog looks when the startup period would have run out: silent 800 ms by then, past idleMs.
      clock.increment(800);
      const { error } = await ended;
      expect((error as PortError).reason).to.deep.equal({ kind: 'hung', idleMs: 200 });
    });

    it('a process silent from the start is hung once startupMs has passed', async () => {
      const { actor, ended } = startPort({ watchdog: { idleMs: 100, startupMs: 400 } });
      process.kill(actor.getSnapshot().context.pid as number, 'SIGSTOP');
      actor.send({ type: 'port.busy', busy: true });
      const { error } = await ended;
      expect((error as PortError).reason).to.deep.equal({ kind: 'hung', idleMs: 400 });
    });

    it('stays quiet while idle, and while output or heartbeats keep coming', async () => {
      // On a simulated clock (heartbeats every 100 ms against 1500 ms): a slow event loop cannot
      // fake a hang, and no sleep stands for the time that passes.
      const clock = new SimulatedClock();
      const { actor, request } = startPort({ watchdog: { idleMs: 1500 } }, [], clock);
      clock.increment(1800); // idle, not busy: no verdict
      actor.send({ type: 'port.busy', busy: true });
      for (let beat = 0; beat < 20; beat++) {
        clock.increment(100);
        actor.send({ type: 'port.heartbeat' });
      }
      expect(actor.getSnapshot().status).to.equal('active');
      await request('echo');
    });
  });

  describe('environment', () => {
    it('an isolated CLI sees neither host secrets nor other agents keys, but gets its own variables', async () => {
      const parent = { ...process.env, WARDEN_TEST_SECRET: 'hunter2', OPENAI_API_KEY: 'sk-openai', ANTHROPIC_API_KEY: 'sk-ant' };
      const { request } = startPort({ env: { parent, passthrough: ['ANTHROPIC_API_KEY'], adapter: { AGENT_MODE: 'sdk' }, explicit: { EXTRA: '1' } } });
      const env = ((await request('env')).result as { env: Record<string, string> }).env;
      expect(env).to.not.have.property('WARDEN_TEST_SECRET');
      expect(env).to.not.have.property('OPENAI_API_KEY');
      expect(env).to.include({ ANTHROPIC_API_KEY: 'sk-ant', AGENT_MODE: 'sdk', EXTRA: '1' });
      expect(env.PATH).to.equal(process.env.PATH);
    });

    it('inherit passes the host environment, still without agent keys', async () => {
      const parent = { ...process.env, WARDEN_TEST_SECRET: 'visible', OPENAI_API_KEY: 'sk-openai' };
      const { request } = startPort({ env: { policy: 'inherit', parent } });
      const env = ((await request('env')).result as { env: Record<string, string> }).env;
      expect(env).to.include({ WARDEN_TEST_SECRET: 'visible' });
      expect(env).to.not.have.property('OPENAI_API_KEY');
    });
  });

  describe('under a supervisor', () => {
    it('a CLI killed with -9 is restarted with a new pid, and the old group is gone', async () => {
      const sup = createActor(createSupervisor({
        children: [{ id: 'port', start: { logic: portLogic, input: { command: process.execPath, args: [fakeCli] } } }],
      }));
      sup.start();
      try {
        const first = whichChildren(sup)[0]?.ref as PortActor;
        const firstPid = first.getSnapshot().context.pid;
        groups.push(firstPid);
        expect(firstPid, 'the first pid').to.be.a('number');
        process.kill(firstPid as number, 'SIGKILL');
        await waitUntil(() => whichChildren(sup)[0]?.ref !== first && whichChildren(sup)[0]?.ref !== undefined, 'the port to restart');
        const second = whichChildren(sup)[0]?.ref as PortActor;
        const secondPid = second.getSnapshot().context.pid;
        groups.push(secondPid);
        expect(secondPid).to.not.equal(firstPid);
        expect(whichChildren(sup)[0]?.restarts).to.equal(1);
        await expectGroupGone(firstPid);
      } finally {
        sup.stop();
      }
    });
  });
});

function startedLast(): PortActor {
  return started.at(-1) as PortActor;
}
