/**
 * What the fake model servers share (fake-anthropic-server.ts, fake-openai-server.ts,
 * fake-chat-completions-server.ts, fake-gemini-server.ts): an HTTP server on an ephemeral port
 * of 127.0.0.1 that records every request with its parsed body, closes itself after `idleMs`
 * without a request in flight (a stream in progress keeps it up), ends every connection on
 * `close()`, and streams slow answers word by word with timers that `close()` clears; their
 * options and defaults; JSON and SSE answers. Only node:http.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One HTTP request a fake server received. */
export interface RecordedRequest {
  readonly method: string;
  /** The path without the query string. */
  readonly path: string;
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body (or the raw text when it was not JSON). */
  readonly body: unknown;
  readonly atMs: number;
  /** What the fake chose to answer (`text`, `tool:<name>`, `slow`, `error400`, `not_found`, …). */
  reply?: string;
}

/** A running fake model server. */
export interface FakeModelServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Stops listening and ends every open connection (streams in progress are cut). */
  close(): Promise<void>;
}

/** The options every fake model server takes. */
export interface FakeModelOptions {
  /** Close by itself after this long without activity. Default 10 minutes. */
  readonly idleMs?: number;
  /** The delay between words of a `SLOW` answer. Default 400 ms. */
  readonly wordIntervalMs?: number;
  /** How many words a `SLOW` answer has. Default 60 (24 s at 400 ms). */
  readonly slowWords?: number;
}

/** {@link FakeModelOptions} with every default set. */
export function modelOptions(options: FakeModelOptions): Required<FakeModelOptions> {
  return { idleMs: options.idleMs ?? 10 * 60_000, wordIntervalMs: options.wordIntervalMs ?? 400, slowWords: options.slowWords ?? 60 };
}

/** What a fake answers with, given the recorded request. */
export interface ModelServerBehaviour {
  /** Close by itself after this long without a request in flight. */
  readonly idleMs: number;
  readonly wordIntervalMs: number;
  /** Answers one request; `recorded.reply` says what it chose. */
  handle(recorded: RecordedRequest, response: ServerResponse, tools: ServerTools): Promise<void>;
  /** The body of a 500 when `handle` throws before answering. */
  internalError(error: unknown): unknown;
}

/** Helpers `handle` gets from the running server. */
export interface ServerTools {
  /**
   * Writes the words of `text`, one every `wordIntervalMs`; resolves `true` when all were
   * written, `false` when the client went away first (an interrupt, a killed CLI).
   */
  streamSlowly(response: ServerResponse, text: string, write: (word: string) => void): Promise<boolean>;
}

const started = Date.now();

/** Starts a fake model server with `behaviour`. */
export async function startLocalModelServer(behaviour: ModelServerBehaviour): Promise<FakeModelServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  let idle: NodeJS.Timeout | undefined;
  let active = 0;

  const tools: ServerTools = { streamSlowly };
  const server = createServer((request, response) => {
    active += 1;
    touch();
    response.once('close', () => {
      active -= 1;
      touch();
    });
    void record(request)
      .then((recorded) => behaviour.handle(recorded, response, tools))
      .catch((error: unknown) => {
        if (!response.headersSent) json(response, 500, behaviour.internalError(error));
        else response.destroy();
      });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function touch(): void {
    if (idle) clearTimeout(idle);
    idle = undefined;
    if (!closed && active === 0) idle = setTimeout(() => void close(), behaviour.idleMs);
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    if (idle) clearTimeout(idle);
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    const done = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await done;
  }

  async function record(request: IncomingMessage): Promise<RecordedRequest> {
    const raw = await readBody(request);
    const [path = '/', query = ''] = (request.url ?? '/').split('?', 2) as [string, string | undefined];
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // kept as text
    }
    const recorded: RecordedRequest = { method: request.method ?? 'GET', path, query, headers: request.headers, body, atMs: Date.now() - started };
    requests.push(recorded);
    return recorded;
  }

  function streamSlowly(response: ServerResponse, text: string, write: (word: string) => void): Promise<boolean> {
    const words = text.split(/(?<= )/u);
    return new Promise((resolve) => {
      let index = 0;
      let timer: NodeJS.Timeout | undefined;
      const gone = () => {
        if (timer) {
          clearTimeout(timer);
          timers.delete(timer);
        }
        resolve(false);
      };
      response.once('close', gone);
      const tick = () => {
        if (timer) timers.delete(timer);
        if (closed || response.destroyed) return gone();
        write(words[index] as string);
        index += 1;
        if (index >= words.length) {
          response.off('close', gone);
          resolve(true);
          return;
        }
        timer = setTimeout(tick, behaviour.wordIntervalMs);
        timers.add(timer);
      };
      tick();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  touch();
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, port, requests, close };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Answers with a JSON body. */
export function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/**
 * Starts an SSE answer (200, `text/event-stream`, plus `headers`) and returns its writer: each
 * frame is written as given, and dropped once the client has gone.
 */
export function sseAnswer(response: ServerResponse, headers: Record<string, string> = {}): (frame: string) => void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  return (frame) => {
    if (!response.destroyed) response.write(frame);
  };
}

/** `count` words (`word1 word2 … wordN.`): the text of a slow answer. */
export function slowText(count: number): string {
  const words: string[] = [];
  for (let index = 1; index <= count; index++) words.push(`word${index}`);
  return `${words.join(' ')}.`;
}
