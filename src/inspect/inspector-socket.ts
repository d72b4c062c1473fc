/**
 * The inspector's WebSocket (connectInspector, inspector.ts): loaded only when a host
 * inspects, since ws is a startup cost `warden acp` without --inspect should not pay.
 */
import type { StatelyInspectionEvent } from '@statelyai/inspect';
import WebSocket from 'ws';

/** A WebSocket to the inspector that buffers while closed and reconnects, never blocking exit. */
export class InspectorSocket {
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
