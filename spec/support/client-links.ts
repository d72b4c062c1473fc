/**
 * One client connection to `warden serve` as a test client drives it, over either binding: a
 * WebSocket, or Streamable HTTP (each message POSTed in order; `initialize` answered in its POST's
 * body and naming the connection, everything else read from the connection's SSE stream, as
 * docs/serve.md describes). Used by the client-side fault walk (client-fault-walk.ts).
 */
import { request as httpRequest, type ClientRequest } from 'node:http';
import { WebSocket } from 'ws';
import type { Frame } from './serve-daemon.js';
import { onSseEvents } from './sse-events.js';

/** A connection: messages out, every message in handed to the opener's listener. */
export interface ClientLink {
  send(message: Record<string, unknown>): void;
  /** False once the connection was cut, closed or failed (a POST refused or lost, its stream ended). */
  isOpen(): boolean;
  /** Ends it at once, both ways. */
  cut(): void;
}

/** Opens a connection to `url` with the daemon's bearer `token`; `onFrame` gets each message the daemon sends, in order. */
export async function openLink(transport: 'websocket' | 'http', url: string, token: string, onFrame: (frame: Frame) => void): Promise<ClientLink> {
  return transport === 'http' ? httpLink(url, token, onFrame) : webSocketLink(url, token, onFrame);
}

async function webSocketLink(url: string, token: string, onFrame: (frame: Frame) => void): Promise<ClientLink> {
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  socket.on('message', (data: Buffer) => onFrame(JSON.parse(data.toString('utf8')) as Frame));
  socket.on('error', () => undefined);
  const link: ClientLink = {
    send: (message) => {
      if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
    },
    isOpen: () => socket.readyState === WebSocket.OPEN,
    cut: () => socket.terminate(),
  };
  await new Promise<void>((resolve) => {
    socket.once('open', () => resolve());
    // A connection that never opened is a link already closed: the walk's next request finds it so.
    socket.once('close', () => resolve());
  });
  return link;
}

function httpLink(url: string, token: string, onFrame: (frame: Frame) => void): ClientLink {
  let connectionId: string | undefined;
  let open = true;
  let stream: ClientRequest | undefined;
  // POSTs go one after another, so the daemon reads the messages in the order they were sent.
  let posting: Promise<void> = Promise.resolve();
  const fail = () => {
    open = false;
    stream?.destroy();
  };
  const base = { Authorization: `Bearer ${token}` };

  const openStream = () => {
    stream = httpRequest(url, { method: 'GET', headers: { ...base, Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId as string }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        fail();
        return;
      }
      onSseEvents<Frame>(response, onFrame);
      response.on('end', fail);
      response.on('error', fail);
    });
    stream.on('error', fail);
    stream.end();
  };

  const post = (message: Record<string, unknown>) =>
    new Promise<void>((resolve) => {
      if (!open) return resolve();
      const body = JSON.stringify(message);
      const sessionId = (message.params as { sessionId?: unknown } | undefined)?.sessionId;
      const headers: Record<string, string> = {
        ...base,
        'Content-Type': 'application/json',
        'Content-Length': String(Buffer.byteLength(body)),
        ...(connectionId ? { 'Acp-Connection-Id': connectionId } : {}),
        ...(typeof sessionId === 'string' && typeof message.method === 'string' ? { 'Acp-Session-Id': sessionId } : {}),
      };
      const outgoing = httpRequest(url, { method: 'POST', headers, agent: false }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          const named = response.headers['acp-connection-id'];
          if (!connectionId && message.method === 'initialize' && response.statusCode === 200 && typeof named === 'string') {
            connectionId = named;
            onFrame(JSON.parse(text) as Frame);
            openStream();
          } else if (response.statusCode !== 202) {
            fail();
          }
          resolve();
        });
        response.on('error', () => {
          fail();
          resolve();
        });
      });
      outgoing.on('error', () => {
        fail();
        resolve();
      });
      outgoing.end(body);
    });

  return {
    send: (message) => {
      posting = posting.then(() => post(message));
    },
    isOpen: () => open,
    cut: fail,
  };
}
