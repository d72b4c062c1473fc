/**
 * A raw stdio client of `warden acp` for fuzzing: writes arbitrary bytes to its stdin, reads
 * its stdout line by line, keeps every line (to check that stdout carries only JSON-RPC), and
 * indexes the responses by id (JSON-encoded, so that `1` and `"1"` differ and nothing is
 * lost). Warden runs in its own process group; `kill()` ends that group.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childrenOf, expectGroupGone, isAlive } from './processes.js';

const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface WireResponse {
  readonly id: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data?: unknown };
}

export interface FuzzWarden {
  readonly child: ChildProcess;
  /** Every stdout line, raw, in order. */
  readonly lines: string[];
  /** stdout lines that are not one JSON-RPC 2.0 message. */
  readonly strayLines: string[];
  /** Responses by `JSON.stringify(id)` (each id may collect more than one: a fault to report). */
  readonly responses: Map<string, WireResponse[]>;
  /** Responses with `id: null`, in order. */
  readonly nullResponses: WireResponse[];
  /** `session/update` notifications, in order. */
  readonly updates: Array<{ sessionId: string; update: Record<string, unknown> }>;
  /** Requests warden sent us (answered at once: a cancelled permission). */
  readonly requestsFromWarden: unknown[];
  stderr(): string;
  write(bytes: Buffer | string): void;
  /** Sends a valid request and resolves with its response. */
  request(id: string | number, method: string, params?: unknown, timeoutMs?: number): Promise<WireResponse>;
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  alive(): boolean;
  kill(): Promise<void>;
}

/** Whether `value` is a JSON-RPC 2.0 message warden may write: a response, a notification or a request. */
export function isJsonRpcMessage(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  if (message.jsonrpc !== '2.0') return false;
  const validId = (id: unknown) => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if ('method' in message) return typeof message.method === 'string' && (!('id' in message) || validId(message.id));
  if ('result' in message === 'error' in message) return false;
  if (!(validId(message.id) || message.id === null)) return false;
  if ('error' in message) {
    const error = message.error as Record<string, unknown> | null;
    return typeof error === 'object' && error !== null && Number.isInteger(error.code) && typeof error.message === 'string';
  }
  return true;
}

/** The last `bytes` of warden's JSON log (info level): what a timed-out wait shows, so a stall found once can be read. */
function logTail(path: string, bytes = 4000): string {
  try {
    const text = readFileSync(path, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '(no log)';
  }
}

/** A process's state letter (R running, S sleeping, T stopped, Z zombie) from /proc: tells a busy warden from a stopped or a waiting one. */
function stateOf(pid: number | undefined): string {
  if (pid === undefined) return '?';
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] ?? '?';
  } catch {
    return 'gone';
  }
}

/** warden's state and its children's, one line: what a stall looked like from outside. */
function treeStates(pid: number | undefined): string {
  const children = pid === undefined ? [] : childrenOf(pid);
  return [`warden ${pid} ${stateOf(pid)}`, ...children.map((child) => `child ${child.pid} ${stateOf(child.pid)} ${child.cmdline.slice(-60)}`)].join('; ');
}

export function launchFuzzWarden(extraArgs: string[] = []): FuzzWarden {
  const logDir = mkdtempSync(join(tmpdir(), 'warden-fuzz-'));
  const logFile = join(logDir, 'warden.log');
  const child = spawn(process.execPath, [main, 'acp', '--agent', 'demo', '--store', ':memory:', '--log-file', logFile, ...extraArgs], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    if (stderr.length > 200_000) stderr = stderr.slice(-100_000);
  });
  child.stdin?.on('error', () => undefined); // a dead warden: the properties say so
  const lines: string[] = [];
  const strayLines: string[] = [];
  const responses = new Map<string, WireResponse[]>();
  const nullResponses: WireResponse[] = [];
  const updates: Array<{ sessionId: string; update: Record<string, unknown> }> = [];
  const requestsFromWarden: unknown[] = [];
  let held = '';
  const onLine = (line: string) => {
    lines.push(line);
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      strayLines.push(line);
      return;
    }
    if (!isJsonRpcMessage(value)) {
      strayLines.push(line);
      return;
    }
    const message = value as Record<string, unknown>;
    if ('method' in message) {
      if ('id' in message) {
        requestsFromWarden.push(message);
        child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { outcome: { outcome: 'cancelled' } } })}\n`);
      } else if (message.method === 'session/update') {
        updates.push(message.params as { sessionId: string; update: Record<string, unknown> });
      }
      return;
    }
    const response = message as unknown as WireResponse;
    if (response.id === null) {
      nullResponses.push(response);
      return;
    }
    const key = JSON.stringify(response.id);
    const list = responses.get(key) ?? [];
    list.push(response);
    responses.set(key, list);
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    held += chunk.toString('utf8');
    let newline = held.indexOf('\n');
    while (newline >= 0) {
      onLine(held.slice(0, newline));
      held = held.slice(newline + 1);
      newline = held.indexOf('\n');
    }
  });
  const alive = () => child.exitCode === null && child.signalCode === null && child.pid !== undefined && isAlive(child.pid);
  // 60 s: a batch on a 2-core machine running three spec files at once is slow; a stall still fails, with the states and logs to read.
  const waitFor = async (predicate: () => boolean, what: string, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (!alive()) throw new Error(`warden died (exit ${child.exitCode}, signal ${child.signalCode}) while waiting for ${what}; stderr tail:\n${stderr.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; processes: ${treeStates(child.pid)}; stderr tail:\n${stderr.slice(-2000)}\nlog tail:\n${logTail(logFile)}`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  const warden: FuzzWarden = {
    child,
    lines,
    strayLines,
    responses,
    nullResponses,
    updates,
    requestsFromWarden,
    stderr: () => stderr,
    write: (bytes) => {
      child.stdin?.write(bytes);
    },
    async request(id, method, params, timeoutMs = 60_000) {
      const key = JSON.stringify(id);
      child.stdin?.write(`${JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params })}\n`);
      await waitFor(() => (responses.get(key)?.length ?? 0) > 0, `the answer to ${method} ${key}`, timeoutMs);
      return (responses.get(key) as WireResponse[])[0] as WireResponse;
    },
    waitFor,
    alive,
    async kill() {
      const pid = child.pid;
      // A warden that never spawned has no pid: expectGroupGone fails on it.
      if (pid !== undefined && isAlive(pid)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await expectGroupGone(pid, 20_000);
      rmSync(logDir, { recursive: true, force: true });
    },
  };
  return warden;
}
