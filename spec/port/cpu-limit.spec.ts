/**
 * The CPU limit of a port's process tree (`cpuLimit`, src/port/cpu-limit.ts): a v1 cpu cgroup
 * of its own whose quota the kernel enforces. Tested where this process may create one; elsewhere
 * skipped saying what is missing (and `cpuLimitMethod()` says the same to `warden agents`).
 * CPU shares are measured from /proc over a window of wall time and judged with a wide margin
 * (2 × the quota), never as a timing assertion: an unlimited spin uses a whole core.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createActor } from 'xstate';
import { portLogic, writeToPort, type PortEmitted } from '../../src/port/index.js';
import { loadExeca } from '../../src/port/execa-loader.js';
import { cgroupSupport } from '../../src/port/agent-cgroup.js';
import { cpuLimitMethod, cpuLimitSettings, cpuQuotaUs } from '../../src/port/cpu-limit.js';
import { liveOfPort } from '../../src/port/port-state.js';
import { expectGroupGone, waitUntil } from '../support/processes.js';

const fakeCli = fileURLToPath(new URL('../support/fake-cli.mjs', import.meta.url));

/** CPU seconds (user + system) of `pid` so far, from /proc/PID/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
}

describe('port CPU limit (a v1 cpu cgroup)', function () {
  this.timeout(60_000);

  it('checks the percent: 1 to 100 per core; the quota per 100 ms period', () => {
    expect(cpuLimitSettings({ percent: 50 })).to.deep.equal({ percent: 50 });
    expect(() => cpuLimitSettings({ percent: 0 })).to.throw(/cpuLimit\.percent.*from 1 to/u);
    expect(() => cpuLimitSettings({ percent: 100_000 })).to.throw(/100 per core/u);
    expect(cpuQuotaUs(25)).to.equal(25_000);
    expect(cpuQuotaUs(0.5)).to.equal(1000);
    expect(cpuLimitMethod()).to.match(/^CPU limits \(--max-cpu\): /u);
  });

  describe('where a cpu cgroup can be made', () => {
    before(function () {
      const { cpuV1, missingCpu } = cgroupSupport();
      if (!cpuV1) {
        console.log(`      skipped: ${missingCpu}`);
        this.skip();
      }
      return loadExeca();
    });

    it('a CLI spinning at 100% under a limit of 20% uses under 40% of a core over 1.5 s; the cgroup throttled it, and is removed when the port ends', async () => {
      const actor = createActor(portLogic, { input: { command: process.execPath, args: [fakeCli], cpuLimit: { percent: 20 } } });
      const events: PortEmitted[] = [];
      actor.on('*', (event: PortEmitted) => events.push(event));
      const ended = new Promise<unknown>((resolve) => actor.subscribe({ complete: () => resolve(undefined), error: resolve }));
      actor.start();
      const pid = actor.getSnapshot().context.pid as number;
      const cgroup = liveOfPort(actor)?.cgroup;
      expect(cgroup?.limitsCpu, 'a cpu cgroup').to.equal(true);
      const dirs = cgroup?.dirs ?? [];
      await writeToPort(actor, { message: { jsonrpc: '2.0', id: 1, method: 'spin', params: { seconds: 30 } } });
      await waitUntil(() => events.some((event) => event.type === 'port.message' && (event.message as { id?: number }).id === 1), 'the spin to start');
      const startCpu = cpuSeconds(pid);
      const startWall = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const share = (cpuSeconds(pid) - startCpu) / ((Date.now() - startWall) / 1000);
      expect(share, `CPU share of the spinning CLI (${share.toFixed(2)} of a core)`).to.be.below(0.4);
      expect(cgroup?.throttledPeriods(), 'periods the kernel throttled it in').to.be.greaterThan(0);
      actor.stop();
      await ended;
      await expectGroupGone(pid);
      await waitUntil(() => dirs.every((dir) => !existsSync(dir)), `the cgroups to be removed (${dirs.join(', ')})`);
    });
  });
});
