/**
 * OpenTelemetry of `warden serve` (issue 18): a real daemon with the demo agent, two WebSocket
 * clients, and a real OTLP/HTTP receiver on 127.0.0.1 decoding what the exporters send. The
 * editor's `_meta.traceparent` on a prompt that arrives over WebSocket (or Streamable HTTP)
 * parents the turn as over stdio; the clients' JSON-RPC ids (both count from 1) stay apart; each turn names its client.
 */
import { collectSseEvents } from '../support/sse-events.js';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { expectGroupGone, processesWhere, waitUntil } from '../support/processes.js';
import { startServe, type ServeDaemon } from '../support/serve-daemon.js';
import { exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';
import { lineEditor } from './line-editor.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedPoint, type ReceivedSpan } from './otlp-receiver.js';

const tracedAgent = fileURLToPath(new URL('./traced-agent.mjs', import.meta.url));
const hideSdk = fileURLToPath(new URL('./hide-otel-sdk.mjs', import.meta.url));
const editorTrace = '0af7651916cd43dd8448eb211c80319c';
const editorSpan = 'b7ad6b7169203331';
const editorTraceparent = `00-${editorTrace}-${editorSpan}-01`;
const httpTrace = '5bf92f3577b34da6a3ce929d0e0e4737';
const httpSpan = '10f067aa0ba902b8';

type Frame = { id?: number | string; method?: string; params?: unknown; result?: unknown; error?: unknown };

/** A JSON-RPC client of the daemon over one WebSocket: requests by id, the daemon's requests recorded. */
interface WsClient {
  request(id: number, method: string, params: unknown): Promise<Frame>;
  answer(id: number | string, result: unknown): void;
  readonly asked: Frame[];
}

async function wsClient(daemon: ServeDaemon, sockets: WebSocket[], userAgent: string): Promise<WsClient> {
  const socket = new WebSocket(daemon.url, { headers: { Authorization: `Bearer ${daemon.token}`, 'User-Agent': userAgent } });
  sockets.push(socket);
  const waiting = new Map<number | string, (frame: Frame) => void>();
  const asked: Frame[] = [];
  socket.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as Frame;
    if (frame.method === undefined && frame.id !== undefined) waiting.get(frame.id)?.(frame);
    else if (frame.method !== undefined && frame.id !== undefined) asked.push(frame);
  });
  await once(socket, 'open');
  return {
    asked,
    request: (id, method, params) =>
      new Promise<Frame>((resolve) => {
        waiting.set(id, resolve);
        socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      }),
    answer: (id, result) => socket.send(JSON.stringify({ jsonrpc: '2.0', id, result })),
  };
}

/** A client of the Streamable HTTP endpoint: POSTs its messages, reads the answers off its connection's event stream. */
async function httpClient(daemon: ServeDaemon, streams: ClientRequest[], userAgent: string): Promise<{ request(id: number, method: string, params: unknown): Promise<Frame> }> {
  const url = daemon.url.replace(/^ws/, 'http');
  const headers = { Authorization: `Bearer ${daemon.token}`, 'Content-Type': 'application/json', 'User-Agent': userAgent };
  const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'serve-otel-spec', version: '1' } } }) });
  expect(init.status).to.equal(200);
  await init.text();
  const connectionId = init.headers.get('acp-connection-id') as string;
  const events: Frame[] = [];
  await new Promise<void>((resolve, reject) => {
    const { hostname, port } = new URL(url);
    const stream = httpRequest({ host: hostname, port, path: '/acp', headers: { ...headers, Accept: 'text/event-stream', 'Acp-Connection-Id': connectionId } }, (response) => {
      collectSseEvents(response, events);
      resolve();
    });
    streams.push(stream);
    stream.on('error', reject);
    stream.end();
  });
  return {
    async request(id, method, params) {
      const sessionId = (params as { sessionId?: string }).sessionId;
      const posted = await fetch(url, { method: 'POST', headers: { ...headers, 'Acp-Connection-Id': connectionId, ...(sessionId ? { 'Acp-Session-Id': sessionId } : {}) }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
      expect(posted.status, await posted.text()).to.equal(202);
      await waitUntil(() => events.some((frame) => frame.id === id && frame.method === undefined), `the answer to ${method} over HTTP`, 30_000);
      return events.find((frame) => frame.id === id && frame.method === undefined) as Frame;
    },
  };
}

const initialize = (client: WsClient) => client.request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'serve-otel-spec', version: '1' } });
const text = (value: string) => [{ type: 'text', text: value }];
const named = (spans: readonly ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);
const points = (exported: readonly ReceivedPoint[], metric: string, attributes: Record<string, unknown> = {}) =>
  exported.filter((entry) => entry.metric === metric && Object.entries(attributes).every(([key, value]) => entry.attributes[key] === value));

describe('warden serve: OpenTelemetry traces and metrics (issue 18)', function () {
  this.timeout(120_000);
  const launched: ChildProcess[] = [];
  const sockets: WebSocket[] = [];
  let state: string;
  const streams: ClientRequest[] = [];
  let run: { spans: ReceivedSpan[]; points: ReceivedPoint[]; sessionA: string; sessionB: string; sessionC: string; stderr: string };

  // One daemon run: client A prompts with the editor's traceparent and is asked a permission;
  // while A's turn waits, client B (the same ids: 1, 2, 3) runs a turn of its own; then A answers;
  // then client C, over Streamable HTTP, prompts with a traceparent of its own.
  before(async function () {
    this.timeout(120_000);
    state = mkdtempSync(join(tmpdir(), 'warden-serve-otel-'));
    const receiver: OtlpReceiver = await startOtlpReceiver();
    try {
      const daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1', '--otel'], launched, {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '600000', OTEL_SERVICE_NAME: 'daemon-under-test' },
      });
      const a = await wsClient(daemon, sockets, 'editor-a/1.0');
      expect((await initialize(a)).error).to.equal(undefined);
      const sessionA = ((await a.request(2, 'session/new', { cwd: state, mcpServers: [] })).result as { sessionId: string }).sessionId;
      const turnA = a.request(3, 'session/prompt', { sessionId: sessionA, prompt: text('run the tool please'), _meta: { traceparent: editorTraceparent, tracestate: 'editor=a' } });
      await waitUntil(() => a.asked.some((frame) => frame.method === 'session/request_permission'), 'client A asked a permission', 30_000);

      const b = await wsClient(daemon, sockets, 'editor-b/2.0');
      expect((await initialize(b)).error).to.equal(undefined);
      const sessionB = ((await b.request(2, 'session/new', { cwd: state, mcpServers: [] })).result as { sessionId: string }).sessionId;
      expect((await b.request(3, 'session/prompt', { sessionId: sessionB, prompt: text('hello') })).result).to.deep.equal({ stopReason: 'end_turn' });

      const permission = a.asked.find((frame) => frame.method === 'session/request_permission') as Frame;
      const options = (permission.params as { options: Array<{ optionId: string; kind: string }> }).options;
      a.answer(permission.id as number, { outcome: { outcome: 'selected', optionId: options.find((option) => option.kind === 'allow_once')?.optionId } });
      expect((await turnA).result).to.deep.equal({ stopReason: 'end_turn' });

      const c = await httpClient(daemon, streams, 'editor-c/3.0');
      const sessionC = ((await c.request(2, 'session/new', { cwd: state, mcpServers: [] })).result as { sessionId: string }).sessionId;
      expect((await c.request(3, 'session/prompt', { sessionId: sessionC, prompt: text('hello over http'), _meta: { traceparent: `00-${httpTrace}-${httpSpan}-01` } })).result).to.deep.equal({ stopReason: 'end_turn' });

      // SIGTERM: the daemon drains, stops its agents, exports what is left and exits 0.
      daemon.process.kill('SIGTERM');
      expect(await daemon.exited).to.equal(0);
      await waitUntil(() => named(receiver.spans, 'acp_warden.session').length >= 3 && receiver.exports.length > 0, 'the spans and metrics exported', 20_000);
      run = { spans: [...receiver.spans], points: receiver.exports.at(-1) ?? [], sessionA, sessionB, sessionC, stderr: daemon.stderr() };
    } finally {
      for (const socket of sockets) socket.terminate();
      for (const stream of streams) stream.destroy();
      await killGroups(launched, { descendants: true });
      await receiver.close();
    }
  });
  after(() => rmSync(state, { recursive: true, force: true }));

  const turnOf = (sessionId: string): ReceivedSpan => {
    const turns = named(run.spans, 'acp_warden.turn').filter((span) => span.attributes['acp_warden.session.id'] === sessionId);
    expect(turns, `turn spans of ${sessionId}`).to.have.length(1);
    return turns[0] as ReceivedSpan;
  };
  const sessionOf = (sessionId: string): ReceivedSpan => {
    const sessions = named(run.spans, 'acp_warden.session').filter((span) => span.attributes['acp_warden.session.id'] === sessionId);
    expect(sessions, `session spans of ${sessionId}`).to.have.length(1);
    return sessions[0] as ReceivedSpan;
  };

  it('exports a session span per session opened over WebSocket or HTTP, with its id, agent and the service name', () => {
    expect(new Set(run.spans.map((span) => span.service))).to.deep.equal(new Set(['daemon-under-test']));
    for (const sessionId of [run.sessionA, run.sessionB, run.sessionC]) expect(sessionOf(sessionId).attributes).to.include({ 'acp_warden.agent': 'demo', 'acp_warden.session.how': 'new' });
  });

  it("parents the turn by the editor's _meta.traceparent sent over WebSocket, linked to its session", () => {
    const turn = turnOf(run.sessionA);
    expect(turn.traceId).to.equal(editorTrace);
    expect(turn.parentSpanId).to.equal(editorSpan);
    const session = sessionOf(run.sessionA);
    expect(turn.links).to.deep.include({ traceId: session.traceId, spanId: session.spanId });
  });

  it("parents the turn by the editor's _meta.traceparent sent over Streamable HTTP", () => {
    const turn = turnOf(run.sessionC);
    expect([turn.traceId, turn.parentSpanId]).to.deep.equal([httpTrace, httpSpan]);
    expect(turn.attributes['acp_warden.turn.stop_reason']).to.equal('end_turn');
  });

  it('makes a turn without a traceparent a child of its session span', () => {
    const turn = turnOf(run.sessionB);
    const session = sessionOf(run.sessionB);
    expect([turn.traceId, turn.parentSpanId]).to.deep.equal([session.traceId, session.spanId]);
  });

  it("keeps two clients' equal JSON-RPC ids apart: each turn ends with its own stop reason, the permission wait and tool call inside A's turn", () => {
    const turnA = turnOf(run.sessionA);
    const turnB = turnOf(run.sessionB);
    expect(turnA.attributes['acp_warden.turn.stop_reason']).to.equal('end_turn');
    expect(turnB.attributes['acp_warden.turn.stop_reason']).to.equal('end_turn');
    const permission = named(run.spans, 'acp_warden.permission');
    expect(permission).to.have.length(1);
    expect(permission[0]?.parentSpanId).to.equal(turnA.spanId);
    expect(permission[0]?.attributes['acp_warden.permission.outcome']).to.equal('selected');
    const tools = named(run.spans, 'acp_warden.tool_call');
    expect(tools.map((tool) => [tool.parentSpanId, tool.attributes['acp_warden.tool.status']])).to.deep.equal([[turnA.spanId, 'completed']]);
  });

  it('names the client that sent each prompt (acp_warden.client.peer: its address and User-Agent)', () => {
    expect(String(turnOf(run.sessionA).attributes['acp_warden.client.peer'])).to.match(/^127\.0\.0\.1:\d+ \(editor-a\/1\.0\)$/);
    expect(String(turnOf(run.sessionB).attributes['acp_warden.client.peer'])).to.match(/^127\.0\.0\.1:\d+ \(editor-b\/2\.0\)$/);
    expect(String(sessionOf(run.sessionB).attributes['acp_warden.client.peer'])).to.contain('editor-b/2.0');
    expect(String(turnOf(run.sessionC).attributes['acp_warden.client.peer'])).to.match(/^127\.0\.0\.1:\d+ over HTTP \(editor-c\/3\.0\)$/);
  });

  it('exports the metrics at exit: three turns ended end_turn, their durations, three sessions opened, journal appends', () => {
    expect(points(run.points, 'acp_warden.turns', { 'acp_warden.agent': 'demo', 'acp_warden.turn.stop_reason': 'end_turn' }).map((entry) => entry.value)).to.deep.equal([3]);
    expect(points(run.points, 'acp_warden.turn.duration', { 'acp_warden.turn.stop_reason': 'end_turn' }).map((entry) => entry.count)).to.deep.equal([3]);
    expect(points(run.points, 'acp_warden.sessions.open', { 'acp_warden.agent': 'demo' }).map((entry) => entry.value)).to.deep.equal([3]);
    expect(points(run.points, 'acp_warden.journal.duration', { 'acp_warden.journal.operation': 'append' })[0]?.count).to.be.greaterThan(0);
  });

  it('writes no OpenTelemetry problem on stderr', () => {
    expect(run.stderr).not.to.match(/otel (error|warn)/);
  });

  it("hands a native agent behind the daemon its turn's span as the prompt's _meta.traceparent (in the editor's trace)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-serve-otel-agent-'));
    const log = join(dir, 'agent.log');
    const receiver = await startOtlpReceiver();
    const ownSockets: WebSocket[] = [];
    try {
      const daemon = await startServe(dir, ['--listen', '127.0.0.1:0', '--agent', `acp:${process.execPath} ${tracedAgent}`, '--env', `TRACED_AGENT_LOG=${log}`, '--store', join(dir, 'journal.sqlite')], launched, {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRICS_EXPORTER: 'none' },
      });
      const client = await wsClient(daemon, ownSockets, 'editor-d/1.0');
      expect((await initialize(client)).error).to.equal(undefined);
      const sessionId = ((await client.request(2, 'session/new', { cwd: dir, mcpServers: [] })).result as { sessionId: string }).sessionId;
      const turn = client.request(3, 'session/prompt', { sessionId, prompt: text('read it'), _meta: { traceparent: editorTraceparent } });
      await waitUntil(() => client.asked.some((frame) => frame.method === 'session/request_permission'), 'the permission request', 30_000);
      const permission = client.asked.find((frame) => frame.method === 'session/request_permission') as Frame;
      client.answer(permission.id as number, { outcome: { outcome: 'selected', optionId: 'allow' } });
      expect((await turn).result).to.deep.equal({ stopReason: 'end_turn' });
      daemon.process.kill('SIGTERM');
      expect(await daemon.exited).to.equal(0);
      await waitUntil(() => named(receiver.spans, 'acp_warden.turn').length > 0, 'the turn exported', 20_000);
      const turnSpan = named(receiver.spans, 'acp_warden.turn')[0] as ReceivedSpan;
      expect([turnSpan.traceId, turnSpan.parentSpanId]).to.deep.equal([editorTrace, editorSpan]);
      const prompts = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { event: string; meta?: { traceparent?: string } | null }).filter((fact) => fact.event === 'prompt');
      expect(prompts.map((fact) => fact.meta?.traceparent)).to.deep.equal([`00-${editorTrace}-${turnSpan.spanId}-01`]);
    } finally {
      for (const socket of ownSockets) socket.terminate();
      await killGroups(launched, { descendants: true });
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('one span per tool call however many clients watch the session (observers attached by session/load before and during a turn)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-serve-otel-watch-'));
    const receiver = await startOtlpReceiver();
    const ownSockets: WebSocket[] = [];
    try {
      const daemon = await startServe(dir, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(dir, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1'], launched, {
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRICS_EXPORTER: 'none' },
      });
      const controller = await wsClient(daemon, ownSockets, 'controller/1.0');
      expect((await initialize(controller)).error).to.equal(undefined);
      const sessionId = ((await controller.request(2, 'session/new', { cwd: dir, mcpServers: [] })).result as { sessionId: string }).sessionId;
      // A first turn with a tool call: history the observer's load replays.
      const first = controller.request(3, 'session/prompt', { sessionId, prompt: text('run the tool') });
      await waitUntil(() => controller.asked.length === 1, 'the first permission request', 30_000);
      const allow = (frame: Frame) => (frame.params as { options: Array<{ optionId: string; kind: string }> }).options.find((option) => option.kind === 'allow_once')?.optionId;
      controller.answer((controller.asked[0] as Frame).id as number, { outcome: { outcome: 'selected', optionId: allow(controller.asked[0] as Frame) } });
      expect((await first).result).to.deep.equal({ stopReason: 'end_turn' });
      // One observer attached between the turns: it gets the second turn's updates as the controller does.
      const watching = await wsClient(daemon, ownSockets, 'observer/1.0');
      expect((await initialize(watching)).error).to.equal(undefined);
      expect((await watching.request(2, 'session/load', { sessionId, cwd: dir, mcpServers: [] })).error).to.equal(undefined);
      // Another attaches while the second turn runs: its load replays the first turn's tool call during it.
      const second = controller.request(4, 'session/prompt', { sessionId, prompt: text('run the tool again') });
      await waitUntil(() => controller.asked.length === 2, 'the second permission request', 30_000);
      const late = await wsClient(daemon, ownSockets, 'observer/2.0');
      expect((await initialize(late)).error).to.equal(undefined);
      expect((await late.request(2, 'session/load', { sessionId, cwd: dir, mcpServers: [] })).error).to.equal(undefined);
      controller.answer((controller.asked[1] as Frame).id as number, { outcome: { outcome: 'selected', optionId: allow(controller.asked[1] as Frame) } });
      expect((await second).result).to.deep.equal({ stopReason: 'end_turn' });
      daemon.process.kill('SIGTERM');
      expect(await daemon.exited).to.equal(0);
      await waitUntil(() => named(receiver.spans, 'acp_warden.session').length > 0, 'the spans exported', 20_000);
      const turns = named(receiver.spans, 'acp_warden.turn');
      expect(turns).to.have.length(2);
      const tools = named(receiver.spans, 'acp_warden.tool_call');
      expect(tools.map((tool) => tool.parentSpanId).sort()).to.deep.equal(turns.map((turn) => turn.spanId).sort());
    } finally {
      for (const socket of ownSockets) socket.terminate();
      await killGroups(launched, { descendants: true });
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("warden acp --daemon: the bridge traces nothing; the daemon it starts inherits the editor's OTEL_* variables and traces the editor's turn", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-serve-otel-daemon-'));
    const socket = join(dir, 'warden.sock');
    const receiver = await startOtlpReceiver();
    const daemons = () => processesWhere((cmdline) => cmdline.includes(socket) && cmdline.includes(' serve '));
    try {
      const bridge = spawn(process.execPath, [wardenMain, 'acp', '--agent', 'demo', '--daemon', '--listen', `unix:${socket}`, '--store', join(dir, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1'], {
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_STATE_HOME: dir, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '600000' },
      });
      launched.push(bridge);
      const stderr = stderrOf(bridge);
      const exited = exitCodeOf(bridge);
      const editor = lineEditor(bridge, () => ({ outcome: { outcome: 'cancelled' } }));
      expect((await editor.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'serve-otel-spec', version: '1' } })).error, stderr()).to.equal(undefined);
      const sessionId = ((await editor.request('session/new', { cwd: dir, mcpServers: [] })).result as { sessionId: string }).sessionId;
      expect((await editor.request('session/prompt', { sessionId, prompt: text('hello'), _meta: { traceparent: editorTraceparent } })).result).to.deep.equal({ stopReason: 'end_turn' });
      bridge.stdin?.end();
      expect(await exited).to.equal(0);
      const [daemon] = daemons();
      expect(daemon, 'the daemon the bridge started').to.be.a('number');
      process.kill(daemon as number, 'SIGTERM');
      await expectGroupGone(daemon, 30_000);
      await waitUntil(() => named(receiver.spans, 'acp_warden.turn').length > 0, 'the turn exported', 20_000);
      const turn = named(receiver.spans, 'acp_warden.turn')[0] as ReceivedSpan;
      expect([turn.traceId, turn.parentSpanId, turn.attributes['acp_warden.session.id']]).to.deep.equal([editorTrace, editorSpan, sessionId]);
      // Every span is the daemon's: the bridge sends none of its own.
      expect(new Set(receiver.spans.map((span) => span.name))).to.deep.equal(new Set(['acp_warden.initialize', 'acp_warden.session', 'acp_warden.turn']));
      expect(String(turn.attributes['acp_warden.client.peer'])).to.match(/^unix/);
    } finally {
      for (const pid of daemons()) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await killGroups(launched, { descendants: true });
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('the idle timeout', () => {
    let dir: string;
    const ownSockets: WebSocket[] = [];
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'warden-serve-otel-idle-'))));
    afterEach(async () => {
      for (const socket of ownSockets.splice(0)) socket.terminate();
      await killGroups(launched, { descendants: true });
      rmSync(dir, { recursive: true, force: true });
    });

    it("a session the hub closes for being idle ends its span then (not at exit) and is no longer counted open", async () => {
      const receiver = await startOtlpReceiver();
      try {
        const daemon = await startServe(dir, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(dir, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1', '--idle-timeout', '1', '--otel'], launched, {
          env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '600000' },
        });
        const client = await wsClient(daemon, ownSockets, 'editor-i/1.0');
        expect((await initialize(client)).error).to.equal(undefined);
        const sessionId = ((await client.request(2, 'session/new', { cwd: dir, mcpServers: [] })).result as { sessionId: string }).sessionId;
        expect((await client.request(3, 'session/prompt', { sessionId, prompt: text('hello') })).result).to.deep.equal({ stopReason: 'end_turn' });
        const sessionSpans = () => named(receiver.spans, 'acp_warden.session').filter((span) => span.attributes['acp_warden.session.id'] === sessionId);
        expect(sessionSpans(), 'no session span before the idle close').to.deep.equal([]);
        ownSockets.splice(0).forEach((socket) => socket.close());
        // A span is exported once ended: the session's arrives while the daemon still runs.
        await waitUntil(() => sessionSpans().length > 0 || daemon.process.exitCode !== null, 'the session span after the idle close', 60_000);
        expect(daemon.process.exitCode, 'the daemon still runs').to.equal(null);
        expect(sessionSpans()).to.have.length(1);
        daemon.process.kill('SIGTERM');
        expect(await daemon.exited).to.equal(0);
        await waitUntil(() => receiver.exports.length > 0, 'the metrics exported at exit', 20_000);
        expect(points(receiver.exports.at(-1) ?? [], 'acp_warden.sessions.open', { 'acp_warden.agent': 'demo' }).map((entry) => entry.value)).to.deep.equal([0]);
        expect(sessionSpans(), 'one span, not another at exit').to.have.length(1);
      } finally {
        await receiver.close();
      }
    });
  });

  describe('telemetry off, or the SDK missing', () => {
    let dir: string;
    let receiver: OtlpReceiver;
    const ownSockets: WebSocket[] = [];
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'warden-serve-otel-off-'));
      receiver = await startOtlpReceiver();
    });
    afterEach(async () => {
      for (const socket of ownSockets.splice(0)) socket.terminate();
      await killGroups(launched, { descendants: true });
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A daemon with the SDK hidden (its modules logged), one turn over WebSocket, then SIGTERM. */
    async function serveOneTurn(args: string[], env: Record<string, string>): Promise<{ stderr: string; modules: string[] }> {
      const modules = join(dir, 'modules.log');
      const daemon = await startServe(dir, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(dir, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=1', ...args], launched, {
        env: { NODE_OPTIONS: `--import ${hideSdk}`, HIDE_OTEL_LOG: modules, ...env },
      });
      const client = await wsClient(daemon, ownSockets, 'editor-e/1.0');
      expect((await initialize(client)).error).to.equal(undefined);
      const sessionId = ((await client.request(2, 'session/new', { cwd: dir, mcpServers: [] })).result as { sessionId: string }).sessionId;
      expect((await client.request(3, 'session/prompt', { sessionId, prompt: text('hello'), _meta: { traceparent: editorTraceparent } })).result).to.deep.equal({ stopReason: 'end_turn' });
      daemon.process.kill('SIGTERM');
      expect(await daemon.exited).to.equal(0);
      return { stderr: daemon.stderr(), modules: readFileSync(modules, 'utf8').split('\n') };
    }

    it('without --otel or an endpoint: no OpenTelemetry module loaded, nothing sent', async () => {
      const { modules } = await serveOneTurn([], {});
      expect(modules.filter((url) => /\/dist\/cli\/serve\.js$/.test(url)), 'the log sees warden serve').to.have.length(1);
      expect(modules.filter((url) => url.includes('@opentelemetry') || (url.includes('/dist/telemetry/') && !/\/(telemetry-settings|names)\.js$/.test(url)))).to.deep.equal([]);
      expect(receiver.requests).to.deep.equal([]);
    });

    it('with --otel but no SDK installed: said on stderr, the daemon serves without telemetry', async () => {
      const { stderr } = await serveOneTurn(['--otel'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      expect(stderr).to.match(/warden serve: telemetry is off: the OpenTelemetry SDK is not installed .*npm install @opentelemetry\/sdk-trace-node@/);
      expect(receiver.requests).to.deep.equal([]);
    });
  });
});
