/**
 * Hand-over time (issue 17, a rolling restart): two cluster members as journals on one real
 * PostgreSQL (the test support's `startPostgres`), lease 2 s, both renewing; B runs the takeover
 * loop (src/cluster/takeover.ts) and claims what it is handed. Per round A opens, creates a
 * session, waits a random part of a lease (so the rounds fall at every phase of B's looks),
 * then does what a SIGTERMed `warden serve` does: `startHandOver()`, then `handOver()`, timed
 * from that call to its answer (no session left on A; it polls every 100 ms, so 100 ms is the
 * floor). Without PostgreSQL binaries it says so and skips. Figures are reported, never asserted.
 */
import { loadavg } from 'node:os';
import { startTakeover } from '../src/cluster/takeover.js';
import { openPostgresJournal } from '../src/journal/postgres-journal.js';
import { postgresAvailable, startPostgres } from '../spec/support/postgres.js';
import { check, formatNs, table } from './support/measure.js';

const lease = 2_000;
const rounds = 12;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The n-th of sorted samples at quantile q (nearest rank). */
const quantile = (sorted: readonly number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;

export async function clusterHandover(): Promise<void> {
  console.log('\n## Cluster hand-over: handOver() (lease ended, draining) -> no session left on the host (two journals, one takeover loop, one PostgreSQL)');
  const binaries = postgresAvailable();
  if (!binaries.available) {
    console.log(`skipped: ${binaries.why}`);
    return;
  }
  const server = await startPostgres();
  const opened: Array<{ close(): Promise<void> }> = [];
  try {
    const url = await server.createDatabase('handover_bench');
    // The restart guard: nothing is taken before the database has been up for a lease.
    await sleep(lease + 100);
    const taker = await openPostgresJournal(url, { lease, advertise: 'ws://127.0.0.1:7002/acp' });
    opened.push(taker);
    const takeover = startTakeover(url, { hostId: taker.hostId, lease, take: (orphan) => void taker.claim(orphan.sessionId).catch(() => undefined) });
    opened.push(takeover);
    // The loop's own guard: it takes nothing in its first lease.
    await sleep(lease + 500);
    const loadBefore = loadavg()[0] as number;
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const owner = await openPostgresJournal(url, { lease, advertise: 'ws://127.0.0.1:7001/acp' });
      await owner.createSession({ sessionId: `s${round}`, agent: 'demo', cwd: '/' });
      await sleep(Math.random() * lease);
      await owner.startHandOver();
      const started = performance.now();
      const left = await owner.handOver(3 * lease);
      times.push((performance.now() - started) * 1e6);
      check(left === 0, `round ${round}: every session handed over (${left} left)`);
      await owner.close();
    }
    const loadAfter = loadavg()[0] as number;
    const sorted = [...times].sort((x, y) => x - y);
    console.log(`every hand-over (ms): ${times.map((ns) => (ns / 1e6).toFixed(0)).join(' ')}`);
    console.log(table(['lease', 'hand-overs', 'p50', 'p90', 'max', 'min', 'load (1 min)'], [[`${lease / 1000} s`, String(rounds), formatNs(quantile(sorted, 0.5)), formatNs(quantile(sorted, 0.9)), formatNs(sorted.at(-1) as number), formatNs(sorted[0] as number), `${loadBefore.toFixed(2)}–${loadAfter.toFixed(2)}`]]));
  } finally {
    for (const one of opened.reverse()) await one.close().catch(() => undefined);
    await server.stop();
  }
}
