/**
 * If the host itself is killed with SIGKILL (no exit handler runs), the CLIs it started
 * must not live on: a polite CLI exits on stdin EOF, and the orphan reaper kills every
 * registered process group, tools and stubborn CLIs included. If it exits without stopping
 * its ports (`process.exit()`), its exit hooks kill each port's tree, a `setsid` tool too.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { isAlive, waitUntil } from '../support/processes.js';

const hostScript = fileURLToPath(new URL('../support/port-host.ts', import.meta.url));
const treeHostScript = fileURLToPath(new URL('../support/tree-host.ts', import.meta.url));

/** Whatever of the test is still running (it failed midway): killed, the host too. */
function killLeft(pids: Record<string, number>, host: ChildProcess): void {
  for (const pid of Object.values(pids)) {
    try {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (host.exitCode === null) host.kill('SIGKILL');
}

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
      killLeft(pids, host);
    }
  });
});

describe('port: host exits without stopping its ports', () => {
  it('process.exit(): the exit hook kills the CLI (one that ignores EOF) and its setsid tool, in its own session', async () => {
    const host = spawn(process.execPath, ['--import', 'tsx', treeHostScript], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, WARDEN_ORPHAN_REAPER: '0' } });
    let pids: Record<string, number> = {};
    try {
      const firstLine = await new Promise<string>((resolve, reject) => {
        let buffered = '';
        host.stdout.on('data', (chunk: Buffer) => {
          buffered += chunk.toString('utf8');
          const newline = buffered.indexOf('\n');
          if (newline >= 0) resolve(buffered.slice(0, newline));
        });
        setTimeout(() => reject(new Error('the host did not report its port within 20 s')), 20_000).unref();
      });
      pids = JSON.parse(firstLine) as Record<string, number>;
      const exited = host.exitCode !== null ? host.exitCode : await new Promise<number | null>((resolve) => host.on('exit', resolve));
      expect(exited, 'the host exited by itself').to.equal(0);
      // The reaper is off: only the exit hooks ran.
      for (const name of ['cli', 'tool']) await waitUntil(() => !isAlive(pids[name]), `${name} (${pids[name]}) to die with the host's exit`, 15_000);
    } finally {
      killLeft(pids, host);
    }
  });
});
