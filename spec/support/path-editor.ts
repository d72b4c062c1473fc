/**
 * Editors for `warden acp` end to end, launched as a user's editor launches it: the bare
 * command `warden` found through PATH (a shim in a temporary bin directory runs this
 * checkout's CLI), its own process group, stdio pipes. Two kinds of editor:
 *
 * - `sdkEditor`: the official SDK's client (requests, updates, permission answers);
 * - `rawEditor`: bytes written as given (several requests in one write, say), answers read
 *   line by line.
 *
 * `stopAll()` kills every launched warden's process group (grandchildren included) and waits
 * until nothing of it is left.
 */
import { client, methods } from '@agentclientprotocol/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { waitUntil } from './processes.js';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf, wardenMain as main, writeShim } from './warden-process.js';


/** A `session/update` as the editor received it. */
export interface ReceivedUpdate {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly content?: { readonly type: string; readonly text?: string; readonly _meta?: Record<string, unknown> }; readonly [key: string]: unknown };
}

const launched: ChildProcess[] = [];

/**
 * A bin directory under `dir` with `warden` (this checkout's CLI) and any other shims given
 * (`name` → the script node runs): put it first in PATH.
 */
export function binDirectory(dir: string, scripts: Record<string, string> = {}): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const shim = (name: string, command: string) => writeShim(join(bin, name), command);
  shim('warden', `'${process.execPath}' '${main}'`);
  for (const [name, script] of Object.entries(scripts)) shim(name, `'${process.execPath}' '${script}'`);
  return bin;
}

/** Spawns `warden acp ARGS` through PATH (with `bin` first in it), in `cwd`. */
function spawnWarden(bin: string, args: readonly string[], cwd: string): ChildProcess {
  const child = spawn('warden', ['acp', ...args], {
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
  });
  launched.push(child);
  return child;
}

/** An editor on the official SDK's client. */
export interface SdkEditor {
  readonly process: ChildProcess;
  readonly updates: ReceivedUpdate[];
  readonly stderr: () => string;
  /** The answer to `initialize`, once `initializedEditor` had it. */
  initialized: { readonly agentCapabilities: { readonly sessionCapabilities?: Record<string, unknown> } } | undefined;
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  /** Closes stdin (the editor goes away) and waits for warden to exit. */
  close(): Promise<number | null>;
}

/** Launches warden and connects the SDK's client; `initialize` is the caller's (say, pipelined). */
export function sdkEditor(bin: string, args: readonly string[], cwd: string): SdkEditor {
  const child = spawnWarden(bin, args, cwd);
  const stderr = stderrOf(child);
  const updates: ReceivedUpdate[] = [];
  const app = client({ name: 'surface-test-editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as unknown as ReceivedUpdate);
    })
    .onRequest(methods.client.session.requestPermission, async ({ params }) => {
      const allow = params.options.find((option) => option.kind === 'allow_once');
      return { outcome: allow ? { outcome: 'selected' as const, optionId: allow.optionId } : { outcome: 'cancelled' as const } };
    });
  const agent = connectOverStdio(app, child);
  const exited = exitCodeOf(child);
  return {
    process: child,
    updates,
    stderr,
    initialized: undefined,
    request: (method, params) => agent.request(method, params) as Promise<never>,
    async close() {
      child.stdin?.end();
      return exited;
    },
  };
}

/** `sdkEditor`, initialized with these client capabilities. */
export async function initializedEditor(bin: string, args: readonly string[], cwd: string, clientCapabilities: Record<string, unknown> = {}): Promise<SdkEditor> {
  const editor = sdkEditor(bin, args, cwd);
  editor.initialized = await editor.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities, clientInfo: { name: 'surface-test-editor', version: '1' } });
  return editor;
}

/** An editor that writes raw bytes and reads JSON lines. */
export interface RawEditor {
  readonly process: ChildProcess;
  /** Every JSON message warden wrote, in order. */
  readonly messages: Array<Record<string, unknown>>;
  write(text: string): void;
  /** The answer to request `id` (waits for it). */
  answer(id: number | string): Promise<{ id: number | string; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } }>;
  close(): Promise<number | null>;
}

export function rawEditor(bin: string, args: readonly string[], cwd: string): RawEditor {
  const child = spawnWarden(bin, args, cwd);
  const messages: Array<Record<string, unknown>> = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (line) messages.push(JSON.parse(line) as Record<string, unknown>);
      newline = buffered.indexOf('\n');
    }
  });
  child.stderr?.resume();
  const exited = exitCodeOf(child);
  return {
    process: child,
    messages,
    write: (text) => child.stdin?.write(text),
    async answer(id) {
      const find = () => messages.find((message) => message.id === id && ('result' in message || 'error' in message));
      await waitUntil(() => find() !== undefined, `the answer to request ${id}`, 60_000);
      return find() as never;
    },
    async close() {
      child.stdin?.end();
      return exited;
    },
  };
}

/**
 * Kills what is still running of every launched warden (its whole group) and waits until it,
 * and every process it started (the orphan reaper takes those down), is gone.
 */
export async function stopAll(): Promise<void> {
  await killGroups(launched, { descendants: true });
}

/** The text of `sessionId`'s updates of one kind, joined. */
export function textOf(updates: readonly ReceivedUpdate[], sessionId: string, kind = 'agent_message_chunk'): string {
  return updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === kind).map((entry) => entry.update.content?.text ?? '').join('');
}
