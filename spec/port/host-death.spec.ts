/**
 * If the host itself is killed with SIGKILL (no exit handler runs), the CLIs it started
 * must not live on: a polite CLI exits on stdin EOF, and the orphan reaper kills every
 * registered process group, tools and stubborn CLIs included.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isAlive, waitUntil } from '../support/processes.js';

const hostScript = fileURLToPath(new URL('../support/port-host.ts', import.meta.url));

describe('port: host killed with SIGKILL', () => {
  it('leaves no CLI behind: EOF ends the polite one, the reaper kills the stubborn one and the tools', async () => {
    const host = spawn(process.execPath, ['--import', 'tsx', hostScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    let pids: Record<string, number> = {};
    try {
      const firstLine = await new Promise<string>((resolve, reject) => {
        let buffered = '';
        host.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString('utf8');
          const newline = buffered.indexOf('\n');
          if (newline >= 0) resolve(buffered.slice(0, newline));
        });
        host.on('exit', (code) => reject(new Error(`the host exited early with ${code}`)));
        setTimeout(() => reject(new Error('the host did not report its ports within 20 s')), 20_000).unref();
      });
      pids = JSON.parse(firstLine) as Record<string, number>;
      for (const name of ['polite', 'stubborn', 'grandchild', 'reaper']) {
        expect(pids[name], name).to.be.a('number');
        expect(isAlive(pids[name]), `${name} alive before the kill`).to.equal(true);
      }
      process.kill(pids.host as number, 'SIGKILL');
      for (const name of ['polite', 'stubborn', 'grandchild', 'reaper']) {
        await waitUntil(() => !isAlive(pids[name]), `${name} (${pids[name]}) to die after the host was killed`, 15_000);
      }
    } finally {
      for (const pid of Object.values(pids)) {
        try {
          if (isAlive(pid)) process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      if (host.exitCode === null) host.kill('SIGKILL');
    }
  });
});
