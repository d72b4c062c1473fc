import type { AnyActorRef, Subscription } from 'xstate';
import type { PortEmitted } from '../port/port.js';
import { scanEnvelope } from './envelope-scan.js';
import type { JsonRpcMessage } from './message.js';
import type { Transport, TransportSink } from './transport.js';

/**
 * A transport over a port (an agent CLI's stdio). The port frames and parses each line once;
 * its exit is the peer lost, with the exit facts (code, signal, stderr tail) attached. A
 * line the port skipped as over its limit is read by its edges (its id, what it was), so
 * that the request it answers fails with that reason instead of waiting for ever.
 */
export function portTransport(port: AnyActorRef): Transport {
  let subscriptions: Subscription[] = [];
  let closed = false;
  return {
    start(sink: TransportSink) {
      subscriptions = [
        port.on('port.message', (event: Extract<PortEmitted, { type: 'port.message' }>) => sink.message(event.message)),
        port.on('port.nonJson', (event: Extract<PortEmitted, { type: 'port.nonJson' }>) => sink.malformed(event.preview)),
        port.on('port.oversize', (event: Extract<PortEmitted, { type: 'port.oversize' }>) => {
          if (sink.oversize) sink.oversize({ bytes: event.bytesSeen, limit: event.limit, envelope: scanEnvelope(event.head, event.tail) });
          else sink.malformed(`<a line of ${event.bytesSeen} bytes, over the limit>`);
        }),
        port.on('port.exited', (event: Extract<PortEmitted, { type: 'port.exited' }>) => {
          closed = true;
          sink.closed({ message: `the agent process ended (${event.exit.reason.kind})`, exit: event.exit });
        }),
      ];
      const status = port.getSnapshot().status;
      if (status !== 'active') {
        closed = true;
        queueMicrotask(() => sink.closed({ message: 'the agent process had already ended' }));
      }
    },
    send(message: JsonRpcMessage) {
      // Serialised here so that a value JSON cannot encode fails the send, not the port.
      if (!closed) port.send({ type: 'port.write', line: JSON.stringify(message) });
    },
    close() {
      closed = true;
      for (const subscription of subscriptions) subscription.unsubscribe();
      subscriptions = [];
    },
  };
}
