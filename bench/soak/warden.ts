/**
 * The warden under soak: a real `warden acp` subprocess (the Claude Code adapter driving the
 * fake CLI), in its own process group, spoken to over its stdio by the official SDK's
 * client, as an editor does. Its log goes to a JSON file the soak reads for restarts.
 */
import { client, methods, ndJsonStream, type RequestPermissionRequest, type RequestPermissionResponse } from '@agentclientprotocol/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** The agent CLI every session runs (the fixture is chosen per session directory). */
export const fakeCli = fileURLToPath(new URL('./claude-by-session.mjs', import.meta.url));
/**
 * What marks the agent CLIs among warden's children. Its own name (not "fake-claude"), so
 * that a cleanup aimed at other tests' fakes by name does not take the soak's down too.
 */
export const cliMarker = 'claude-by-session.mjs';

/** How the soak starts warden. */
export interface WardenOptions {
  readonly store: string;
  readonly logFile: string;
  /** The fake CLI logs one JSON line (pid, argv) per start here. */
  readonly startLog: string;
  readonly hangAfter: number;
  readonly restartIntensity: string | undefined;
  /** warden's `--max-memory`, in MB, when given. */
  readonly maxMemoryMb?: number;
  /** The answer to a permission request (the soak's person at the keyboard). */
  readonly permission: (request: RequestPermissionRequest) => RequestPermissionResponse['outcome'];
}

/** The agent side as the soak calls it: method names as strings, results untyped. */
export interface AgentCalls {
  request(method: string, params: unknown): Promise<unknown>;
  notify(method: string, params: unknown): Promise<void>;
}

/** A running warden. */
export interface Warden {
  readonly pid: number;
  readonly process: ChildProcess;
  readonly agent: AgentCalls;
  /** Resolves with the exit code (or the signal's name) when warden exits. */
  readonly exited: Promise<number | string>;
  /** The last 64 KiB warden wrote on stderr. */
  stderrTail(): string;
}

/** The arguments of `warden acp` for the soak. */
export function wardenArgs(options: Pick<WardenOptions, 'store' | 'logFile' | 'startLog' | 'hangAfter' | 'restartIntensity' | 'maxMemoryMb'>): string[] {
  return [
    'acp', '--agent', 'claude', '--agent-command', fakeCli,
    '--store', options.store,
    '--log-file', options.logFile, '--log-format', 'json', '--log-level', 'info',
    '--hang-after', String(options.hangAfter),
    // The `huge` fault (a 2 MiB line) stays over the line limit: skipped and logged, the CLI goes on.
    '--max-line-mib', '1',
    ...(options.restartIntensity ? ['--restart-intensity', options.restartIntensity] : []),
    ...(options.maxMemoryMb !== undefined ? ['--max-memory', String(options.maxMemoryMb)] : []),
    '--env', 'FAKE_CLAUDE_LOOP=1',
    '--env', 'FAKE_CLAUDE_FIXTURE=hello',
    '--env', `FAKE_CLAUDE_ARGV_LOG=${options.startLog}`,
    // A little pause between printed lines, so that a fault can land mid-turn.
    '--env', 'FAKE_CLAUDE_DELAY_MS=5',
  ];
}

/** Starts warden and initialises the connection. */
export async function launchWarden(options: WardenOptions): Promise<Warden> {
  const child = spawn(process.execPath, ['--import', 'tsx', main, ...wardenArgs(options)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own group, as an editor starts it: Ctrl-C in the soak's terminal does not reach it
    // (the soak stops it in order), and the soak can kill the whole group at the end.
    detached: true,
    env: process.env,
  });
  if (child.pid === undefined) throw new Error(`could not start warden: ${process.execPath} --import tsx ${main}`);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-64 * 1024);
  });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const stream = ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>);
  const app = client({ name: 'acp-warden-soak' })
    // Updates are counted by nobody: the soak measures warden, not the stream's content.
    .onNotification(methods.client.session.update, () => undefined)
    .onRequest(methods.client.session.requestPermission, ({ params }) => ({ outcome: options.permission(params) }));
  const connection = app.connect(stream);
  const agent = connection.agent as unknown as AgentCalls;
  await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'acp-warden-soak', version: '1' } });
  return { pid: child.pid, process: child, agent, exited, stderrTail: () => stderr };
}
