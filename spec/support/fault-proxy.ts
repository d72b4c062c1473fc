/**
 * A TCP proxy in front of a test's PostgreSQL that loses the answer to a chosen statement: the
 * statement reaches the server and runs (an autocommit statement commits before the server
 * sends the first byte of its answer), then the proxy cuts the connection instead of passing
 * that answer on. The client sees its connection die with the COMMIT's outcome unknown, which
 * is the case a retried write must not write twice. Until `accept()`, the proxy then cuts every
 * new connection too (the test looks at the database directly meanwhile).
 */
import { connect, createServer, type Socket } from 'node:net';

/** A proxy started by {@link startFaultProxy}. */
export interface FaultProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /**
   * Loses the answer to the next statement whose text contains `marker` (a statement sent
   * after this call): resolves once it did, after which new connections are cut until {@link accept}.
   */
  loseAnswerTo(marker: string): Promise<void>;
  /** Cuts every connection through it now, and every new one until {@link accept} (the database unreachable, not restarted). */
  cutAll(): void;
  /** Passes new connections through again. */
  accept(): void;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

/** Starts a proxy from a free port on 127.0.0.1 to `target` (a port on 127.0.0.1). */
export async function startFaultProxy(target: number): Promise<FaultProxy> {
  const sockets = new Set<Socket>();
  let armed: { marker: Buffer; lost: () => void } | undefined;
  let cutting = false;
  const server = createServer((client) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    if (cutting) {
      client.destroy();
      return;
    }
    const upstream = connect(target, '127.0.0.1');
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    let doomed: (() => void) | undefined;
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', cut).on('close', cut);
    upstream.on('error', cut).on('close', cut);
    client.on('data', (chunk: Buffer) => {
      if (armed && chunk.includes(armed.marker)) {
        doomed = armed.lost;
        armed = undefined;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!doomed) {
        client.write(chunk);
        return;
      }
      cutting = true;
      cut();
      doomed();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    loseAnswerTo: (marker) =>
      new Promise<void>((resolve) => {
        armed = { marker: Buffer.from(marker), lost: resolve };
      }),
    cutAll() {
      cutting = true;
      for (const socket of sockets) socket.destroy();
    },
    accept() {
      cutting = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
