/**
 * `warden ...` as an editor's agent configuration runs it: found by name on PATH (this
 * checkout's CLI through a shim, path-editor.ts `binDirectory`), in the project directory, with
 * that directory as HOME, in its own process group (killGroups stops it and what it started).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { binDirectory } from './path-editor.js';

/** Spawns `warden ARGS` by name in `cwd` (its HOME too), pushed on `launched`; `env` adds variables. */
export function spawnWardenByName(args: readonly string[], cwd: string, launched: ChildProcess[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn('warden', [...args], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, ...env, PATH: `${binDirectory(cwd)}:${process.env.PATH ?? ''}`, HOME: cwd },
  });
  launched.push(child);
  return child;
}
