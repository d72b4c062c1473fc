/**
 * The actor-logic plumbing of a supervisor: the `ActorLogic` object XState runs, its live
 * state created at init, the snapshot summarised from that state after every event, the
 * `xstate.stop` path, and the replies owed to callers when the actor ends or fails.
 *
 * What the supervisor does on start and on each event is its policy, handed in by
 * `supervisor.ts` as a {@link SupervisorBehaviour}.
 */
import type { AnyActorRef } from 'xstate';
import { supervisorLogicMarker } from './child-spec.js';
import { checkChildSpecs } from './child-spec-list.js';
import { restartsInWindow } from './restart-intensity.js';
import { shutdownExit } from './exit-reason.js';
import { notRunning, type SupervisorEvent } from './events.js';
import { PendingReplies } from './pending-replies.js';
import { resolveNow } from './clock.js';
import { stopAllNow } from './child-stop.js';
import {
  keepLive,
  liveOf,
  replyStopped,
  type Live,
  type SupervisorConfig,
  type SupervisorContext,
  type SupervisorLogic,
  type SupervisorScope,
  type SupervisorSnapshot,
} from './supervisor-state.js';

/** Replies owed to `startChild`, `terminateChild`, ... callers; settled `not_running` when the supervisor ends. */
export const pendingCalls = new PendingReplies<typeof notRunning>();

/** The supervisor's policy: what it does when started and on each event it receives. */
export interface SupervisorBehaviour {
  /** Starts the initial children (`live.initSpecs`) in order. */
  readonly start: (live: Live) => void;
  /** Handles one event; sets `live.phase` to `stopped` when the supervisor has ended. */
  readonly handle: (live: Live, event: SupervisorEvent) => void;
}

/** Builds the actor logic for a configuration (static or dynamic) and the supervisor's behaviour. */
export function supervisorActorLogic<TInput>(config: SupervisorConfig<TInput>, behaviour: SupervisorBehaviour): SupervisorLogic<TInput> {
  const logic = {
    [supervisorLogicMarker]: true as const,
    id: config.name,
    config,
    getInitialSnapshot(scope: SupervisorScope, input: TInput): SupervisorSnapshot {
      const initSpecs = config.dynamic ? [] : checkChildSpecs(config.children(input), config.flags);
      const live: Live = {
        scope,
        config,
        path: pathOf(scope.self),
        now: resolveNow(scope.self),
        table: new Map(),
        window: [],
        countedAt: 0,
        phase: 'running',
        busy: undefined,
        deferred: [],
        totalRestarts: 0,
        active: 0,
        nextChildNumber: 1,
        exit: undefined,
        initSpecs,
      };
      keepLive(live);
      return summarize(live, 'active');
    },
    start(_snapshot: SupervisorSnapshot, scope: SupervisorScope): void {
      behaviour.start(liveOf(scope.self));
    },
    transition(snapshot: SupervisorSnapshot, event: SupervisorEvent, scope: SupervisorScope): SupervisorSnapshot {
      if (snapshot.status !== 'active') return snapshot;
      const live = liveOf(scope.self);
      if (event.type === 'xstate.stop') {
        stopAllNow(live);
        live.phase = 'stopped';
        pendingCalls.settleAll(scope.self, notRunning);
        return summarize(live, 'stopped');
      }
      try {
        behaviour.handle(live, event);
      } catch (error) {
        // A bug here must not orphan the children (XState does not stop a custom logic's
        // children when it fails), nor leave a caller waiting for a reply.
        stopAllNow(live);
        replyStopped(event);
        pendingCalls.settleAll(scope.self, notRunning);
        throw error;
      }
      if (live.phase === 'stopped') {
        pendingCalls.settleAll(scope.self, notRunning);
        return summarize(live, 'done');
      }
      return summarize(live, 'active');
    },
    getPersistedSnapshot(snapshot: SupervisorSnapshot): SupervisorSnapshot {
      return snapshot;
    },
    restoreSnapshot(): SupervisorSnapshot {
      // Live children cannot be persisted, and a restored actor gets no input to rebuild
      // its specs from: say so instead of coming back half alive.
      throw new Error('A supervisor cannot be restored from a persisted snapshot; create a new actor from its logic instead.');
    },
  };
  return logic as unknown as SupervisorLogic<TInput>;
}

function pathOf(self: AnyActorRef): string {
  const ids: string[] = [];
  let ref: AnyActorRef | undefined = self;
  while (ref) {
    ids.unshift(ref.id);
    ref = (ref as { _parent?: AnyActorRef })._parent;
  }
  return ids.join('/');
}

function summarize(live: Live, status: 'active' | 'done' | 'stopped'): SupervisorSnapshot {
  const context: SupervisorContext = {
    name: live.config.name,
    strategy: live.config.flags.strategy,
    dynamic: live.config.dynamic,
    specs: live.table.size,
    active: live.active,
    restarts: live.totalRestarts,
    restartsInWindow: restartsInWindow(live.window, live.now(), live.config.flags.period),
  };
  if (status === 'done') {
    return { status: 'done', output: live.exit ?? shutdownExit(), error: undefined, value: 'stopped', context };
  }
  return { status, output: undefined, error: undefined, value: live.phase, context } as SupervisorSnapshot;
}
