/**
 * A port: one agent CLI subprocess as an XState actor, the counterpart of an Erlang port.
 *
 * Lifecycle goes through the actor (spawned → running → stopping → exited), so the snapshot
 * and the inspector show it; data flows around it: each stdout line is framed, parsed once
 * and emitted to the owner (`port.on('port.message', ...)`) straight from the stream, in
 * order, without a transition per line. The live process, streams and timers are kept in a
 * WeakMap beside the actor, never in the snapshot.
 *
 * The actor ends `done` when the process exits with code 0 or stops when asked (output: a
 * `shutdown` exit reason carrying the {@link PortExit}), and `error` with a
 * {@link PortError} otherwise, so a supervisor restarts it by the usual rules.
 */
import { existsSync, statSync } from 'node:fs';
import type { ActorLogic, ActorScope, ActorSystem, AnyActorRef, Snapshot } from 'xstate';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { resolveNow } from '../supervision/clock.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { PendingReplies } from '../supervision/pending-replies.js';
import { shutdownExit, type ExitReason } from '../supervision/exit-reason.js';
import { buildEnvironment, type EnvironmentInput } from './env-policy.js';
import { defaultMaxLineBytes, jsonLines, LineFramer, type OversizePolicy } from './line-framer.js';
import { redactorFor } from './redact.js';
import { defaultStderrBytes, StderrRing } from './stderr-ring.js';
import { defaultMaxQueuedBytes, WriteQueue } from './write-queue.js';
import { signalGroup, trackGroup, untrackGroup } from './process-group.js';
import { reaperForget, reaperTrack } from './orphan-reaper.js';
import { checkExecutable } from './resolve-executable.js';
import { readGateOf } from './read-gate.js';
import { loadedExeca, loadExeca } from './execa-loader.js';
import { EarlyWrites } from './early-writes.js';
import { withSpawnEnvironment } from './spawn-env.js';
import { allowedSilence, silenceCounts, watchdogSettings, type WatchdogFacts, type WatchdogInput, type WatchdogSettings } from './watchdog.js';
import {
  isNormalPortExit,
  PortError,
  PortWriteError,
  type PortExit,
  type PortExitReason,
  type PortWriteErrorCode,
} from './port-exit.js';

/** What a port runs and how. Only `command` is required. */
export interface PortInput {
  /** The executable: a path, or a name looked up on the child's PATH. No shell is involved. */
  readonly command: string;
  /** Arguments, passed as an array (never through a shell). */
  readonly args?: readonly string[];
  /** Working directory; default the host's. */
  readonly cwd?: string;
  /** Environment policy and variables; default `isolated`. */
  readonly env?: EnvironmentInput;
  /** Longest stdout line accepted, in bytes. Default {@link defaultMaxLineBytes} (64 MiB). */
  readonly maxLineBytes?: number;
  /**
   * `kill` (default): a longer line means the CLI is broken; `skip`: drop that line as it
   * streams (only its edges are kept, for `port.oversize`) and go on reading.
   */
  readonly oversize?: OversizePolicy;
  /**
   * `kill` (default, except for `raw` ports): a write that finds the CLI's stdin closed while
   * it still runs (EPIPE) means it can no longer be talked to, so it is killed as broken
   * (`input_closed`) and its supervisor decides; `keep`: the write fails, the process lives on.
   */
  readonly inputClosed?: 'kill' | 'keep';
  /**
   * `json` (default): each line is parsed once and emitted as `port.message`; `text`: each
   * line is emitted as `port.line`; `raw`: no framing, each chunk is emitted as `port.data`
   * (terminals, whose output is shown as it came).
   */
  readonly parse?: 'json' | 'text' | 'raw';
  /** Bytes of stderr kept for crash reports. Default 64 KiB. */
  readonly stderrBytes?: number;
  /** Bytes allowed to wait for the CLI to read stdin. Default 16 MiB. */
  readonly maxQueuedBytes?: number;
  /**
   * Hang detection: no stdout for `idleMs` while the agent owes output (the owner says it
   * is busy, by default: a permission wait is not busy) kills the CLI with reason `hung`.
   * While a tool runs (`port.busy` with `toolRunning: true`) the limit is `toolIdleMs`
   * (default 30 minutes). `port.heartbeat` events count as output. Until the process has
   * printed its first line, the silence allowed is `startupMs` (default 20000) when that is
   * longer: starting a runtime is slow, not hung. See watchdog.ts.
   */
  readonly watchdog?: WatchdogInput;
  /**
   * The graceful stop: close stdin, wait `stdinGraceMs` (default 1000) for the CLI to exit,
   * SIGTERM its process group, wait `killAfterMs` (default 5000), SIGKILL the group.
   */
  readonly shutdown?: { readonly stdinGraceMs?: number; readonly killAfterMs?: number };
  /** After the CLI exits, how long to wait for its output to close (a grandchild may hold it). Default 2000. */
  readonly closeTimeoutMs?: number;
}

/** The phase of a port, its snapshot `value`. */
export type PortPhase = 'starting' | 'running' | 'stopping' | 'exited';

/** Plain facts about a port, in its snapshot. */
export interface PortContext {
  readonly command: readonly string[];
  readonly cwd: string;
  /** The CLI's pid, which is also its process group id. */
  readonly pid: number | undefined;
  /** When it was spawned, in epoch ms. */
  readonly startedAt: number | undefined;
  readonly linesIn: number;
  readonly nonJsonLines: number;
  readonly bytesWritten: number;
  /** Its stdin failed or was closed: writes fail. */
  readonly stdinClosed: boolean;
  /** The owner has requests outstanding (arms the watchdog). */
  readonly busy: boolean;
  /** The owner says a tool call runs: the watchdog allows its longer `toolIdleMs`. */
  readonly toolRunning: boolean;
  /**
   * Its stdout is not read while the system's read gate is closed (the editor reads slowly):
   * the CLI blocks on a full pipe; silence then is not a hang.
   */
  readonly readPaused: boolean;
}

/** The snapshot of a port actor. */
export type PortSnapshot = Snapshot<PortExit | ExitReason> & {
  readonly value: PortPhase;
  readonly context: PortContext;
};

/** Events a port accepts. */
export type PortEvent =
  | { readonly type: 'port.write'; readonly line?: string; readonly message?: unknown; readonly reply?: (error?: PortWriteError) => void }
  /**
   * Whether the agent owes output: `busy` (a request to the CLI is outstanding and it waits
   * for nobody), and `toolRunning` (one of its tool calls runs; omitted: none). Each event
   * states both facts; see watchdog.ts.
   */
  | { readonly type: 'port.busy'; readonly busy: boolean; readonly toolRunning?: boolean }
  | { readonly type: 'port.heartbeat' }
  /**
   * Fault injection (`warden chaos`, tests): handle `line` as if the process had printed it,
   * between two of its real lines (never inside a partial one).
   */
  | { readonly type: 'port.injectLine'; readonly line: string }
  | { readonly type: typeof SHUTDOWN_EVENT }
  | PortInternalEvent
  | { readonly type: `xstate.${string}` };

type PortInternalEvent =
  | { readonly type: 'port.internal.spawned' }
  | { readonly type: 'port.internal.kill'; readonly reason: PortExitReason }
  | { readonly type: 'port.internal.stdinClosed' }
  | { readonly type: 'port.internal.inputClosedCheck' }
  | { readonly type: 'port.internal.closed' }
  | { readonly type: 'port.internal.shutdownStep'; readonly step: 'term' | 'kill' }
  | { readonly type: 'port.internal.watchdog' }
  | { readonly type: 'port.internal.readGate'; readonly open: boolean };

/** Events a port emits to its owner, in order. */
export type PortEmitted =
  | { readonly type: 'port.spawned'; readonly pid: number; readonly command: readonly string[] }
  | { readonly type: 'port.message'; readonly message: unknown }
  | { readonly type: 'port.line'; readonly line: string }
  | { readonly type: 'port.data'; readonly text: string }
  | { readonly type: 'port.nonJson'; readonly preview: string; readonly count: number }
  | { readonly type: 'port.stderr'; readonly text: string }
  /**
   * A stdout line over `maxLineBytes`: under `skip` at its end, with every byte it had and
   * its first and last bytes (`head`, `tail`: enough to tell what it was); under `kill` as
   * soon as it went over.
   */
  | { readonly type: 'port.oversize'; readonly limit: number; readonly bytesSeen: number; readonly head: string; readonly tail: string }
  | { readonly type: 'port.writeError'; readonly code: PortWriteErrorCode; readonly message: string }
  | { readonly type: 'port.exited'; readonly exit: PortExit };

/** Actor logic of a port. */
export type PortLogic = ActorLogic<PortSnapshot, PortEvent, PortInput, ActorSystem<any>, PortEmitted>;

type Scope = ActorScope<PortSnapshot, PortEvent, ActorSystem<any>, PortEmitted>;

interface Normalized {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly maxLineBytes: number | undefined;
  readonly oversize: OversizePolicy;
  readonly inputClosed: 'kill' | 'keep';
  readonly parse: 'json' | 'text' | 'raw';
  readonly stderrBytes: number;
  readonly maxQueuedBytes: number;
  readonly watchdog: WatchdogSettings | undefined;
  readonly stdinGraceMs: number;
  readonly killAfterMs: number;
  readonly closeTimeoutMs: number;
}

interface Live {
  readonly scope: Scope;
  readonly options: Normalized;
  readonly now: () => number;
  readonly stderr: StderrRing;
  readonly framer: LineFramer;
  /** What a complete stdout line goes through (the framer's output; fault injection's input). */
  readonly onLine: (line: string) => void;
  child: ReturnType<Execa> | undefined;
  writes: WriteQueue | undefined;
  /** Writes sent while the first spawn waited for execa to load (early-writes.ts). */
  readonly early: EarlyWrites;
  pid: number | undefined;
  spawnedAt: number;
  linesIn: number;
  nonJson: number;
  lastActivity: number;
  spawnError: NodeJS.ErrnoException | undefined;
  exitCode: number | null;
  exitSignal: string | null;
  /** A reason the port decided before the process ended (oversize, hung). */
  decided: PortExitReason | undefined;
  stopRequested: boolean;
  closeTimer: ReturnType<typeof setTimeout> | undefined;
  finished: boolean;
  /** Stdout is paused by the read gate. */
  readPaused: boolean;
  /** The CLI exited while reading was paused: the wait for its output to close starts on resume. */
  closeDeferred: boolean;
  /** Stops listening to the read gate. */
  leaveGate: (() => void) | undefined;
}

type Execa = NonNullable<ReturnType<typeof loadedExeca>>;

const lives = new WeakMap<AnyActorRef, Live>();

/**
 * How long a supervisor should give a port's graceful stop (its `shutdown` child-spec
 * value): the stdin grace, then the SIGTERM wait, plus a second for the SIGKILL to land.
 */
export function portStopBudgetMs(shutdown: PortInput['shutdown'] = {}): number {
  return (shutdown.stdinGraceMs ?? defaults.stdinGraceMs) + (shutdown.killAfterMs ?? defaults.killAfterMs) + 1000;
}

/** Replies owed to `writeToPort` callers whose write is still in the mailbox when the port ends. */
const pendingWrites = new PendingReplies<PortWriteError | undefined>();

export { defaultWatchdogStartupMs } from './watchdog.js';

/** How long a CLI whose stdin failed (EPIPE) may take to exit by itself before it is killed as broken. */
const inputClosedGraceMs = 200;

const defaults = Object.freeze({
  stdinGraceMs: 1000,
  killAfterMs: 5000,
  closeTimeoutMs: 2000,
});

function normalize(input: PortInput): Normalized {
  if (typeof input !== 'object' || input === null || typeof input.command !== 'string' || input.command.length === 0) {
    throw new TypeError(`Expected the port input to have a non-empty \`command\` string, got ${describe(input?.command)}.`);
  }
  const args = input.args ?? [];
  if (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string')) {
    throw new TypeError('Expected the `args` option of the port to be an array of strings.');
  }
  const watchdog = watchdogSettings(input.watchdog);
  return {
    command: input.command,
    args,
    cwd: input.cwd ?? process.cwd(),
    env: buildEnvironment(input.env),
    maxLineBytes: input.maxLineBytes,
    oversize: input.oversize ?? 'kill',
    inputClosed: input.inputClosed ?? (input.parse === 'raw' ? 'keep' : 'kill'),
    parse: input.parse ?? 'json',
    stderrBytes: input.stderrBytes ?? defaultStderrBytes,
    maxQueuedBytes: input.maxQueuedBytes ?? defaultMaxQueuedBytes,
    watchdog,
    stdinGraceMs: input.shutdown?.stdinGraceMs ?? defaults.stdinGraceMs,
    killAfterMs: input.shutdown?.killAfterMs ?? defaults.killAfterMs,
    closeTimeoutMs: input.closeTimeoutMs ?? defaults.closeTimeoutMs,
  };
}

function describe(value: unknown): string {
  return value === undefined ? '`undefined`' : `\`${String(value)}\` (${typeof value})`;
}

function commandLine(options: Normalized): string[] {
  return [options.command, ...options.args];
}

function initialContext(options: Normalized): PortContext {
  return {
    command: commandLine(options),
    cwd: options.cwd,
    pid: undefined,
    startedAt: undefined,
    linesIn: 0,
    nonJsonLines: 0,
    bytesWritten: 0,
    stdinClosed: false,
    busy: false,
    toolRunning: false,
    readPaused: false,
  };
}

/** Actor logic of a port: `createActor(portLogic, { input: { command: 'claude', args: [...] } })`. */
export const portLogic: PortLogic = gracefulShutdown({
  config: { name: 'port' },
  getInitialSnapshot(scope: Scope, input: PortInput): PortSnapshot {
    const options = normalize(input);
    const live = createLive(scope, options);
    lives.set(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, value: 'starting', context: initialContext(options) };
  },
  start(_snapshot: PortSnapshot, scope: Scope): void {
    spawnProcess(lives.get(scope.self) as Live);
  },
  transition(snapshot: PortSnapshot, event: PortEvent, scope: Scope): PortSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = lives.get(scope.self) as Live;
    switch (event.type) {
      case 'port.internal.spawned':
        // Asked to stop before it had spawned: it stays stopping (only a start becomes running).
        return withContext(snapshot, live, snapshot.value === 'starting' ? { value: 'running', pid: live.pid, startedAt: Date.now() } : { pid: live.pid, startedAt: Date.now() });
      case 'port.write':
        return onWrite(snapshot, live, event);
      case 'port.busy': {
        if (event.busy && !snapshot.context.busy) live.lastActivity = live.now();
        const next = withContext(snapshot, live, { busy: event.busy, toolRunning: event.toolRunning === true });
        armWatchdog(live, next.context);
        return next;
      }
      case 'port.heartbeat':
        live.lastActivity = live.now();
        return snapshot;
      case 'port.injectLine':
        if (!live.finished) live.onLine(event.line);
        return snapshot;
      case 'port.internal.watchdog':
        return onWatchdog(snapshot, live);
      case 'port.internal.readGate':
        return onReadGate(snapshot, live, event.open);
      case 'port.internal.kill':
        if (!live.decided && !live.stopRequested) live.decided = event.reason;
        if (live.pid !== undefined) signalGroup(live.pid, 'SIGKILL');
        return snapshot;
      case 'port.internal.stdinClosed':
        return withContext(snapshot, live, { stdinClosed: true });
      case 'port.internal.inputClosedCheck':
        if (!live.finished && !live.stopRequested && live.pid !== undefined) {
          live.decided ??= { kind: 'input_closed' };
          signalGroup(live.pid, 'SIGKILL');
        }
        return snapshot;
      case SHUTDOWN_EVENT:
        return onShutdown(snapshot, live);
      case 'port.internal.shutdownStep':
        if (live.pid !== undefined && !live.finished) {
          signalGroup(live.pid, event.step === 'term' ? 'SIGTERM' : 'SIGKILL');
          // A stopped (SIGSTOP) process holds the SIGTERM until continued: continue it, as shells do.
          if (event.step === 'term') signalGroup(live.pid, 'SIGCONT');
          if (event.step === 'term') schedule(live, { type: 'port.internal.shutdownStep', step: 'kill' }, live.options.killAfterMs, 'kill');
        }
        return snapshot;
      case 'port.internal.closed':
        return finish(snapshot, live);
      case 'xstate.stop':
        killNow(live);
        return { ...snapshot, status: 'stopped', value: 'exited' } as PortSnapshot;
      default:
        return snapshot;
    }
  },
  getPersistedSnapshot(snapshot: PortSnapshot): PortSnapshot {
    return snapshot;
  },
  restoreSnapshot(): PortSnapshot {
    // A process cannot be persisted, and a restored actor gets no input to respawn from.
    throw new Error('A port cannot be restored from a persisted snapshot; create a new port actor instead.');
  },
} as PortLogic);

function createLive(scope: Scope, options: Normalized): Live {
  const self = scope.self;
  const live: Live = {
    scope,
    options,
    now: resolveNow(self),
    // Its tail goes into errors, logs and the inspector: never with the keys the child holds.
    stderr: new StderrRing(options.stderrBytes, redactorFor(options.env)),
    framer: undefined as unknown as LineFramer,
    onLine: () => undefined,
    child: undefined,
    writes: undefined,
    early: new EarlyWrites(options.maxQueuedBytes),
    pid: undefined,
    spawnedAt: 0,
    linesIn: 0,
    nonJson: 0,
    lastActivity: 0,
    spawnError: undefined,
    exitCode: null,
    exitSignal: null,
    decided: undefined,
    stopRequested: false,
    closeTimer: undefined,
    finished: false,
    readPaused: false,
    closeDeferred: false,
    leaveGate: undefined,
  };
  const parseJson = jsonLines(
    (message) => scope.emit({ type: 'port.message', message }),
    (preview) => {
      live.nonJson += 1;
      scope.emit({ type: 'port.nonJson', preview, count: live.nonJson });
    },
  );
  const onLine = options.parse === 'json'
    ? (line: string) => {
        live.linesIn += 1;
        parseJson(line);
      }
    : (line: string) => {
        live.linesIn += 1;
        scope.emit({ type: 'port.line', line });
      };
  (live as { onLine: (line: string) => void }).onLine = onLine;
  (live as { framer: LineFramer }).framer = new LineFramer({
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    oversize: options.oversize,
    onLine,
    onOversize: (bytesSeen, sample) => {
      const limit = options.maxLineBytes ?? defaultMaxLineBytes;
      scope.emit({ type: 'port.oversize', limit, bytesSeen, head: sample.head, tail: sample.tail });
      if (options.oversize === 'kill') self.send({ type: 'port.internal.kill', reason: { kind: 'oversize_line', limit } });
    },
  });
  return live;
}

/** Spawns the CLI: no shell, its own process group, isolated environment. */
function spawnProcess(live: Live): void {
  const { options, scope } = live;
  const self = scope.self;
  live.spawnedAt = live.now();
  live.lastActivity = live.spawnedAt;
  // What can be known before spawning fails the start itself (a supervisor then reports a
  // start failure, not a child that started and crashed).
  if (!existsSync(options.cwd) || !statSync(options.cwd).isDirectory()) {
    throw startFailure(live, Object.assign(new Error(`working directory ${options.cwd} does not exist`), { code: 'ENOENT', syscall: 'chdir' }));
  }
  const problem = checkExecutable(options.command, options.env, options.cwd);
  if (problem) throw startFailure(live, Object.assign(new Error(problem.message), { code: problem.code, syscall: 'spawn' }));
  const execa = loadedExeca();
  if (execa) {
    spawnChild(live, execa);
    return;
  }
  // The first spawn of this process: the port stays `starting` (writes wait in live.early)
  // until execa is loaded. Asked to stop meanwhile, it ends without spawning.
  loadExeca().then(
    (loaded) => {
      if (live.finished) return;
      if (live.stopRequested) {
        self.send({ type: 'port.internal.closed' });
        return;
      }
      try {
        spawnChild(live, loaded);
      } catch (error) {
        // What a synchronous spawn would have thrown from start: the port fails with it.
        live.spawnError ??= error as NodeJS.ErrnoException;
        self.send({ type: 'port.internal.closed' });
      }
    },
    (error: unknown) => {
      if (live.finished) return;
      live.spawnError ??= Object.assign(new Error(`execa could not be loaded: ${(error as Error).message}`, { cause: error }), { code: 'EXECA_LOAD' }) as NodeJS.ErrnoException;
      self.send({ type: 'port.internal.closed' });
    },
  );
}

/** Spawns the checked CLI with execa and wires its process to the actor. */
function spawnChild(live: Live, execa: Execa): void {
  const { options, scope } = live;
  const self = scope.self;
  const child = execa(options.command, options.args, {
    cwd: options.cwd,
    env: withSpawnEnvironment(options.env),
    extendEnv: false,
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
    buffer: false,
    reject: false,
    detached: true,
    cleanup: false,
    encoding: 'buffer',
    stripFinalNewline: false,
    forceKillAfterDelay: false,
    windowsHide: true,
  });
  live.child = child;
  // Every OS event becomes data or an event to the actor: a throw here would be an
  // uncaughtException that XState cannot see.
  child.on('error', (error: NodeJS.ErrnoException) => {
    if (live.pid === undefined) live.spawnError = error;
  });
  child.on('exit', (code, signal) => {
    live.exitCode = code;
    live.exitSignal = signal;
    // The rest of the group (tools the CLI started) dies with it; that also releases the
    // pipes they inherited, so that `close` comes.
    if (live.pid !== undefined) signalGroup(live.pid, 'SIGKILL');
    armCloseTimer(live);
  });
  child.on('close', () => {
    live.leaveGate?.();
    if (live.closeTimer) clearTimeout(live.closeTimer);
    live.framer.end();
    self.send({ type: 'port.internal.closed' });
  });
  // execa settles with a result (reject: false). When spawning failed before the OS could
  // report it (E2BIG, a NUL byte in an argument), the result is the only news: no 'error'
  // or 'close' ever comes.
  void Promise.resolve(child).then(
    (result) => {
      if (live.pid !== undefined || live.finished) return;
      const cause = (result as { cause?: unknown }).cause;
      live.spawnError ??= (cause instanceof Error ? cause : Object.assign(new Error(String((result as { shortMessage?: string }).shortMessage ?? 'spawn failed')), { code: (result as { code?: string }).code })) as NodeJS.ErrnoException;
      self.send({ type: 'port.internal.closed' });
    },
    () => {},
  );
  if (options.parse === 'raw') {
    // Decoded as a stream, so that a character split across chunks stays whole.
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (text: string) => {
      live.lastActivity = live.now();
      live.linesIn += 1;
      scope.emit({ type: 'port.data', text });
    });
  } else {
    child.stdout?.on('data', (chunk: Buffer) => {
      live.lastActivity = live.now();
      live.framer.push(chunk);
    });
    // Raw ports (terminals) are read by the editor on request, so only framed output waits for it.
    const gate = readGateOf(scope.system);
    live.leaveGate = gate.subscribe((open) => self.send({ type: 'port.internal.readGate', open }));
    if (!gate.open) {
      live.readPaused = true;
      child.stdout?.pause();
    }
  }
  child.stderr?.on('data', (chunk: Buffer) => {
    live.stderr.push(chunk);
    scope.emit({ type: 'port.stderr', text: chunk.toString('utf8') });
  });
  if (child.stdin) {
    live.writes = new WriteQueue(child.stdin, options.maxQueuedBytes);
    live.early.handTo(live.writes);
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      const failure = new PortWriteError('stdin_closed', `The agent process closed its input (${error.code ?? error.message}).`, { cause: error });
      live.writes?.fail(failure);
      scope.emit({ type: 'port.writeError', code: 'stdin_closed', message: failure.message });
      self.send({ type: 'port.internal.stdinClosed' });
      // Still running with its input gone, nothing can reach it any more (a prompt would wait
      // forever). A CLI that is exiting meets EPIPE too, before Node has seen its exit: decide
      // only if it is still there a moment later, so a normal exit stays normal.
      if (options.inputClosed === 'kill' && !live.stopRequested) schedule(live, { type: 'port.internal.inputClosedCheck' }, inputClosedGraceMs, 'inputClosed');
    });
  }
  if (child.pid !== undefined) {
    live.pid = child.pid;
    trackGroup(child.pid);
    reaperTrack(child.pid);
    scope.emit({ type: 'port.spawned', pid: child.pid, command: commandLine(options) });
    self.send({ type: 'port.internal.spawned' });
    // What the owner said of the turn so far (it may have spoken while execa was loading).
    armWatchdog(live, (self.getSnapshot() as PortSnapshot).context);
  }
}

function withContext(snapshot: PortSnapshot, live: Live, changes: Partial<PortContext> & { value?: PortPhase }): PortSnapshot {
  const { value, ...context } = changes;
  return {
    ...snapshot,
    value: value ?? snapshot.value,
    context: {
      ...snapshot.context,
      linesIn: live.linesIn,
      nonJsonLines: live.nonJson,
      bytesWritten: live.writes?.bytesWritten ?? 0,
      ...context,
    },
  };
}

function onWrite(snapshot: PortSnapshot, live: Live, event: Extract<PortEvent, { type: 'port.write' }>): PortSnapshot {
  const reply = event.reply ?? ((error?: PortWriteError) => {
    if (error) live.scope.emit({ type: 'port.writeError', code: error.code, message: error.message });
  });
  let line = event.line;
  if (line === undefined) {
    try {
      line = JSON.stringify(event.message);
    } catch (error) {
      reply(new PortWriteError('invalid_message', `The message cannot be written as JSON: ${(error as Error).message}`, { cause: error }));
      return snapshot;
    }
    if (line === undefined) {
      reply(new PortWriteError('invalid_message', 'The message cannot be written as JSON: it is undefined.'));
      return snapshot;
    }
  } else if (line.includes('\n')) {
    // A newline inside a line would split one message into two for the reader.
    reply(new PortWriteError('invalid_message', 'Expected a port line without newline characters; send one JSON message per line.'));
    return snapshot;
  }
  // `starting`: the first spawn of the process waits for execa (the write waits in live.early),
  // or the CLI has just spawned and the actor has not yet heard (its stdin takes the write).
  if (snapshot.value === 'starting' && !live.stopRequested && !live.finished && !live.writes) {
    live.early.write(`${line}\n`, reply);
    return snapshot;
  }
  if ((snapshot.value !== 'running' && snapshot.value !== 'starting') || live.stopRequested || !live.writes) {
    reply(new PortWriteError('not_running', `The agent process is ${snapshot.value === 'stopping' ? 'stopping' : 'not running'}: ${live.options.command}.`));
    return snapshot;
  }
  live.writes.write(`${line}\n`, reply);
  return withContext(snapshot, live, {});
}

function onShutdown(snapshot: PortSnapshot, live: Live): PortSnapshot {
  if (live.stopRequested || live.finished) return snapshot;
  live.stopRequested = true;
  const stopping = new PortWriteError('not_running', 'The agent process is stopping.');
  live.early.fail(stopping);
  live.writes?.fail(stopping);
  // Step 1: end of input. Well-behaved CLIs exit on EOF.
  live.child?.stdin?.end();
  schedule(live, { type: 'port.internal.shutdownStep', step: 'term' }, live.options.stdinGraceMs, 'term');
  return withContext(snapshot, live, { value: 'stopping' });
}

/** What the owner last said about the turn (the port's `busy` and `toolRunning`). */
type Turn = Pick<PortContext, 'busy' | 'toolRunning'>;

function factsOf(live: Live, turn: Turn): WatchdogFacts {
  return { busy: turn.busy, toolRunning: turn.toolRunning, printed: live.linesIn > 0 };
}

function armWatchdog(live: Live, turn: Turn): void {
  const watchdog = live.options.watchdog;
  if (!watchdog || live.finished) return;
  live.scope.system.scheduler.cancel(live.scope.self, 'watchdog');
  if (live.readPaused) return; // re-armed when reading goes on
  const facts = factsOf(live, turn);
  if (!silenceCounts(watchdog, facts)) return;
  const due = Math.max(0, live.lastActivity + allowedSilence(watchdog, facts) - live.now());
  schedule(live, { type: 'port.internal.watchdog' }, due, 'watchdog');
}

function onWatchdog(snapshot: PortSnapshot, live: Live): PortSnapshot {
  const watchdog = live.options.watchdog;
  if (!watchdog || live.finished || live.stopRequested || live.readPaused) return snapshot;
  const facts = factsOf(live, snapshot.context);
  if (!silenceCounts(watchdog, facts)) return snapshot;
  const idle = live.now() - live.lastActivity;
  const allowed = allowedSilence(watchdog, facts);
  if (idle < allowed) {
    // Output came meanwhile: check again when the quiet period could next run out.
    schedule(live, { type: 'port.internal.watchdog' }, allowed - idle, 'watchdog');
    return snapshot;
  }
  live.decided = { kind: 'hung', idleMs: allowed };
  // SIGTERM is useless on a stopped (SIGSTOP) process; SIGKILL works.
  if (live.pid !== undefined) signalGroup(live.pid, 'SIGKILL');
  return snapshot;
}

/**
 * The read gate closed or opened. Closed: stdout is paused, and the watchdog stops counting
 * (the CLI is blocked on us, not hung). Opened: reading goes on, the silence allowed starts
 * again, and a wait for output to close that was deferred starts.
 */
function onReadGate(snapshot: PortSnapshot, live: Live, open: boolean): PortSnapshot {
  if (live.finished || live.readPaused === !open) return snapshot;
  live.readPaused = !open;
  if (open) {
    live.child?.stdout?.resume();
    live.lastActivity = live.now();
    armWatchdog(live, snapshot.context);
    if (live.closeDeferred) {
      live.closeDeferred = false;
      armCloseTimer(live);
    }
  } else {
    live.child?.stdout?.pause();
    live.scope.system.scheduler.cancel(live.scope.self, 'watchdog');
  }
  return withContext(snapshot, live, { readPaused: !open });
}

/**
 * After the CLI exited: wait `closeTimeoutMs` for its output to close (a grandchild outside
 * the group may hold it), then stop waiting. Not while reading is paused: the output is
 * still in the pipe, and is read first.
 */
function armCloseTimer(live: Live): void {
  const child = live.child;
  if (live.closeTimer) clearTimeout(live.closeTimer);
  live.closeTimer = setTimeout(() => {
    if (live.readPaused) {
      live.closeDeferred = true;
      return;
    }
    // Something outside the group still holds stdout open: stop waiting for it.
    child?.stdout?.destroy();
    child?.stderr?.destroy();
    live.framer.end();
    live.scope.self.send({ type: 'port.internal.closed' });
  }, live.options.closeTimeoutMs);
  live.closeTimer.unref?.();
}

function schedule(live: Live, event: PortInternalEvent, delay: number, id: string): void {
  const self = live.scope.self;
  live.scope.system.scheduler.schedule(self, self, event, delay, id);
}

/** The process and its output are gone: decide the reason and end the actor. */
function finish(snapshot: PortSnapshot, live: Live): PortSnapshot {
  if (live.finished) return snapshot;
  live.finished = true;
  live.leaveGate?.();
  if (live.closeTimer) clearTimeout(live.closeTimer);
  if (live.pid !== undefined) {
    untrackGroup(live.pid);
    reaperForget(live.pid);
  }
  const exit: PortExit = {
    reason: exitReason(live),
    command: commandLine(live.options),
    pid: live.pid,
    durationMs: Math.round(live.now() - live.spawnedAt),
    stderrTail: live.stderr.tail(20),
    linesIn: live.linesIn,
    nonJsonLines: live.nonJson,
  };
  const gone = new PortWriteError('not_running', `The agent process has exited: ${live.options.command}.`);
  live.early.fail(gone);
  live.writes?.fail(gone);
  live.scope.emit({ type: 'port.exited', exit });
  // After the event: a listener may still write, and must hear back.
  pendingWrites.settleAll(live.scope.self, gone);
  const base = withContext(snapshot, live, { value: 'exited' });
  if (exit.reason.kind === 'stopped') return { ...base, status: 'done', output: shutdownExit(exit), error: undefined } as PortSnapshot;
  if (isNormalPortExit(exit.reason)) return { ...base, status: 'done', output: exit, error: undefined } as PortSnapshot;
  return { ...base, status: 'error', output: undefined, error: new PortError(exit, { cause: live.spawnError }) } as PortSnapshot;
}

function exitReason(live: Live): PortExitReason {
  const spawnError = live.spawnError;
  if (spawnError) return spawnFailure(spawnError, live.options);
  // A CLI that closed its input but ended by itself before our SIGKILL: its own reason is the truth.
  const overtaken = live.decided?.kind === 'input_closed' && live.exitSignal !== 'SIGKILL';
  if (live.decided && !overtaken) return live.decided;
  if (live.stopRequested) return { kind: 'stopped', code: live.exitCode, signal: live.exitSignal };
  if (live.exitSignal) return { kind: 'signaled', signal: live.exitSignal };
  return { kind: 'exited', code: live.exitCode ?? 0 };
}

function spawnFailure(error: NodeJS.ErrnoException, options: Normalized): PortExitReason {
  const code = error.code ?? 'UNKNOWN';
  let hint: string;
  if (error.syscall === 'chdir') {
    hint = `the working directory ${options.cwd} does not exist; create it or pass another cwd`;
  } else if (code === 'ENOENT') {
    hint = `executable "${options.command}" not found${options.command.includes('/') ? '' : ' on the PATH given to the agent'}; install it, or point to it with --agent-command PATH`;
  } else if (code === 'EACCES') {
    hint = `"${options.command}" is not executable; check its permissions (chmod +x) or point --agent-command at the real binary`;
  } else {
    hint = `spawning "${options.command}" failed: ${error.message}`;
  }
  return { kind: 'spawn_failed', code, message: error.message, hint };
}

/** The error a port fails its start with, when the CLI cannot be spawned at all. */
function startFailure(live: Live, cause: NodeJS.ErrnoException): PortError {
  live.finished = true;
  const exit: PortExit = {
    reason: spawnFailure(cause, live.options),
    command: commandLine(live.options),
    pid: undefined,
    durationMs: 0,
    stderrTail: '',
    linesIn: 0,
    nonJsonLines: 0,
  };
  return new PortError(exit, { cause });
}

/** XState's synchronous stop: kill the whole group now; nothing is left to wait for. */
function killNow(live: Live): void {
  if (live.finished) return;
  live.finished = true;
  live.leaveGate?.();
  if (live.closeTimer) clearTimeout(live.closeTimer);
  if (live.pid !== undefined) {
    signalGroup(live.pid, 'SIGKILL');
    untrackGroup(live.pid);
    reaperForget(live.pid);
  }
  const gone = new PortWriteError('not_running', `The agent process was stopped: ${live.options.command}.`);
  live.early.fail(gone);
  live.writes?.fail(gone);
  pendingWrites.settleAll(live.scope.self, gone);
}

/** Live facts of a port that change with every line (the snapshot is updated on lifecycle events). */
export function portStats(ref: AnyActorRef): { linesIn: number; nonJsonLines: number; bytesWritten: number; queuedBytes: number; stderrTail: string } | undefined {
  const live = lives.get(ref);
  if (!live) return undefined;
  return {
    linesIn: live.linesIn,
    nonJsonLines: live.nonJson,
    bytesWritten: live.writes?.bytesWritten ?? 0,
    queuedBytes: (live.writes?.queuedBytes ?? 0) + live.early.queuedBytes,
    stderrTail: live.stderr.tail(20),
  };
}

/**
 * Writes one message (as a JSON line) or one raw line to a port, and resolves once it is
 * handed to the pipe. Rejects with a {@link PortWriteError}: `not_running` after exit (an
 * event sent to an ended actor would be silently dropped), `stdin_closed` after EPIPE,
 * `queue_full` when the CLI stopped reading.
 */
export function writeToPort(port: AnyActorRef, data: { line: string } | { message: unknown }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (port.getSnapshot().status !== 'active') {
      reject(new PortWriteError('not_running', `The agent process has exited (port "${port.id}").`));
      return;
    }
    const done = pendingWrites.register(port, (error?: PortWriteError) => (error ? reject(error) : resolve()));
    port.send('line' in data ? { type: 'port.write', line: data.line, reply: done } : { type: 'port.write', message: data.message, reply: done });
  });
}
