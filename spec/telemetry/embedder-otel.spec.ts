/**
 * OpenTelemetry of the embedding API (issue 18): a program's `createHost({ telemetry })` with
 * `startTelemetry()` of `acp-warden/telemetry` (spec/telemetry/traced-embedder.ts, a real
 * process) exports its session's and turn's spans and the metrics to a real OTLP/HTTP
 * receiver on 127.0.0.1; and `startTelemetry` resolves `undefined` when telemetry is off.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/processes.js';
import { exitCodeOf, killGroups, stderrOf } from '../support/warden-process.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const embedder = fileURLToPath(new URL('./traced-embedder.ts', import.meta.url));

describe('the embedding API: createHost({ telemetry }) (issue 18)', function () {
  this.timeout(90_000);
  const launched: ChildProcess[] = [];
  let receiver: OtlpReceiver;
  beforeEach(async () => (receiver = await startOtlpReceiver()));
  afterEach(async () => {
    await killGroups(launched, { descendants: true });
    await receiver.close();
  });

  /** Runs the embedder to its end with `env`; what it printed. */
  async function runEmbedder(env: Record<string, string>): Promise<{ sessionId: string; stopReason: string; telemetry: boolean }> {
    const child = spawn(process.execPath, ['--import', 'tsx', embedder], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '600000', ...env },
    });
    launched.push(child);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    const stderr = stderrOf(child);
    const code = await exitCodeOf(child);
    expect(code, stderr()).to.equal(0);
    return JSON.parse(stdout) as { sessionId: string; stopReason: string; telemetry: boolean };
  }

  it("exports the program's session and turn as spans (the turn a child of the session, its tool call and permission inside), and the metrics", async () => {
    const ran = await runEmbedder({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: 'my-embedder' });
    expect(ran).to.deep.include({ stopReason: 'end_turn', telemetry: true });
    await waitUntil(() => receiver.spans.some((span) => span.name === 'acp_warden.turn') && receiver.exports.length > 0, 'the spans and metrics exported', 20_000);
    const spans = receiver.spans;
    const only = (name: string): ReceivedSpan => {
      const found = spans.filter((span) => span.name === name);
      expect(found, name).to.have.length(1);
      return found[0] as ReceivedSpan;
    };
    const session = only('acp_warden.session');
    const turn = only('acp_warden.turn');
    expect(session.service).to.equal('my-embedder');
    expect(session.attributes).to.include({ 'acp_warden.session.id': ran.sessionId, 'acp_warden.agent': 'demo', 'acp_warden.session.how': 'new' });
    expect(turn.attributes).to.include({ 'acp_warden.session.id': ran.sessionId, 'acp_warden.turn.stop_reason': 'end_turn' });
    expect([turn.traceId, turn.parentSpanId]).to.deep.equal([session.traceId, session.spanId]);
    expect(only('acp_warden.tool_call').parentSpanId).to.equal(turn.spanId);
    expect(only('acp_warden.permission').parentSpanId).to.equal(turn.spanId);
    const points = receiver.exports.at(-1) ?? [];
    expect(points.filter((entry) => entry.metric === 'acp_warden.turns' && entry.attributes['acp_warden.turn.stop_reason'] === 'end_turn').map((entry) => entry.value)).to.deep.equal([1]);
    expect(points.find((entry) => entry.metric === 'acp_warden.journal.duration' && entry.attributes['acp_warden.journal.operation'] === 'append')?.count).to.be.greaterThan(0);
  });

  it('startTelemetry resolves undefined when telemetry is off: OTEL_SDK_DISABLED=true, or otel: false without an endpoint; the host runs without it', async () => {
    expect(await runEmbedder({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SDK_DISABLED: 'true' })).to.deep.include({ stopReason: 'end_turn', telemetry: false });
    expect(await runEmbedder({ EMBEDDER_OTEL: 'false' })).to.deep.include({ stopReason: 'end_turn', telemetry: false });
    expect(receiver.requests).to.deep.equal([]);
  });
});
