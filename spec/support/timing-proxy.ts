/**
 * A TCP proxy that puts real network timing between warden and its PostgreSQL (issue 28):
 * each chunk, in each direction, is held for a random latency (seeded: the same seed draws
 * the same delays in the order chunks come); a connection's bytes keep their order in each
 * direction (a chunk never overtakes the one before it). A test can also stall all traffic
 * for a while (connections stay open; what comes meanwhile waits, then goes in order), and cut
 * connections (all of them, or one drawn at random), as a network would.
 *
 * Unlike fault-proxy.ts (which loses one chosen answer), this one changes when things arrive,
 * which is what the races of an asynchronous journal depend on: a commit landing while a page
 * read is in flight.
 */
import { connect, createServer, type Socket } from 'node:net';
import { seededRandom } from '../../src/journal/seeded-random.js';

/** A latency range in ms, drawn uniformly per chunk. */
export type Latency = readonly [min: number, max: number];

/** Options of {@link startTimingProxy}. */
export interface TimingProxyOptions {
  /** Seeds the delays (and which connection {@link TimingProxy.cutOne} cuts). */
  readonly seed: number;
  /** Towards the server (default no delay). */
  readonly toServer?: Latency;
  /** Towards the client (default no delay). */
  readonly toClient?: Latency;
}

/** What the proxy did, for a test's report. */
export interface TimingProxyStats {
  connections: number;
  chunks: number;
  /** The sum of the latencies drawn, in ms. */
  delayedMs: number;
  stalls: number;
  cuts: number;
}

/** A proxy started by {@link startTimingProxy}. */
export interface TimingProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  readonly stats: Readonly<TimingProxyStats>;
  /** Changes the latencies from the next chunk on. */
  setLatency(toServer: Latency, toClient: Latency): void;
  /** Holds all traffic of every connection for `ms`; resolves once it flows again. */
  stall(ms: number): Promise<void>;
  /** Cuts every open connection now (new ones pass). */
  cutAll(): void;
  /** Cuts one open connection drawn at random; false when there was none. */
  cutOne(): boolean;
  /** Closes the proxy and every connection through it. */
  close(): Promise<void>;
}

/** One direction of one connection: chunks waiting for their time, in order. */
interface Lane {
  readonly to: Socket;
  readonly queue: Array<{ readonly chunk: Buffer; readonly at: number }>;
  timer: NodeJS.Timeout | undefined;
}

/** Starts a proxy from a free port on 127.0.0.1 to `target` (a port on 127.0.0.1). */
export async function startTimingProxy(target: number, options: TimingProxyOptions): Promise<TimingProxy> {
  const random = seededRandom(options.seed);
  let toServer: Latency = options.toServer ?? [0, 0];
  let toClient: Latency = options.toClient ?? [0, 0];
  const stats: TimingProxyStats = { connections: 0, chunks: 0, delayedMs: 0, stalls: 0, cuts: 0 };
  const pairs = new Set<{ readonly cut: () => void }>();
  const lanes = new Set<Lane>();
  let stalledUntil = 0;

  const draw = ([min, max]: Latency) => min + random() * (max - min);
  const pump = (lane: Lane) => {
    lane.timer = undefined;
    const now = Date.now();
    while (lane.queue.length > 0 && now >= stalledUntil && (lane.queue[0] as { at: number }).at <= now) {
      const { chunk } = lane.queue.shift() as { chunk: Buffer };
      if (!lane.to.destroyed) lane.to.write(chunk);
    }
    if (lane.queue.length > 0) lane.timer = setTimeout(() => pump(lane), Math.max(stalledUntil, (lane.queue[0] as { at: number }).at) - now);
  };
  const push = (lane: Lane, chunk: Buffer, latency: Latency) => {
    const delay = draw(latency);
    stats.chunks++;
    stats.delayedMs += delay;
    // Never before the chunk ahead of it: the byte stream keeps its order.
    const at = Math.max(Date.now() + delay, lane.queue.at(-1)?.at ?? 0);
    lane.queue.push({ chunk, at });
    if (!lane.timer) pump(lane);
  };

  const server = createServer((client) => {
    stats.connections++;
    const upstream = connect(target, '127.0.0.1');
    const up: Lane = { to: upstream, queue: [], timer: undefined };
    const down: Lane = { to: client, queue: [], timer: undefined };
    lanes.add(up).add(down);
    const pair = {
      cut: () => {
        for (const lane of [up, down]) {
          clearTimeout(lane.timer);
          lane.queue.length = 0;
          lanes.delete(lane);
        }
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      },
    };
    pairs.add(pair);
    client.on('error', pair.cut).on('close', pair.cut);
    upstream.on('error', pair.cut).on('close', pair.cut);
    client.on('data', (chunk: Buffer) => push(up, chunk, toServer));
    upstream.on('data', (chunk: Buffer) => push(down, chunk, toClient));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    stats,
    setLatency(server, client) {
      toServer = server;
      toClient = client;
    },
    async stall(ms) {
      stats.stalls++;
      stalledUntil = Math.max(stalledUntil, Date.now() + ms);
      await new Promise((resolve) => setTimeout(resolve, ms));
      // What waited goes now, in order (a lane with no timer running has nothing scheduled).
      for (const lane of lanes) {
        clearTimeout(lane.timer);
        pump(lane);
      }
    },
    cutAll() {
      stats.cuts += pairs.size;
      for (const pair of [...pairs]) pair.cut();
    },
    cutOne() {
      const open = [...pairs];
      const victim = open[Math.floor(random() * open.length)];
      if (!victim) return false;
      stats.cuts++;
      victim.cut();
      return true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of [...pairs]) pair.cut();
        server.close(() => resolve());
      }),
  };
}
