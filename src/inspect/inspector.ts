/**
 * The XState inspector, wired: `warden acp --inspect URL` and `createHost({ inspect })` send
 * every actor of the host (servers, agents, supervisors, ports, connections, pending
 * requests, session charts) to a Stately inspector over WebSocket, in `@statelyai/inspect`'s
 * event format, so it shows the whole tree live.
 *
 * Two things are ours rather than the library's. Payloads: every snapshot and event goes
 * through `inspectionPayload` while the live objects are at hand (the library's own path
 * stringifies snapshots first, which turns errors into `{}`, and sends secrets as they
 * are); actors are named by their id (`port`, `session demo-1`), as the library's own
 * XState observer names them (its `actor()` left them nameless). The socket: ours holds at
 * most 200 events while it is not connected, reconnects with a bounded delay on timers that
 * never keep the process alive, and stays closed once stopped (the library's retries
 * forever, even after `stop()`). The same events feed the live view (live-view.ts).
 */
import type { StatelyInspectionEvent } from '@statelyai/inspect';
import type { InspectionEvent, Observer } from 'xstate';
import type { PayloadLimits } from './inspection-payload.js';
import type { InspectorSocket } from './inspector-socket.js';
import { statelyEventOf } from './stately-event.js';
import { createMoveTracker, readMove } from '../host/transitions-taken.js';

export { statelyEventOf, parentSessionId } from './stately-event.js';

/** A running inspector: the observer to give XState, and how to stop it. */
export interface Inspection {
  /** Pass as `createActor(logic, { inspect })` to the root actors. */
  readonly inspect: Observer<InspectionEvent>;
  /** Closes the connection to the inspector for good. */
  stop(): void;
}

/** Options of {@link connectInspector}. */
export interface InspectorConnectionOptions extends PayloadLimits {
  /** The inspector's WebSocket address (`ws://127.0.0.1:8080`). */
  readonly url: string;
  /** Events held while not connected; the oldest go first (default 200). */
  readonly maxDeferred?: number;
}

/**
 * Connects to an inspector at `url`. Throws a `TypeError` for an address that is not a
 * `ws://` or `wss://` URL; an inspector that is not listening costs a reconnect now and then.
 */
export function connectInspector(options: InspectorConnectionOptions): Inspection {
  if (!/^wss?:\/\/[^\s]+$/u.test(options.url)) {
    throw new TypeError(`the inspector address must be a ws:// or wss:// URL (say ws://127.0.0.1:8080), got ${JSON.stringify(options.url)}`);
  }
  const maxDeferred = options.maxDeferred ?? 200;
  // Events are made safe now, while their live objects are at hand, and held (as the socket
  // holds them while it is not connected) until the socket's module has loaded.
  const held: StatelyInspectionEvent[] = [];
  let socket: InspectorSocket | undefined;
  let stopped = false;
  const moves = createMoveTracker();
  void import('./inspector-socket.js').then(
    ({ InspectorSocket }) => {
      if (stopped) return;
      socket = new InspectorSocket(options.url, maxDeferred);
      socket.start();
      for (const event of held.splice(0)) socket.send(event);
    },
    (error: unknown) => process.emitWarning(`the inspector could not be loaded: ${error instanceof Error ? error.message : String(error)}`, 'AcpWardenInspectorWarning'),
  );
  return {
    inspect: {
      next(event: InspectionEvent) {
        if (stopped) return;
        const move = moves.note(event);
        const stately = statelyEventOf(event, options, Date.now(), move && readMove(move));
        if (!stately) return;
        if (socket) {
          socket.send(stately);
          return;
        }
        held.push(stately);
        if (held.length > maxDeferred) held.shift();
      },
    },
    stop() {
      stopped = true;
      held.length = 0;
      socket?.stop();
    },
  };
}
