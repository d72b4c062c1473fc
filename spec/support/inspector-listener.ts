/**
 * A stand-in for an inspector that `warden acp --inspect ws://…` connects to: a WebSocket
 * server on 127.0.0.1 (a free port) that keeps every frame it receives, in order.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** An inspector listening: where warden is pointed at, what it sent so far. */
export interface InspectorListener {
  /** `ws://127.0.0.1:PORT`, for `--inspect`. */
  readonly url: string;
  /** Every frame received, as text, in order. */
  readonly frames: string[];
  /** Drops the connections and closes the server. */
  close(): Promise<void>;
}

/** Starts an inspector stand-in; resolves once it listens. */
export async function listenAsInspector(): Promise<InspectorListener> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  const frames: string[] = [];
  server.on('connection', (socket) => socket.on('message', (data) => frames.push(data.toString('utf8'))));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    frames,
    async close() {
      for (const client of server.clients) client.terminate();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
