/**
 * `warden acp` launched the way an editor launches it: the real entry point, its own process
 * group, stdio pipes, the official SDK's client, and the agent CLIs found by bare name on the
 * PATH (`claude` and `codex` are small wrappers around the fakes in a temp `bin`, nothing
 * else points at them). The editor answers permission requests with the option of kind
 * `allow_once`. `stopWardens()` kills whatever a test left and waits until it is gone.
 */
import { client, methods } from '@agentclientprotocol/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf, wardenMain as main, writeShim } from './warden-process.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const fakes = { claude: 'fake-claude.mjs', codex: 'fake-codex.mjs' } as const;

/** Writes `claude` and `codex` into `dir/bin` (each runs its fake) and returns a PATH that finds them first. */
export function pathWithFakeAgents(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  for (const [name, file] of Object.entries(fakes)) {
    writeShim(join(bin, name), `"${process.execPath}" "${fileURLToPath(new URL(file, import.meta.url))}"`);
  }
  return `${bin}:${process.env.PATH ?? ''}`;
}

/** A JSON-RPC error as the SDK's client rejects with it. */
export interface RequestFailure {
  readonly code: number;
  readonly message: string;
  readonly data?: Record<string, unknown>;
}

/** A running `warden acp` and its editor side. */
export interface LaunchedWarden {
  readonly process: ChildProcess;
  /** Everything warden wrote on stderr so far. */
  readonly stderr: () => string;
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  /** The error a request fails with (fails the test when it succeeds). */
  failure(method: string, params: unknown): Promise<RequestFailure>;
  /** Closes stdin (the editor goes away) and resolves with warden's exit code. */
  close(): Promise<number | null>;
}

const launched: ChildProcess[] = [];

/** Launches `warden acp ...args` with `env` added to this process's environment, and initializes it. */
export async function launchWarden(args: readonly string[], env: Record<string, string>): Promise<LaunchedWarden> {
  const child = spawn(process.execPath, [main, 'acp', ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, cwd: repo, env: { ...process.env, ...env } });
  launched.push(child);
  const stderr = stderrOf(child);
  const exited = exitCodeOf(child);
  const app = client({ name: 'test-editor' }).onRequest(methods.client.session.requestPermission, async ({ params }) => {
    const once = params.options.find((option) => option.kind === 'allow_once');
    return { outcome: once ? { outcome: 'selected' as const, optionId: once.optionId } : { outcome: 'cancelled' as const } };
  });
  const agent = connectOverStdio(app, child);
  const warden: LaunchedWarden = {
    process: child,
    stderr,
    request: (method, params) => agent.request(method, params) as Promise<never>,
    async failure(method, params) {
      const outcome = await agent.request(method, params).then(() => undefined, (error: unknown) => error);
      if (outcome === undefined) throw new Error(`${method} should have failed`);
      return outcome as RequestFailure;
    },
    async close() {
      child.stdin?.end();
      return exited;
    },
  };
  await warden.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'test-editor', version: '1' } });
  return warden;
}

/** Kills every warden still running (its whole group) and waits until nothing of it is left. */
export async function stopWardens(): Promise<void> {
  await killGroups(launched);
}
