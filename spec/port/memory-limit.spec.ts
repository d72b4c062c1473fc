/**
 * Memory limits and the tree kill of a port, against the fake CLI (spec/support/fake-cli.mjs):
 * a CLI leaking 50 MB/s is killed at the first sample over its hard limit (so before the limit
 * plus one poll interval's growth), recycled between turns over its soft one, and every
 * process of its tree dies with it, a `setsid` grandchild in its own session included.
 * Assertions read the exit reason and the samples the port emitted, never the time taken.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { createActor, type Actor } from 'xstate';
import { portLogic, PortError, writeToPort, type PortEmitted, type PortExit, type PortInput } from '../../src/port/index.js';
import { loadExeca } from '../../src/port/execa-loader.js';
import { memoryLimitSettings } from '../../src/port/memory-limit.js';
import { walkTree } from '../../src/port/process-tree.js';
import { treeResidentBytes } from '../../src/port/tree-memory.js';
import { expectGroupGone, isAlive, waitUntil } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));
const mib = 1024 * 1024;

type PortActor = Actor<typeof portLogic>;

interface Harness {
  readonly actor: PortActor;
  readonly pid: number;
  readonly events: PortEmitted[];
  readonly ended: Promise<{ output?: unknown; error?: unknown }>;
  request(method: string, params?: unknown): Promise<Record<string, unknown>>;
}

const started: Array<{ actor: PortActor; pid: number }> = [];
/** Processes a test made that must be gone after it (killed here if not, then failed). */
const strays: number[] = [];

function startPort(input: Partial<PortInput> = {}): Harness {
  const actor = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli], ...input } });
  const events: PortEmitted[] = [];
  actor.on('*', (event: PortEmitted) => events.push(event));
  const ended = new Promise<{ output?: unknown; error?: unknown }>((resolve) => {
    actor.subscribe({ complete: () => resolve({ output: actor.getSnapshot().output }), error: (error) => resolve({ error }) });
  });
  actor.start();
  const pid = actor.getSnapshot().context.pid as number;
  started.push({ actor, pid });
  let nextId = 1;
  return {
    actor,
    pid,
    events,
    ended,
    async request(method, params = {}) {
      const id = nextId++;
      await writeToPort(actor, { message: { jsonrpc: '2.0', id, method, params } });
      const answer = () => events.find((event) => event.type === 'port.message' && (event.message as { id?: number }).id === id);
      await waitUntil(() => answer() !== undefined, `a response to ${method}`);
      return (answer() as { message: Record<string, unknown> }).message;
    },
  };
}

const samples = (events: readonly PortEmitted[]) => events.flatMap((event) => (event.type === 'port.memory' ? [event.rssBytes] : []));

describe('port memory limits and tree kill', function () {
  this.timeout(60_000);
  before(() => loadExeca());
  afterEach(async () => {
    for (const { actor } of started) if (actor.getSnapshot().status === 'active') actor.stop();
    for (const { pid } of started.splice(0)) await expectGroupGone(pid);
    const left = strays.splice(0).filter((pid) => isAlive(pid));
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left, 'processes of a tree left running').to.deep.equal([]);
  });

  describe('options', () => {
    it('the hard limit defaults to 1.25 × the soft one, the poll to 1 s, cgroups to off; a hard limit below the soft one is refused', () => {
      expect(memoryLimitSettings({ softBytes: 300 * mib })).to.deep.equal({ softBytes: 300 * mib, hardBytes: 375 * mib, pollMs: 1000, cgroup: false });
      expect(memoryLimitSettings({ hardBytes: 300 * mib, pollMs: 250 })).to.deep.equal({ softBytes: Number.POSITIVE_INFINITY, hardBytes: 300 * mib, pollMs: 250, cgroup: false });
      expect(memoryLimitSettings({ softBytes: 300 * mib, cgroup: true })?.cgroup).to.equal(true);
      expect(() => memoryLimitSettings({ softBytes: 300 * mib, hardBytes: 200 * mib })).to.throw(TypeError, /at least `memoryLimit.softBytes`/u);
      expect(() => memoryLimitSettings({})).to.throw(TypeError, /`softBytes`, `hardBytes` or both/u);
      expect(() => memoryLimitSettings({ softBytes: -1 })).to.throw(TypeError, /softBytes.*> 0/u);
      expect(memoryLimitSettings(undefined)).to.equal(undefined);
    });
  });

  describe('reading the tree', () => {
    it('the tree holds a setsid grandchild in its own session, and its memory is counted', async () => {
      const { pid, request } = startPort();
      const tool = ((await request('setsidGrandchild')).result as { pid: number }).pid;
      strays.push(tool);
      await waitUntil(() => walkTree(pid).some((member) => member.pid === tool), 'the setsid grandchild to be in the tree');
      const members = walkTree(pid);
      expect(members.map((member) => member.pid)).to.include.members([pid, tool]);
      expect(treeResidentBytes(members)).to.be.above(0);
    });
  });

  describe('hard limit', () => {
    it('a CLI leaking 50 MB/s under a hard limit of 300 MiB is killed at the first sample over it, with its setsid grandchild; reason memory_exceeded', async () => {
      const limit = 300 * mib;
      const { pid, events, ended, request, actor } = startPort({ memoryLimit: { softBytes: limit, hardBytes: limit, pollMs: 100 } });
      // A turn is open: the soft limit waits, the hard one does not.
      actor.send({ type: 'port.busy', busy: true, turnOpen: true });
      const tool = ((await request('setsidGrandchild')).result as { pid: number }).pid;
      strays.push(tool);
      await request('leak', { mbPerSecond: 50 });
      const { error } = await ended;
      expect(PortError.is(error)).to.equal(true);
      const reason = (error as PortError).reason;
      expect(reason).to.include({ kind: 'memory_exceeded', limit: 'hard', limitBytes: limit, method: 'proc' });
      const seen = samples(events);
      // Killed at the sample that crossed: every earlier one was under the limit, so the tree
      // never got past the limit plus one interval's growth (the last step between samples).
      expect(seen.at(-1)).to.equal((reason as { rssBytes: number }).rssBytes);
      expect(seen.at(-1)).to.be.at.least(limit);
      expect(seen.slice(0, -1).every((bytes) => bytes < limit), `samples before the last: ${seen.slice(0, -1).map((bytes) => Math.round(bytes / mib)).join(', ')} MiB`).to.equal(true);
      expect((error as PortError).message).to.match(/over its hard limit of 300 MiB, and was killed/u);
      await waitUntil(() => !isAlive(tool), 'the setsid grandchild to die with the tree');
      await expectGroupGone(pid);
    });
  });

  describe('soft limit', () => {
    it('over the soft limit during a turn, the CLI is left alone until the turn closes, then stopped gracefully (exit code 0 on EOF); reason memory_exceeded soft', async () => {
      const soft = 100 * mib;
      const { events, ended, request, actor } = startPort({ memoryLimit: { softBytes: soft, hardBytes: 4096 * mib, pollMs: 100 } });
      actor.send({ type: 'port.busy', busy: true, turnOpen: true });
      await request('leak', { mbPerSecond: 100, upToMb: 150 });
      await waitUntil(() => events.some((event) => event.type === 'port.message' && (event.message as { method?: string }).method === 'leakDone'), 'the leak to stop at 150 MB');
      // Samples over the soft limit, the turn still open: several polls later it still runs.
      const over = () => samples(events).filter((bytes) => bytes >= soft).length;
      await waitUntil(() => over() >= 5, 'five samples over the soft limit');
      expect(actor.getSnapshot().status).to.equal('active');
      expect(actor.getSnapshot().value).to.equal('running');
      // A permission wait: not busy, the turn still open: still no recycle.
      actor.send({ type: 'port.busy', busy: false, turnOpen: true });
      const seenAfterWait = over();
      await waitUntil(() => over() >= seenAfterWait + 3, 'three more samples over the soft limit');
      expect(actor.getSnapshot().value).to.equal('running');
      // The turn closes: recycled now.
      actor.send({ type: 'port.busy', busy: false, turnOpen: false });
      const { error } = await ended;
      const reason = (error as PortError).reason;
      expect(reason).to.include({ kind: 'memory_exceeded', limit: 'soft', limitBytes: soft, method: 'proc' });
      expect((reason as { rssBytes: number }).rssBytes).to.be.at.least(soft);
      const exit = events.find((event): event is { type: 'port.exited'; exit: PortExit } => event.type === 'port.exited')?.exit;
      expect(exit?.reason.kind).to.equal('memory_exceeded');
      expect((error as PortError).exitCode).to.equal(undefined);
      expect((error as PortError).message).to.match(/over its soft limit of 100 MiB, and was recycled between turns/u);
    });

    it('over the soft limit with no turn open, the CLI is recycled at once', async () => {
      const soft = 100 * mib;
      const { ended, request } = startPort({ memoryLimit: { softBytes: soft, pollMs: 100 } });
      await request('leak', { mbPerSecond: 100, upToMb: 150 });
      const { error } = await ended;
      expect((error as PortError).reason).to.include({ kind: 'memory_exceeded', limit: 'soft' });
    });
  });

  describe('tree kill', () => {
    for (const [how, end] of [
      ['a graceful stop (the CLI exits on EOF, leaving its tools to init)', (actor: PortActor) => actor.send({ type: 'supervisor.shutdown' })],
      ['an immediate stop (XState stop: SIGKILL)', (actor: PortActor) => actor.stop()],
    ] as const) {
      it(`${how}: a setsid grandchild in its own session dies too`, async () => {
        const { pid, request, actor, ended } = startPort();
        const tool = ((await request('setsidGrandchild')).result as { pid: number }).pid;
        strays.push(tool);
        await waitUntil(() => walkTree(pid).some((member) => member.pid === tool), 'the setsid grandchild to be in the tree');
        end(actor);
        if (actor.getSnapshot().status === 'active') await ended;
        await waitUntil(() => !isAlive(tool), 'the setsid grandchild to be gone');
        await expectGroupGone(pid);
      });
    }
  });
});
