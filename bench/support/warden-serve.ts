/**
 * A `warden serve --agent demo` for the serve benches: spawned from a build in a process group
 * of its own, resolved once it said where it listens and where its token file is.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { withDeadline } from './measure.js';

/** Starts `node MAIN serve --listen LISTEN --agent demo ARGS` (default `127.0.0.1:0`); resolves with its URL once it listens. */
export async function startServeDaemon(main: string, env: NodeJS.ProcessEnv, args: readonly string[], listen = '127.0.0.1:0'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [main, 'serve', '--listen', listen, '--agent', 'demo', ...args], { stdio: ['ignore', 'ignore', 'pipe'], detached: true, env });
  let stderr = '';
  const url = await withDeadline(
    new Promise<string>((resolve, reject) => {
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        // Both lines: the token file is written before the second one.
        const found = /token file \S+\n/.test(stderr) ? /listening on (\S+)/.exec(stderr)?.[1] : undefined;
        if (found) resolve(found);
      });
      child.once('exit', () => reject(new Error(`warden serve exited: ${stderr}`)));
    }),
    'warden serve to listen',
  );
  return { url, child };
}

/** Kills a process group started by a bench; a group already gone is no error. */
export function killGroup(child: ChildProcess | undefined): void {
  try {
    if (child?.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // gone
  }
}
