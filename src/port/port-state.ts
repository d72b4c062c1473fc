/**
 * The live state of one port actor: the process, its streams, counters and timers, kept
 * beside the actor in a `WeakMap` keyed by its ref, never in the snapshot. Built at init
 * with the reader of the CLI's stdout (framing, JSON parsing, oversize lines), which emits
 * straight to the owner without a transition per line.
 */
import type { ActorScope, ActorSystem, AnyActorRef } from 'xstate';
import { resolveNow } from '../supervision/clock.js';
import { PendingReplies } from '../supervision/pending-replies.js';
import { defaultMaxLineBytes, jsonLines, LineFramer } from './line-framer.js';
import { redactorFor } from './redact.js';
import { StderrRing } from './stderr-ring.js';
import type { WriteQueue } from './write-queue.js';
import type { loadedExeca } from './execa-loader.js';
import { EarlyWrites } from './early-writes.js';
import type { KnownTree } from './tree-kill.js';
import type { AgentCgroup } from './agent-cgroup.js';
import type { PortExitReason, PortWriteError } from './port-exit.js';
import type { PortOptions } from './port-options.js';
import type { PortContext, PortEmitted, PortEvent, PortInternalEvent, PortPhase, PortSnapshot } from './port-contract.js';

/** The actor scope a port's logic runs in. */
export type Scope = ActorScope<PortSnapshot, PortEvent, ActorSystem<any>, PortEmitted>;

/** The live state of one port actor. */
export interface Live {
  readonly scope: Scope;
  readonly options: PortOptions;
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
  /** The CLI's process tree as last read (tree-kill.ts): what a kill reaches beyond its group. */
  tree: KnownTree | undefined;
  /** Its cgroups, with `memoryLimit.cgroup` where they could be made (agent-cgroup.ts). */
  cgroup: AgentCgroup | undefined;
  /** The tree went over its soft memory limit: the CLI is recycled once no turn is open (port-memory.ts). */
  overSoft: MemoryExcess | undefined;
  /** Turns the owner closed in this port's life (`port.busy` turnOpen true, then false): a soft recycle after one is planned maintenance. */
  turnsClosed: number;
}

/** A memory sample over a limit: the bytes sampled, the limit's bytes. */
export interface MemoryExcess {
  readonly rssBytes: number;
  readonly limitBytes: number;
}

/** execa's function, once loaded. */
export type Execa = NonNullable<ReturnType<typeof loadedExeca>>;

const lives = new WeakMap<AnyActorRef, Live>();

/** Keeps `live` as the live state of the port actor `self`. */
export function keepLive(self: AnyActorRef, live: Live): void {
  lives.set(self, live);
}

/** The live state of a port actor, or `undefined` when the ref is not one. */
export function liveOfPort(ref: AnyActorRef): Live | undefined {
  return lives.get(ref);
}

/** Replies owed to `writeToPort` callers whose write is still in the mailbox when the port ends. */
export const pendingWrites = new PendingReplies<PortWriteError | undefined>();

/** Builds the live state of a port, with the reader of its stdout. */
export function createLive(scope: Scope, options: PortOptions): Live {
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
    tree: undefined,
    cgroup: undefined,
    overSoft: undefined,
    turnsClosed: 0,
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

/** A snapshot with `changes` and the live counters written into its context. */
export function withContext(snapshot: PortSnapshot, live: Live, changes: Partial<PortContext> & { value?: PortPhase }): PortSnapshot {
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

/** Schedules one of the port's own events on the system's clock, under `id`. */
export function schedule(live: Live, event: PortInternalEvent, delay: number, id: string): void {
  const self = live.scope.self;
  live.scope.system.scheduler.schedule(self, self, event, delay, id);
}
