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
import { createInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import type { AnyActorRef, InspectionEvent, Observer } from 'xstate';
import WebSocket from 'ws';
import { inspectionPayload, type PayloadLimits } from './inspection-payload.js';

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
  const socket = new InspectorSocket(options.url, options.maxDeferred ?? 200);
  socket.start();
  return {
    inspect: {
      next(event: InspectionEvent) {
        const stately = statelyEventOf(event, options);
        if (stately) socket.send(stately);
      },
    },
    stop: () => socket.stop(),
  };
}

/** The event format version of the installed `@statelyai/inspect` (every event carries it). */
const FORMAT_VERSION: string = (() => {
  let version = '';
  createInspector({ send: (event) => (version = event._version) }, { autoStart: false }).actor('version-probe');
  return version;
})();

/**
 * One XState inspection event as `@statelyai/inspect` sends it, payloads made safe
 * (`inspectionPayload`): what `connectInspector` sends and the live view folds. Microsteps
 * and actions give `undefined` (the inspector does not show them).
 *
 * Shaped as the library's own XState observer shapes them: an actor is named by its id
 * (`port`, `session demo-1`; the machine id when the actor has none of its own), a
 * machine's definition is its config; a machine snapshot is sent as its `toJSON()` (state
 * value, context, status, error, output: not the machine around it).
 */
export function statelyEventOf(event: InspectionEvent, limits: PayloadLimits = {}, at: number = Date.now()): StatelyInspectionEvent | undefined {
  const safe = (value: unknown) => inspectionPayload(value, limits);
  const base = { sessionId: event.actorRef.sessionId, createdAt: String(at), _version: FORMAT_VERSION };
  switch (event.type) {
    case '@xstate.actor': {
      const actorRef = event.actorRef as AnyActorRef;
      const config = (actorRef as unknown as { logic?: { config?: unknown } }).logic?.config;
      const machineId = isMachineConfig(config) ? config.id : undefined;
      const name = actorRef.id === actorRef.sessionId && machineId ? machineId : actorRef.id;
      return {
        ...base,
        type: '@xstate.actor',
        name,
        id: null as never,
        rootId: event.rootId,
        parentId: parentSessionId(actorRef),
        definition: JSON.stringify(isMachineConfig(config) ? safe(config) : { id: name }),
        snapshot: (safe(plainSnapshot(actorRef.getSnapshot())) ?? { status: 'active' }) as never,
      };
    }
    case '@xstate.snapshot':
      return { ...base, type: '@xstate.snapshot', id: null as never, rootId: event.rootId, snapshot: safe(plainSnapshot(event.snapshot)) as never, event: safe(event.event) as never };
    case '@xstate.event':
      return { ...base, type: '@xstate.event', id: null as never, rootId: event.rootId, sourceId: event.sourceRef?.sessionId, event: safe(event.event) as never };
    default:
      return undefined; // microsteps and actions: not shown by the inspector
  }
}

/** A machine's snapshot without the machine (`toJSON()`); other snapshots as they are. */
function plainSnapshot(snapshot: unknown): unknown {
  const toJSON = (snapshot as { toJSON?: unknown } | undefined)?.toJSON;
  return typeof toJSON === 'function' ? (toJSON as () => unknown).call(snapshot) : snapshot;
}

function isMachineConfig(config: unknown): config is { id?: string; states?: unknown } {
  return typeof config === 'object' && config !== null && 'states' in config;
}

/** The parent's session id of an actor, as the inspector links them (for tests and the live view). */
export function parentSessionId(actor: AnyActorRef): string | undefined {
  return (actor as unknown as { _parent?: AnyActorRef })._parent?.sessionId;
}

/** A WebSocket to the inspector that buffers while closed and reconnects, never blocking exit. */
class InspectorSocket {
  private ws: WebSocket | undefined;
  private readonly deferred: string[] = [];
  private stopped = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly maxDeferred: number,
  ) {}

  start(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.url);
    this.ws = ws;
    // The connection must not keep the host alive on its own.
    ws.on('open', () => {
      (ws as unknown as { _socket?: { unref?: () => void } })._socket?.unref?.();
      this.retryMs = 250;
      for (const line of this.deferred.splice(0)) ws.send(line);
    });
    ws.on('error', () => undefined); // 'close' follows and schedules the retry
    ws.on('close', () => {
      if (this.ws === ws) this.ws = undefined;
      if (this.stopped) return;
      this.timer = setTimeout(() => this.start(), this.retryMs);
      this.timer.unref();
      this.retryMs = Math.min(this.retryMs * 2, 5000);
    });
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.ws?.close();
    this.ws = undefined;
    this.deferred.length = 0;
  }

  send(event: StatelyInspectionEvent): void {
    if (this.stopped) return;
    const line = JSON.stringify(event);
    if (this.ws?.readyState === WebSocket.OPEN) {
      this.ws.send(line);
      return;
    }
    this.deferred.push(line);
    if (this.deferred.length > this.maxDeferred) this.deferred.shift();
  }
}
