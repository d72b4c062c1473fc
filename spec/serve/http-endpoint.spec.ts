/**
 * `warden serve`'s Streamable HTTP endpoint at `/acp` (issue 16), against a real daemon: the
 * ACP SDK's `createHttpStream` client through a turn (every update with its seq, a permission
 * answered over HTTP, a cancel); the ordering case of the survey (an agent's update written
 * before its answer to session/new); who may connect and what bad requests get (no or wrong
 * token, a foreign origin, an oversize body, garbage JSON, unknown connections); flow control
 * (a session stream nobody reads pauses only its own connection's cursor); the keepalive
 * ending a silent connection; a client that closes its stream mid-turn and a new HTTP
 * connection resuming after the last seq it saw. Every daemon is killed by process group.
 */
import { collectSseEvents } from '../support/sse-events.js';
import { client as sdkClient, methods, type RequestPermissionRequest } from '@agentclientprotocol/sdk';
import { createHttpStream } from '@agentclientprotocol/sdk/experimental/http-client';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childrenOf, isAlive, waitUntil } from '../support/processes.js';
import { demoAgentsOf, sdkOverWebSocket, startServe, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';

const launched: ChildProcess[] = [];
const seqKey = 'acp-warden/seq';
const afterKey = 'acp-warden/after';
const turnEndKey = 'acp-warden/turnEnded';
const earlyUpdateAgent = fileURLToPath(new URL('../support/early-update-agent.mjs', import.meta.url));
const streamAgent = fileURLToPath(new URL('../support/stream-agent.mjs', import.meta.url));
const initializeParams = { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'http-test-editor', version: '1' } };
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: initializeParams };

/** One `session/update` as the SDK client got it. */
interface Update {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly content?: { readonly text?: string }; readonly status?: string; readonly _meta?: Record<string, unknown> };
  readonly _meta?: Record<string, unknown>;
}

/** The ACP SDK's client over its Streamable HTTP stream, with the bearer token: what it got, in order. */
interface HttpEditor {
  readonly updates: Update[];
  readonly asked: RequestPermissionRequest[];
  /** What happened, in the order the client saw it: `answer:<method>` when a request resolved, `update:<kind>` per update. */
  readonly events: string[];
  request<T = Record<string, unknown>>(method: string, params: unknown): Promise<T>;
  notify(method: string, params: unknown): Promise<void>;
  /** Closes the SDK connection (its stream DELETEs the HTTP connection). */
  close(): Promise<void>;
}

function httpUrl(daemon: ServeDaemon): string {
  return daemon.url.replace(/^ws/, 'http');
}

function httpEditor(daemon: ServeDaemon, headers: Record<string, string> = { Authorization: `Bearer ${daemon.token}` }): HttpEditor {
  const updates: Update[] = [];
  const asked: RequestPermissionRequest[] = [];
  const events: string[] = [];
  const app = sdkClient({ name: 'http-test-editor' })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as unknown as Update);
      events.push(`update:${(params as unknown as Update).update.sessionUpdate}`);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: 'selected', optionId: params.options.find((option) => option.kind === 'allow_once')?.optionId ?? '' } };
    });
  const connection = app.connect(createHttpStream(httpUrl(daemon), { headers }));
  const agent = connection.agent as unknown as { request(method: string, params: unknown): Promise<unknown>; notify(method: string, params: unknown): Promise<void> };
  return {
    updates,
    asked,
    events,
    async request(method, params) {
      const result = await agent.request(method, params);
      events.push(`answer:${method}`);
      return result as never;
    },
    notify: (method, params) => agent.notify(method, params),
    async close() {
      connection.close();
      await connection.closed.catch(() => undefined);
    },
  };
}

const seqOf = (update: Update) => update._meta?.[seqKey] as number | undefined;
const chunks = (updates: readonly Update[], sessionId: string) => updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk');
const textOf = (updates: readonly Update[], sessionId: string) => chunks(updates, sessionId).map((u) => u.update.content?.text ?? '').join('');
const words = (count: number) => Array.from({ length: count }, (_, n) => `w${n}`).join(' ');

/** One raw HTTP exchange with the daemon (fetch: what a script would do). */
async function exchange(daemon: ServeDaemon, init: { method: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(httpUrl(daemon), init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const bearer = (daemon: ServeDaemon) => ({ Authorization: `Bearer ${daemon.token}` });
const json = { 'Content-Type': 'application/json' };

/** A raw initialize: the new connection's id. */
async function rawConnection(daemon: ServeDaemon): Promise<string> {
  const answer = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json }, body: JSON.stringify(initialize) });
  expect(answer.status).to.equal(200);
  expect(JSON.parse(answer.text)).to.have.property('result');
  return answer.headers.get('acp-connection-id') as string;
}

/** A raw GET of an event stream; its events parsed once `read()` is called (until then nothing of it is read). */
function rawEventStream(daemon: ServeDaemon, headers: Record<string, string>): Promise<{ response: IncomingMessage; events: Array<Record<string, any>>; read(): void }> {
  const { hostname, port } = new URL(httpUrl(daemon));
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: hostname, port, path: '/acp', headers: { ...bearer(daemon), Accept: 'text/event-stream', ...headers } }, (response) => {
      const events: Array<Record<string, any>> = [];
      resolve({ response, events, read: () => collectSseEvents(response, events) });
    });
    request.on('error', reject);
    request.end();
  });
}

describe('warden serve: ACP over Streamable HTTP (issue 16)', function () {
  this.timeout(120_000);
  let state: string;
  let daemon: ServeDaemon;

  before(async () => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-http-')));
    daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--max-line-mib', '1', '--allow-origin', 'https://editor.example', '--env', 'DEMO_WORD_DELAY_MS=10'], launched);
  });

  after(async () => {
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  describe("the SDK's createHttpStream client", () => {
    it('initialize, session/new, a prompt streamed with a seq on every update, the permission it asks answered over HTTP', async () => {
      const editor = httpEditor(daemon);
      try {
        const init = await editor.request(methods.agent.initialize, initializeParams);
        expect(init.protocolVersion).to.equal(1);
        const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: state, mcpServers: [] });
        const done = await editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'run the tool' }] });
        expect(done.stopReason).to.equal('end_turn');
        expect(editor.asked, 'one permission request, answered by the client over HTTP').to.have.length(1);
        const mine = editor.updates.filter((u) => u.sessionId === sessionId);
        expect(JSON.stringify(mine.filter((u) => u.update.sessionUpdate === 'tool_call_update'))).to.contain('hello from the tool');
        const seqs = mine.map(seqOf);
        expect(seqs.every((seq) => typeof seq === 'number'), 'every update carries its seq').to.equal(true);
        expect(seqs, 'in journal order, none twice').to.deep.equal([...new Set(seqs)].sort((a, b) => (a as number) - (b as number)));
        expect(editor.events.lastIndexOf('answer:session/prompt'), "the prompt's answer after its updates").to.equal(editor.events.length - 1);
      } finally {
        await editor.close();
      }
    });

    it('session/cancel over HTTP ends a streaming turn: the prompt answers cancelled', async () => {
      const editor = httpEditor(daemon);
      try {
        await editor.request(methods.agent.initialize, initializeParams);
        const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: state, mcpServers: [] });
        const turn = editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: words(400) }] });
        await waitUntil(() => textOf(editor.updates, sessionId).includes('w3 '), 'the turn to stream', 30_000);
        await editor.notify(methods.agent.session.cancel, { sessionId });
        expect((await turn).stopReason).to.equal('cancelled');
        expect(textOf(editor.updates, sessionId)).not.to.include('w399');
      } finally {
        await editor.close();
      }
    });
  });

  describe('a client of the transport RFD: one event stream per connection', () => {
    it('reads every answer, update and permission request of its sessions from the connection stream, and answers the permission by POST', async () => {
      const id = await rawConnection(daemon);
      const stream = await rawEventStream(daemon, { 'Acp-Connection-Id': id });
      stream.read();
      const post = (message: Record<string, unknown>, sessionId?: string) =>
        exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id, ...(sessionId ? { 'Acp-Session-Id': sessionId } : {}) }, body: JSON.stringify({ jsonrpc: '2.0', ...message }) });
      const answerOf = async (requestId: number) => {
        await waitUntil(() => stream.events.some((e) => e.id === requestId && e.method === undefined), `the answer to ${requestId}`, 30_000);
        return stream.events.find((e) => e.id === requestId && e.method === undefined) as Record<string, any>;
      };
      try {
        expect((await post({ id: 2, method: 'session/new', params: { cwd: state, mcpServers: [] } })).status).to.equal(202);
        const sessionId = (await answerOf(2)).result.sessionId as string;
        expect((await post({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'run the tool' }] } }, sessionId)).status).to.equal(202);
        await waitUntil(() => stream.events.some((e) => e.method === 'session/request_permission'), 'the permission request', 30_000);
        const ask = stream.events.find((e) => e.method === 'session/request_permission') as Record<string, any>;
        const allow = (ask.params.options as Array<{ optionId: string; kind: string }>).find((option) => option.kind === 'allow_once')?.optionId;
        expect((await post({ id: ask.id, result: { outcome: { outcome: 'selected', optionId: allow } } })).status).to.equal(202);
        expect((await answerOf(3)).result.stopReason).to.equal('end_turn');
        const updates = stream.events.filter((e) => e.method === 'session/update' && e.params.sessionId === sessionId);
        expect(JSON.stringify(updates)).to.contain('hello from the tool');
        expect(updates.every((e) => typeof e.params._meta?.[seqKey] === 'number'), 'each with its seq').to.equal(true);
        expect(stream.events.findIndex((e) => e.id === 3 && e.method === undefined), "the prompt's answer after its updates").to.be.above(stream.events.lastIndexOf(updates.at(-1) as Record<string, any>));
      } finally {
        await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': id } });
      }
    });
  });

  describe('order', () => {
    it("an agent's update written before its answer to session/new reaches the client after that answer, once, with its seq (over WebSocket as well); SIGTERM with an HTTP connection open exits 0, no agent left", async () => {
      const early = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', `acp:${process.execPath} ${earlyUpdateAgent}`, '--store', join(state, 'early.sqlite'), '--token-file', join(state, 'early-token')], launched);
      const editor = httpEditor(early);
      const overWs = sdkOverWebSocket(early);
      try {
        await editor.request(methods.agent.initialize, initializeParams);
        const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: state, mcpServers: [] });
        await waitUntil(() => editor.updates.some((u) => u.sessionId === sessionId), 'the early update over HTTP', 30_000);
        expect(editor.events.slice(0, 3)).to.deep.equal(['answer:initialize', 'answer:session/new', 'update:available_commands_update']);
        const early1 = editor.updates.filter((u) => u.sessionId === sessionId);
        expect(early1, 'once').to.have.length(1);
        expect(seqOf(early1[0] as Update)).to.be.a('number');
        // The same guarantee over WebSocket: the host holds an update for a session it has not answered yet.
        await overWs.agent.request(methods.agent.initialize, initializeParams);
        let answered = -1;
        const wsSession = ((await overWs.agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] })) as { sessionId: string }).sessionId;
        answered = overWs.updates.filter((u) => u.sessionId === wsSession).length;
        await waitUntil(() => overWs.updates.some((u) => u.sessionId === wsSession), 'the early update over WebSocket', 30_000);
        expect(answered, 'no update of the session before its answer').to.equal(0);
        const done = await editor.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'go' }] });
        expect(done.stopReason).to.equal('end_turn');
        expect(textOf(editor.updates, sessionId)).to.equal('one two three');
      } finally {
        await editor.close();
        overWs.close();
      }
      // SIGTERM with an HTTP connection left open (never DELETEd): its streams end, the daemon exits 0, no agent is left.
      const open = await rawConnection(early);
      const stream = await rawEventStream(early, { 'Acp-Connection-Id': open });
      stream.read();
      const agents = childrenOf(early.process.pid as number).filter((child) => child.cmdline.includes('early-update-agent')).map((child) => child.pid);
      expect(agents).to.have.length(1);
      early.process.kill('SIGTERM');
      expect(await early.exited).to.equal(0);
      expect(agents.filter((pid) => isAlive(pid)), 'no agent process left').to.deep.equal([]);
    });
  });

  describe('access, on every request', () => {
    it('no token: 401 with a Bearer challenge on POST, GET and DELETE; a wrong token: 401 invalid_token; never the token in the answer', async () => {
      const id = await rawConnection(daemon);
      const requests: Array<{ method: string; headers: Record<string, string>; body?: string }> = [
        { method: 'POST', headers: json, body: JSON.stringify(initialize) },
        { method: 'GET', headers: { Accept: 'text/event-stream', 'Acp-Connection-Id': id } },
        { method: 'DELETE', headers: { 'Acp-Connection-Id': id } },
      ];
      for (const init of requests) {
        const none = await exchange(daemon, init);
        expect(none.status, `${init.method} without a token`).to.equal(401);
        expect(none.headers.get('www-authenticate')).to.equal('Bearer realm="acp-warden"');
        const wrong = await exchange(daemon, { ...init, headers: { ...init.headers, Authorization: 'Bearer not-the-token' } });
        expect(wrong.status, `${init.method} with a wrong token`).to.equal(401);
        expect(wrong.headers.get('www-authenticate')).to.include('error="invalid_token"');
        expect(wrong.text).not.to.include(daemon.token);
      }
      // The refused DELETE left the connection alone: the right token still ends it.
      expect((await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': id } })).status).to.equal(202);
    });

    it("a foreign Origin: 403 even with the right token; a listed one is let in; the SDK client without the token fails its initialize", async () => {
      const foreign = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, Origin: 'https://evil.example' }, body: JSON.stringify(initialize) });
      expect(foreign.status).to.equal(403);
      expect(foreign.text).to.include('--allow-origin');
      const listed = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, Origin: 'https://editor.example' }, body: JSON.stringify(initialize) });
      expect(listed.status).to.equal(200);
      await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': listed.headers.get('acp-connection-id') as string } });
      const stranger = httpEditor(daemon, {});
      const refused = await stranger.request(methods.agent.initialize, initializeParams).then(() => undefined, (error: Error) => error);
      expect(String(refused?.message ?? refused)).to.match(/401/);
      await stranger.close();
    });
  });

  describe('CORS, for the pages of a listed origin', () => {
    it('a preflight from a listed origin: 204 naming it, the methods and the headers; from a foreign one: 403 naming nothing; answers to a listed page name it, others none', async () => {
      const preflight = (origin: string) => exchange(daemon, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' } });
      const listed = await preflight('https://editor.example');
      expect(listed.status).to.equal(204);
      expect(listed.headers.get('access-control-allow-origin')).to.equal('https://editor.example');
      expect(listed.headers.get('access-control-allow-methods')).to.include('POST');
      expect(listed.headers.get('access-control-allow-headers')).to.include('Authorization').and.include('Acp-Session-Id');
      expect(listed.headers.get('access-control-allow-credentials')).to.equal('true');
      const foreign = await preflight('https://evil.example');
      expect(foreign.status).to.equal(403);
      expect(foreign.headers.get('access-control-allow-origin')).to.equal(null);
      const page = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, Origin: 'https://editor.example' }, body: JSON.stringify(initialize) });
      expect(page.status).to.equal(200);
      expect(page.headers.get('access-control-allow-origin')).to.equal('https://editor.example');
      expect(page.headers.get('access-control-expose-headers')).to.include('Acp-Connection-Id');
      await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': page.headers.get('acp-connection-id') as string } });
      const tokenless = await exchange(daemon, { method: 'POST', headers: { ...json, Origin: 'https://editor.example' }, body: JSON.stringify(initialize) });
      expect(tokenless.status).to.equal(401);
      expect(tokenless.headers.get('access-control-allow-origin'), 'the page may read that it lacks the token').to.equal('https://editor.example');
      const script = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json }, body: JSON.stringify(initialize) });
      expect(script.headers.get('access-control-allow-origin'), 'no Origin, no CORS').to.equal(null);
      await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': script.headers.get('acp-connection-id') as string } });
    });
  });

  describe('bad requests cost nothing', () => {
    it('garbage JSON: 400 with a JSON-RPC -32700 (id null), with or without a connection; a batch 501; a session message without (or with another) Acp-Session-Id 400; the connection goes on', async () => {
      const first = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json }, body: 'this is not json' });
      expect(first.status).to.equal(400);
      expect(JSON.parse(first.text)).to.deep.include({ jsonrpc: '2.0', id: null });
      expect(JSON.parse(first.text).error.code).to.equal(-32700);
      const id = await rawConnection(daemon);
      const later = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id }, body: '{"jsonrpc": "2.0", "id": 2,' });
      expect(later.status).to.equal(400);
      expect(JSON.parse(later.text).error.code).to.equal(-32700);
      const batch = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id }, body: JSON.stringify([{ jsonrpc: '2.0', id: 4, method: 'session/list', params: {} }]) });
      expect(batch.status, 'a batch: 501, as the transport RFD says').to.equal(501);
      expect(JSON.parse(batch.text).error.code).to.equal(-32600);
      const headless = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id }, body: JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'some-session' } }) });
      expect(headless.status, 'a message naming a session without Acp-Session-Id').to.equal(400);
      expect(headless.text).to.include('Acp-Session-Id');
      const mismatched = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id, 'Acp-Session-Id': 'another' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'some-session' } }) });
      expect(mismatched.status).to.equal(400);
      const list = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/list', params: {} }) });
      expect(list.status, 'the connection still takes messages').to.equal(202);
      expect((await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': id } })).status).to.equal(202);
    });

    it('a body over --max-line-mib: 413 naming the limit, nothing of it read as a message; the daemon goes on', async () => {
      const id = await rawConnection(daemon);
      const big = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'session/list', params: { pad: 'x'.repeat(1024 * 1024 + 10) } });
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const { hostname, port } = new URL(httpUrl(daemon));
        const request = httpRequest({ host: hostname, port, path: '/acp', method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id } }, (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (body += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        // The daemon answers 413 and closes while the body still streams in: writing the rest may
        // fail (EPIPE, a reset) before the answer is read. That is not the outcome; the answer is.
        request.on('error', (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
        });
        request.on('close', () => setTimeout(() => reject(new Error('the connection closed without an answer')), 1000));
        request.end(big); // chunked: the limit is found while it streams in
      });
      expect(answer.status).to.equal(413);
      expect(answer.body).to.include(String(1024 * 1024));
      // 20 times: before the body was drained first, fetch saw EPIPE instead of the 413 in about
      // 1 of 3 such exchanges (the answer's Connection: close reset the upload still in flight).
      for (let round = 0; round < 20; round += 1) {
        const declared = await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json, 'Acp-Connection-Id': id }, body: big });
        expect(declared.status, `a Content-Length over the limit (round ${round})`).to.equal(413);
      }
      expect(await rawConnection(daemon)).to.be.a('string');
      expect((await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': id } })).status).to.equal(202);
    });

    it('an unknown Acp-Connection-Id: 404 on POST, GET and DELETE; none: 400; no event-stream Accept: 406; a second receiver: 409; a first POST that is not initialize: 400', async () => {
      const unknown = { ...bearer(daemon), 'Acp-Connection-Id': 'no-such-connection' };
      expect((await exchange(daemon, { method: 'POST', headers: { ...unknown, ...json }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} }) })).status).to.equal(404);
      expect((await exchange(daemon, { method: 'GET', headers: { ...unknown, Accept: 'text/event-stream' } })).status).to.equal(404);
      expect((await exchange(daemon, { method: 'DELETE', headers: unknown })).status).to.equal(404);
      expect((await exchange(daemon, { method: 'GET', headers: { ...bearer(daemon), Accept: 'text/event-stream' } })).status).to.equal(400);
      expect((await exchange(daemon, { method: 'POST', headers: { ...bearer(daemon), ...json }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/list', params: {} }) })).status).to.equal(400);
      const id = await rawConnection(daemon);
      expect((await exchange(daemon, { method: 'GET', headers: { ...bearer(daemon), 'Acp-Connection-Id': id } })).status).to.equal(406);
      const controller = new AbortController();
      const stream = await fetch(httpUrl(daemon), { headers: { ...bearer(daemon), 'Acp-Connection-Id': id, Accept: 'text/event-stream' }, signal: controller.signal });
      expect(stream.status).to.equal(200);
      expect(stream.headers.get('content-type')).to.equal('text/event-stream');
      expect((await exchange(daemon, { method: 'GET', headers: { ...bearer(daemon), 'Acp-Connection-Id': id, Accept: 'text/event-stream' } })).status).to.equal(409);
      controller.abort();
      // Its connection stream closed: the client is gone, the connection with it.
      await waitUntil(async () => (await exchange(daemon, { method: 'DELETE', headers: { ...bearer(daemon), 'Acp-Connection-Id': id } })).status === 404, 'the connection to end with its stream', 30_000);
    });
  });

  describe('flow control', () => {
    it("a session stream nobody reads pauses only its own connection's cursor: the controller's 12 MB turn streams to its end; the slow observer then gets every update once, in order", async () => {
      const count = 3000;
      const big = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', `acp:${process.execPath} ${streamAgent} ${count} 4000`, '--store', join(state, 'big.sqlite'), '--token-file', join(state, 'big-token')], launched);
      const controller = httpEditor(big);
      let slowId: string | undefined;
      try {
        await controller.request(methods.agent.initialize, initializeParams);
        const { sessionId } = await controller.request<{ sessionId: string }>(methods.agent.session.new, { cwd: state, mcpServers: [] });
        slowId = await rawConnection(big);
        const slowConnection = await rawEventStream(big, { 'Acp-Connection-Id': slowId });
        slowConnection.read();
        const slowSession = await rawEventStream(big, { 'Acp-Connection-Id': slowId, 'Acp-Session-Id': sessionId }); // never read until the turn is over
        const resume = await exchange(big, { method: 'POST', headers: { ...bearer(big), ...json, 'Acp-Connection-Id': slowId, 'Acp-Session-Id': sessionId }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/resume', params: { sessionId, cwd: state, mcpServers: [] } }) });
        expect(resume.status).to.equal(202);
        type Listed = { sessions: Array<{ sessionId: string; clients: Array<{ role: string; delivered?: number; peer?: string }> }> };
        const clients = async () => (await controller.request<Listed>('_acp-warden/sessions', {})).sessions.find((s) => s.sessionId === sessionId)?.clients ?? [];
        await waitUntil(async () => (await clients()).length === 2, 'the slow client attached as observer', 30_000);
        // warden sessions names the endpoint a client came through.
        expect((await clients()).map((client) => client.peer)).to.satisfy((peers: string[]) => peers.every((peer) => /^127\.0\.0\.1:\d+ over HTTP/u.test(peer)));
        const done = await controller.request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'say a lot' }] });
        expect(done.stopReason).to.equal('end_turn');
        expect(chunks(controller.updates, sessionId), 'the controller got the whole turn').to.have.length(count);
        const listed = await clients();
        const deliveredTo = (role: string) => listed.find((c) => c.role === role)?.delivered ?? 0;
        expect(deliveredTo('observer'), 'the unread observer was sent less than the controller: its cursor paused').to.be.below(deliveredTo('controller'));
        slowSession.read();
        const indices = () => slowSession.events.filter((e) => e.method === 'session/update' && e.params?.update?.sessionUpdate === 'agent_message_chunk').map((e) => Number(String(e.params.update.content.text).slice(1, String(e.params.update.content.text).indexOf(' '))));
        await waitUntil(() => slowSession.events.some((e) => e.params?.update?._meta?.[turnEndKey] !== undefined), 'the turn end on the slow observer', 120_000);
        expect(indices(), 'every update once, in order').to.deep.equal(Array.from({ length: count }, (_, index) => index));
        // The answer to a request naming the session travels on that session's stream, before the updates after it.
        const resumeAnswer = slowSession.events.findIndex((e) => e.id === 2 && e.method === undefined);
        expect(resumeAnswer, "session/resume's answer on the session stream").to.be.at.least(0);
        expect(resumeAnswer).to.be.below(slowSession.events.findIndex((e) => e.method === 'session/update'));
        expect(slowConnection.events.some((e) => e.id === 2), 'not on the connection stream').to.equal(false);
      } finally {
        if (slowId) await exchange(big, { method: 'DELETE', headers: { ...bearer(big), 'Acp-Connection-Id': slowId } }).catch(() => undefined);
        await controller.close();
        big.process.kill('SIGTERM');
        await big.exited;
      }
    });
  });

  describe('keepalive', () => {
    it('an HTTP connection that opens no event stream and sends nothing is ended after two --keepalive intervals; one whose stream is open lives on, getting SSE comments', async () => {
      const quick = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'quick.sqlite'), '--token-file', join(state, 'quick-token'), '--keepalive', '1'], launched);
      const watcher = httpEditor(quick);
      try {
        await watcher.request(methods.agent.initialize, initializeParams);
        // The silent one opens a session (its answer left unread) and then says nothing: the watcher sees it leave the session.
        const silent = await rawConnection(quick);
        const opened = await exchange(quick, { method: 'POST', headers: { ...bearer(quick), ...json, 'Acp-Connection-Id': silent }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: state, mcpServers: [] } }) });
        expect(opened.status).to.equal(202);
        type Listed = { sessions: Array<{ sessionId: string; clients: unknown[] }> };
        const attached = async () => (await watcher.request<Listed>('_acp-warden/sessions', {})).sessions.reduce((sum, session) => sum + session.clients.length, 0);
        await waitUntil(async () => (await attached()) === 1, 'the silent connection to attach its session', 30_000, 100);
        const listening = await rawConnection(quick);
        const stream = await rawEventStream(quick, { 'Acp-Connection-Id': listening });
        let comments = 0;
        stream.response.setEncoding('utf8');
        stream.response.on('data', (chunk: string) => (comments += chunk.split(':\n\n').length - 1));
        await waitUntil(async () => (await attached()) === 0, 'the silent connection to be ended (its session detached)', 30_000, 250);
        await waitUntil(() => comments >= 3, 'three keepalive comments on the open stream', 30_000);
        const alive = await exchange(quick, { method: 'POST', headers: { ...bearer(quick), ...json, 'Acp-Connection-Id': listening }, body: JSON.stringify({ jsonrpc: '2.0', method: 'none/such' }) });
        expect(alive.status, 'the connection reading its stream lives').to.equal(202);
        const ended = await exchange(quick, { method: 'DELETE', headers: { ...bearer(quick), 'Acp-Connection-Id': silent } });
        expect(ended.status, 'the silent one is gone').to.equal(404);
      } finally {
        await watcher.close();
        quick.process.kill('SIGTERM');
        await quick.exited;
      }
    });
  });

  describe('detach and resume over HTTP', () => {
    it('a client closing its stream mid-turn leaves the turn running; a new HTTP connection resuming after the last seq it saw gets the rest once, in order, and the turn end', async () => {
      const editor = httpEditor(daemon);
      await editor.request(methods.agent.initialize, initializeParams);
      const { sessionId } = await editor.request<{ sessionId: string }>(methods.agent.session.new, { cwd: state, mcpServers: [] });
      const agents = demoAgentsOf(daemon.process.pid);
      void editor.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: words(150) }] }).catch(() => undefined);
      await waitUntil(() => textOf(editor.updates, sessionId).includes('w5 '), 'the turn to stream', 30_000);
      await editor.close();
      const seen = editor.updates.filter((u) => u.sessionId === sessionId);
      const lastSeen = Math.max(...seen.map((u) => seqOf(u) ?? 0));
      expect(seen.every((u) => typeof seqOf(u) === 'number'), 'every update it got carries its seq').to.equal(true);
      expect(textOf(seen, sessionId), 'it was gone before the turn ended').not.to.include('w149');

      const again = httpEditor(daemon);
      try {
        await again.request(methods.agent.initialize, initializeParams);
        await again.request(methods.agent.session.resume, { sessionId, cwd: state, mcpServers: [], _meta: { [afterKey]: lastSeen } });
        await waitUntil(() => again.updates.some((u) => u.sessionId === sessionId && u.update._meta?.[turnEndKey] !== undefined), 'the turn end', 60_000);
        const rest = again.updates.filter((u) => u.sessionId === sessionId);
        const seqs = rest.map(seqOf);
        expect(seqs.every((seq) => typeof seq === 'number' && seq > lastSeen), `only what came after seq ${lastSeen}`).to.equal(true);
        expect(seqs, 'each once, in order').to.deep.equal([...new Set(seqs)].sort((a, b) => (a as number) - (b as number)));
        expect(rest.find((u) => u.update._meta?.[turnEndKey] !== undefined)?.update._meta?.[turnEndKey]).to.deep.equal({ stopReason: 'end_turn' });
        const whole = textOf(seen, sessionId) + textOf(rest, sessionId);
        expect(whole.trim().split(/\s+/u).map((word) => word.replace(/\.$/u, '')).filter((word) => /^w\d+$/u.test(word)), 'no word lost, none twice').to.deep.equal(words(150).split(' '));
        expect(demoAgentsOf(daemon.process.pid), 'the same agent process ran the whole turn').to.deep.equal(agents);
        const listed = await again.request<{ sessions: Array<{ sessionId: string; clients: Array<{ role: string }> }> }>('_acp-warden/sessions', {});
        expect(listed.sessions.find((s) => s.sessionId === sessionId)?.clients.map((c) => c.role), 'the closed connection detached; the new one controls').to.deep.equal(['controller']);
      } finally {
        await again.close();
      }
    });
  });
});
