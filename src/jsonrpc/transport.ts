import type { Envelope } from './envelope-scan.js';
import type { JsonRpcMessage } from './message.js';

/** Why the peer is gone: facts for the `peer_lost` error of every pending request. */
export interface PeerLost {
  /** One line for people. */
  readonly message: string;
  /** Details: a port's exit (code, signal, stderr tail), a stream error, ... */
  readonly exit?: unknown;
}

/** What a transport tells its connection. Called in arrival order. */
export interface TransportSink {
  /** One parsed JSON value (parsed once, by the transport). */
  message(value: unknown): void;
  /** A line that is not JSON; `preview` is its start. */
  malformed(preview: string): void;
  /** The peer is gone; nothing more will arrive. */
  closed(reason: PeerLost): void;
  /**
   * The peer will send nothing more but still reads what we write (it half-closed its side:
   * EOF on a pipe). Without this method the transport reports `closed` instead.
   */
  inputEnded?(reason: PeerLost): void;
  /** A line over the transport's limit was dropped; its envelope was read from its edges. */
  oversize?(line: OversizeLine): void;
  /**
   * Writes are backed up (`true`: the peer reads slower than we write; the transport stopped
   * reading) or drained again (`false`). Producers should wait meanwhile.
   */
  backpressure?(backedUp: boolean): void;
}

/** A line longer than the transport accepts: dropped, never buffered whole. */
export interface OversizeLine {
  /** Its length, newline excluded. */
  readonly bytes: number;
  /** The transport's limit. */
  readonly limit: number;
  /** What its first and last bytes tell: the id to answer, what it was. */
  readonly envelope: Envelope;
}

/**
 * A line transport: moves one JSON-RPC message per line in both directions. A port, the
 * process's own stdio, or an in-memory pair for tests.
 */
export interface Transport {
  /** Starts delivering to `sink`; called once. */
  start(sink: TransportSink): void;
  /** Sends one message. Failures to write are reported through `closed`. */
  send(message: JsonRpcMessage): void;
  /**
   * Stops reading input (`true`) or reads again (`false`) for the connection's own reason:
   * too many requests unanswered. Independent of the transport's own pause for a backed-up
   * output: input is read only when neither holds it. Optional: a transport without it
   * is never held.
   */
  holdReading?(held: boolean): void;
  /** Stops: no more delivery; the other side sees its peer lost. */
  close(): void;
}
