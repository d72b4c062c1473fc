/**
 * OpenTelemetry of `warden acp`, end to end (issue 18): a real OTLP/HTTP receiver on
 * 127.0.0.1 decodes what the exporters really send (OTLP JSON) from a real `warden acp`,
 * with a fake native agent that the test kills -9 mid-turn and with the demo agent.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/processes.js';
import { exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';
import { lineEditor, type LineEditor } from './line-editor.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedPoint, type ReceivedSpan } from './otlp-receiver.js';

const tracedAgent = fileURLToPath(new URL('./traced-agent.mjs', import.meta.url));
const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));
const hideSdk = fileURLToPath(new URL('./hide-otel-sdk.mjs', import.meta.url));

const editorTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
const editorSpan = '00f067aa0ba902b7';
const editorTraceparent = `00-${editorTrace}-${editorSpan}-01`;

const launched: ChildProcess[] = [];
let dir: string;
let receiver: OtlpReceiver;

interface Launched {
  readonly child: ChildProcess;
  readonly editor: LineEditor;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

/** `warden acp` as an editor launches it, with the telemetry environment given. */
function launch(args: string[], env: Record<string, string>, nodeArgs: string[] = []): Launched {
  const child = spawn(process.execPath, [...nodeArgs, wardenMain, 'acp', '--store', join(dir, 'journal.sqlite'), ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOME: dir, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '600000', ...env },
  });
  launched.push(child);
  const editor = lineEditor(child, (params) => {
    const options = (params as { options: Array<{ optionId: string; kind: string }> }).options;
    return { outcome: { outcome: 'selected', optionId: options.find((option) => option.kind === 'allow_once')?.optionId } };
  });
  return { child, editor, stderr: stderrOf(child), exited: exitCodeOf(child) };
}

const initialize = (editor: LineEditor) => editor.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'otel-spec', version: '1' } });
/** `session/new` in `cwd`: its session id. */
const newSession = async (editor: LineEditor, cwd: string) => ((await editor.request('session/new', { cwd, mcpServers: [] })).result as { sessionId: string }).sessionId;
const text = (value: string) => [{ type: 'text', text: value }];

interface AgentFact {
  pid: number;
  event: 'start' | 'prompt';
  tracestate?: string | null;
  traceparent?: string | null;
  text?: string;
  meta?: { traceparent?: string } | null;
}
const agentFacts = (log: string): AgentFact[] => {
  try {
    return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line) as AgentFact);
  } catch {
    return [];
  }
};

const named = (spans: readonly ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);
const one = (spans: readonly ReceivedSpan[], name: string, where: (span: ReceivedSpan) => boolean = () => true): ReceivedSpan => {
  const found = named(spans, name).filter(where);
  expect(found, `spans named ${name}`).to.have.length(1);
  return found[0] as ReceivedSpan;
};
/** The points of the last metric export (cumulative totals). */
const lastPoints = (receiver: OtlpReceiver): ReceivedPoint[] => receiver.exports.at(-1) ?? [];
const point = (points: readonly ReceivedPoint[], metric: string, attributes: Record<string, unknown> = {}) =>
  points.filter((entry) => entry.metric === metric && Object.entries(attributes).every(([key, value]) => entry.attributes[key] === value));
/** Every stdout line is a JSON-RPC message: nothing else ever reaches the protocol channel. */
const expectProtocolOnly = (lines: readonly string[]) => {
  for (const line of lines) expect((JSON.parse(line) as { jsonrpc?: unknown }).jsonrpc, line).to.equal('2.0');
};

describe('warden acp: OpenTelemetry traces and metrics (issue 18)', function () {
  this.timeout(90_000);

  describe('a fake native agent killed -9 mid-turn', () => {
    const log = () => join(runDir, 'agent.log');
    let runDir: string;
    let run: { sessionId: string; hungAnswer: { result?: unknown; error?: unknown }; spans: ReceivedSpan[]; points: ReceivedPoint[]; facts: AgentFact[] };
    const turnsOf = () => {
      const turns = named(run.spans, 'acp_warden.turn');
      return {
        hung: turns.find((turn) => turn.attributes['acp_warden.turn.stop_reason'] !== 'end_turn') as ReceivedSpan,
        ok: turns.find((turn) => turn.attributes['acp_warden.turn.stop_reason'] === 'end_turn') as ReceivedSpan,
      };
    };

    // One warden run (initialize, a session, a turn killed -9, a turn on the restarted agent), read by each case.
    before(async function () {
      this.timeout(90_000);
      runDir = mkdtempSync(join(tmpdir(), 'warden-otel-run-'));
      dir = runDir;
      receiver = await startOtlpReceiver();
      try {
        // --on-crash fail: the killed turn is traced as it fails (the default would continue it).
        const warden = launch(['--agent', `acp:${process.execPath} ${tracedAgent}`, '--on-crash', 'fail', '--env', `TRACED_AGENT_LOG=${log()}`], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'warden-under-test' });
        const { editor } = warden;
        expect((await initialize(editor)).error).to.equal(undefined);
        const sessionId = ((await editor.request('session/new', { cwd: runDir, mcpServers: [] })).result as { sessionId: string }).sessionId;
        // Turn 1: the agent starts a tool call and hangs; the test kills it -9.
        const hung = editor.request('session/prompt', { sessionId, prompt: text('hang'), _meta: { traceparent: editorTraceparent, tracestate: 'editor=1' } });
        await waitUntil(() => agentFacts(log()).some((fact) => fact.event === 'prompt'), 'the agent got the first prompt', 30_000);
        process.kill((agentFacts(log()).find((fact) => fact.event === 'start') as AgentFact).pid, 'SIGKILL');
        const hungAnswer = await hung;
        // Turn 2, on the restarted agent: permission asked and granted, end_turn.
        await waitUntil(() => agentFacts(log()).filter((fact) => fact.event === 'start').length === 2, 'the agent restarted', 30_000);
        const second = await editor.request('session/prompt', { sessionId, prompt: text('read it'), _meta: { traceparent: editorTraceparent } });
        expect(second.result).to.deep.equal({ stopReason: 'end_turn' });
        warden.child.stdin?.end();
        expect(await warden.exited).to.equal(0);
        expectProtocolOnly(editor.lines);
        await waitUntil(() => named(receiver.spans, 'acp_warden.session').length > 0 && receiver.exports.length > 0, 'the spans and metrics exported', 20_000);
        run = { sessionId, hungAnswer, spans: [...receiver.spans], points: lastPoints(receiver), facts: agentFacts(log()) };
      } finally {
        await killGroups(launched, { descendants: true });
        await receiver.close();
      }
    });
    after(() => rmSync(runDir, { recursive: true, force: true }));

    it('exports the session span with its id, agent and service name', () => {
      expect(new Set(run.spans.map((span) => span.service))).to.deep.equal(new Set(['warden-under-test']));
      expect(one(run.spans, 'acp_warden.session').attributes).to.include({ 'acp_warden.session.id': run.sessionId, 'acp_warden.agent': `acp:${process.execPath} ${tracedAgent}`, 'acp_warden.session.how': 'new' });
    });

    it("parents each turn by the editor's _meta.traceparent (same trace id, the editor's span as parent), linked to the session", () => {
      const session = one(run.spans, 'acp_warden.session');
      const turns = named(run.spans, 'acp_warden.turn');
      expect(turns).to.have.length(2);
      for (const turn of turns) {
        expect([turn.traceId, turn.parentSpanId]).to.deep.equal([editorTrace, editorSpan]);
        expect(turn.links).to.deep.equal([{ traceId: session.traceId, spanId: session.spanId }]);
        expect(turn.attributes['acp_warden.session.id']).to.equal(run.sessionId);
      }
      const { hung } = turnsOf();
      expect(hung.attributes['acp_warden.turn.stop_reason']).to.equal(run.hungAnswer.error ? 'error' : (run.hungAnswer.result as { stopReason: string }).stopReason);
    });

    it('shows the restart, then the recovery, as spans inside the killed turn', () => {
      const { hung } = turnsOf();
      const restart = one(run.spans, 'acp_warden.agent.restart');
      expect([restart.traceId, restart.parentSpanId]).to.deep.equal([editorTrace, hung.spanId]);
      expect(restart.attributes).to.include({ 'acp_warden.exit.reason': 'signaled', 'acp_warden.restart.count': 1, 'acp_warden.session.id': run.sessionId });
      const recovery = one(run.spans, 'acp_warden.session.recovery');
      expect(recovery.parentSpanId).to.equal(hung.spanId);
      expect(recovery.attributes['acp_warden.recovery.outcome']).to.equal('recovered');
    });

    it('shows tool calls and the permission wait inside their turn', () => {
      const { hung, ok } = turnsOf();
      const tools = named(run.spans, 'acp_warden.tool_call');
      expect(tools.map((tool) => tool.parentSpanId).sort()).to.deep.equal([hung.spanId, ok.spanId].sort());
      expect(tools.find((tool) => tool.parentSpanId === ok.spanId)?.attributes).to.include({ 'gen_ai.tool.name': 'Read file', 'acp_warden.tool.status': 'completed', 'gen_ai.operation.name': 'execute_tool' });
      const permission = one(run.spans, 'acp_warden.permission');
      expect(permission.parentSpanId).to.equal(ok.spanId);
      // The tool call ended at its `completed` update, not with its turn.
      expect(tools.find((tool) => tool.parentSpanId === ok.spanId)?.attributes['acp_warden.tool.unfinished']).to.equal(undefined);
      // The killed turn's tool call never completed: it ended with its turn, its last status kept.
      expect(tools.find((tool) => tool.parentSpanId === hung.spanId)?.attributes).to.include({ 'acp_warden.tool.status': 'pending', 'acp_warden.tool.unfinished': true });
      expect(permission.attributes).to.include({ 'acp_warden.permission.outcome': 'selected', 'acp_warden.permission.option_id': 'allow' });
    });

    it("hands the agent its turn's span as each prompt's _meta.traceparent", () => {
      const { hung, ok } = turnsOf();
      const prompts = run.facts.filter((fact) => fact.event === 'prompt');
      expect(prompts.map((fact) => fact.meta?.traceparent)).to.deep.equal([`00-${editorTrace}-${hung.spanId}-01`, `00-${editorTrace}-${ok.spanId}-01`]);
    });

    it('sets TRACEPARENT at spawn: the initialize span for the first process, the restart span for the restarted one, with the trace\'s TRACESTATE', () => {
      const initializeSpan = one(run.spans, 'acp_warden.initialize');
      const restart = one(run.spans, 'acp_warden.agent.restart');
      const starts = run.facts.filter((fact) => fact.event === 'start');
      expect(starts.map((fact) => fact.traceparent)).to.deep.equal([`00-${initializeSpan.traceId}-${initializeSpan.spanId}-01`, `00-${editorTrace}-${restart.spanId}-01`]);
      // TRACESTATE with it when the trace has one: the editor's, on the restart inside its turn.
      expect(starts.map((fact) => fact.tracestate)).to.deep.equal([null, 'editor=1']);
    });

    it('exports the metrics with their totals at exit: turns, durations, restarts by exit reason, recoveries, sessions open, journal appends', () => {
      const { points } = run;
      expect(point(points, 'acp_warden.turns', { 'acp_warden.turn.stop_reason': 'end_turn' })[0]?.value).to.equal(1);
      expect(point(points, 'acp_warden.turns').reduce((sum, entry) => sum + (entry.value ?? 0), 0)).to.equal(2);
      expect(point(points, 'acp_warden.turn.duration').reduce((sum, entry) => sum + (entry.count ?? 0), 0)).to.equal(2);
      expect(point(points, 'acp_warden.agent.restarts', { 'acp_warden.exit.reason': 'signaled' })[0]?.value).to.equal(1);
      expect(point(points, 'acp_warden.agent.recoveries')[0]?.value).to.equal(1);
      expect(point(points, 'acp_warden.sessions.open')[0]?.value).to.equal(1);
      expect(point(points, 'acp_warden.sessions.failed')).to.deep.equal([]);
      expect(point(points, 'acp_warden.journal.duration', { 'acp_warden.journal.operation': 'append' })[0]?.count, 'journal appends timed').to.be.greaterThan(3);
    });
  });

  describe('the demo agent, a process per session, and no telemetry', () => {
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'warden-otel-'));
      receiver = await startOtlpReceiver();
    });
    afterEach(async () => {
      await killGroups(launched, { descendants: true });
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    });

  it('traces a demo agent session: the turn parented by the editor, the session and the turn exported', async () => {
    const warden = launch(['--agent', 'demo'], { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.endpoint}/v1/traces`, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.endpoint}/v1/metrics`, OTEL_METRICS_EXPORTER: 'none' });
    const { editor } = warden;
    await initialize(editor);
    const sessionId = ((await editor.request('session/new', { cwd: dir, mcpServers: [] })).result as { sessionId: string }).sessionId;
    const answer = await editor.request('session/prompt', { sessionId, prompt: text('hello'), _meta: { traceparent: editorTraceparent } });
    expect(answer.result).to.deep.equal({ stopReason: 'end_turn' });
    expect((await editor.request('session/close', { sessionId })).error).to.equal(undefined);
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    expectProtocolOnly(warden.editor.lines);
    await waitUntil(() => named(receiver.spans, 'acp_warden.session').length > 0, 'the session span exported', 20_000);
    const session = one(receiver.spans, 'acp_warden.session');
    expect(session.service).to.equal('acp-warden');
    expect(session.attributes).to.include({ 'acp_warden.session.id': sessionId, 'acp_warden.agent': 'demo' });
    const turn = one(receiver.spans, 'acp_warden.turn');
    expect([turn.traceId, turn.parentSpanId]).to.deep.equal([editorTrace, editorSpan]);
    expect(turn.attributes['acp_warden.turn.stop_reason']).to.equal('end_turn');
    // Metrics off (OTEL_METRICS_EXPORTER=none): none sent.
    expect(receiver.requests.map((request) => request.path)).to.not.include('/v1/metrics');
  });

  it('a session whose agent gives up: the session span in error with the reason, counted failed and no longer open', async () => {
    const log = join(dir, 'agent.log');
    // No restart allowed: the first kill is more than the supervisor accepts.
    const warden = launch(['--agent', `acp:${process.execPath} ${tracedAgent}`, '--env', `TRACED_AGENT_LOG=${log}`, '--restart-intensity', '0/60'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    await initialize(warden.editor);
    const sessionId = await newSession(warden.editor, dir);
    const hung = warden.editor.request('session/prompt', { sessionId, prompt: text('hang') });
    await waitUntil(() => agentFacts(log).some((fact) => fact.event === 'prompt'), 'the agent got the prompt', 30_000);
    process.kill((agentFacts(log).find((fact) => fact.event === 'start') as AgentFact).pid, 'SIGKILL');
    expect((await hung).error, 'the prompt of a failed session').to.not.equal(undefined);
    // The supervisor gives up when the restart is due: the editor is told the session is over.
    await waitUntil(() => warden.editor.lines.some((line) => line.includes('kept failing')), 'the session failed', 30_000);
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    await waitUntil(() => named(receiver.spans, 'acp_warden.session').length > 0 && receiver.exports.length > 0, 'the spans and metrics exported', 20_000);
    const session = one(receiver.spans, 'acp_warden.session');
    expect(session.status.code, 'status ERROR').to.equal(2);
    expect(session.attributes['acp_warden.failure.reason']).to.be.a('string').and.not.equal('');
    const turn = one(receiver.spans, 'acp_warden.turn');
    expect([turn.attributes['acp_warden.turn.stop_reason'], turn.status.code]).to.deep.equal(['error', 2]);
    const restart = one(receiver.spans, 'acp_warden.agent.restart');
    expect([restart.attributes['acp_warden.recovery.outcome'], restart.status.code]).to.deep.equal(['failed', 2]);
    const points = lastPoints(receiver);
    expect(point(points, 'acp_warden.sessions.failed')[0]?.value).to.equal(1);
    expect(point(points, 'acp_warden.sessions.open')[0]?.value).to.equal(0);
    expect(point(points, 'acp_warden.turns', { 'acp_warden.turn.stop_reason': 'error' })[0]?.value).to.equal(1);
  });

  it('sends no secret to the backend: an agent command line with a key is redacted in spans and metrics', async () => {
    const secret = 'sk-ant-api03-Zq7vX2mP9kL4nR8tW1yB6cD3fG5hJ0sA';
    const log = join(dir, 'agent.log');
    const warden = launch(['--agent', `acp:${process.execPath} ${tracedAgent} --api-key=${secret}`, '--env', `TRACED_AGENT_LOG=${log}`], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    await initialize(warden.editor);
    const sessionId = await newSession(warden.editor, dir);
    expect((await warden.editor.request('session/prompt', { sessionId, prompt: text('read it') })).result).to.deep.equal({ stopReason: 'end_turn' });
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    await waitUntil(() => named(receiver.spans, 'acp_warden.session').length > 0 && receiver.exports.length > 0, 'the spans and metrics exported', 20_000);
    const agent = one(receiver.spans, 'acp_warden.session').attributes['acp_warden.agent'];
    expect(agent).to.be.a('string').and.include(tracedAgent).and.include('[redacted]');
    expect(JSON.stringify([receiver.spans, receiver.exports])).to.not.include(secret);
  });

  it("gives a process per session (Claude Code's) its session span as TRACEPARENT", async () => {
    // The fake claude, behind a shim that notes each start's TRACEPARENT and arguments.
    const spawns = join(dir, 'spawns.log');
    const shim = join(dir, 'claude');
    writeFileSync(shim, `#!/bin/sh\nprintf '%s %s\\n' "\${TRACEPARENT:-none}" "$*" >> '${spawns}'\nexec '${process.execPath}' '${fakeClaude}' "$@"\n`);
    chmodSync(shim, 0o755);
    const warden = launch(['--agent', 'claude', '--agent-command', shim, '--env', 'FAKE_CLAUDE_FIXTURE=hello'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    await initialize(warden.editor);
    const sessionId = await newSession(warden.editor, dir);
    expect((await warden.editor.request('session/prompt', { sessionId, prompt: text('hello') })).result).to.have.property('stopReason');
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    await waitUntil(() => named(receiver.spans, 'acp_warden.session').length > 0, 'the session span exported', 20_000);
    const session = one(receiver.spans, 'acp_warden.session');
    // Its stream-json process (not a probe such as `auth status`, run outside any port).
    const sessionProcesses = readFileSync(spawns, 'utf8').trim().split('\n').filter((line) => line.includes('stream-json'));
    expect(sessionProcesses.map((line) => line.split(' ')[0])).to.deep.equal([`00-${session.traceId}-${session.spanId}-01`]);
  });

  it('without an endpoint or --otel: no telemetry module loaded, nothing sent, the protocol alone on stdout', async () => {
    const modules = join(dir, 'modules.log');
    const warden = launch(['--agent', 'demo'], { HIDE_OTEL_LOG: modules }, ['--import', hideSdk]);
    await initialize(warden.editor);
    const sessionId = await newSession(warden.editor, dir);
    expect((await warden.editor.request('session/prompt', { sessionId, prompt: text('hello') })).result).to.deep.equal({ stopReason: 'end_turn' });
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    expectProtocolOnly(warden.editor.lines);
    const loaded = readFileSync(modules, 'utf8').split('\n');
    expect(loaded.filter((url) => /\/dist\/cli\/acp\.js$/.test(url)), 'the log sees warden acp').to.have.length(1);
    // Only the settings (and the names they default to) are read; nothing of OpenTelemetry.
    expect(loaded.filter((url) => url.includes('@opentelemetry') || (url.includes('/dist/telemetry/') && !/\/(telemetry-settings|names)\.js$/.test(url)))).to.deep.equal([]);
    expect(receiver.requests).to.deep.equal([]);
  });

  it("without telemetry, passes the editor's traceparent on to a native agent as it came", async () => {
    const log = join(dir, 'agent.log');
    const warden = launch(['--agent', `acp:${process.execPath} ${tracedAgent}`, '--env', `TRACED_AGENT_LOG=${log}`], {});
    await initialize(warden.editor);
    const sessionId = await newSession(warden.editor, dir);
    const answer = await warden.editor.request('session/prompt', { sessionId, prompt: text('read it'), _meta: { traceparent: editorTraceparent, tracestate: 'editor=1', 'acp-warden/private': 1 } });
    expect(answer.result).to.deep.equal({ stopReason: 'end_turn' });
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    const facts = agentFacts(log);
    expect(facts.find((fact) => fact.event === 'prompt')?.meta).to.deep.equal({ traceparent: editorTraceparent, tracestate: 'editor=1' });
    expect(facts.find((fact) => fact.event === 'start')?.traceparent).to.equal(null);
  });

  it('with an endpoint but no SDK installed: said on stderr, the session served without telemetry', async () => {
    const warden = launch(['--agent', 'demo', '--otel'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint }, ['--import', hideSdk]);
    await initialize(warden.editor);
    const sessionId = await newSession(warden.editor, dir);
    expect((await warden.editor.request('session/prompt', { sessionId, prompt: text('hello') })).result).to.deep.equal({ stopReason: 'end_turn' });
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    expectProtocolOnly(warden.editor.lines);
    expect(warden.stderr()).to.match(/telemetry is off: the OpenTelemetry SDK is not installed .*npm install @opentelemetry\/sdk-trace-node@2\.12\.0/);
    expect(receiver.requests).to.deep.equal([]);
  });

  it('a collector that never answers: the editor served, a line on stderr at exit, and warden exits all the same', async () => {
    const held: Array<() => void> = [];
    const silent = createServer((request) => held.push(() => request.socket.destroy()));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const warden = launch(['--agent', 'demo'], { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, OTEL_BSP_SCHEDULE_DELAY: '10' });
      await initialize(warden.editor);
      const sessionId = await newSession(warden.editor, dir);
      expect((await warden.editor.request('session/prompt', { sessionId, prompt: text('hello') })).result).to.deep.equal({ stopReason: 'end_turn' });
      warden.child.stdin?.end();
      expect(await warden.exited).to.equal(0);
      expectProtocolOnly(warden.editor.lines);
      expect(warden.stderr()).to.match(/^warden acp: otel warn: the last export did not finish within 3 s \(is the collector at http:\/\/127\.0\.0\.1:\d+ up\?\)/m);
    } finally {
      for (const close of held) close();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('OTEL_SDK_DISABLED=true wins over --otel and an endpoint', async () => {
    const modules = join(dir, 'modules.log');
    const warden = launch(['--agent', 'demo', '--otel'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true', HIDE_OTEL_LOG: modules }, ['--import', hideSdk]);
    await initialize(warden.editor);
    warden.child.stdin?.end();
    expect(await warden.exited).to.equal(0);
    expect(warden.stderr()).to.equal('');
    expect(readFileSync(modules, 'utf8')).to.not.include('@opentelemetry');
    expect(receiver.requests).to.deep.equal([]);
  });
});
});
