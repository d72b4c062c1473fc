/**
 * Relay per update through `warden serve` over Streamable HTTP, against the same over
 * WebSocket in the same run (issue 16's second endpoint): two warm daemons built from src/,
 * alike (`--agent acp:node bench/support/flood-agent.mjs 4000`, an SQLite journal each), one
 * raw client each: a `ws` socket, and an HTTP client of the transport RFD (a POST per message,
 * every answer and update read from its one SSE stream). A prompt per round; prompt written ->
 * answer read, divided by the updates read. Rounds interleaved. The flood agent writes its
 * updates as fast as the pipe takes them, so this is the daemon's cost per message on each
 * transport (journal, cursor, framing), not an agent's pace.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { WebSocket } from 'ws';
import { buildWarden } from './support/build-warden.js';
import { killGroup, startServeDaemon } from './support/warden-serve.js';
import { check, formatRatio, measureInterleaved, table, withDeadline, type Stats } from './support/measure.js';

const plan = { warmup: 1, repetitions: 9 };
const updateCount = 4_000;
const floodAgent = fileURLToPath(new URL('./support/flood-agent.mjs', import.meta.url));

type Answer = { id?: number; result?: Record<string, unknown>; error?: unknown };
/** A client that sends one request and resolves with its answer and the updates read before it. */
type Requester = (method: string, params: unknown) => Promise<Answer & { updates: number }>;

/** Counts `session/update`s without parsing them; parses everything else and settles answers by id. */
function answerTracker(): { take(json: string): void; wait(id: number): Promise<Answer & { updates: number }> } {
  let updates = 0;
  const waiting = new Map<number, { before: number; resolve: (answer: Answer & { updates: number }) => void }>();
  return {
    take(json) {
      if (json.includes('"session/update"')) return void updates++;
      const message = JSON.parse(json) as Answer & { method?: string };
      const waiter = message.method === undefined && typeof message.id === 'number' ? waiting.get(message.id) : undefined;
      if (!waiter) return;
      waiting.delete(message.id as number);
      waiter.resolve({ ...message, updates: updates - waiter.before });
    },
    wait: (id) => new Promise((resolve) => waiting.set(id, { before: updates, resolve })),
  };
}

async function webSocketClient(url: string, token: string, opened: WebSocket[]): Promise<Requester> {
  const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${token}` } });
  opened.push(socket);
  const tracker = answerTracker();
  socket.on('message', (data: Buffer) => tracker.take(data.toString('utf8')));
  await withDeadline(new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject)), 'the WebSocket to open');
  let next = 1;
  return (method, params) => {
    const id = next++;
    const answer = tracker.wait(id);
    socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    return withDeadline(answer, method);
  };
}

async function httpClient(url: string, token: string, streams: Array<{ destroy(): void }>): Promise<Requester> {
  const auth = { Authorization: `Bearer ${token}` };
  const initialize = await fetch(url, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } }) });
  check(initialize.ok, `initialize answered over HTTP (${initialize.status})`);
  await initialize.text();
  const connectionId = initialize.headers.get('acp-connection-id') as string;
  const tracker = answerTracker();
  const { hostname, port } = new URL(url);
  await withDeadline(
    new Promise<void>((resolve, reject) => {
      const request = httpRequest({ host: hostname, port, path: '/acp', headers: { ...auth, Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId } }, (response) => {
        let buffered = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffered += chunk;
          let end;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const event = buffered.slice(0, end);
            buffered = buffered.slice(end + 2);
            if (event.startsWith('data: ')) tracker.take(event.slice(6));
          }
        });
        resolve();
      });
      streams.push(request);
      request.on('error', reject);
      request.end();
    }),
    'the event stream to open',
  );
  let next = 1;
  return async (method, params) => {
    const id = next++;
    const answer = tracker.wait(id);
    const sessionId = (params as { sessionId?: string }).sessionId;
    const posted = await fetch(url, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json', 'Acp-Connection-Id': connectionId, ...(sessionId ? { 'Acp-Session-Id': sessionId } : {}) }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
    check(posted.status === 202, `${method} accepted (${posted.status})`);
    await posted.text();
    return withDeadline(answer, method);
  };
}

export async function serveHttpRelay(): Promise<void> {
  console.log(`\n## Relay through warden serve over Streamable HTTP against WebSocket: a flood of ${updateCount} updates per turn, per update`);
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-serve-http-'));
  const started: ChildProcess[] = [];
  const sockets: WebSocket[] = [];
  const streams: Array<{ destroy(): void }> = [];
  try {
    const main = buildWarden(join(scratch, 'build'));
    const env = { ...process.env, XDG_STATE_HOME: join(scratch, 'state'), HOME: scratch };
    const daemon = async (name: string) => {
      const tokenFile = join(scratch, `${name}-token`);
      const { url, child } = await startServeDaemon(main, env, ['--agent', `acp:${process.execPath} ${floodAgent} ${updateCount}`, '--store', join(scratch, `${name}.sqlite`), '--token-file', tokenFile]);
      started.push(child);
      return { url, token: readFileSync(tokenFile, 'utf8').trim() };
    };
    const overWs = await daemon('ws');
    const overHttp = await daemon('http');
    const turn = async (request: Requester) => {
      const sessionId = (await request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
      check(typeof sessionId === 'string', 'a session');
      return async (): Promise<number> => {
        const begun = process.hrtime.bigint();
        const answer = await request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'flood' }] });
        const ns = Number(process.hrtime.bigint() - begun);
        check(answer.result?.stopReason === 'end_turn', `the turn ended (${JSON.stringify(answer.result ?? answer.error)})`);
        check(answer.updates === updateCount, `every update arrived (${answer.updates})`);
        return ns / answer.updates;
      };
    };
    const wsClient = await webSocketClient(overWs.url, overWs.token, sockets);
    check((await wsClient('initialize', { protocolVersion: 1, clientCapabilities: {} })).result !== undefined, 'initialize answered over WebSocket');
    const webSocket = await turn(wsClient);
    const http = await turn(await httpClient(overHttp.url.replace(/^ws/, 'http'), overHttp.token, streams));
    const stats = await measureInterleaved(plan, { webSocket, http });
    const us = (value: Stats, of: 'median' | 'min' | 'max') => `${(value[of] / 1e3).toFixed(1)} µs`;
    console.log(`${plan.repetitions} turns each after ${plan.warmup} warm-up, interleaved; per update, median (min–max)`);
    console.log(table(['case', 'per update', '/ WebSocket'], [
      ['Streamable HTTP (POST + one SSE stream)', `${us(stats.http, 'median')} (${us(stats.http, 'min')}–${us(stats.http, 'max')})`, formatRatio(stats.http.median / stats.webSocket.median)],
      ['WebSocket', `${us(stats.webSocket, 'median')} (${us(stats.webSocket, 'min')}–${us(stats.webSocket, 'max')})`, formatRatio(1)],
    ]));
  } finally {
    for (const socket of sockets) socket.terminate();
    for (const stream of streams) stream.destroy();
    for (const child of started) killGroup(child);
    rmSync(scratch, { recursive: true, force: true });
  }
}
