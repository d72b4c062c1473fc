/**
 * An editor that launches `warden acp` the way an editor does (the real entry point, its own
 * process group, stdio pipes) and talks to it with the official SDK's client. Every warden
 * launched is listed, so that `killLaunched()` in an `afterEach` leaves nothing behind.
 */
import { client, methods } from '@agentclientprotocol/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf, wardenMain as main } from './warden-process.js';

/** A JSON-RPC error as the SDK's client rejects with it. */
export interface WireError {
  readonly code: number;
  readonly message: string;
  readonly data?: Record<string, unknown>;
}

export interface WardenEditor {
  readonly process: ChildProcess;
  readonly pid: number;
  readonly stderr: () => string;
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  /** Closes stdin (the editor goes away) and resolves with warden's exit status. */
  close(): Promise<number | null>;
  /** Resolves with warden's exit status when it ends by itself. */
  readonly exited: Promise<number | null>;
}

const launched: ChildProcess[] = [];

/**
 * Starts `warden acp ARGS` and initializes it. `umask` (octal, say `0o022`) runs it under
 * that umask, as a login shell would.
 */
export async function launchWarden(args: readonly string[], options: { readonly umask?: number; readonly env?: Record<string, string> } = {}): Promise<WardenEditor> {
  const command = [process.execPath, main, 'acp', ...args];
  const [file, argv] = options.umask === undefined
    ? [command[0] as string, command.slice(1)]
    : ['/bin/sh', ['-c', `umask ${options.umask.toString(8).padStart(3, '0')} && exec "$@"`, 'sh', ...command]];
  const child = spawn(file, argv, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...options.env } });
  launched.push(child);
  const stderr = stderrOf(child);
  const exited = exitCodeOf(child);
  const app = client({ name: 'store-test-editor' }).onNotification(methods.client.session.update, () => undefined);
  const agent = connectOverStdio(app, child);
  const editor: WardenEditor = {
    process: child,
    pid: child.pid as number,
    stderr,
    request: (method, params) => agent.request(method, params) as Promise<never>,
    exited,
    async close() {
      child.stdin?.end();
      return exited;
    },
  };
  await editor.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'store-test-editor', version: '1' } });
  return editor;
}

/** The error a request was answered with (fails when it succeeded). */
export async function wireErrorOf(promise: Promise<unknown>): Promise<WireError> {
  const outcome = await promise.then(() => undefined, (error: unknown) => error);
  if (outcome === undefined) throw new Error('the request should have failed');
  return outcome as WireError;
}

/** SIGKILLs what is left of every warden launched (its whole group) and waits until it is gone. */
export async function killLaunched(): Promise<void> {
  await killGroups(launched);
}
