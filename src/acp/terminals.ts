/**
 * Terminals an agent runs through the client (`terminal/*`), each a supervised port: its
 * own process group, killed with it, never restarted (a command that ends has ended). Output
 * is kept up to the requested byte limit, dropping from the start at a character boundary,
 * as ACP asks.
 */
import type { AnyActorRef, Subscription } from 'xstate';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { portLogic, type PortEmitted } from '../port/port.js';
import { startChild, terminateChild } from '../supervision/commands.js';
import { confine, type WorkspaceRoots } from './workspace-fs.js';

/** How a terminal's command ended. */
export interface TerminalExitStatus {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

interface Terminal {
  readonly id: string;
  readonly sessionId: string;
  readonly limit: number;
  ref: AnyActorRef | undefined;
  output: string;
  truncated: boolean;
  exitStatus: TerminalExitStatus | undefined;
  waiters: Array<(status: TerminalExitStatus) => void>;
  subscriptions: Subscription[];
}

/** Default output limit when the agent gives none: 1 MiB. */
export const defaultOutputByteLimit = 1024 * 1024;

/** Keeps the last `limit` bytes of `text`, cutting at a character boundary. */
export function keepTail(text: string, limit: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return { text, truncated: false };
  let start = bytes.length - limit;
  // Skip UTF-8 continuation bytes so that no character is cut in half.
  while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
  return { text: bytes.subarray(start).toString('utf8'), truncated: true };
}

/** The terminals of one client, run as ports under `supervisor` (a dynamic supervisor). */
export class Terminals {
  readonly #supervisor: AnyActorRef;
  readonly #terminals = new Map<string, Terminal>();
  #next = 1;

  constructor(supervisor: AnyActorRef) {
    this.#supervisor = supervisor;
  }

  /** `terminal/create`: starts the command and answers at once with its id. */
  async create(params: {
    sessionId: string;
    command: string;
    args?: string[] | null;
    env?: Array<{ name: string; value: string }> | null;
    cwd?: string | null;
    outputByteLimit?: number | null;
  }, roots: WorkspaceRoots, envPolicy: 'isolated' | 'inherit' = 'isolated'): Promise<{ terminalId: string }> {
    const cwd = params.cwd ? await confine(params.cwd, roots) : roots[0];
    if (!cwd) throw RpcError.invalidParams('terminal/create needs a cwd inside the workspace');
    const id = `term-${this.#next++}`;
    const terminal: Terminal = {
      id,
      sessionId: params.sessionId,
      limit: params.outputByteLimit ?? defaultOutputByteLimit,
      ref: undefined,
      output: '',
      truncated: false,
      exitStatus: undefined,
      waiters: [],
      subscriptions: [],
    };
    const explicit = Object.fromEntries((params.env ?? []).map((entry) => [entry.name, entry.value]));
    const started = await startChild(this.#supervisor, {
      id,
      restart: 'temporary',
      shutdown: 'brutal_kill',
      start: {
        logic: portLogic,
        input: { command: params.command, args: params.args ?? [], cwd, env: { policy: envPolicy, explicit }, parse: 'raw' },
      },
    });
    if (!started.ok) {
      const reason = started.reason;
      const cause = typeof reason === 'object' && 'startFailed' in reason ? (reason.startFailed as Error) : undefined;
      throw RpcError.internalError(`cannot run ${params.command}: ${cause?.message ?? JSON.stringify(reason)}`);
    }
    terminal.ref = started.ref;
    const append = (text: string) => {
      const kept = keepTail(terminal.output + text, terminal.limit);
      terminal.output = kept.text;
      terminal.truncated ||= kept.truncated;
    };
    terminal.subscriptions.push(
      started.ref.on('port.data', (event: Extract<PortEmitted, { type: 'port.data' }>) => append(event.text)),
      started.ref.on('port.stderr', (event: Extract<PortEmitted, { type: 'port.stderr' }>) => append(event.text)),
      started.ref.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => {
        const reason = event.exit.reason;
        this.#exited(terminal, {
          exitCode: reason.kind === 'exited' ? reason.code : reason.kind === 'stopped' ? reason.code : null,
          signal: reason.kind === 'signaled' ? reason.signal : reason.kind === 'stopped' ? reason.signal : null,
        });
      }),
    );
    this.#terminals.set(id, terminal);
    return { terminalId: id };
  }

  #exited(terminal: Terminal, status: TerminalExitStatus): void {
    if (terminal.exitStatus) return;
    terminal.exitStatus = status;
    const waiters = terminal.waiters;
    terminal.waiters = [];
    for (const waiter of waiters) waiter(status);
  }

  #get(params: { sessionId: string; terminalId: string }): Terminal {
    const terminal = this.#terminals.get(params.terminalId);
    if (!terminal || terminal.sessionId !== params.sessionId) throw RpcError.resourceNotFound(`terminal ${params.terminalId}`, { terminalId: params.terminalId });
    return terminal;
  }

  /** `terminal/output`: what it printed so far (stdout and stderr), and its exit status once it ended. */
  output(params: { sessionId: string; terminalId: string }): { output: string; truncated: boolean; exitStatus?: TerminalExitStatus } {
    const terminal = this.#get(params);
    return { output: terminal.output, truncated: terminal.truncated, ...(terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {}) };
  }

  /** `terminal/wait_for_exit`. */
  waitForExit(params: { sessionId: string; terminalId: string }): Promise<TerminalExitStatus> {
    const terminal = this.#get(params);
    if (terminal.exitStatus) return Promise.resolve(terminal.exitStatus);
    return new Promise((resolve) => terminal.waiters.push(resolve));
  }

  /** `terminal/kill`: the command's group dies; the id stays valid. */
  async kill(params: { sessionId: string; terminalId: string }): Promise<Record<string, never>> {
    const terminal = this.#get(params);
    if (!terminal.exitStatus) {
      await terminateChild(this.#supervisor, terminal.id);
      this.#exited(terminal, { exitCode: null, signal: 'SIGKILL' });
    }
    return {};
  }

  /** `terminal/release`: kills it if still running, and forgets it. */
  async release(params: { sessionId: string; terminalId: string }): Promise<Record<string, never>> {
    const terminal = this.#get(params);
    await this.kill(params);
    for (const subscription of terminal.subscriptions) subscription.unsubscribe();
    this.#terminals.delete(terminal.id);
    return {};
  }

  /** Releases every terminal of a session (or all): a session that ends leaves none running. */
  async releaseAll(sessionId?: string): Promise<void> {
    for (const terminal of [...this.#terminals.values()]) {
      if (sessionId === undefined || terminal.sessionId === sessionId) await this.release({ sessionId: terminal.sessionId, terminalId: terminal.id });
    }
  }

  /** How many terminals are held (released ones excluded). */
  get size(): number {
    return this.#terminals.size;
  }
}
