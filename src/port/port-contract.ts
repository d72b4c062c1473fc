/**
 * The contract of a port actor: the phases and facts its snapshot shows, the events it
 * accepts (its own timers' events included), and the events it emits to its owner.
 */
import type { ActorLogic, ActorSystem, Snapshot } from 'xstate';
import type { SHUTDOWN_EVENT } from '../supervision/events.js';
import type { ExitReason } from '../supervision/exit-reason.js';
import type { PortExit, PortExitReason, PortWriteError, PortWriteErrorCode } from './port-exit.js';
import type { PortInput } from './port-options.js';

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
   * The owner says a turn is open (a prompt, a handshake, a wait for the editor or the user):
   * a CLI over its soft memory limit is recycled only once none is.
   */
  readonly turnOpen: boolean;
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
   * states both facts; see watchdog.ts. `turnOpen`: a turn is open, even while the agent
   * waits for the editor (omitted: as `busy`); the soft memory limit waits for it to close.
   */
  | { readonly type: 'port.busy'; readonly busy: boolean; readonly toolRunning?: boolean; readonly turnOpen?: boolean }
  | { readonly type: 'port.heartbeat' }
  /**
   * Fault injection (`warden chaos`, tests): handle `line` as if the process had printed it,
   * between two of its real lines (never inside a partial one).
   */
  | { readonly type: 'port.injectLine'; readonly line: string }
  | { readonly type: typeof SHUTDOWN_EVENT }
  | PortInternalEvent
  | { readonly type: `xstate.${string}` };

/** Events a port sends itself (its process and timers). */
export type PortInternalEvent =
  | { readonly type: 'port.internal.spawned' }
  | { readonly type: 'port.internal.kill'; readonly reason: PortExitReason }
  | { readonly type: 'port.internal.stdinClosed' }
  | { readonly type: 'port.internal.inputClosedCheck' }
  | { readonly type: 'port.internal.closed' }
  | { readonly type: 'port.internal.shutdownStep'; readonly step: 'term' | 'kill' }
  | { readonly type: 'port.internal.watchdog' }
  | { readonly type: 'port.internal.memoryPoll' }
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
  /** A sample of the process tree's memory (with a `memoryLimit`, each `pollMs`): resident bytes and processes. */
  | { readonly type: 'port.memory'; readonly rssBytes: number; readonly processes: number }
  | { readonly type: 'port.exited'; readonly exit: PortExit };

/** Actor logic of a port. */
export type PortLogic = ActorLogic<PortSnapshot, PortEvent, PortInput, ActorSystem<any>, PortEmitted>;
