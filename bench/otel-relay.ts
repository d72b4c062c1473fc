/**
 * What OpenTelemetry costs `warden acp` per streamed update: the host with its file journal
 * serving a real agent process (bench/support/flood-agent.mjs, N `session/update`s per prompt)
 * to an editor over `stdioTransport`, without telemetry against with it (the editor tap, the
 * timed journal, the host listener; the SDK exporting to an OTLP/HTTP receiver on 127.0.0.1 in
 * this process that discards what it gets), cases interleaved round by round. Prints figures;
 * asserts nothing about speed (it checks that every update arrived and the turn span was made).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createAcpPassthrough } from '../src/adapters/acp-passthrough.js';
import { createHost, type Host } from '../src/runtime/host.js';
import { sqliteJournal } from '../src/journal/sqlite-journal.js';
import { stdioTransport } from '../src/jsonrpc/stdio-transport.js';
import type { Transport } from '../src/jsonrpc/transport.js';
import { telemetrySettings } from '../src/telemetry/telemetry-settings.js';
import { startTelemetry, type Telemetry } from '../src/telemetry/telemetry.js';
import { check, formatNs, formatRatio, formatStats, measureInterleaved, now, since, summarize, table, withDeadline, type Plan } from './support/measure.js';

const floodAgent = fileURLToPath(new URL('./support/flood-agent.mjs', import.meta.url));
const updates = 2_000;

/** One editor on one host: prompts, each timed from the first update seen to the N-th. */
async function editorOn(host: Host, wrap: (transport: Transport) => Transport): Promise<{ prompt(): Promise<number> }> {
  const input = new PassThrough();
  let pending = '';
  let count = 0;
  let first = 0n;
  let elapsed = 0;
  const waiting = new Map<number, (result: unknown) => void>();
  const output = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      pending += chunk.toString();
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.includes('"session/update"')) {
          if (++count === 1) first = now();
          if (count === updates) elapsed = since(first);
          continue;
        }
        const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
        check(message.error === undefined, `no error answer (${line.slice(0, 200)})`);
        if (typeof message.id === 'number') waiting.get(message.id)?.(message.result);
      }
      done();
    },
  });
  host.serve(wrap(stdioTransport(input, output)));
  let nextId = 1;
  const call = (method: string, params: unknown) => {
    const id = nextId++;
    const answer = new Promise<unknown>((resolve) => waiting.set(id, resolve));
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    return withDeadline(answer, method);
  };
  await call('initialize', { protocolVersion: 1, clientCapabilities: {} });
  const { sessionId } = (await call('session/new', { cwd: tmpdir(), mcpServers: [] })) as { sessionId: string };
  return {
    async prompt() {
      count = 0;
      await call('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'flood' }], _meta: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
      check(count === updates, `all ${updates} updates arrived (${count})`);
      return elapsed / (updates - 1);
    },
  };
}

/** Runs the OpenTelemetry overhead benchmark and prints its table. */
export async function otelRelay(): Promise<void> {
  const begun = now();
  console.log('\n## OpenTelemetry overhead of warden acp');
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-otel-'));
  let received = 0;
  const receiver = createServer((request, response) => {
    request.on('data', () => {});
    request.on('end', () => {
      if (request.url === '/v1/traces') received += 1;
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const hosts: Host[] = [];
  let telemetry: Telemetry | undefined;
  try {
    const settings = telemetrySettings(false, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
    check(settings.enabled, 'telemetry settings on');
    if (!settings.enabled) return;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoint;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '200';
    telemetry = await startTelemetry(settings, 'bench');
    const agent = () => createAcpPassthrough({ name: 'flood', executable: process.execPath, args: [floodAgent, String(updates)] });
    const off = createHost({ agents: { flood: agent() }, defaultAgent: 'flood', store: join(dir, 'off.sqlite') });
    const on = createHost({ agents: { flood: agent() }, defaultAgent: 'flood', store: telemetry.timeJournal(sqliteJournal(join(dir, 'on.sqlite'))) });
    on.on(telemetry.hostListener);
    hosts.push(off, on);
    const tap = telemetry.tapEditor;
    const editors = { off: await editorOn(off, (transport) => transport), on: await editorOn(on, tap) };
    const plan: Plan = { warmup: 3, repetitions: 21, gcEachRepetition: true };
    // This process's CPU per update beside the wall time: on a loaded machine the wall time counts the waits for a core.
    const cpu: Record<'off' | 'on', number[]> = { off: [], on: [] };
    const withCpu = (name: 'off' | 'on') => async () => {
      const start = process.cpuUsage();
      const wall = await editors[name].prompt();
      const used = process.cpuUsage(start);
      cpu[name].push(((used.user + used.system) * 1000) / updates);
      return wall;
    };
    const r = await measureInterleaved(plan, { off: withCpu('off'), on: withCpu('on') });
    const cpuOff = summarize(cpu.off.slice(plan.warmup)).median;
    const cpuOn = summarize(cpu.on.slice(plan.warmup)).median;
    console.log(`\n(${updates.toLocaleString('en-US')} agent_message_chunk updates per prompt; per update, median (min–max); ${plan.repetitions} repetitions after ${plan.warmup} warm-up, interleaved)\n`);
    console.log(table(['case', 'per update (wall)', '/ without', 'CPU per update', '/ without'], [
      ['warden acp host, file journal, no telemetry', formatStats(r.off), formatRatio(1), formatNs(cpuOff), formatRatio(1)],
      ['the same with telemetry (tap, timed journal, spans, OTLP export)', formatStats(r.on), formatRatio(r.on.median / r.off.median), formatNs(cpuOn), formatRatio(cpuOn / cpuOff)],
    ]));
    console.log(`\nTelemetry adds ${formatNs(r.on.median - r.off.median)} wall, ${formatNs(cpuOn - cpuOff)} CPU of this process per update (medians; the agent's process not counted).`);
  } finally {
    for (const host of hosts) await host.stop();
    await telemetry?.shutdown();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_BSP_SCHEDULE_DELAY;
    check(received > 0, 'spans reached the receiver');
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`(OpenTelemetry benchmark: ${formatNs(since(begun))})`);
}
