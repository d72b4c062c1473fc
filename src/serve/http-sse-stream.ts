/**
 * One server-to-client stream of an HTTP connection on `warden serve`: the connection's own
 * stream, or one session's (`Acp-Session-Id`). Messages queue here, as JSON text tagged with
 * the session they concern, until a client's `GET` with `Accept: text/event-stream` takes the
 * stream (its receiver); they are then written as SSE events (`data: <json>\n\n`), in order,
 * only while the receiver's socket takes them: when `write` says the socket is full, the rest
 * waits for its `drain`. So a client that reads slowly leaves its messages here, counted, and
 * its connection reports backpressure.
 */
import type { ServerResponse } from 'node:http';

/** What a stream tells its connection. */
export interface SseStreamEvents {
  /** Bytes queued or written-but-unsent changed (the connection sums them for its backpressure). */
  changed(): void;
  /** The receiver's socket took some of our output (it is read). */
  progressed(): void;
  /** The receiver went away (its request closed) while the stream was not ended by us. */
  receiverLost(): void;
}

/** One message waiting: its JSON text, and the session it concerns (none: the connection's own). */
export interface QueuedEvent {
  readonly json: string;
  readonly sessionId: string | undefined;
  readonly bytes: number;
}

/** One SSE stream: a queue of messages and at most one receiver. */
export class SseStream {
  #queue: QueuedEvent[] = [];
  #head = 0;
  #queuedBytes = 0;
  #receiver: ServerResponse | undefined;
  #ended = false;

  constructor(private readonly events: SseStreamEvents) {}

  /** Whether a client's GET holds the stream now. */
  get hasReceiver(): boolean {
    return this.#receiver !== undefined;
  }

  /** Whether messages wait for a receiver (or for its socket to drain). */
  get hasQueued(): boolean {
    return this.#head < this.#queue.length;
  }

  /** Bytes waiting here plus those written to the receiver's socket and not sent yet. */
  get pendingBytes(): number {
    return this.#queuedBytes + (this.#receiver?.writableLength ?? 0);
  }

  /** Queues one message's JSON text and writes what the receiver's socket takes. */
  push(json: string, sessionId: string | undefined): void {
    this.pushAll([{ json, sessionId, bytes: Buffer.byteLength(json) }]);
  }

  /** Queues messages taken from another stream, in their order, and writes what the socket takes. */
  pushAll(events: readonly QueuedEvent[]): void {
    if (this.#ended || events.length === 0) return;
    for (const event of events) {
      this.#queue.push(event);
      this.#queuedBytes += event.bytes;
    }
    this.#pump();
    this.events.changed();
  }

  /** Takes out the messages still waiting here that concern `sessionId` (all of them with none), in order: they move to another stream. */
  takeQueued(sessionId?: string): QueuedEvent[] {
    const taken: QueuedEvent[] = [];
    const kept: QueuedEvent[] = [];
    for (let index = this.#head; index < this.#queue.length; index++) {
      const event = this.#queue[index] as QueuedEvent;
      (sessionId === undefined || event.sessionId === sessionId ? taken : kept).push(event);
    }
    if (taken.length === 0) return taken;
    this.#queue = kept;
    this.#head = 0;
    this.#queuedBytes = kept.reduce((sum, event) => sum + event.bytes, 0);
    this.events.changed();
    return taken;
  }

  /**
   * Makes `response` the receiver: the SSE head is sent at once (the SDK's client waits for it
   * before it posts a session's first request), then what was queued. Returns false when the
   * stream already has one.
   */
  attach(response: ServerResponse): boolean {
    if (this.#receiver || this.#ended) return false;
    this.#receiver = response;
    response.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no', // a proxy in front must not hold events back
    });
    response.flushHeaders();
    response.socket?.setNoDelay(true);
    response.on('drain', this.#onDrain);
    response.once('close', () => {
      if (this.#receiver !== response) return;
      this.#receiver = undefined;
      response.off('drain', this.#onDrain);
      this.events.changed();
      if (!this.#ended) this.events.receiverLost();
    });
    this.#pump();
    this.events.changed();
    return true;
  }

  /** An SSE comment, so that an idle stream still shows traffic (proxies, the client's own timeouts). */
  keepalive(): void {
    const receiver = this.#receiver;
    if (receiver && !receiver.writableNeedDrain && !this.hasQueued) receiver.write(':\n\n');
  }

  /** Ends the stream: what is queued goes to the receiver first (if any), then its response ends; nothing more is queued. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const receiver = this.#receiver;
    if (receiver) {
      while (this.hasQueued) receiver.write(frame(this.#take()));
      receiver.end();
    }
    this.#queue = [];
    this.#head = 0;
    this.#queuedBytes = 0;
  }

  /** The socket sent what it held: the connection measures again even when nothing was queued here (one big message filled it). */
  readonly #onDrain = () => {
    this.events.progressed();
    this.#pump();
    this.events.changed();
  };

  /** Writes queued messages while the receiver's socket takes them. */
  #pump(): void {
    const receiver = this.#receiver;
    while (receiver && this.hasQueued && !receiver.writableNeedDrain) receiver.write(frame(this.#take()));
  }

  /** The oldest queued message; the taken prefix is dropped once it is most of the array (no quadratic shift). */
  #take(): QueuedEvent {
    const event = this.#queue[this.#head] as QueuedEvent;
    this.#head += 1;
    this.#queuedBytes -= event.bytes;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    return event;
  }
}

/** One message as an SSE event: its JSON text has no line break, so one `data:` line. */
function frame(event: QueuedEvent): string {
  return `data: ${event.json}\n\n`;
}
