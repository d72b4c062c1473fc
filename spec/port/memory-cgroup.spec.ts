/**
 * The opt-in cgroup path of memory limits (`memoryLimit.cgroup`, src/port/agent-cgroup.ts),
 * tested only where this process may create cgroups (root with a writable v1 memory
 * hierarchy, and v2 with `cgroup.kill`); elsewhere each case is skipped saying what is
 * missing. The /proc path (spec/port/memory-limit.spec.ts) is the default and is tested
 * everywhere.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { portLogic, PortError, writeToPort, type PortEmitted } from '../../src/port/index.js';
import { loadExeca } from '../../src/port/execa-loader.js';
import { cgroupSupport } from '../../src/port/agent-cgroup.js';
import { liveOfPort } from '../../src/port/port-state.js';
import { expectGroupGone, isAlive, waitUntil } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));
const mib = 1024 * 1024;

describe('port memory limits in cgroups (opt-in)', function () {
  this.timeout(60_000);
  const strays: number[] = [];
  before(function () {
    const { memoryV1, killV2, missing } = cgroupSupport();
    if (!memoryV1 || !killV2) {
      console.log(`      skipped: this process cannot create agent cgroups here (${missing})`);
      this.skip();
    }
    return loadExeca();
  });
  afterEach(() => {
    const left = strays.splice(0).filter((pid) => isAlive(pid));
    for (const pid of left) process.kill(pid, 'SIGKILL');
    expect(left, 'processes left running').to.deep.equal([]);
  });

  it('the kernel kills a CLI leaking 100 MB/s at the memory cgroup\'s hard limit (polled from /proc only every 60 s): reason memory_exceeded, method cgroup; cgroup.kill ends its setsid grandchild; the cgroups are removed', async () => {
    const limit = 200 * mib;
    const actor = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli], memoryLimit: { hardBytes: limit, pollMs: 60_000, cgroup: true } } });
    const events: PortEmitted[] = [];
    actor.on('*', (event: PortEmitted) => events.push(event));
    const ended = new Promise<unknown>((resolve) => actor.subscribe({ complete: () => resolve(undefined), error: resolve }));
    actor.start();
    const pid = actor.getSnapshot().context.pid as number;
    const dirs = liveOfPort(actor)?.cgroup?.dirs ?? [];
    expect(dirs, 'a memory cgroup and a v2 cgroup').to.have.length(2);
    let nextId = 1;
    const request = async (method: string, params: unknown = {}) => {
      const id = nextId++;
      await writeToPort(actor, { message: { jsonrpc: '2.0', id, method, params } });
      await waitUntil(() => events.some((event) => event.type === 'port.message' && (event.message as { id?: number }).id === id), `a response to ${method}`);
      return (events.find((event) => event.type === 'port.message' && (event.message as { id?: number }).id === id) as { message: { result: Record<string, unknown> } }).message;
    };
    const tool = (await request('setsidGrandchild')).result.pid as number;
    strays.push(tool);
    await request('leak', { mbPerSecond: 100 });
    const error = await ended;
    expect(PortError.is(error)).to.equal(true);
    const reason = (error as PortError).reason;
    expect(reason).to.include({ kind: 'memory_exceeded', limit: 'hard', limitBytes: limit, method: 'cgroup' });
    // The kernel enforces the limit: the cgroup's peak charge never went past it.
    expect((reason as { rssBytes: number }).rssBytes).to.be.at.most(limit);
    expect(events.filter((event) => event.type === 'port.memory'), 'no /proc sample was due').to.deep.equal([]);
    await waitUntil(() => !isAlive(tool), 'the setsid grandchild to be gone');
    await expectGroupGone(pid);
    await waitUntil(() => dirs.every((dir) => !existsSync(dir)), `the cgroups to be removed (${dirs.join(', ')})`);
  });
});
