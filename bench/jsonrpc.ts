/**
 * JSON-RPC benchmarks: our connection actor next to the official ACP SDK's connection
 * (`@agentclientprotocol/sdk`), both measured in the same process over in-memory pairs,
 * cases interleaved round by round. Prints tables of figures and ratios; asserts nothing
 * about speed (it only checks that each case did what it claims, and that no connection,
 * actor or handle is left behind at the end).
 *
 * 1. sequential round trips: one request at a time, answered at once by the other side
 *    with its params (a `session/update`-shaped object of about 200 bytes);
 * 2. notification throughput: N `session/update`-shaped notifications from one side to the
 *    other, against `JSON.stringify` + `JSON.parse` of the same messages in a loop;
 * 3. one more request at N pending: a request and its answer while N requests whose
 *    answers are withheld are pending on the same connection, N = 10 .. 10,000.
 *
 * The pairs. Ours: `createMemoryTransportPair()` (each message serialised to a line string
 * by the sender and parsed by the receiver, delivered in a microtask batch), and, to see
 * what bytes add, `stdioTransport` over two `PassThrough` streams (string -> Buffer ->
 * line framer -> string -> `JSON.parse`). The SDK's: `ndJsonStream` on each side of two
 * `TransformStream`s of bytes (the same wiring as its own in-process `connect(app)`, with
 * NDJSON framing added), an `agent()` app and a `client()` app.
 */
import { PassThrough } from 'node:stream';
import { agent, client, ndJsonStream, type AgentConnection, type ClientConnection } from '@agentclientprotocol/sdk';
import { createActor, type Actor } from 'xstate';
import {
  connectionLogic,
  createMemoryTransportPair,
  pendingRequests,
  respond,
  sendNotification,
  sendRequest,
  stdioTransport,
  type ConnectionEmitted,
  type Transport,
} from '../src/jsonrpc/index.js';
import { collectGarbage, formatNs, formatRatio, formatStats, measureInterleaved, now, since, table, type Plan, type Stats, check, withDeadline } from './support/measure.js';
import { chunkUpdate } from './support/chunk-update.js';

type Connection = Actor<typeof connectionLogic>;
type RequestEvent = Extract<ConnectionEmitted, { type: 'rpc.request' }>;
type NotificationEvent = Extract<ConnectionEmitted, { type: 'rpc.notification' }>;

/** Longest a single repetition may take before the benchmark gives up on it. */

/** Lets queued microtasks and I/O callbacks run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------------------------
// The payload

/** A `session/update` params object (an agent message chunk), about 200 bytes as JSON. */
function updateParams(index: number) {
  return { sessionId: 'sess_9f3c2a7e41b84d06a1c5e2f7', update: chunkUpdate(index) };
}
type UpdateParams = ReturnType<typeof updateParams>;

const payload = updateParams(0);
const payloadBytes = JSON.stringify(payload).length;

function isEcho(value: unknown): boolean {
  const params = value as UpdateParams | undefined;
  return params?.update?.messageId === payload.update.messageId && params.update.content.text === payload.update.content.text;
}

// ---------------------------------------------------------------------------------------
// The pairs, and a record of everything they created (checked for leaks at the end)

/** Everything created, held weakly: after the last close and a full collection, none may be left. */
const created: Array<{ what: string; ref: WeakRef<object> }> = [];

function track<T extends object>(what: string, value: T): T {
  created.push({ what, ref: new WeakRef(value) });
  return value;
}

interface OursPair {
  readonly client: Connection;
  readonly agent: Connection;
  /** Stops both connections and checks that nothing is left pending. */
  close(): void;
}

/** The byte streams under `stdioTransport`, destroyed when the pair closes. */
function bytePair(): { transports: [Transport, Transport]; destroy: () => void } {
  const clientToAgent = track('PassThrough', new PassThrough());
  const agentToClient = track('PassThrough', new PassThrough());
  return {
    transports: [stdioTransport(agentToClient, clientToAgent), stdioTransport(clientToAgent, agentToClient)],
    destroy: () => {
      clientToAgent.destroy();
      agentToClient.destroy();
    },
  };
}

/**
 * Two of our connections, wired in memory (`createMemoryTransportPair`) or over bytes
 * (`stdioTransport` on two `PassThrough`s). `onRequest` and `onNotification` are the agent
 * side's listeners, attached before it starts.
 */
function oursPair(
  wire: 'memory' | 'bytes',
  onRequest?: (agent: Connection, event: RequestEvent) => void,
  onNotification?: (event: NotificationEvent) => void,
): OursPair {
  const bytes = wire === 'bytes' ? bytePair() : undefined;
  const [left, right] = bytes ? bytes.transports : createMemoryTransportPair();
  const clientSide = track('connection actor', createActor(connectionLogic, { input: { transport: track('transport', left), name: 'bench-client' } }));
  const agentSide = track('connection actor', createActor(connectionLogic, { input: { transport: track('transport', right), name: 'bench-agent' } }));
  if (onRequest) agentSide.on('rpc.request', (event: RequestEvent) => onRequest(agentSide, event));
  if (onNotification) agentSide.on('rpc.notification', onNotification);
  agentSide.start();
  clientSide.start();
  return {
    client: clientSide,
    agent: agentSide,
    close() {
      clientSide.stop();
      agentSide.stop();
      bytes?.destroy();
      check(clientSide.getSnapshot().status === 'stopped' && agentSide.getSnapshot().status === 'stopped', 'both connections stopped');
      check(pendingRequests(clientSide).length === 0 && pendingRequests(agentSide).length === 0, 'nothing left pending after stop');
    },
  };
}

/** The agent side of ours: answers every request at once with its params. */
const echo = (agentSide: Connection, event: RequestEvent): void => {
  const answered = respond(agentSide, event.id, event.params);
  if (!answered.ok) throw new Error(`benchmark invariant broken: respond failed (${answered.reason})`);
};

interface SdkPair {
  readonly client: ClientConnection;
  readonly agent: AgentConnection;
  /** Closes both connections and waits until both say so. */
  close(): Promise<void>;
}

/**
 * The SDK's connection over an in-memory NDJSON byte pair: two `TransformStream`s of
 * `Uint8Array`, `ndJsonStream(output, input)` on each side, an agent app and a client app.
 * `configure` registers the agent app's handlers; `configureClient` the client app's.
 */
function sdkPair(
  configure: (app: ReturnType<typeof agent>) => void,
  configureClient: (app: ReturnType<typeof client>) => void = () => {},
): SdkPair {
  const toAgent = track('TransformStream', new TransformStream<Uint8Array, Uint8Array>());
  const toClient = track('TransformStream', new TransformStream<Uint8Array, Uint8Array>());
  const agentApp = agent({ name: 'bench-agent' });
  configure(agentApp);
  const clientApp = client({ name: 'bench-client' });
  configureClient(clientApp);
  const agentSide = track('SDK agent connection', agentApp.connect(ndJsonStream(toClient.writable, toAgent.readable)));
  const clientSide = track('SDK client connection', clientApp.connect(ndJsonStream(toAgent.writable, toClient.readable)));
  return {
    client: clientSide,
    agent: agentSide,
    async close() {
      clientSide.close();
      agentSide.close();
      await withDeadline(Promise.all([clientSide.closed, agentSide.closed]), 'SDK connections closed');
      check(clientSide.signal.aborted && agentSide.signal.aborted, 'both SDK connections closed');
    },
  };
}

/** Extension request answered by the agent app with its params (params parsed by identity, as ours are not validated). */
const echoMethod = '_bench/echo';
const passThrough = (params: unknown): unknown => params;

// ---------------------------------------------------------------------------------------
// 1. Sequential round trips

const roundTrips = 2_000;

async function oursRoundTrips(wire: 'memory' | 'bytes'): Promise<number> {
  const pair = oursPair(wire, echo);
  let last: unknown;
  const start = now();
  for (let index = 0; index < roundTrips; index++) last = await sendRequest(pair.client, echoMethod, payload);
  const elapsed = since(start);
  check(isEcho(last), `ours (${wire}) got the echo back`);
  pair.close();
  return elapsed / roundTrips;
}

async function sdkRoundTrips(): Promise<number> {
  const pair = sdkPair((app) => app.onRequest(echoMethod, passThrough, ({ params }) => params));
  let last: unknown;
  const start = now();
  for (let index = 0; index < roundTrips; index++) last = await pair.client.agent.request(echoMethod, payload);
  const elapsed = since(start);
  check(isEcho(last), 'SDK got the echo back');
  await pair.close();
  return elapsed / roundTrips;
}

/**
 * The floor of any in-memory round trip with the same JSON work: the request serialised,
 * one microtask, parsed; the answer serialised, one microtask, parsed. No framing, no
 * dispatch, no bookkeeping.
 */
async function floorRoundTrips(): Promise<number> {
  let last: unknown;
  const start = now();
  for (let index = 0; index < roundTrips; index++) {
    const requestLine = JSON.stringify({ jsonrpc: '2.0', id: index, method: echoMethod, params: payload });
    await null;
    const request = JSON.parse(requestLine) as { id: number; params: unknown };
    const responseLine = JSON.stringify({ jsonrpc: '2.0', id: request.id, result: request.params });
    await null;
    last = (JSON.parse(responseLine) as { result: unknown }).result;
  }
  const elapsed = since(start);
  check(isEcho(last), 'floor got the echo back');
  return elapsed / roundTrips;
}

/** Per-operation ns as operations per second: `123.4 k` (fastest repetition = min ns). */
function formatRate(stats: Stats, unit: 'k' | 'M'): string {
  const scale = unit === 'k' ? 1e3 : 1e6;
  const rate = (ns: number): string => `${(1e9 / ns / scale).toFixed(unit === 'k' ? 1 : 2)} ${unit}`;
  return `${rate(stats.median)} (${rate(stats.max)}–${rate(stats.min)})`;
}

/** Throughput ratio: a's ops/s over b's = b's ns/op over a's. */
function speed(a: Stats, b: Stats): string {
  return formatRatio(b.median / a.median);
}

async function benchRoundTrips(): Promise<void> {
  const plan: Plan = { warmup: 3, repetitions: 21 };
  const r = await measureInterleaved(plan, {
    ours: () => oursRoundTrips('memory'),
    oursBytes: () => oursRoundTrips('bytes'),
    sdk: sdkRoundTrips,
    floor: floorRoundTrips,
  });
  console.log(`\n### 1. Sequential round trips (${roundTrips.toLocaleString('en-US')} per repetition, params of ${payloadBytes} bytes echoed; round trips/s, median (min–max))\n`);
  console.log(table(
    ['case', 'round trips/s', 'per round trip', 'ours / this', 'ours over bytes / this'],
    [
      ['ours: memory transport pair', formatRate(r.ours, 'k'), formatNs(r.ours.median), '', ''],
      ['ours: stdioTransport over two PassThrough', formatRate(r.oursBytes, 'k'), formatNs(r.oursBytes.median), speed(r.ours, r.oursBytes), ''],
      ['SDK: ndJsonStream over two TransformStream', formatRate(r.sdk, 'k'), formatNs(r.sdk.median), speed(r.ours, r.sdk), speed(r.oursBytes, r.sdk)],
      ['floor: stringify, microtask, parse, both ways', formatRate(r.floor, 'k'), formatNs(r.floor.median), speed(r.ours, r.floor), speed(r.oursBytes, r.floor)],
    ],
  ));
  console.log(`\nOne request at a time: \`await sendRequest(client, '${echoMethod}', params)\` / \`await`);
  console.log(`connection.agent.request('${echoMethod}', params)\`; the agent side answers with the params it got`);
  console.log(`(ours: \`respond\` from its \`rpc.request\` listener; SDK: \`agent().onRequest('${echoMethod}', parse, handler)\`,`);
  console.log('parse = identity, as ours validates nothing without a method table). Both memory pairs serialise each');
  console.log('message to a line and parse it on the other side; ours passes the line as a string, the SDK\'s');
  console.log('encodes it to bytes and decodes it (as does ours over PassThrough). Ratios are throughputs.');
  console.log(`${plan.repetitions} repetitions each after ${plan.warmup} warm-up rounds, interleaved; a new pair each repetition (setup untimed).`);
}

// ---------------------------------------------------------------------------------------
// 2. Notification throughput

const notificationCount = 20_000;
const notificationMethod = 'session/update';
/** For the SDK's raw case: an extension method, which its client app does not validate. */
const rawNotificationMethod = '_bench/update';
let notificationParams: UpdateParams[] = [];

function isLastNotification(value: unknown): boolean {
  return (value as UpdateParams | undefined)?.update?.messageId === notificationParams[notificationCount - 1]?.update.messageId;
}

/** Ours: ns per notification, from the first send to the N-th delivered to the receiver's listener. */
async function oursNotifications(wire: 'memory' | 'bytes'): Promise<number> {
  let received = 0;
  let last: unknown;
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => (done = resolve));
  const pair = oursPair(wire, undefined, (event) => {
    received += 1;
    if (received === notificationCount) {
      last = event.params;
      done();
    }
  });
  const start = now();
  for (const params of notificationParams) sendNotification(pair.client, notificationMethod, params);
  await withDeadline(all, `ours (${wire}): ${notificationCount} notifications`);
  const elapsed = since(start);
  check(received === notificationCount && isLastNotification(last), `ours (${wire}) delivered all, the last last`);
  pair.close();
  return elapsed / notificationCount;
}

/**
 * The SDK: ns per notification, agent -> client (the direction of `session/update`), from
 * the first `notify` to the N-th delivered to the client's handler. `typed`: method
 * `session/update` with its typed handler (params validated by the SDK's zod schema);
 * otherwise an extension method through the `"*"` fallback (raw params, as ours).
 */
async function sdkNotifications(typed: boolean): Promise<number> {
  let received = 0;
  let last: unknown;
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => (done = resolve));
  const onNotification = ({ params }: { params: unknown }): void => {
    received += 1;
    if (received === notificationCount) {
      last = params;
      done();
    }
  };
  const pair = sdkPair(() => {}, (app) => {
    if (typed) app.onNotification(notificationMethod, onNotification);
    else app.onNotification('*', onNotification);
  });
  const method = typed ? notificationMethod : rawNotificationMethod;
  let written: Promise<void> = Promise.resolve();
  const start = now();
  for (const params of notificationParams) written = pair.agent.client.notify(method, params);
  await withDeadline(Promise.all([all, written]), `SDK (${typed ? 'typed' : 'raw'}): ${notificationCount} notifications`);
  const elapsed = since(start);
  check(received === notificationCount && isLastNotification(last), `SDK (${typed ? 'typed' : 'raw'}) delivered all, the last last`);
  await pair.close();
  return elapsed / notificationCount;
}

/** The baseline: the same messages through `JSON.stringify` and `JSON.parse`, in a loop. */
async function jsonNotifications(): Promise<number> {
  let received = 0;
  let last: unknown;
  const start = now();
  for (const params of notificationParams) {
    const line = JSON.stringify({ jsonrpc: '2.0', method: notificationMethod, params });
    last = (JSON.parse(line) as { params: unknown }).params;
    received += 1;
  }
  const elapsed = since(start);
  check(received === notificationCount && isLastNotification(last), 'baseline parsed all');
  return elapsed / notificationCount;
}

async function benchNotifications(): Promise<void> {
  notificationParams = Array.from({ length: notificationCount }, (_, index) => updateParams(index));
  const lineBytes = JSON.stringify({ jsonrpc: '2.0', method: notificationMethod, params: notificationParams[notificationCount - 1] }).length + 1;
  const plan: Plan = { warmup: 1, repetitions: 9, gcEachRepetition: true };
  const r = await measureInterleaved(plan, {
    ours: () => oursNotifications('memory'),
    oursBytes: () => oursNotifications('bytes'),
    sdk: () => sdkNotifications(false),
    sdkTyped: () => sdkNotifications(true),
    json: jsonNotifications,
  });
  notificationParams = [];
  console.log(`\n### 2. Notification throughput (${notificationCount.toLocaleString('en-US')} notifications of ${lineBytes} bytes a line; notifications/s, median (min–max))\n`);
  console.log(table(
    ['case', 'notifications/s', 'per notification', 'ours / this', 'ours over bytes / this'],
    [
      ['ours: memory transport pair', formatRate(r.ours, 'M'), formatNs(r.ours.median), '', ''],
      ['ours: stdioTransport over two PassThrough', formatRate(r.oursBytes, 'M'), formatNs(r.oursBytes.median), speed(r.ours, r.oursBytes), ''],
      ['SDK: extension method, "*" handler (raw params)', formatRate(r.sdk, 'M'), formatNs(r.sdk.median), speed(r.ours, r.sdk), speed(r.oursBytes, r.sdk)],
      ['SDK: session/update, typed handler (zod-validated)', formatRate(r.sdkTyped, 'M'), formatNs(r.sdkTyped.median), speed(r.ours, r.sdkTyped), speed(r.oursBytes, r.sdkTyped)],
      ['baseline: JSON.stringify + JSON.parse in a loop', formatRate(r.json, 'M'), formatNs(r.json.median), speed(r.ours, r.json), speed(r.oursBytes, r.json)],
    ],
  ));
  console.log('\nSent in a loop without waiting (ours: `sendNotification`; SDK: agent-side `client.notify`, not');
  console.log('awaited one by one), timed from the first send to the N-th notification reaching the');
  console.log('receiver\'s listener. The SDK\'s client app parses every `session/update` with its zod schema in');
  console.log('its session router, whatever handler is registered, and again for a typed handler; an extension');
  console.log('method through `"*"` skips both, and is the like-for-like case: ours validates nothing without a');
  console.log('method table. Ratios are throughputs. Messages built before timing.');
  console.log(`${plan.repetitions} repetitions each after ${plan.warmup} warm-up round${plan.warmup === 1 ? '' : 's'}, interleaved, garbage collected before each.`);
}

// ---------------------------------------------------------------------------------------
// 3. One more request at N pending

const heldMethod = '_bench/hold';

interface Holding {
  /** One request and its answer, `pairs` times; ns per pair. */
  pairs(count: number): Promise<number>;
  close(): Promise<void>;
}

/** Our pair with `n` requests pending (the agent withholds their answers) on the client connection. */
async function oursHolding(n: number): Promise<Holding> {
  const held: Array<string | number> = [];
  const pair = oursPair('memory', (agentSide, event) => {
    if (event.method === heldMethod) held.push(event.id);
    else echo(agentSide, event);
  });
  let settled = 0;
  for (let index = 0; index < n; index++) {
    sendRequest(pair.client, heldMethod, payload).then(
      () => {
        throw new Error('benchmark invariant broken: a withheld request was answered');
      },
      () => (settled += 1),
    );
  }
  await withDeadline((async () => {
    while (held.length < n) await turn();
  })(), `ours: ${n} requests held`);
  // Counts that change per message are read live (pendingRequests / connectionStats).
  check(pendingRequests(pair.client).length === n, `ours holds ${n} pending`);
  return {
    async pairs(count) {
      let last: unknown;
      const start = now();
      for (let index = 0; index < count; index++) last = await sendRequest(pair.client, echoMethod, payload);
      const elapsed = since(start);
      check(isEcho(last) && pendingRequests(pair.client).length === n, 'ours: echo answered, the held ones still pending');
      return elapsed / count;
    },
    async close() {
      pair.close();
      await turn();
      check(settled === n, `ours: all ${n} held requests settled (peer lost) on stop (${settled})`);
    },
  };
}

/** The SDK's pair with `n` requests pending: the agent's handler returns a promise it never settles. */
async function sdkHolding(n: number): Promise<Holding> {
  let held = 0;
  const pair = sdkPair((app) => {
    app.onRequest(echoMethod, passThrough, ({ params }) => params);
    app.onRequest(heldMethod, passThrough, ({ signal }) => {
      held += 1;
      // Settles only when the connection closes (the request's signal aborts).
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    });
  });
  let settled = 0;
  for (let index = 0; index < n; index++) {
    pair.client.agent.request(heldMethod, payload).then(
      () => {
        throw new Error('benchmark invariant broken: a withheld request was answered');
      },
      () => (settled += 1),
    );
  }
  await withDeadline((async () => {
    while (held < n) await turn();
  })(), `SDK: ${n} requests held`);
  return {
    async pairs(count) {
      let last: unknown;
      const start = now();
      for (let index = 0; index < count; index++) last = await pair.client.agent.request(echoMethod, payload);
      const elapsed = since(start);
      check(isEcho(last) && settled === 0, 'SDK: echo answered, the held ones still pending');
      return elapsed / count;
    },
    async close() {
      await pair.close();
      await turn();
      check(settled === n, `SDK: all ${n} held requests settled (closed) on close (${settled})`);
    },
  };
}

async function benchPending(): Promise<void> {
  const sizes = [10, 100, 1_000, 10_000];
  const pairsPerRepetition = 300;
  const plan: Plan = { warmup: 5, repetitions: 21 };
  // Every size's pairs exist at once and are measured in the same rounds, so that a change in
  // the machine's load (it is shared) touches all sizes alike; the heap holds all of them
  // (11,110 requests pending per library) during every measurement.
  const holdings: Array<{ n: number; ours: Holding; sdk: Holding }> = [];
  for (const n of sizes) holdings.push({ n, ours: await oursHolding(n), sdk: await sdkHolding(n) });
  collectGarbage();
  const cases: Record<string, () => Promise<number>> = {};
  for (const { n, ours, sdk } of holdings) {
    cases[`ours${n}`] = () => ours.pairs(pairsPerRepetition);
    cases[`sdk${n}`] = () => sdk.pairs(pairsPerRepetition);
  }
  const r = await measureInterleaved(plan, cases);
  for (const { ours, sdk } of holdings) {
    await ours.close();
    await sdk.close();
  }
  const at = (library: 'ours' | 'sdk', n: number): Stats => r[`${library}${n}`] as Stats;
  const rows = sizes.map((n) => [n.toLocaleString('en-US'), formatStats(at('ours', n)), formatStats(at('sdk', n)), formatRatio(at('ours', n).median / at('sdk', n).median)]);
  const smallest = sizes[0] as number;
  const largest = sizes[sizes.length - 1] as number;
  rows.push([
    `growth ${smallest.toLocaleString('en-US')} -> ${largest.toLocaleString('en-US')}`,
    formatRatio(at('ours', largest).median / at('ours', smallest).median),
    formatRatio(at('sdk', largest).median / at('sdk', smallest).median),
    '',
  ]);
  console.log('\n### 3. One more request at N pending (per request + answer; median (min–max))\n');
  console.log(table(['N pending', 'ours: memory transport pair', 'SDK: ndJsonStream over TransformStream', 'ours / SDK (time)'], rows));
  console.log(`\nN requests sent first whose answers the agent side withholds (ours: it never calls \`respond\`;`);
  console.log('SDK: its handler returns a promise that settles only on close), then batches of');
  console.log(`${pairsPerRepetition} sequential echo requests on the same connection. All ${sizes.length * 2} connection pairs exist at once and are`);
  console.log(`measured in the same rounds (${plan.repetitions} batches each after ${plan.warmup} warm-up rounds); the held requests settle on close`);
  console.log('(ours: peer lost; SDK: connection closed). Growth = median at the largest N / median at the smallest.');
}

// ---------------------------------------------------------------------------------------
// Leaks

/** Active handles and requests by kind (`process.getActiveResourcesInfo()`), e.g. `{ Timeout: 1 }`. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

function grownResources(before: Map<string, number>, after: Map<string, number>): string[] {
  return [...after].filter(([kind, count]) => count > (before.get(kind) ?? 0)).map(([kind, count]) => `${kind} +${count - (before.get(kind) ?? 0)}`);
}

async function checkLeaks(resourcesBefore: Map<string, number>, heapBefore: number): Promise<void> {
  // WeakRef targets stay alive until the current job ends: let it end, then collect.
  for (let round = 0; round < 3; round++) {
    await turn();
    collectGarbage();
  }
  const alive = created.filter((entry) => entry.ref.deref() !== undefined);
  const byKind = new Map<string, number>();
  for (const entry of alive) byKind.set(entry.what, (byKind.get(entry.what) ?? 0) + 1);
  const grown = grownResources(resourcesBefore, activeResources());
  const heapAfter = process.memoryUsage().heapUsed;
  console.log(`\nLeaks: ${created.length} connections, transports and streams created; alive after closing them all and a`);
  console.log(`full collection: ${alive.length}${alive.length > 0 ? ` (${[...byKind].map(([what, count]) => `${what}: ${count}`).join(', ')})` : ''}.`);
  console.log(`Active handles grown: ${grown.length === 0 ? 'none' : grown.join(', ')}. Heap used: ${(heapBefore / 1e6).toFixed(1)} MB before, ${(heapAfter / 1e6).toFixed(1)} MB after.`);
  if (typeof globalThis.gc === 'function') {
    check(alive.length === 0, `nothing created is still reachable (alive: ${alive.length})`);
  }
  check(grown.length === 0, `no handle left (${grown.join(', ')})`);
}

/** Runs the JSON-RPC benchmarks and prints their tables. */
export async function jsonRpc(): Promise<void> {
  const started = now();
  console.log('\n## JSON-RPC');
  collectGarbage();
  const resourcesBefore = activeResources();
  const heapBefore = process.memoryUsage().heapUsed;
  for (const section of [benchRoundTrips, benchNotifications, benchPending]) {
    collectGarbage();
    const sectionStarted = now();
    await section();
    console.log(`(${formatNs(since(sectionStarted))})`);
  }
  await checkLeaks(resourcesBefore, heapBefore);
  console.log(`\n(JSON-RPC benchmarks: ${formatNs(since(started))})`);
}
