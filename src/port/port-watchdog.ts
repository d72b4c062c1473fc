/**
 * Hang detection on a live port: the watchdog (its rules in `watchdog.ts`) armed from what
 * the owner says of the turn and from the CLI's output, and the CLI killed as `hung` when
 * its silence runs past what is allowed.
 */
import { signalPortTree } from './port-ending.js';
import { allowedSilence, silenceCounts, type WatchdogFacts } from './watchdog.js';
import type { PortContext, PortSnapshot } from './port-contract.js';
import { schedule, type Live } from './port-state.js';

/** What the owner last said about the turn (the port's `busy` and `toolRunning`). */
export type Turn = Pick<PortContext, 'busy' | 'toolRunning'>;

function factsOf(live: Live, turn: Turn): WatchdogFacts {
  return { busy: turn.busy, toolRunning: turn.toolRunning, printed: live.linesIn > 0 };
}

/** Arms (or re-arms) the watchdog for the turn's facts; not while reading is paused. */
export function armWatchdog(live: Live, turn: Turn): void {
  const watchdog = live.options.watchdog;
  if (!watchdog || live.finished) return;
  live.scope.system.scheduler.cancel(live.scope.self, 'watchdog');
  if (live.readPaused) return; // re-armed when reading goes on
  const facts = factsOf(live, turn);
  if (!silenceCounts(watchdog, facts)) return;
  const due = Math.max(0, live.lastActivity + allowedSilence(watchdog, facts) - live.now());
  schedule(live, { type: 'port.internal.watchdog' }, due, 'watchdog');
}

/** The watchdog fired: check again if output came meanwhile, else kill the CLI as hung. */
export function onWatchdog(snapshot: PortSnapshot, live: Live): PortSnapshot {
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
  signalPortTree(live, 'SIGKILL');
  return snapshot;
}
