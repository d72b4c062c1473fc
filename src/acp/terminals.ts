/**
 * Terminals an agent runs through the client (`terminal/*`), each a supervised port: its
 * own process group, killed with it, never restarted (a command that ends has ended). Output
 * is kept up to the requested byte limit, dropping from the start at a character boundary,
 * as ACP asks, in an {@link OutputTail}; the limit an agent may ask for is capped, and so is
 * the number of terminals a session may hold. `kill` and `release` also end the processes
 * that left the group (a `setsid` daemon), found by their marker (`terminal-marker.ts`).
 */
import type { AnyActorRef, Subscription } from 'xstate';
import { RpcError } from '../jsonrpc/rpc-error.js';
import { portLogic, type PortEmitted } from '../port/port.js';
import { startChild, terminateChild } from '../supervision/commands.js';
import { OutputTail } from './output-tail.js';
import { killMarked, newTerminalMarker, terminalMarkerVariable } from './terminal-marker.js';
import { confine, type WorkspaceRoots } from './workspace-fs.js';

/** How a terminal's command ended. */
export interface TerminalExitStatus {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

/** The host's bounds on terminals (see {@link defaultTerminalLimits}). */
export interface TerminalLimits {
  /**
   * The largest `outputByteLimit` an agent may ask for; a larger one is lowered to it (the
   * output is then `truncated` sooner than the agent asked). Default 16 MiB.
   */
  readonly maxOutputByteLimit?: number;
  /**
   * Terminals one session may hold at once (created and not yet released, running or
   * not); `terminal/create` past it is refused with -32600. Default 32.
   */
  readonly maxPerSession?: number;
}

/** Default output limit when the agent gives none: 1 MiB. */
export const defaultOutputByteLimit = 1024 * 1024;

/** The host's default bounds: 16 MiB of output per terminal, 32 terminals per session. */
export const defaultTerminalLimits: Required<TerminalLimits> = Object.freeze({ maxOutputByteLimit: 16 * 1024 * 1024, maxPerSession: 32 });

interface Terminal {
  readonly id: string;
  readonly sessionId: string;
  readonly marker: string;
  readonly output: OutputTail;
  ref: AnyActorRef | undefined;
  exitStatus: TerminalExitStatus | undefined;
  waiters: Array<(status: TerminalExitStatus) => void>;
  subscriptions: Subscription[];
}

/** Keeps the last `limit` bytes of `text`, cutting at a character boundary. */
export function keepTail(text: string, limit: number): { text: string; truncated: boolean } {
  const tail = new OutputTail(limit);
  tail.append(text);
  return { text: tail.text, truncated: tail.truncated };
}

/** The limits with defaults filled in; a bad value is a TypeError naming the option. */
export function validTerminalLimits(limits: TerminalLimits = {}): Required<TerminalLimits> {
  const { maxOutputByteLimit = defaultTerminalLimits.maxOutputByteLimit, maxPerSession = defaultTerminalLimits.maxPerSession } = limits;
  if (!Number.isSafeInteger(maxOutputByteLimit) || maxOutputByteLimit < 0) {
    throw new TypeError(`Expected the \`maxOutputByteLimit\` option to be a non-negative integer, got \`${String(maxOutputByteLimit)}\` (${typeof maxOutputByteLimit}).`);
  }
  if (!Number.isSafeInteger(maxPerSession) || maxPerSession < 1) {
    throw new TypeError(`Expected the \`maxPerSession\` option to be a positive integer, got \`${String(maxPerSession)}\` (${typeof maxPerSession}).`);
  }
  return { maxOutputByteLimit, maxPerSession };
}

/** The output limit of a new terminal: the agent's ask (checked), within the host's cap. */
function outputLimit(asked: unknown, max: number): number {
  if (asked === undefined || asked === null) return Math.min(defaultOutputByteLimit, max);
  if (typeof asked !== 'number' || !Number.isSafeInteger(asked) || asked < 0) {
    throw RpcError.invalidParams(`outputByteLimit must be a non-negative integer, got ${JSON.stringify(asked)}`, { outputByteLimit: asked });
  }
  return Math.min(asked, max);
}

/** The terminals of one client, run as ports under `supervisor` (a dynamic supervisor). */
export class Terminals {
  readonly #supervisor: AnyActorRef;
  readonly #limits: Required<TerminalLimits>;
  readonly #terminals = new Map<string, Terminal>();
  /** Creates under way, by session: they count against the cap before they are held. */
  readonly #starting = new Map<string, number>();
  #next = 1;

  /** Terminals under `supervisor`, within `limits` (defaults: {@link defaultTerminalLimits}). */
  constructor(supervisor: AnyActorRef, limits: TerminalLimits = {}) {
    this.#supervisor = supervisor;
    this.#limits = validTerminalLimits(limits);
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
    const limit = outputLimit(params.outputByteLimit, this.#limits.maxOutputByteLimit);
    const held = this.#heldBy(params.sessionId);
    if (held >= this.#limits.maxPerSession) {
      throw RpcError.invalidRequest(
        `session ${params.sessionId} already holds ${held} terminals, the most a session may hold; release one (terminal/release) first`,
        { sessionId: params.sessionId, maxPerSession: this.#limits.maxPerSession },
      );
    }
    this.#starting.set(params.sessionId, (this.#starting.get(params.sessionId) ?? 0) + 1);
    try {
      return await this.#start(params, limit, roots, envPolicy);
    } finally {
      const starting = (this.#starting.get(params.sessionId) ?? 1) - 1;
      if (starting === 0) this.#starting.delete(params.sessionId);
      else this.#starting.set(params.sessionId, starting);
    }
  }

  #heldBy(sessionId: string): number {
    let held = this.#starting.get(sessionId) ?? 0;
    for (const terminal of this.#terminals.values()) if (terminal.sessionId === sessionId) held++;
    return held;
  }

  async #start(params: Parameters<Terminals['create']>[0], limit: number, roots: WorkspaceRoots, envPolicy: 'isolated' | 'inherit'): Promise<{ terminalId: string }> {
    const cwd = params.cwd ? await confine(params.cwd, roots) : roots[0];
    if (!cwd) throw RpcError.invalidParams('terminal/create needs a cwd inside the workspace');
    const id = `term-${this.#next++}`;
    const terminal: Terminal = {
      id,
      sessionId: params.sessionId,
      marker: newTerminalMarker(),
      output: new OutputTail(limit),
      ref: undefined,
      exitStatus: undefined,
      waiters: [],
      subscriptions: [],
    };
    // The marker comes last, so the agent's own variables cannot replace it.
    const explicit = { ...Object.fromEntries((params.env ?? []).map((entry) => [entry.name, entry.value])), [terminalMarkerVariable]: terminal.marker };
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
    terminal.subscriptions.push(
      started.ref.on('port.data', (event: Extract<PortEmitted, { type: 'port.data' }>) => terminal.output.append(event.text)),
      started.ref.on('port.stderr', (event: Extract<PortEmitted, { type: 'port.stderr' }>) => terminal.output.append(event.text)),
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
    return { output: terminal.output.text, truncated: terminal.output.truncated, ...(terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {}) };
  }

  /** `terminal/wait_for_exit`. */
  waitForExit(params: { sessionId: string; terminalId: string }): Promise<TerminalExitStatus> {
    const terminal = this.#get(params);
    if (terminal.exitStatus) return Promise.resolve(terminal.exitStatus);
    return new Promise((resolve) => terminal.waiters.push(resolve));
  }

  /**
   * `terminal/kill`: the command's group dies, and every process that left it carrying the
   * terminal's marker (even after the command ended by itself); the id stays valid.
   */
  async kill(params: { sessionId: string; terminalId: string }): Promise<Record<string, never>> {
    const terminal = this.#get(params);
    if (!terminal.exitStatus) {
      await terminateChild(this.#supervisor, terminal.id);
      this.#exited(terminal, { exitCode: null, signal: 'SIGKILL' });
    }
    killMarked(terminal.marker);
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

  /**
   * Kills, at once and synchronously, every process the terminals left outside their groups
   * (for a client that is closing: stopping the terminal supervisor kills the groups).
   */
  killStragglers(): void {
    for (const terminal of this.#terminals.values()) killMarked(terminal.marker);
  }

  /** The ids of a session's terminals whose command still runs (ACP v2 lists them as background work, and lets a client cancel them). */
  running(sessionId: string): string[] {
    return [...this.#terminals.values()].filter((terminal) => terminal.sessionId === sessionId && !terminal.exitStatus).map((terminal) => terminal.id);
  }

  /** How many terminals are held (released ones excluded). */
  get size(): number {
    return this.#terminals.size;
  }
}
