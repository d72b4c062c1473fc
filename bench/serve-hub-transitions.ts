/**
 * What one hub transition costs with many clients attached (issue 16: the hub's snapshot, the
 * live view's picture of its clients, was walked over connections × sessions at every
 * transition): an in-process `host.hub()` with the demo agent, 100 clients each attached to the
 * same 20 sessions, and a probe connection timing `initialize` round trips through the hub
 * (one hub transition each, answered from memory). Baseline, same run: the same round trip on a
 * hub with only the probe attached. Each case once with no inspection observer (the daemon's
 * usual state) and once with one that reads the clients of every hub snapshot (a live view
 * open). Clients over in-memory transports.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, type InspectionEvent } from 'xstate';
import { demoAgent } from '../src/acp/demo-agent.js';
import { createHost, type ServeHub } from '../src/runtime/host.js';
import { connectionLogic, createMemoryTransportPair, sendRequest } from '../src/jsonrpc/index.js';
import { formatRatio, formatStats, measureInterleaved, table } from './support/measure.js';

const clientCount = 100;
const sessionCount = 20;
const plan = { warmup: 2, repetitions: 15 };
/** Round trips timed per repetition. */
const roundTrips = 200;
const initialize = { protocolVersion: 1, clientCapabilities: {} };

/** A client of the hub over memory: its request function and its close. */
async function connect(hub: ServeHub, peer: string): Promise<{ request(method: string, params: unknown): Promise<unknown>; close(): void }> {
  const [clientSide, hubSide] = createMemoryTransportPair();
  hub.attach(hubSide, { peer });
  const connection = createActor(connectionLogic, { input: { transport: clientSide } }).start();
  const request = (method: string, params: unknown) => sendRequest(connection, method, params);
  await request('initialize', initialize);
  return { request, close: () => { clientSide.close(); connection.stop(); } };
}

/** A hub with `clients` clients each attached to `sessions` sessions, and a probe; `observe`: an inspection observer reading the hub's clients. */
async function hubWith(dir: string, clients: number, sessions: number, observe: boolean) {
  const readsClients = { next: (event: InspectionEvent) => void (event.type === '@xstate.snapshot' && (event.snapshot as { context?: { clients?: unknown[] } }).context?.clients?.length) };
  const host = createHost({ store: join(dir, `hub-${clients}-${observe}.sqlite`), agents: { demo: demoAgent({ wordDelayMs: 0 }) }, ...(observe ? { inspect: readsClients } : {}) });
  const hub = host.hub();
  const opener = await connect(hub, 'opener');
  const ids: string[] = [];
  for (let index = 0; index < sessions; index++) ids.push(((await opener.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string }).sessionId);
  const attached = [opener];
  for (let index = 0; index < clients; index++) {
    const client = await connect(hub, `client ${index}`);
    for (const sessionId of ids) await client.request('session/resume', { sessionId, cwd: dir });
    attached.push(client);
  }
  const probe = await connect(hub, 'probe');
  const repetition = async (): Promise<number> => {
    const started = process.hrtime.bigint();
    for (let index = 0; index < roundTrips; index++) await probe.request('initialize', initialize);
    return Number(process.hrtime.bigint() - started) / roundTrips;
  };
  const stop = async () => {
    for (const client of [...attached, probe]) client.close();
    await host.stop();
  };
  return { repetition, stop };
}

export async function serveHubTransitions(): Promise<void> {
  console.log(`\n## One hub transition with ${clientCount} clients x ${sessionCount} sessions attached: initialize round trips through host.hub(), against a hub with only the probe`);
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-hub-'));
  try {
    for (const observe of [false, true]) {
      const busy = await hubWith(dir, clientCount, sessionCount, observe);
      const empty = await hubWith(dir, 0, 0, observe);
      try {
        const stats = await measureInterleaved(plan, { busy: busy.repetition, empty: empty.repetition });
        console.log(`${observe ? 'an inspection observer reading the clients of every hub snapshot (a live view open)' : 'no inspection observer (the daemon without a live view)'}; ${plan.repetitions} × ${roundTrips} round trips after ${plan.warmup} warm-up, interleaved; per round trip`);
        console.log(table(['hub', 'per round trip', '/ probe alone'], [
          [`${clientCount} clients × ${sessionCount} sessions attached`, formatStats(stats.busy), formatRatio(stats.busy.median / stats.empty.median)],
          ['only the probe', formatStats(stats.empty), formatRatio(1)],
        ]));
      } finally {
        await busy.stop();
        await empty.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
