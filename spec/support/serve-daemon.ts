/**
 * A `warden serve` for tests: spawned from this checkout in a process group of its own, its
 * state (token file, journal, serve.log) in a temp directory through XDG_STATE_HOME, started
 * once it says where it listens. Also the bridge (`warden acp --connect` / `--daemon`) and raw
 * clients: the HTTP upgrade by hand, a `ws` client, the ACP SDK's client over WebSocket.
 */
import { client as sdkClient, methods } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { childrenOf, waitUntil } from './processes.js';
import { stderrOf, wardenMain } from './warden-process.js';

/** A running `warden serve`. */
export interface ServeDaemon {
  readonly process: ChildProcess;
  /** `ws://127.0.0.1:PORT/acp` or `ws+unix://…:/acp`. */
  readonly url: string;
  readonly token: string;
  readonly tokenFile: string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** The environment every warden of a test runs with: its state in `state`. */
export function stateEnv(state: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, XDG_STATE_HOME: state, ...extra };
}

/** Spawns `warden serve ARGS` (add `--listen`, `--store`), pushes it on `launched`, waits until it listens. */
export async function startServe(state: string, args: readonly string[], launched: ChildProcess[]): Promise<ServeDaemon> {
  const child = spawn(process.execPath, ['--import', 'tsx', wardenMain, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: stateEnv(state) });
  launched.push(child);
  const stderr = stderrOf(child);
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Both lines: where it listens, then its token file (two writes: one may be read before the other).
  await waitUntil(() => /token file \S+\n/.test(stderr()) || child.exitCode !== null, 'warden serve to listen', 30_000);
  const url = /listening on (\S+)/.exec(stderr())?.[1];
  if (!url) throw new Error(`warden serve did not listen: ${stderr()}`);
  if (stdout !== '') throw new Error(`warden serve wrote on stdout: ${stdout}`);
  const tokenFile = /token file (\S+)/.exec(stderr())?.[1] as string;
  return { process: child, url, tokenFile, token: readFileSync(tokenFile, 'utf8').trim(), stderr, exited };
}

/** The default token file under a test's state directory. */
export function tokenFileIn(state: string): string {
  return join(state, 'acp-warden', 'token');
}

/** The HTTP answer to a WebSocket upgrade sent by hand to a TCP `url` with `headers`. */
export function upgradeAnswer(url: string, headers: Record<string, string>, path = '/acp'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(url.replace(/^ws/, 'http'));
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, path, headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers } });
    request.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 0, headers: response.headers, body: '' });
    });
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** A raw `ws` client, open, collecting the frames it receives (parsed). */
export async function rawClient(daemon: ServeDaemon, sockets: WebSocket[]): Promise<{ socket: WebSocket; frames: Array<Record<string, unknown>>; closed: Promise<number> }> {
  const socket = new WebSocket(daemon.url, { headers: { Authorization: `Bearer ${daemon.token}` } });
  sockets.push(socket);
  const frames: Array<Record<string, unknown>> = [];
  socket.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>));
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  await once(socket, 'open');
  return { socket, frames, closed };
}

/** One `session/update` as the SDK client gets it. */
export interface SdkUpdate {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly content?: { readonly text?: string } };
}

/** The ACP SDK client over its WebSocket stream, with the bearer token; its updates recorded. */
export function sdkOverWebSocket(daemon: ServeDaemon): { agent: { request(method: string, params: unknown): Promise<Record<string, unknown>> }; updates: SdkUpdate[]; close(): void } {
  const updates: SdkUpdate[] = [];
  const app = sdkClient({ name: 'serve-test-editor' }).onNotification(methods.client.session.update, ({ params }) => {
    updates.push(params as unknown as SdkUpdate);
  });
  const stream = createWebSocketStream(daemon.url, { WebSocket: WebSocket as never, headers: { Authorization: `Bearer ${daemon.token}` } });
  const connection = app.connect(stream);
  return { agent: connection.agent as never, updates, close: () => connection.close() };
}

/** The text of a session's streamed answer chunks. */
export function answerText(updates: readonly SdkUpdate[], sessionId: string): string {
  return updates.filter((entry) => entry.sessionId === sessionId && entry.update.sessionUpdate === 'agent_message_chunk').map((entry) => entry.update.content?.text ?? '').join('');
}

/** The `warden demo-agent` processes a daemon runs (its direct children). */
export function demoAgentsOf(pid: number | undefined): number[] {
  return childrenOf(pid as number).filter((child) => child.cmdline.includes('demo-agent')).map((child) => child.pid);
}
