/**
 * The live view's HTTP server, on 127.0.0.1 only: the page and its two assets (shipped in the
 * package as string modules, nothing fetched from anywhere), the view as JSON, the view
 * pushed to the page as Server-Sent Events whenever the model moved, and, for `warden
 * inspect`, WebSocket inspection streams (`warden acp --inspect ws://127.0.0.1:N`) folded into
 * the model, one source per connection.
 *
 * Requests whose `Host` is not this address are refused (a web page cannot reach the view
 * through a DNS name that points here), and so are stream connections from a browser page
 * (an `Origin` that is not the view's own). The page runs under a content security policy
 * that allows nothing but this server.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { LiveViewModel } from './live-view-model.js';
import { LIVE_VIEW_CSS, liveViewHtml } from './live-view-page.js';
import { LIVE_VIEW_SCRIPT } from './live-view-script.js';

/** Options of {@link serveLiveView}. */
export interface LiveViewServerOptions {
  /** What is shown. */
  readonly model: LiveViewModel;
  /** The port on 127.0.0.1; 0 (default) picks a free one. */
  readonly port?: number;
  /** Accept inspection streams over WebSocket on the same port (what `warden inspect` does). Default false. */
  readonly relay?: boolean;
  /** The page's title. */
  readonly title?: string;
  /** How often the page is sent the view when it changed, ms (default 250). */
  readonly pushIntervalMs?: number;
  /** How often ended actors are dropped, ms (default 5000). */
  readonly pruneIntervalMs?: number;
  /** The largest stream message taken, bytes (default 1 MiB); a larger one closes that stream. */
  readonly maxMessageBytes?: number;
  /** Called once per stream connection and close (for a command's log). */
  readonly onStream?: (event: { readonly type: 'open' | 'close'; readonly source: string; readonly label: string }) => void;
}

/** A live view being served. */
export interface LiveViewServer {
  /** The page: `http://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly port: number;
  /** Stops serving: pages and streams are closed, the port is free when this resolves. Idempotent. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

let elkScript: string | undefined;

/**
 * elkjs's browser build as installed with warden (a dependency: node_modules/elkjs), read on
 * the first request for it and kept: the page lays its charts out with it, and fetches it from
 * this server only.
 */
function elkBundle(): string {
  elkScript ??= readFileSync(createRequire(import.meta.url).resolve('elkjs/lib/elk.bundled.js'), 'utf8');
  return elkScript;
}

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

/**
 * Serves the view of `model` on 127.0.0.1. Rejects with the listen error (its `code` is
 * `EADDRINUSE` when the port is taken).
 */
export async function serveLiveView(options: LiveViewServerOptions): Promise<LiveViewServer> {
  const { model, port = 0, relay = false, title = 'acp-warden live view', pushIntervalMs = 250, pruneIntervalMs = 5000, maxMessageBytes = 1024 * 1024, onStream } = { ...options };
  const pages = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const streams = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  let streamCount = 0;
  let boundPort = port;
  const html = liveViewHtml(title);

  const server = createServer((request, response) => {
    if (!allowedHost(request, boundPort)) return plain(response, 403, 'the live view answers only to 127.0.0.1 and localhost\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') return plain(response, 405, 'only GET\n');
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    switch (path) {
      case '/':
      case '/index.html':
        return send(response, 'text/html; charset=utf-8', html);
      case '/live-view.js':
        return send(response, 'text/javascript; charset=utf-8', LIVE_VIEW_SCRIPT);
      case '/elk.js':
        return send(response, 'text/javascript; charset=utf-8', elkBundle());
      case '/live-view.css':
        return send(response, 'text/css; charset=utf-8', LIVE_VIEW_CSS);
      case '/graph.json': {
        // A chart's graph, by the id the view names it with: asked once per chart by the page.
        const graph = model.graph(new URL(request.url ?? '/', 'http://127.0.0.1').searchParams.get('chart') ?? '');
        return graph ? send(response, 'application/json; charset=utf-8', JSON.stringify(graph)) : plain(response, 404, 'no such chart\n');
      }
      case '/state.json':
        return send(response, 'application/json; charset=utf-8', JSON.stringify(model.view()));
      case '/events':
        return openEvents(response);
      default:
        return plain(response, 404, 'not found: the live view serves /, /state.json, /graph.json?chart=ID and /events\n');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  /** A page's event stream: the view now, then each time it changes. */
  const openEvents = (response: ServerResponse) => {
    response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
    response.write(`retry: 1000\ndata: ${JSON.stringify(model.view())}\n\n`);
    pages.add(response);
    response.once('close', () => pages.delete(response));
  };

  server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const origin = request.headers.origin;
    if (!relay || !allowedHost(request, boundPort) || (origin !== undefined && !sameOrigin(origin, boundPort))) {
      socket.end('HTTP/1.1 403 Forbidden\r\nconnection: close\r\n\r\n');
      return;
    }
    streams.handleUpgrade(request, socket, head, (stream) => acceptStream(stream, request));
  });

  /** One inspection stream: a source of its own, each message one event. */
  const acceptStream = (stream: WebSocket, request: IncomingMessage) => {
    streamCount += 1;
    const source = `stream-${streamCount}`;
    const label = `stream ${streamCount} (from ${request.socket.remoteAddress ?? '?'}:${request.socket.remotePort ?? '?'})`;
    model.open(source, label);
    onStream?.({ type: 'open', source, label });
    stream.on('message', (data, isBinary) => {
      if (isBinary) return model.apply(source, undefined);
      let event: unknown;
      try {
        event = JSON.parse(data.toString());
      } catch {
        event = undefined;
      }
      model.apply(source, event);
    });
    stream.on('error', () => undefined); // 'close' follows
    stream.once('close', () => {
      model.close(source);
      onStream?.({ type: 'close', source, label });
    });
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  boundPort = (server.address() as AddressInfo).port;

  let sent = -1;
  const push = setInterval(() => {
    if (pages.size === 0 || model.version === sent) return;
    sent = model.version;
    const frame = `data: ${JSON.stringify(model.view())}\n\n`;
    for (const page of pages) page.write(frame);
  }, pushIntervalMs);
  const prune = setInterval(() => model.prune(), pruneIntervalMs);
  // A page that sees nothing change still hears from us (proxies, idle timeouts).
  const keepAlive = setInterval(() => {
    for (const page of pages) page.write(': still here\n\n');
  }, 15_000);
  for (const timer of [push, prune, keepAlive]) timer.unref();

  let closing: Promise<void> | undefined;
  return {
    url: `http://${HOST}:${boundPort}/`,
    port: boundPort,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of [push, prune, keepAlive]) clearInterval(timer);
        for (const page of pages) page.end();
        for (const stream of streams.clients) stream.terminate();
        streams.close();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

function allowedHost(request: IncomingMessage, port: number): boolean {
  const host = request.headers.host;
  return host === `${HOST}:${port}` || host === `localhost:${port}`;
}

function sameOrigin(origin: string, port: number): boolean {
  return origin === `http://${HOST}:${port}` || origin === `http://localhost:${port}`;
}

function send(response: ServerResponse, type: string, body: string): void {
  response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

function plain(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
  response.end(body);
}
