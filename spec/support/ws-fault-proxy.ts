/**
 * A WebSocket proxy between a test's client and `warden serve` that injects, on request, the
 * client-side faults of the ACP Remote conformance list (issue 31): it ends each client's
 * WebSocket and opens its own to the daemon (the client's `Authorization` passed on), and
 * passes messages one by one, so a fault hits one JSON-RPC message, not a TCP chunk:
 *
 * - `drop before accept`: the next client message that matches is never passed on, and the
 *   client's connection is cut (the client only knows its submission may be lost);
 * - `drop after accept`: the next daemon message that matches (say the answer to a prompt) is
 *   held back and both connections are cut (the daemon did the work; the client never heard);
 * - `duplicate`: the next client message that matches is passed on twice;
 * - `half-dead`: from now on the connection passes nothing towards the client, while the
 *   client's messages still reach the daemon (a dead return path the client must detect);
 * - `paused consumer`: messages towards the client wait `ms`, then go in order.
 *
 * Every message each way is recorded (`trace`), so a failing run can be read. The daemon
 * behind it can change (`retarget`, after a restart on another port).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { faultSwitches, parsedMessage, type FaultControls, type TraceEntry } from './fault-switches.js';

export type { MessageMatch, TraceEntry } from './fault-switches.js';

/** A proxy started by {@link startWsFaultProxy}; `dropBeforeAccept`, `dropAfterAccept`, `duplicate` and `pauseConsumer` as fault-switches.ts says. */
export interface WsFaultProxy extends FaultControls {
  /** `ws://127.0.0.1:PORT/acp`: give it to clients instead of the daemon's URL. */
  readonly url: string;
  /** Every message each way, in the order the proxy handled them. */
  readonly trace: TraceEntry[];
  /** The daemon to open connections to from now on (connections open stay where they are). */
  retarget(url: string): void;
  /** F4: every open connection (or, when none is, the next one) stops passing messages towards its client (the other way goes on). */
  halfDead(): void;
  /** Cuts every connection through it (both sides). */
  cutAll(): void;
  /** How many connections the proxy has accepted. */
  connections(): number;
  close(): Promise<void>;
}

interface Pair {
  readonly id: number;
  readonly client: WebSocket;
  readonly upstream: WebSocket;
  /** Messages towards the daemon written before its connection opened. */
  readonly early: string[];
  deadToClient: boolean;
}

/** Starts a proxy on a free port of 127.0.0.1 in front of the daemon at `target` (`ws://127.0.0.1:PORT/acp`). */
export async function startWsFaultProxy(target: string): Promise<WsFaultProxy> {
  let upstreamUrl = target;
  const trace: TraceEntry[] = [];
  const pairs = new Set<Pair>();
  let accepted = 0;
  const switches = faultSwitches();
  let deadNext = false;
  // Towards clients, in order even while paused: one chain of sends for the whole proxy.
  let toClientChain: Promise<void> = Promise.resolve();

  const cut = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.terminate();
    pair.upstream.terminate();
  };

  const toServer = (pair: Pair, text: string) => {
    const message = parsedMessage(text);
    if (switches.fires('dropToServer', message)) {
      trace.push({ connection: pair.id, direction: 'toServer', action: 'dropped', message: text });
      cut(pair);
      return;
    }
    const copies = switches.fires('duplicateToServer', message) ? 2 : 1;
    trace.push({ connection: pair.id, direction: 'toServer', action: copies === 2 ? 'duplicated' : 'passed', message: text });
    for (let copy = 0; copy < copies; copy++) {
      if (pair.upstream.readyState === WebSocket.OPEN) pair.upstream.send(text);
      else pair.early.push(text);
    }
  };

  const toClient = (pair: Pair, text: string) => {
    toClientChain = toClientChain.then(async () => {
      const wait = switches.pauseLeft();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (!pairs.has(pair)) return;
      if (pair.deadToClient) {
        trace.push({ connection: pair.id, direction: 'toClient', action: 'held', message: text });
        return;
      }
      if (switches.fires('dropToClient', parsedMessage(text))) {
        trace.push({ connection: pair.id, direction: 'toClient', action: 'cut', message: text });
        cut(pair);
        return;
      }
      trace.push({ connection: pair.id, direction: 'toClient', action: 'passed', message: text });
      if (pair.client.readyState === WebSocket.OPEN) pair.client.send(text);
    });
  };

  const sockets = new WebSocketServer({ noServer: true });
  const server: Server = createServer((_request, response) => response.writeHead(404).end());
  server.on('upgrade', (request: IncomingMessage, socket, head) => {
    sockets.handleUpgrade(request, socket, head, (client) => {
      const authorization = request.headers.authorization;
      const upstream = new WebSocket(upstreamUrl, authorization ? { headers: { Authorization: authorization } } : {});
      const pair: Pair = { id: ++accepted, client, upstream, early: [], deadToClient: deadNext };
      deadNext = false;
      pairs.add(pair);
      const text = (data: RawData) => (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer)).toString('utf8');
      client.on('message', (data) => toServer(pair, text(data)));
      upstream.on('open', () => {
        for (const early of pair.early.splice(0)) upstream.send(early);
      });
      upstream.on('message', (data) => toClient(pair, text(data)));
      // Either side going away takes the other with it, as a network path would.
      const gone = () => cut(pair);
      client.on('close', gone);
      upstream.on('close', gone);
      client.on('error', gone);
      upstream.on('error', gone);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `ws://127.0.0.1:${port}/acp`,
    trace,
    retarget(url) {
      upstreamUrl = url;
    },
    ...switches.controls,
    halfDead() {
      for (const pair of pairs) pair.deadToClient = true;
      // None open (the client's went away without its knowing): the next one is the half-dead one.
      deadNext = pairs.size === 0;
    },
    cutAll() {
      for (const pair of [...pairs]) cut(pair);
    },
    connections: () => accepted,
    async close() {
      for (const pair of [...pairs]) cut(pair);
      sockets.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
