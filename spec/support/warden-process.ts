/**
 * What the editors of spec/support share for a `warden acp` they spawned (acp-editor.ts,
 * warden-editor.ts, path-editor.ts): the CLI entry point, stderr collected as text, the exit
 * code, the official SDK's client connected over its stdio, `#!/bin/sh` shims for a bin
 * directory, and the kill of every launched warden's whole process group after a test.
 */
import { ndJsonStream } from '@agentclientprotocol/sdk';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { childrenOf, expectGroupGone, isAlive, waitUntil } from './processes.js';

/**
 * This checkout's CLI as a user's PATH runs it: the build, dist/cli/main.js (the package's
 * `bin`), run by plain `node`. The suite's global setup (fresh-build.ts) builds it when src/ is
 * newer, so a spec never runs a stale build; tsx is for the specs themselves, not for the
 * processes they start (it costs each process about 0.3 s of CPU at start).
 */
export const wardenMain = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

/** This checkout's CLI source (src/cli/main.ts), run under tsx by the specs that look at its own modules. */
export const wardenSource = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

/** Writes an executable `#!/bin/sh` script at `path` that execs `command` with its arguments. */
export function writeShim(path: string, command: string): void {
  writeFileSync(path, `#!/bin/sh\nexec ${command} "$@"\n`);
  chmodSync(path, 0o755);
}

/**
 * Collects what `child` writes on stderr; the function returned gives it so far: all of it, or
 * its last `keep` characters.
 */
export function stderrOf(child: ChildProcess, { keep }: { readonly keep?: number } = {}): () => string {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = keep === undefined ? stderr + chunk.toString('utf8') : (stderr + chunk.toString('utf8')).slice(-keep);
  });
  return () => stderr;
}

/** Resolves with `child`'s exit code once it exits. */
export function exitCodeOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** The agent side of an SDK client's connection, its requests untyped. */
export interface UntypedAgent {
  request(method: string, params: unknown): Promise<unknown>;
}

/** Connects `app` (the SDK's `client(...)` with its handlers) to `child`'s stdio. */
export function connectOverStdio(app: { connect(stream: ReturnType<typeof ndJsonStream>): { readonly agent: unknown } }, child: ChildProcess): UntypedAgent {
  const stream = ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>);
  return app.connect(stream).agent as UntypedAgent;
}

/** Every live descendant of `pid` (agents run in process groups of their own). */
function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child.pid, ...descendantsOf(child.pid)]);
}

/**
 * Empties `launched`: SIGKILLs what is still running of each warden in it (its whole group)
 * and waits until the group is gone. With `descendants`, it also waits until every process
 * the warden had started (in groups of their own: the orphan reaper takes those down) is gone.
 * A child that never got a pid (its spawn failed) fails the check, after the others are done:
 * its group is unknown, so nothing about it could be proven gone.
 */
export async function killGroups(launched: ChildProcess[], { descendants = false }: { readonly descendants?: boolean } = {}): Promise<void> {
  const unspawned: string[] = [];
  for (const child of launched.splice(0)) {
    if (child.pid === undefined) {
      unspawned.push(child.spawnargs.join(' '));
      continue;
    }
    const started = descendants ? descendantsOf(child.pid) : [];
    if (isAlive(child.pid)) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await expectGroupGone(child.pid, 20_000);
    for (const pid of started) await waitUntil(() => !isAlive(pid), `process ${pid} started by warden to be gone`, 20_000);
  }
  if (unspawned.length > 0) throw new Error(`never spawned (no pid, so no process group to check): ${unspawned.join('; ')}`);
}

/**
 * Closes `child`'s stdin, as an editor that quits does, and waits up to `ms` for it to exit by
 * itself: whether it did (what is left is for {@link killGroups}).
 */
export async function closedGracefully(child: ChildProcess, ms = 10_000): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  const exited = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
  child.stdin?.end();
  let timer: NodeJS.Timeout | undefined;
  const gone = await Promise.race([exited, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return gone;
}
