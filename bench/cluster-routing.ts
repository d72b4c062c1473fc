/**
 * A routed call against a local one (issue 17, goal ≤ 1.3x): two `warden serve --agent demo`
 * hosts built from src/ on one PostgreSQL (the test support's `startPostgres`), sharing one
 * token file; host A advertises itself and owns two sessions. One client on A prompts the
 * first session directly; another, connected to host B, resumed the second one there and is
 * forwarded to A (src/cluster/forwarding.ts). Rounds interleaved, the processes started once.
 *
 * - A turn of 1 000 streamed words (`DEMO_WORD_DELAY_MS=0`): from the prompt sent to its answer
 *   read, per update. The demo agent paces its words with a timer even at 0 ms, so this is the
 *   relay as a user sees it.
 * - A short turn (a one-word prompt, about 15 words back): the round trip of a prompt.
 * - The CPU (user + system, /proc) the wardens spent per update of the long turn: A and B
 *   together for the routed session, A alone for the direct one: what relaying costs beyond the
 *   turn itself.
 *
 * Without PostgreSQL binaries it says so and skips.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresAvailable, startPostgres } from '../spec/support/postgres.js';
import { buildWarden } from './support/build-warden.js';
import { check, formatRatio, measureInterleaved, summarize, table, type Stats } from './support/measure.js';
import { freePort } from '../spec/support/free-port.js';
import { canReadCpu, cpuNs } from './support/process-cpu.js';
import { killGroup, serveClient, startServeDaemon, type ServeClient } from './support/warden-serve.js';

const plan = { warmup: 1, repetitions: 9 };
const wordCount = 1_000;
const words = Array.from({ length: wordCount }, (_, n) => `w${n}`).join(' ');

/** A client that counts the `session/update` frames of its session. */
async function counted(url: string, token: string): Promise<{ client: ServeClient; updates: () => number }> {
  const client = await serveClient(url, token);
  let updates = 0;
  client.listeners.add((frame) => {
    if (frame.method === 'session/update') updates++;
  });
  check((await client.request('initialize', { protocolVersion: 1, clientCapabilities: {} })).result !== undefined, 'initialize answered');
  return { client, updates: () => updates };
}

export async function clusterRouting(): Promise<void> {
  console.log('\n## Routing: a prompt through a host that does not own the session, against the same on its owner (PostgreSQL, two hosts)');
  const binaries = postgresAvailable();
  if (!binaries.available) return void console.log(`skipped: ${binaries.why}`);
  const scratch = mkdtempSync(join(tmpdir(), 'warden-bench-routing-'));
  const server = await startPostgres();
  const started: Array<Awaited<ReturnType<typeof startServeDaemon>>['child']> = [];
  try {
    const main = buildWarden(join(scratch, 'build'));
    const url = await server.createDatabase('bench_routing');
    const env = { ...process.env, XDG_STATE_HOME: join(scratch, 'state'), HOME: scratch };
    const tokenFile = join(scratch, 'token');
    const port = await freePort();
    const common = ['--store', url, '--token-file', tokenFile, '--env', 'DEMO_WORD_DELAY_MS=0'];
    const owner = await startServeDaemon(main, env, [...common, '--advertise', `ws://127.0.0.1:${port}/acp`], `127.0.0.1:${port}`);
    started.push(owner.child);
    const other = await startServeDaemon(main, env, common);
    started.push(other.child);
    const token = readFileSync(tokenFile, 'utf8').trim();

    const direct = await counted(owner.url, token);
    const local = (await direct.client.request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
    // The routed session: made on A by a client that leaves, then resumed through B.
    const maker = await counted(owner.url, token);
    const remote = (await maker.client.request('session/new', { cwd: scratch, mcpServers: [] })).result?.sessionId as string;
    maker.client.socket.close();
    for (let attempt = 0; ; attempt++) {
      const listed = (await direct.client.request('_acp-warden/sessions', {})).result as { sessions: Array<{ sessionId: string; clients: unknown[] }> };
      if (listed.sessions.find((session) => session.sessionId === remote)?.clients.length === 0) break;
      check(attempt < 200, 'the maker detached on A');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const routed = await counted(other.url, token);
    const resumed = await routed.client.request('session/resume', { sessionId: remote, cwd: scratch, mcpServers: [] });
    check(resumed.error === undefined, `resumed through B (${JSON.stringify(resumed.error)})`);

    const pids = { owner: owner.child.pid as number, other: other.child.pid as number };
    const cpu = { direct: [] as number[], routed: [] as number[] };
    const turn = (of: { client: ServeClient; updates: () => number }, sessionId: string, text: string, cpuOf?: { into: number[]; pids: readonly number[] }) => async (): Promise<number> => {
      const before = of.updates();
      const cpuBefore = cpuOf ? cpuOf.pids.reduce((sum, pid) => sum + cpuNs(pid), 0) : 0;
      const begun = process.hrtime.bigint();
      const answer = await of.client.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
      const ns = Number(process.hrtime.bigint() - begun);
      check(answer.result?.stopReason === 'end_turn', `the turn ended (${JSON.stringify(answer.result ?? answer.error)})`);
      const updates = of.updates() - before;
      if (cpuOf) cpuOf.into.push((cpuOf.pids.reduce((sum, pid) => sum + cpuNs(pid), 0) - cpuBefore) / updates);
      return text === words ? ns / updates : ns;
    };
    const stats = await measureInterleaved(plan, {
      directLong: turn(direct, local, words, { into: cpu.direct, pids: [pids.owner] }),
      routedLong: turn(routed, remote, words, { into: cpu.routed, pids: [pids.owner, pids.other] }),
      directShort: turn(direct, local, 'hi'),
      routedShort: turn(routed, remote, 'hi'),
    });
    const us = (value: Stats, of: 'median' | 'min' | 'max') => `${(value[of] / 1e3).toFixed(1)} µs`;
    const ms = (value: Stats, of: 'median' | 'min' | 'max') => `${(value[of] / 1e6).toFixed(2)} ms`;
    const range = (value: Stats, unit: typeof us) => `${unit(value, 'median')} (${unit(value, 'min')}–${unit(value, 'max')})`;
    console.log(`${plan.repetitions} rounds after ${plan.warmup} warm-up, interleaved; median (min–max); goal: routed ≤ 1.3× direct`);
    console.log(table(['case', 'direct (client on the owner)', 'routed (client on another host)', 'routed / direct'], [
      [`a turn of ${wordCount} words, per update`, range(stats.directLong, us), range(stats.routedLong, us), formatRatio(stats.routedLong.median / stats.directLong.median)],
      ['a short turn (prompt "hi"), round trip', range(stats.directShort, ms), range(stats.routedShort, ms), formatRatio(stats.routedShort.median / stats.directShort.median)],
    ]));
    if (!canReadCpu()) return void console.log('(no /proc here: the CPU per update is not measured)');
    const [directCpu, routedCpu] = [summarize(cpu.direct.slice(plan.warmup)), summarize(cpu.routed.slice(plan.warmup))];
    console.log(`\nCPU of the wardens per update of the ${wordCount}-word turn (user + system, /proc; the demo agent's process not counted)`);
    console.log(table(['case', 'CPU per update', '/ direct'], [
      ['direct: the owner', range(directCpu, us), formatRatio(1)],
      ['routed: the owner and the forwarding host', range(routedCpu, us), formatRatio(routedCpu.median / directCpu.median)],
    ]));
    for (const one of [direct, routed]) one.client.socket.close();
  } finally {
    for (const child of started) killGroup(child);
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
