/**
 * The HTTP twin of ws-fault-proxy.ts: a proxy between a client of `warden serve`'s Streamable
 * HTTP endpoint and the daemon that injects the same client-side faults (issue 31), one
 * JSON-RPC message at a time: a POSTed message, or one event of an SSE stream.
 *
 * - `drop before accept`: the next POSTed message that matches never reaches the daemon; the
 *   POST's socket is destroyed and the connection's event streams are cut (the client only
 *   knows its message may be lost);
 * - `drop after accept`: the next event that matches (say the answer to a prompt) is held back
 *   and the connection's event streams are cut (the daemon did the work; the client never heard);
 * - `duplicate`: the next POSTed message that matches is POSTed twice (the second once the
 *   first was answered);
 * - `half-dead`: the event streams open now pass nothing more to the client, while its POSTs
 *   still reach the daemon;
 * - `paused consumer`: events wait `ms`, then go in order.
 *
 * Connections are told apart by their `Acp-Connection-Id` (the daemon's answer to `initialize`
 * names it). Every message each way is in `trace`.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sseData } from './sse-events.js';
import { faultSwitches, parsedMessage, type FaultControls, type TraceEntry } from './fault-switches.js';

/** A proxy started by {@link startHttpFaultProxy}; the same faults as a `WsFaultProxy`. */
export interface HttpFaultProxy extends FaultControls {
  /** `http://127.0.0.1:PORT/acp`. */
  readonly url: string;
  readonly trace: TraceEntry[];
  /** The daemon to send requests to from now on (`http://127.0.0.1:PORT/acp`). */
  retarget(url: string): void;
  halfDead(): void;
  cutAll(): void;
  close(): Promise<void>;
}

interface EventStream {
  readonly connectionId: string;
  readonly client: ServerResponse;
  readonly upstream: { destroy(): void };
  dead: boolean;
}

const hopHeaders = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);
const passedHeaders = (headers: IncomingHttpHeaders): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !hopHeaders.has(name)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
};

/** Starts a proxy on a free port of 127.0.0.1 in front of the endpoint at `target`. */
export async function startHttpFaultProxy(target: string): Promise<HttpFaultProxy> {
  let upstreamUrl = new URL(target);
  const trace: TraceEntry[] = [];
  const streams = new Set<EventStream>();
  const connectionNumbers = new Map<string, number>();
  const switches = faultSwitches();
  let deadNext = false;
  let toClientChain: Promise<void> = Promise.resolve();
  const numberOf = (connectionId: string) => {
    if (!connectionNumbers.has(connectionId)) connectionNumbers.set(connectionId, connectionNumbers.size + 1);
    return connectionNumbers.get(connectionId) as number;
  };
  const cutConnection = (connectionId: string) => {
    for (const stream of [...streams]) {
      if (stream.connectionId !== connectionId) continue;
      streams.delete(stream);
      stream.upstream.destroy();
      stream.client.destroy();
    }
  };

  /** One request to the daemon; resolves with its response, body read. */
  const forward = (method: string, headers: IncomingHttpHeaders, body: string | undefined): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(upstreamUrl, { method, headers: { ...passedHeaders(headers), ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) }, agent: false }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: text }));
        response.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const post = async (incoming: IncomingMessage, response: ServerResponse, body: string) => {
    const connectionId = String(incoming.headers['acp-connection-id'] ?? '');
    const message = parsedMessage(body);
    const number = connectionId ? numberOf(connectionId) : 0;
    if (switches.fires('dropToServer', message)) {
      trace.push({ connection: number, direction: 'toServer', action: 'dropped', message: body });
      incoming.socket.destroy();
      if (connectionId) cutConnection(connectionId);
      return;
    }
    const copies = switches.fires('duplicateToServer', message) ? 2 : 1;
    trace.push({ connection: number, direction: 'toServer', action: copies === 2 ? 'duplicated' : 'passed', message: body });
    try {
      const answer = await forward('POST', incoming.headers, body);
      if (copies === 2) await forward('POST', incoming.headers, body).catch(() => undefined);
      const named = answer.headers['acp-connection-id'];
      if (typeof named === 'string') trace.push({ connection: numberOf(named), direction: 'toClient', action: 'passed', message: answer.body });
      response.writeHead(answer.status, passedHeaders(answer.headers)).end(answer.body);
    } catch {
      response.destroy();
    }
  };

  const eventStream = (incoming: IncomingMessage, response: ServerResponse) => {
    const connectionId = String(incoming.headers['acp-connection-id'] ?? '');
    const outgoing = httpRequest(upstreamUrl, { method: 'GET', headers: passedHeaders(incoming.headers), agent: false }, (upstream) => {
      response.writeHead(upstream.statusCode ?? 502, passedHeaders(upstream.headers));
      response.flushHeaders();
      const stream: EventStream = { connectionId, client: response, upstream: outgoing, dead: deadNext };
      deadNext = false;
      streams.add(stream);
      const number = numberOf(connectionId);
      let buffered = '';
      upstream.setEncoding('utf8');
      upstream.on('data', (chunk: string) => {
        buffered += chunk;
        let end;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const event = buffered.slice(0, end + 2);
          buffered = buffered.slice(end + 2);
          const data = sseData(event);
          toClientChain = toClientChain.then(async () => {
            const wait = switches.pauseLeft();
            if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
            if (!streams.has(stream)) return;
            if (stream.dead) {
              if (data) trace.push({ connection: number, direction: 'toClient', action: 'held', message: data });
              return;
            }
            if (data && switches.fires('dropToClient', parsedMessage(data))) {
              trace.push({ connection: number, direction: 'toClient', action: 'cut', message: data });
              cutConnection(connectionId);
              return;
            }
            if (data) trace.push({ connection: number, direction: 'toClient', action: 'passed', message: data });
            response.write(event);
          });
        }
      });
      const gone = () => {
        streams.delete(stream);
        response.destroy();
      };
      upstream.on('end', gone);
      upstream.on('error', gone);
    });
    outgoing.on('error', () => response.destroy());
    outgoing.end();
    // The client letting go of its stream ends the daemon's side too, as a network path would.
    response.on('close', () => outgoing.destroy());
  };

  const cutAll = () => {
    for (const connectionId of new Set([...streams].map((stream) => stream.connectionId))) cutConnection(connectionId);
  };

  const server = createServer((incoming, response) => {
    if (incoming.method === 'GET') {
      eventStream(incoming, response);
      return;
    }
    let body = '';
    incoming.setEncoding('utf8');
    incoming.on('data', (chunk: string) => (body += chunk));
    incoming.on('end', () => {
      if (incoming.method === 'POST') void post(incoming, response, body);
      else
        void forward(incoming.method ?? 'GET', incoming.headers, body || undefined).then(
          (answer) => response.writeHead(answer.status, passedHeaders(answer.headers)).end(answer.body),
          () => response.destroy(),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/acp`,
    trace,
    retarget(url) {
      upstreamUrl = new URL(url);
    },
    ...switches.controls,
    halfDead() {
      for (const stream of streams) stream.dead = true;
      // None open (the client's went away without its knowing): the next event stream is the half-dead one.
      deadNext = streams.size === 0;
    },
    cutAll,
    async close() {
      cutAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
