/**
 * Spawning a port's CLI: what can be checked before (working directory, executable) fails
 * the start itself; then execa spawns it with no shell, in its own process group, with the
 * isolated environment, and every OS event of the process becomes data or an event to the
 * actor (a throw there would be an uncaughtException XState cannot see).
 */
import { existsSync, statSync } from 'node:fs';
import { trackGroup } from './process-group.js';
import { procAvailable } from './process-tree.js';
import { KnownTree, trackTree } from './tree-kill.js';
import { armMemoryPoll, cgroupMemoryKill } from './port-memory.js';
import { AgentCgroup } from './agent-cgroup.js';
import { cpuPeriodUs, cpuQuotaUs } from './cpu-limit.js';
import { reaperTrack } from './orphan-reaper.js';
import { checkExecutable } from './resolve-executable.js';
import { readGateOf } from './read-gate.js';
import { loadedExeca, loadExeca } from './execa-loader.js';
import { withSpawnEnvironment } from './spawn-env.js';
import { WriteQueue } from './write-queue.js';
import { PortError, PortWriteError, type PortExit } from './port-exit.js';
import { commandLine } from './port-options.js';
import type { PortSnapshot } from './port-contract.js';
import { schedule, type Execa, type Live } from './port-state.js';
import { armWatchdog } from './port-watchdog.js';
import { armCloseTimer, signalPortTree, spawnFailure } from './port-ending.js';

/** How long a CLI whose stdin failed (EPIPE) may take to exit by itself before it is killed as broken. */
const inputClosedGraceMs = 200;

/** Spawns the CLI: no shell, its own process group, isolated environment. */
export function spawnProcess(live: Live): void {
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
    // Killed by the kernel at its memory cgroup's limit: that SIGKILL is the hard limit's.
    live.decided ??= cgroupMemoryKill(live);
    // The rest of the tree (tools the CLI started, in its group or, seen before, in their own
    // sessions) dies with it; that also releases the pipes they inherited, so that `close` comes.
    signalPortTree(live, 'SIGKILL');
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
    live.tree = procAvailable ? new KnownTree(child.pid) : undefined;
    if (live.tree) trackTree(live.tree);
    // Before the CLI has started anything (a Node runtime takes tens of ms to get there).
    if (options.memoryLimit?.cgroup || options.cpuLimit) {
      live.cgroup = AgentCgroup.create({
        ...(options.memoryLimit?.cgroup ? { memoryHardBytes: options.memoryLimit.hardBytes } : {}),
        ...(options.cpuLimit ? { cpu: { quotaUs: cpuQuotaUs(options.cpuLimit.percent), periodUs: cpuPeriodUs } } : {}),
      });
      live.cgroup?.add(child.pid);
    }
    trackGroup(child.pid);
    reaperTrack(child.pid);
    scope.emit({ type: 'port.spawned', pid: child.pid, command: commandLine(options) });
    self.send({ type: 'port.internal.spawned' });
    // What the owner said of the turn so far (it may have spoken while execa was loading).
    armWatchdog(live, (self.getSnapshot() as PortSnapshot).context);
    armMemoryPoll(live);
  }
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
