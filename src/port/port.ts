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
 *
 * This module is the actor: its logic and what it does on each event. Beside it, one
 * concept per file: the input and its defaults (`port-options.ts`), the snapshot and event
 * types (`port-contract.ts`), the live state and stdout reader (`port-state.ts`), spawning
 * (`port-spawn.ts`), the watchdog on a live port (`port-watchdog.ts`) and how a port ends
 * (`port-ending.ts`).
 */
import type { AnyActorRef } from 'xstate';
import { gracefulShutdown } from '../supervision/graceful-shutdown.js';
import { SHUTDOWN_EVENT } from '../supervision/events.js';
import { PortWriteError } from './port-exit.js';
import { commandLine, normalizePortInput, type PortInput, type PortOptions } from './port-options.js';
import type { PortContext, PortEvent, PortLogic, PortSnapshot } from './port-contract.js';
import { createLive, keepLive, liveOfPort, pendingWrites, schedule, withContext, type Live, type Scope } from './port-state.js';
import { spawnProcess } from './port-spawn.js';
import { armWatchdog, onWatchdog } from './port-watchdog.js';
import { armCloseTimer, finish, killNow, signalPortTree } from './port-ending.js';
import { onMemoryPoll, recycleIfBetweenTurns } from './port-memory.js';

export { portStopBudgetMs, type PortInput } from './port-options.js';
export type { PortContext, PortEmitted, PortEvent, PortLogic, PortPhase, PortSnapshot } from './port-contract.js';
export { defaultWatchdogStartupMs } from './watchdog.js';

function initialContext(options: PortOptions): PortContext {
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
    turnOpen: false,
    readPaused: false,
  };
}

/** Actor logic of a port: `createActor(portLogic, { input: { command: 'claude', args: [...] } })`. */
export const portLogic: PortLogic = gracefulShutdown({
  config: { name: 'port' },
  getInitialSnapshot(scope: Scope, input: PortInput): PortSnapshot {
    const options = normalizePortInput(input);
    const live = createLive(scope, options);
    keepLive(scope.self, live);
    return { status: 'active', output: undefined, error: undefined, value: 'starting', context: initialContext(options) };
  },
  start(_snapshot: PortSnapshot, scope: Scope): void {
    spawnProcess(liveOfPort(scope.self) as Live);
  },
  transition(snapshot: PortSnapshot, event: PortEvent, scope: Scope): PortSnapshot {
    if (snapshot.status !== 'active') return snapshot;
    const live = liveOfPort(scope.self) as Live;
    switch (event.type) {
      case 'port.internal.spawned':
        // Asked to stop before it had spawned: it stays stopping (only a start becomes running).
        return withContext(snapshot, live, snapshot.value === 'starting' ? { value: 'running', pid: live.pid, startedAt: Date.now() } : { pid: live.pid, startedAt: Date.now() });
      case 'port.write':
        return onWrite(snapshot, live, event);
      case 'port.busy': {
        if (event.busy && !snapshot.context.busy) live.lastActivity = live.now();
        const next = withContext(snapshot, live, { busy: event.busy, toolRunning: event.toolRunning === true, turnOpen: event.turnOpen ?? event.busy });
        if (snapshot.context.turnOpen && !next.context.turnOpen) live.turnsClosed += 1;
        armWatchdog(live, next.context);
        // Over the soft memory limit, waiting for the turn to close: it may have just closed.
        return recycleIfBetweenTurns(next, live, (current) => onShutdown(current, live));
      }
      case 'port.heartbeat':
        live.lastActivity = live.now();
        return snapshot;
      case 'port.injectLine':
        if (!live.finished) live.onLine(event.line);
        return snapshot;
      case 'port.internal.watchdog':
        return onWatchdog(snapshot, live);
      case 'port.internal.memoryPoll':
        return onMemoryPoll(snapshot, live, (current) => onShutdown(current, live));
      case 'port.internal.readGate':
        return onReadGate(snapshot, live, event.open);
      case 'port.internal.kill':
        if (!live.decided && !live.stopRequested) live.decided = event.reason;
        signalPortTree(live, 'SIGKILL');
        return snapshot;
      case 'port.internal.stdinClosed':
        return withContext(snapshot, live, { stdinClosed: true });
      case 'port.internal.inputClosedCheck':
        if (!live.finished && !live.stopRequested && live.pid !== undefined) {
          live.decided ??= { kind: 'input_closed' };
          signalPortTree(live, 'SIGKILL');
        }
        return snapshot;
      case SHUTDOWN_EVENT:
        return onShutdown(snapshot, live);
      case 'port.internal.shutdownStep':
        if (live.pid !== undefined && !live.finished) {
          signalPortTree(live, event.step === 'term' ? 'SIGTERM' : 'SIGKILL');
          // A stopped (SIGSTOP) process holds the SIGTERM until continued: continue it, as shells do.
          if (event.step === 'term') signalPortTree(live, 'SIGCONT');
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
  // The tree as it is now: a CLI that exits on EOF leaves its setsid'd tools to init, where
  // no walk from it finds them; remembered, they are killed when it exits (port-spawn.ts).
  live.tree?.refresh();
  // Step 1: end of input. Well-behaved CLIs exit on EOF.
  live.child?.stdin?.end();
  schedule(live, { type: 'port.internal.shutdownStep', step: 'term' }, live.options.stdinGraceMs, 'term');
  return withContext(snapshot, live, { value: 'stopping' });
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

/** Live facts of a port that change with every line (the snapshot is updated on lifecycle events). */
export function portStats(ref: AnyActorRef): { linesIn: number; nonJsonLines: number; bytesWritten: number; queuedBytes: number; stderrTail: string } | undefined {
  const live = liveOfPort(ref);
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
