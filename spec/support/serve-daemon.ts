/**
 * A `warden serve` for tests, started as a service manager or a shell starts it: the bare
 * command `warden` found on the PATH (a shim running this checkout's build, as `npm install -g`
 * puts one there), in a process group of its own, its
 * state (token file, journal, serve.log) in a temp directory through XDG_STATE_HOME, started
 * once it says where it listens. Also the bridge (`warden acp --connect` / `--daemon`) and raw
 * clients: the HTTP upgrade by hand, a `ws` client, the ACP SDK's client over WebSocket.
 */
import { client as sdkClient, methods } from '@agentclientprotocol/sdk';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { childrenOf, waitUntil } from './processes.js';
import { stderrOf, wardenMain, writeShim } from './warden-process.js';

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

let binDir: string | undefined;

/** A directory holding only the `warden` shim, made once per test process and removed at its exit. */
function wardenBin(): string {
  if (binDir) return binDir;
  const dir = mkdtempSync(join(tmpdir(), 'warden-serve-bin-'));
  writeShim(join(dir, 'warden'), `'${process.execPath}' '${wardenMain}'`);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return (binDir = dir);
}

/**
 * Spawns `warden serve ARGS` by its bare name on the PATH (add `--listen`, `--store`), pushes
 * it on `launched`, waits until it listens. `env` adds to its environment (a PATH leading to fake agents, say).
 */
export async function startServe(state: string, args: readonly string[], launched: ChildProcess[], { env = {} }: { readonly env?: Record<string, string> } = {}): Promise<ServeDaemon> {
  const environment = stateEnv(state, env);
  const child = spawn('warden', ['serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...environment, PATH: `${wardenBin()}:${environment.PATH ?? ''}` } });
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

// ---------------------------------------------------------------------------------------------
// JSON-RPC clients that see every frame (the seq of each update, the turn ends)
// ---------------------------------------------------------------------------------------------

/** The `_meta` keys of the cursor (docs/serve.md, "Sessions that outlive connections"). */
export const cursorKeys = Object.freeze({ seq: 'acp-warden/seq', after: 'acp-warden/after', turnEnded: 'acp-warden/turnEnded' } as const);

/** A JSON-RPC message as a test client reads it. */
export interface Frame {
  readonly id?: number | string;
  readonly method?: string;
  readonly params?: {
    readonly sessionId?: string;
    readonly update?: { readonly sessionUpdate?: string; readonly content?: { readonly text?: string }; readonly _meta?: Record<string, unknown> };
    readonly _meta?: Record<string, unknown>;
  };
  readonly result?: Record<string, unknown>;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: { readonly reason?: string } };
}

/** A client speaking raw JSON-RPC (frames or lines): every message it got, in order. */
export interface LineClient {
  readonly frames: Frame[];
  send(message: Record<string, unknown>): void;
  /** Sends a request and waits (generously) for its answer. */
  request(id: number, method: string, params: unknown, timeoutMs?: number): Promise<Frame>;
}

/** A {@link LineClient} over `send`, reading what is pushed onto `frames`. */
export function lineClientOf(frames: Frame[], send: (line: string) => void): LineClient {
  const answerTo = (id: number) => frames.find((frame) => frame.id === id && frame.method === undefined);
  return {
    frames,
    send: (message) => send(JSON.stringify({ jsonrpc: '2.0', ...message })),
    async request(id, method, params, timeoutMs = 60_000) {
      send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      await waitUntil(() => answerTo(id) !== undefined, `the answer to ${method} (${id})`, timeoutMs);
      return answerTo(id) as Frame;
    },
  };
}

/** A raw `ws` client of `daemon` as a {@link LineClient}. */
export async function socketClient(daemon: ServeDaemon, sockets: WebSocket[]): Promise<LineClient & { readonly socket: WebSocket; readonly closed: Promise<number> }> {
  const raw = await rawClient(daemon, sockets);
  return { ...lineClientOf(raw.frames as Frame[], (line) => raw.socket.send(line)), socket: raw.socket, closed: raw.closed };
}

/** `warden acp --connect URL` (its own process group, pushed on `launched`) with a {@link LineClient} on its stdio. */
export function bridgeClient(state: string, daemon: ServeDaemon, launched: ChildProcess[]): LineClient & { readonly process: ChildProcess; readonly exited: Promise<number | null> } {
  const child = spawn(process.execPath, [wardenMain, 'acp', '--connect', daemon.url, '--token-file', daemon.tokenFile], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: stateEnv(state) });
  launched.push(child);
  const frames: Frame[] = [];
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      frames.push(JSON.parse(buffered.slice(0, newline)) as Frame);
      buffered = buffered.slice(newline + 1);
    }
  });
  child.stderr?.resume();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { ...lineClientOf(frames, (line) => child.stdin?.write(`${line}\n`)), process: child, exited };
}

/** `initialize` params of a test client named `name`. */
export const initializeParams = (name: string) => ({ protocolVersion: 1, clientCapabilities: {}, clientInfo: { name, version: '1' } });

/** One `session/update` of a session as a client got it, with its seq (undefined: not journaled). */
export interface SeqUpdate {
  readonly seq: number | undefined;
  readonly kind: string | undefined;
  readonly text: string;
  readonly turnEnded: unknown;
  /** The update itself, `_meta` included. */
  readonly update: unknown;
}

/** The session's updates `frames` hold, in the order they came. */
export function seqUpdatesOf(frames: readonly Frame[], sessionId: string): SeqUpdate[] {
  return frames
    .filter((frame) => frame.method === 'session/update' && frame.params?.sessionId === sessionId)
    .map((frame) => ({
      seq: frame.params?._meta?.[cursorKeys.seq] as number | undefined,
      kind: frame.params?.update?.sessionUpdate,
      text: frame.params?.update?.content?.text ?? '',
      turnEnded: frame.params?.update?._meta?.[cursorKeys.turnEnded],
      update: frame.params?.update,
    }));
}

/** The text of the agent's answer chunks among `updates`. */
export const agentText = (updates: readonly SeqUpdate[]) => updates.filter((update) => update.kind === 'agent_message_chunk').map((update) => update.text).join('');

/** The highest seq among `updates` (0: none). */
export const lastSeqOf = (updates: readonly SeqUpdate[]) => Math.max(0, ...updates.map((update) => update.seq ?? 0));

/** `warden sessions ARGS` against `daemon`: its status and output. */
export function wardenSessions(state: string, daemon: ServeDaemon, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [wardenMain, 'sessions', '--connect', daemon.url, '--token-file', daemon.tokenFile, ...args], { encoding: 'utf8', env: stateEnv(state), timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A session as `warden sessions --json` lists it. */
export interface ListedSession {
  readonly sessionId: string;
  readonly agent?: string;
  readonly state: string;
  readonly clients: ReadonlyArray<{ readonly role: string; readonly delivered?: number }>;
}

/** `warden sessions --json` against `daemon`, parsed (a failure throws with its stderr). */
export function listedSessions(state: string, daemon: ServeDaemon): ListedSession[] {
  const listed = wardenSessions(state, daemon, ['--json']);
  if (listed.status !== 0) throw new Error(`warden sessions exited ${String(listed.status)}: ${listed.stderr}`);
  return (JSON.parse(listed.stdout) as { sessions: ListedSession[] }).sessions;
}
