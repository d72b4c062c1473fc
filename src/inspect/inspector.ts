/**
 * The XState inspector, wired: `warden acp --inspect URL` and `createHost({ inspect })` send
 * every actor of the host (servers, agents, supervisors, ports, connections, pending
 * requests, session charts) to a Stately inspector over WebSocket, in `@statelyai/inspect`'s
 * event format, so it shows the whole tree live.
 *
 * Two things are ours rather than the library's. Payloads: every snapshot and event goes
 * through `inspectionPayload` while the live objects are at hand (the library's own path
 * stringifies snapshots first, which turns errors into `{}`, and sends secrets as they
 * are). The socket: ours holds at most 200 events while it is not connected, reconnects
 * with a bounded delay on timers that never keep the process alive, and stays closed once
 * stopped (the library's retries forever, even after `stop()`).
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
  const inspector = createInspector(socket, { autoStart: false });
  socket.start();
  const safe = (value: unknown) => inspectionPayload(value, options);
  return {
    inspect: {
      next(event: InspectionEvent) {
        switch (event.type) {
          case '@xstate.actor':
            inspector.actor(event.actorRef as never, safe(event.actorRef.getSnapshot()) as never);
            return;
          case '@xstate.snapshot':
            inspector.snapshot(event.actorRef as never, safe(event.snapshot) as never, { event: safe(event.event) as never });
            return;
          case '@xstate.event':
            inspector.event(event.actorRef as never, safe(event.event) as never, event.sourceRef ? { source: event.sourceRef as never } : {});
            return;
          default:
            return; // microsteps and actions: not shown by the inspector
        }
      },
    },
    stop: () => socket.stop(),
  };
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
