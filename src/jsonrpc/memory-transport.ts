import type { JsonRpcMessage } from './message.js';
import type { PeerLost, Transport, TransportSink } from './transport.js';

/**
 * Two transports wired to each other in memory, for tests and benchmarks. Messages cross as
 * text lines (serialised by the sender, parsed by the receiver, as over a pipe) and are
 * delivered asynchronously in batches, as a stream would, never re-entrantly.
 */
export function createMemoryTransportPair(): [Transport, Transport] {
  const left = new MemoryEnd();
  const right = new MemoryEnd();
  left.peer = right;
  right.peer = left;
  return [left, right];
}

class MemoryEnd implements Transport {
  peer: MemoryEnd | undefined;
  #sink: TransportSink | undefined;
  #inbox: string[] = [];
  #scheduled = false;
  #closed = false;
  #inputEnded = false;

  start(sink: TransportSink): void {
    this.#sink = sink;
    this.#flushSoon();
  }

  send(message: JsonRpcMessage): void {
    if (this.#closed || this.#inputEnded) return;
    this.peer?.deliver(JSON.stringify(message));
  }

  /** Sends a raw line, as a misbehaving peer would (tests). */
  sendRaw(line: string): void {
    if (this.#closed || this.#inputEnded) return;
    this.peer?.deliver(line);
  }

  /** Sends nothing more but goes on reading, as an editor that half-closes its pipe (tests). */
  endInput(): void {
    if (this.#closed || this.#inputEnded) return;
    this.#inputEnded = true;
    this.peer?.deliver('\u0000ended');
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.peer?.peerClosed({ message: 'the other end of the in-memory transport closed' });
  }

  deliver(line: string): void {
    if (this.#closed) return;
    this.#inbox.push(line);
    this.#flushSoon();
  }

  peerClosed(reason: PeerLost): void {
    this.#inbox.push(`\u0000closed:${JSON.stringify(reason)}`);
    this.#flushSoon();
  }

  #flushSoon(): void {
    if (this.#scheduled || !this.#sink) return;
    this.#scheduled = true;
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const sink = this.#sink;
    if (!sink) return;
    const lines = this.#inbox;
    this.#inbox = [];
    for (const line of lines) {
      if (this.#closed) return;
      if (line.startsWith('\u0000closed:')) {
        this.#closed = true;
        sink.closed(JSON.parse(line.slice(8)) as PeerLost);
        return;
      }
      if (line === '\u0000ended') {
        const reason = { message: 'the other end of the in-memory transport ended its input' };
        if (sink.inputEnded) sink.inputEnded(reason);
        else {
          this.#closed = true;
          sink.closed(reason);
          return;
        }
        continue;
      }
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        sink.malformed(line.slice(0, 200));
        continue;
      }
      sink.message(value);
    }
  }
}

/** A memory transport end that can also send raw lines (to test malformed input). */
export type MemoryTransport = Transport & { sendRaw(line: string): void; endInput(): void };
