/**
 * How a port ends: after the CLI exits, the wait for its output to close; then the exit
 * reason decided (a spawn failure, a reason the port decided, a stop asked for, a signal or
 * a code), every write still owed answered, and the actor's final snapshot: `done` for a
 * normal exit or a stop, `error` with a {@link PortError} otherwise. And XState's
 * synchronous stop, which kills the group at once.
 */
import { shutdownExit } from '../supervision/exit-reason.js';
import { signalGroup, untrackGroup } from './process-group.js';
import { untrackTree } from './tree-kill.js';
import { reaperForget } from './orphan-reaper.js';
import { isNormalPortExit, PortError, PortWriteError, type PortExit, type PortExitReason } from './port-exit.js';
import { commandLine, type PortOptions } from './port-options.js';
import type { PortSnapshot } from './port-contract.js';
import { pendingWrites, withContext, type Live } from './port-state.js';

/**
 * After the CLI exited: wait `closeTimeoutMs` for its output to close (a grandchild outside
 * the group may hold it), then stop waiting. Not while reading is paused: the output is
 * still in the pipe, and is read first.
 */
export function armCloseTimer(live: Live): void {
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

/** The process and its output are gone: decide the reason and end the actor. */
export function finish(snapshot: PortSnapshot, live: Live): PortSnapshot {
  if (live.finished) return snapshot;
  live.finished = true;
  live.leaveGate?.();
  if (live.closeTimer) clearTimeout(live.closeTimer);
  if (live.pid !== undefined) {
    untrackGroup(live.pid);
    reaperForget(live.pid);
  }
  if (live.tree) untrackTree(live.tree);
  live.cgroup?.remove();
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

/** The reason of a spawn that failed, with a hint that says what to do. */
export function spawnFailure(error: NodeJS.ErrnoException, options: PortOptions): PortExitReason {
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

/**
 * Sends `signal` to the port's whole process tree: its group and every descendant seen in
 * another session or group (tree-kill.ts); its group only where /proc cannot be read.
 */
export function signalPortTree(live: Live, signal: NodeJS.Signals): void {
  if (live.pid === undefined) return;
  // In a v2 cgroup, a kill reaches every process in it, whatever no walk found.
  if (signal === 'SIGKILL') live.cgroup?.kill();
  if (live.tree) live.tree.signal(signal);
  else signalGroup(live.pid, signal);
}

/** XState's synchronous stop: kill the whole tree now; nothing is left to wait for. */
export function killNow(live: Live): void {
  if (live.finished) return;
  live.finished = true;
  live.leaveGate?.();
  if (live.closeTimer) clearTimeout(live.closeTimer);
  if (live.pid !== undefined) {
    signalPortTree(live, 'SIGKILL');
    untrackGroup(live.pid);
    reaperForget(live.pid);
  }
  if (live.tree) untrackTree(live.tree);
  live.cgroup?.remove();
  const gone = new PortWriteError('not_running', `The agent process was stopped: ${live.options.command}.`);
  live.early.fail(gone);
  live.writes?.fail(gone);
  pendingWrites.settleAll(live.scope.self, gone);
}
