/**
 * `warden acp --connect URL` and `warden acp --agent NAME --daemon`: what an editor launches
 * instead of a host of its own, a thin stdio ↔ WebSocket bridge to a running `warden serve`
 * (with `--daemon`, the user's default one, started in the background if none answers). This
 * module and what it imports load none of the host, xstate or the ACP SDK: it must start fast.
 */
import { dirname, join } from 'node:path';
import { openBridgeSocket, type BridgeFailure } from '../jsonrpc/bridge-socket.js';
import { pumpBridge } from '../serve/bridge.js';
import type { StartedDaemon } from '../serve/daemon-start.js';
import { defaultListen, listenUrl, parseListenAddress } from '../serve/listen-address.js';
import { defaultTokenPath, readToken } from '../serve/token-file.js';
import { defaultDrainTimeoutMs } from '../acp/drain-timeout.js';
import { defaultKeepaliveIntervalMs } from '../jsonrpc/websocket-keepalive.js';
import { bridgeFlags, forwardedSwitches, forwardedValueFlags, type BridgeFlagValues } from './bridge-flags.js';
import { argumentProblem, parseFlags } from './flag-table.js';

/** Exit statuses of the bridge beyond 0 (done), 1 (internal) and 2 (usage, token file). */
export const bridgeExit = {
  /** Nothing answers at the URL (and, with `--daemon`, none could be started). */
  unreachable: 3,
  /** The daemon refused the connection: 401 token, 403 origin, 404 path. */
  refused: 4,
  /** The daemon closed the connection, or it was lost (its close seen, or no pong for two `--keepalive` intervals), while the editor was using it. */
  closed: 5,
} as const;

/** The bridge's `--keepalive` default: a ping to the daemon every 30 s (as `warden serve` pings its clients). */
export const defaultBridgeKeepaliveSeconds = defaultKeepaliveIntervalMs / 1000;

export { forwardedSwitches, forwardedValueFlags };

/** How long `--daemon` waits for a daemon it started to listen. */
export const daemonStartTimeoutMs = 10_000;

/** What the bridge was asked for. */
export interface BridgeCommandOptions {
  /** `connect`: the URL given; `daemon`: the default daemon (or `--listen`), started if need be. */
  readonly mode: 'connect' | 'daemon';
  readonly url: string;
  readonly tokenFile: string;
  /** The agent of the editor's new sessions (`_meta["acp-warden/agent"]` added to `session/new`). */
  readonly agent: string | undefined;
  readonly drainTimeoutMs: number;
  /** `--keepalive`: ms between two pings to the daemon (0: none). */
  readonly pingIntervalMs: number;
  /** With `--daemon`: the arguments of the `warden serve` it starts. */
  readonly serveArgs: readonly string[];
}

const shortUsage = 'Run "warden acp --help" for the options.';

/** Parses the bridge's arguments; a problem is a message naming it and the fix. */
export function parseBridgeArgs(args: readonly string[]): BridgeCommandOptions | { error: string } {
  let values: BridgeFlagValues;
  try {
    // The bridge has no help of its own: `--help` reached `warden acp`'s first (main.ts).
    const parsed = parseFlags(bridgeFlags, args, shortUsage);
    if (parsed === 'help') return { error: `warden acp: --help shows the options. ${shortUsage}` };
    values = parsed;
  } catch (error) {
    return argumentProblem('warden acp', error);
  }
  const { connect, daemon, tokenFile, listen, agent, pingIntervalMs, otel, forwarded } = values;
  const drainTimeoutMs = values.drainTimeoutMs ?? defaultDrainTimeoutMs;
  const drainTimeout = values.drainTimeoutMs === undefined ? undefined : String(values.drainTimeoutMs / 1000);
  if (connect !== undefined && daemon) return { error: `warden acp: --connect and --daemon exclude each other: --connect URL names a daemon, --daemon uses the default one (${defaultListen}, or --listen). ${shortUsage}` };
  if (connect !== undefined) {
    if (listen !== undefined) return { error: `warden acp: --listen is for --daemon (where the daemon it starts listens); with --connect the URL says where. ${shortUsage}` };
    if (forwarded.length > 0) return { error: `warden acp: ${forwarded[0]} has no effect with --connect: the daemon runs the agents, so give it to warden serve. ${shortUsage}` };
    const url = connectUrl(connect);
    if ('error' in url) return url;
    return { mode: 'connect', url: url.url, tokenFile: tokenFile ?? defaultTokenPath(), agent, drainTimeoutMs, pingIntervalMs, serveArgs: [] };
  }
  if (!agent) return { error: `warden acp: --daemon needs --agent NAME (the agent of the sessions this editor starts; the daemon started for it takes it as its default). ${shortUsage}` };
  let url: string;
  try {
    url = listenUrl(parseListenAddress(listen ?? defaultListen));
  } catch (error) {
    return { error: `warden acp: ${(error as Error).message}` };
  }
  const serveArgs = ['--agent', agent, ...(listen ? ['--listen', listen] : []), ...(tokenFile ? ['--token-file', tokenFile] : []), ...(drainTimeout ? ['--drain-timeout', drainTimeout] : []), ...(otel ? ['--otel'] : []), ...forwarded];
  return { mode: 'daemon', url, tokenFile: tokenFile ?? defaultTokenPath(), agent, drainTimeoutMs, pingIntervalMs, serveArgs };
}

/** `ws://`, `wss://`, `ws+unix://`, or `unix:PATH` (written out as ws+unix). */
function connectUrl(text: string): { url: string } | { error: string } {
  if (text.startsWith('unix:')) {
    try {
      return { url: listenUrl(parseListenAddress(text)) };
    } catch (error) {
      return { error: `warden acp: --connect: ${(error as Error).message}` };
    }
  }
  if (!/^(wss?|ws\+unix):\/\/\S+$/u.test(text)) return { error: `warden acp: --connect expects the daemon's WebSocket URL (say ws://127.0.0.1:8767/acp, or unix:PATH), got ${JSON.stringify(text)}` };
  return { url: text };
}

/** Runs the bridge until the editor's input ends or the connection does; resolves with the exit status. */
export async function runAcpBridge(args: readonly string[]): Promise<number> {
  const parsed = parseBridgeArgs(args);
  const say = (line: string) => process.stderr.write(`warden acp: ${line}\n`);
  if ('error' in parsed) {
    process.stderr.write(`${parsed.error}\n`);
    return 2;
  }
  const opening = parsed.mode === 'daemon' ? openDaemon(parsed, say) : openWithToken(parsed, say);
  // The editor writes its `initialize` as soon as it has started us: stdin is read while the
  // socket connects. Set up once the connect is under way (on the next tick): building
  // process.stdin takes 1-2 ms. read(0) fills the stream's buffer and takes nothing: pumpBridge does.
  setImmediate(() => process.stdin.read(0));
  const opened = await opening;
  if (typeof opened === 'number') return opened;
  const failure = await pumpBridge(opened, process.stdin, process.stdout, {
    drainTimeoutMs: parsed.drainTimeoutMs,
    pingIntervalMs: parsed.pingIntervalMs,
    ...(parsed.agent ? { rewrite: withAgent(parsed.agent) } : {}),
  });
  if (!failure) return 0;
  say(describe(failure, parsed));
  return exitOf(failure);
}

type Say = (line: string) => void;
type Opened = Awaited<ReturnType<typeof openBridgeSocket>>;

/** The token, then the socket; a failure said on stderr and turned into the exit status. */
async function openWithToken(parsed: BridgeCommandOptions, say: Say): Promise<number | Extract<Opened, { ok: true }>['socket']> {
  const token = tokenOf(parsed, say);
  if (typeof token === 'number') return token;
  const opened = await openBridgeSocket(parsed.url, token);
  if (opened.ok) return opened.socket;
  say(describe(opened.failure, parsed));
  return exitOf(opened.failure);
}

function tokenOf(parsed: BridgeCommandOptions, say: Say): string | number {
  try {
    const token = readToken(parsed.tokenFile);
    if (token !== undefined) return token;
    say(`no token file at ${parsed.tokenFile}: warden serve creates it when it starts (or give --token-file the file the daemon uses)`);
    return 2;
  } catch (error) {
    say((error as Error).message);
    return 2;
  }
}

/**
 * `--daemon`: the default daemon if it answers; else one started in the background, waited
 * for (bounded). Two bridges may race to start one: the second daemon cannot bind the
 * address and exits, and both bridges connect to the first.
 */
async function openDaemon(parsed: BridgeCommandOptions, say: Say): Promise<number | Extract<Opened, { ok: true }>['socket']> {
  let started: StartedDaemon | undefined;
  const deadline = Date.now() + daemonStartTimeoutMs;
  // Beside the token file the daemon uses (--token-file's, else the default), where --help and docs/serve.md send the user for its pid.
  const logPath = join(dirname(parsed.tokenFile), 'serve.log');
  for (;;) {
    let token: string | undefined;
    try {
      token = readToken(parsed.tokenFile);
    } catch (error) {
      say((error as Error).message);
      return 2;
    }
    if (token !== undefined) {
      const opened = await openBridgeSocket(parsed.url, token);
      if (opened.ok) return opened.socket;
      // A daemon that answers and refuses is the answer; only silence starts one.
      if (opened.failure.kind !== 'unreachable') {
        say(describe(opened.failure, parsed));
        return exitOf(opened.failure);
      }
    }
    if (!started) {
      // Only --daemon ever starts one: --connect does not load the module (nor child_process).
      const { startDaemon } = await import('../serve/daemon-start.js');
      started = startDaemon(parsed.serveArgs, logPath);
    } else {
      const status = started.exitStatus();
      // 3: another daemon took the address first (a racing bridge's): wait for it to answer.
      if (status === 3 && token === undefined && Date.now() > deadline) {
        say(`a daemon listens at ${parsed.url}, but there is no token file at ${parsed.tokenFile}: give --token-file the file that daemon uses (it prints it when it starts)`);
        return 2;
      }
      if (status !== undefined && status !== 3) {
        say(`the daemon started in the background (warden serve ${parsed.serveArgs.join(' ')}) exited with status ${String(status)} before listening; its log, ${logPath}:\n${started.logTail()}`);
        return bridgeExit.unreachable;
      }
    }
    if (Date.now() > deadline) {
      say(`no daemon answered at ${parsed.url} within ${daemonStartTimeoutMs / 1000} s of starting one in the background (pid ${String(started.pid)}); its log is ${logPath}`);
      return bridgeExit.unreachable;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Adds `_meta["acp-warden/agent"]` to a `session/new` that names no agent (the line is parsed only then). */
function withAgent(agent: string): (line: string) => string {
  return (line) => {
    if (!line.includes('"session/new"')) return line;
    try {
      const message = JSON.parse(line) as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
      if (message.method !== 'session/new' || typeof message.params !== 'object' || message.params === null) return line;
      const meta = message.params._meta ?? {};
      if (meta['acp-warden/agent'] !== undefined) return line;
      message.params._meta = { ...meta, 'acp-warden/agent': agent };
      return JSON.stringify(message);
    } catch {
      return line; // not JSON: the daemon answers it -32700
    }
  };
}

function describe(failure: BridgeFailure, parsed: BridgeCommandOptions): string {
  switch (failure.kind) {
    case 'unreachable':
      return `cannot connect to ${parsed.url}: ${failure.code === 'ECONNREFUSED' || failure.code === 'ENOENT' ? 'no daemon listens there' : failure.message} (${failure.code}); start one with "warden serve" (or use "warden acp --agent NAME --daemon", which starts it)`;
    case 'refused':
      if (failure.status === 401) return `${parsed.url} refused the token read from ${parsed.tokenFile} (401): the file must hold the token of the daemon listening there (warden serve prints its token file when it starts; --token-file names another)`;
      if (failure.status === 403) return `${parsed.url} refused the connection's origin (403): ${failure.body}`;
      if (failure.status === 404) return `${parsed.url} has no ACP endpoint (404): the daemon's URL ends in /acp`;
      return `${parsed.url} answered the WebSocket upgrade with HTTP ${failure.status}${failure.body ? `: ${failure.body}` : ''}`;
    case 'closed':
      if (failure.code === 1006) return `the connection to the daemon at ${parsed.url} was lost (the daemon was stopped or killed, or the network failed)`;
      return `the daemon at ${parsed.url} closed the connection (code ${failure.code}${failure.reason ? `: ${failure.reason}` : ''})`;
    case 'unanswered':
      return `the daemon at ${parsed.url} answered no ping for ${seconds(2 * failure.pingIntervalMs)} s (two --keepalive intervals of ${seconds(failure.pingIntervalMs)} s): the connection is half-open, the daemon's host or the network gone; the bridge dropped it`;
  }
}

function seconds(ms: number): string {
  return String(Number((ms / 1000).toFixed(3)));
}

function exitOf(failure: BridgeFailure): number {
  return failure.kind === 'unanswered' ? bridgeExit.closed : bridgeExit[failure.kind];
}
