/**
 * The listening half of `warden serve`: an HTTP server on a {@link ListenAddress} serving ACP
 * at `/acp` two ways: the WebSocket upgrade, and Streamable HTTP (POST, GET event stream,
 * DELETE; http-endpoint.ts). Every upgrade and every HTTP request is checked (access.ts)
 * before anything of it is read; each accepted WebSocket and each initialized HTTP connection
 * becomes a {@link Transport} handed to the owner. What is served on a connection, and how
 * long it lives, is the owner's business, not the listener's.
 */
import { once } from 'node:events';
import { promises as fs } from 'node:fs';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect as netConnect, type AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { defaultStdioMaxLineBytes } from '../jsonrpc/stdio-transport.js';
import { defaultWebSocketPingIntervalMs, webSocketMaxPayload, webSocketTransport } from '../jsonrpc/websocket-transport.js';
import type { Transport } from '../jsonrpc/transport.js';
import { acpPath, checkUpgrade, rejectUpgrade, type AccessPolicy } from './access.js';
import { createHttpEndpoint } from './http-endpoint.js';
import { listenUrl, type ListenAddress } from './listen-address.js';

/** Who is on the other end of an accepted connection (for logs; never used to decide access). */
export interface DaemonPeer {
  /** The client's address (`127.0.0.1:53412`), or `unix` on a Unix socket. */
  readonly remote: string;
  /** The `User-Agent` header it sent, if any. */
  readonly userAgent: string | undefined;
  /** Which endpoint of `/acp` it came through: a WebSocket, or Streamable HTTP. */
  readonly transport: 'websocket' | 'http';
}

/** Options of {@link listenDaemon}. */
export interface DaemonListenerOptions {
  readonly address: ListenAddress;
  readonly access: AccessPolicy;
  /** Receives every accepted connection's transport; it owns the connection from then on. */
  readonly accept: (transport: Transport, peer: DaemonPeer) => void;
  /** The longest message read, in bytes (default as stdio, 64 MiB): a WebSocket frame, an HTTP POST's body. */
  readonly maxLineBytes?: number;
  /** The keepalive interval, ms (default 30 s; 0: off): WebSocket pings, event-stream comments and the silence judged on HTTP connections. */
  readonly pingIntervalMs?: number;
}

/** A listening daemon endpoint. */
export interface DaemonListener {
  /** Where WebSocket clients connect: `ws://127.0.0.1:8767/acp`, or `ws+unix:///path/to/socket:/acp` (the form `ws` takes); HTTP clients at the same place, `http://…/acp`. */
  readonly url: string;
  /** The address bound (the port the system chose, for port 0). */
  readonly address: ListenAddress;
  /** Connections open now (WebSocket and HTTP). */
  connections(): number;
  /**
   * Stops accepting: the listening socket is closed (a Unix socket's file removed), idle
   * keep-alive sockets dropped, and an HTTP `initialize` refused (503). Open connections, of
   * either kind, are left to their owner to drain and close.
   */
  close(): void;
}

/**
 * Listens on `options.address`. Rejects with the listen error (`EADDRINUSE` when the port is
 * taken, or a Unix socket some live process answers on). A Unix socket file nobody answers on
 * (a daemon that was killed) is removed and bound again.
 *
 * @example
 * ```ts
 * const listener = await listenDaemon({ address: parseListenAddress('127.0.0.1:0'), access: { token, allowOrigins: [] }, accept: (transport) => host.serve(transport) });
 * process.stderr.write(`listening on ${listener.url}\n`);
 * ```
 */
export async function listenDaemon(options: DaemonListenerOptions): Promise<DaemonListener> {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: webSocketMaxPayload(options.maxLineBytes), perMessageDeflate: false });
  const open = new Set<WebSocket>();
  const http = createHttpEndpoint({
    access: options.access,
    accept: (transport, request) => options.accept(transport, peerOf(request, 'http')),
    maxBodyBytes: options.maxLineBytes ?? defaultStdioMaxLineBytes,
    pingIntervalMs: options.pingIntervalMs ?? defaultWebSocketPingIntervalMs,
  });
  const server = createServer((request, response) => {
    if (pathOf(request) === acpPath) return http.handle(request, response);
    notFound(request, response);
  });
  server.on('upgrade', (request: IncomingMessage, socket, head) => {
    const access = checkUpgrade(request, options.access);
    if (!access.ok) return rejectUpgrade(socket, access);
    sockets.handleUpgrade(request, socket, head, (ws) => {
      open.add(ws);
      ws.once('close', () => open.delete(ws));
      const transport = webSocketTransport(ws, {
        ...(options.maxLineBytes !== undefined ? { maxLineBytes: options.maxLineBytes } : {}),
        ...(options.pingIntervalMs !== undefined ? { pingIntervalMs: options.pingIntervalMs } : {}),
      });
      options.accept(transport, peerOf(request, 'websocket'));
    });
  });
  // A client that resets during the handshake is its own problem, not the daemon's.
  server.on('clientError', (_error, socket) => socket.destroy());
  await bind(server, options.address);
  const address = boundAddress(server, options.address);
  let closed = false;
  return {
    url: listenUrl(address),
    address,
    connections: () => open.size + http.connections(),
    close() {
      if (closed) return;
      closed = true;
      http.stopAccepting();
      // net stops listening at once; its callback would wait for every open connection.
      server.close();
      server.closeIdleConnections();
    },
  };
}

function pathOf(request: IncomingMessage): string {
  return new URL(request.url ?? '/', 'http://warden.invalid').pathname;
}

/** Any path but `/acp`: 404, one line of text. */
function notFound(request: IncomingMessage, response: ServerResponse): void {
  const body = `not found: warden serve serves ACP at ${acpPath} only (a WebSocket upgrade, or Streamable HTTP)\n`;
  response.writeHead(404, STATUS_CODES[404], { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' });
  response.end(body);
  request.resume();
}

/** Binds `server`; a Unix socket file left by a dead daemon is removed first, a live one is EADDRINUSE. */
async function bind(server: Server, address: ListenAddress): Promise<void> {
  const attempt = async () => {
    const failed = once(server, 'error').then(([error]) => Promise.reject(error as Error));
    const listening = once(server, 'listening');
    if (address.kind === 'tcp') server.listen({ host: address.host, port: address.port, exclusive: true });
    else server.listen({ path: address.path, exclusive: true });
    await Promise.race([listening, failed]);
    failed.catch(() => undefined);
  };
  try {
    await attempt();
  } catch (error) {
    if (address.kind !== 'unix' || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    // Under a lock: two daemons finding the same stale file must not each remove the other's new socket.
    const lock = await takeLock(`${address.path}.lock`);
    if (!lock) throw error;
    try {
      if (await answers(address.path)) throw error;
      await fs.rm(address.path, { force: true });
      await attempt();
    } finally {
      await lock.close();
      await fs.rm(`${address.path}.lock`, { force: true });
    }
  }
}

/** A lock older than this was left by a daemon killed while it bound: it is taken over. */
const staleLockMs = 10_000;

/** The lock file at `path`, created exclusively; undefined while another process holds it. */
async function takeLock(path: string): Promise<fs.FileHandle | undefined> {
  for (let tries = 0; tries < 2; tries++) {
    try {
      return await fs.open(path, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const stats = await fs.stat(path).catch(() => undefined);
      if (stats && Date.now() - stats.mtimeMs < staleLockMs) return undefined;
      await fs.rm(path, { force: true });
    }
  }
  return undefined;
}

/** Whether some process accepts connections on the Unix socket at `path`. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = netConnect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

function boundAddress(server: Server, asked: ListenAddress): ListenAddress {
  if (asked.kind === 'unix') return asked;
  const { port } = server.address() as AddressInfo;
  return { ...asked, port };
}

function peerOf(request: IncomingMessage, transport: DaemonPeer['transport']): DaemonPeer {
  const { remoteAddress, remotePort } = request.socket;
  return {
    transport,
    remote: remoteAddress ? `${remoteAddress.includes(':') ? `[${remoteAddress}]` : remoteAddress}:${remotePort ?? ''}` : 'unix',
    userAgent: request.headers['user-agent'],
  };
}
