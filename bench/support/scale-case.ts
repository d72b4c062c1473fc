/**
 * One case of bench/scale.ts, run alone in a fresh process so that cases do not share a
 * heap: `node --expose-gc --import tsx bench/support/scale-case.ts CASE N`. Prints one JSON
 * line (`ScaleResult`) on stdout; everything else goes to stderr.
 *
 * - `runtime 0`: Node with tsx and warden's modules loaded, nothing started (the floor);
 * - `demo N`: `createHost` with the in-process demo agent as its default agent and a file
 *   journal, one session opened to warm up, then N more opened at once (`host.newSession`),
 *   left idle;
 * - `minimal N`: the same with a native agent that keeps nothing per session (warden alone);
 * - `ports N`: N ports of `spec/support/fake-cli.mjs --banner` under one one_for_one
 *   supervisor, started at once, each waited for until its first line;
 * - `bare N`: the same N processes by bare `spawn()` (the ports' environment, detached as a
 *   port's process is: its own process group and session, hence, on Linux, its own
 *   autogroup share of the CPU), no port.
 *
 * RSS is read after three full collections. Before and after: the same process with the
 * same modules loaded (and, for `native`, one session open), so that the difference is
 * what the N sessions or ports hold.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, enqueueActions, setup, type AnyActorRef } from 'xstate';
import { demoAgent } from '../../src/acp/demo-agent.js';
import type { AgentHandlerEvent, AgentHandlerOutput, AgentRequestEvent, NativeAgent } from '../../src/protocol/native-agent.js';
import { createHost } from '../../src/runtime/host.js';
import { buildEnvironment, portLogic } from '../../src/port/index.js';
import { createSupervisor, shutdown, whichChildren } from '../../src/supervision/index.js';

/** What one case measured. Bytes and nanoseconds. */
export interface ScaleResult {
  readonly kind: string;
  readonly count: number;
  /** RSS and heap used after collection, before the N were started (modules loaded, warmed up). */
  readonly rssBefore: number;
  readonly heapBefore: number;
  /** The same with the N running, idle. */
  readonly rssAfter: number;
  readonly heapAfter: number;
  /** Off-heap memory V8 knows of (`external` + `arrayBuffers`) after. */
  readonly externalAfter: number;
  /** From the first start call to the last of the N ready. */
  readonly startNs: number;
  /** Ports: RSS and PSS (proportional: shared pages split between the processes) of the children, summed. */
  readonly childrenRss?: number;
  readonly childrenPss?: number;
  /** The highest RSS of the process during the case (`VmHWM`). */
  readonly peakRss?: number;
}

const [kind = 'runtime', countText = '0'] = process.argv.slice(2);
const count = Number(countText);

function collect(): void {
  for (let round = 0; round < 3; round++) globalThis.gc?.();
}

/** Lets pending callbacks run, so that what is collected is really garbage. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 50));

async function memory(): Promise<{ rss: number; heap: number; external: number }> {
  await settle();
  collect();
  const usage = process.memoryUsage();
  return { rss: usage.rss, heap: usage.heapUsed, external: usage.external + usage.arrayBuffers };
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`benchmark invariant broken: ${what}`);
}

/** A `/proc/PID/…` figure in bytes: `VmRSS` of status, `Pss` of smaps_rollup. */
function procKb(pid: number, file: 'status' | 'smaps_rollup', field: string): number {
  const text = readFileSync(`/proc/${pid}/${file}`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'mu').exec(text);
  return match ? Number(match[1]) * 1024 : 0;
}

async function runtime(): Promise<ScaleResult> {
  const before = await memory();
  return { kind, count, rssBefore: before.rss, heapBefore: before.heap, rssAfter: before.rss, heapAfter: before.heap, externalAfter: before.external, startNs: 0 };
}

/**
 * The least a native agent can be: `session/new` answered with a fresh id, nothing kept per
 * session. What a host holds beyond this is warden's; the demo agent adds its own records.
 */
const minimalAgentMachine = setup({
  types: {} as { context: { next: number }; events: AgentHandlerEvent; emitted: AgentHandlerOutput },
}).createMachine({
  context: { next: 1 },
  on: {
    'session.new': {
      actions: enqueueActions(({ context, event, enqueue }) => {
        enqueue.emit({ type: 'acp.respond', requestId: (event as AgentRequestEvent).requestId, result: { sessionId: `minimal-${context.next}` } });
        enqueue.assign({ next: context.next + 1 });
      }),
    },
  },
});

function minimalAgent(): NativeAgent {
  return { logic: minimalAgentMachine, agentInfo: { name: 'minimal', version: '0.0.0' }, capabilities: {} };
}

async function native(): Promise<ScaleResult> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-scale-'));
  const agent = kind === 'minimal' ? minimalAgent() : demoAgent();
  const host = createHost({ agents: { native: agent }, defaultAgent: 'native', store: join(dir, 'journal.sqlite') });
  try {
    await host.newSession({ cwd: dir });
    const before = await memory();
    const start = process.hrtime.bigint();
    const sessions = await Promise.all(Array.from({ length: count }, () => host.newSession({ cwd: dir })));
    const startNs = Number(process.hrtime.bigint() - start);
    const after = await memory();
    check(new Set(sessions.map((session) => session.sessionId)).size === count, `${count} distinct sessions opened`);
    // One tree for all (a session's own state() looks its chart up among all of them).
    const charts = host.tree().children.filter((node) => node.type === 'session');
    const idle = charts.filter((node) => node.status === 'ready').length;
    check(charts.length === count + 1 && idle === count + 1, `the host holds ${count + 1} session charts, all ready (${charts.length}, ${idle} ready)`);
    return { kind, count, rssBefore: before.rss, heapBefore: before.heap, rssAfter: after.rss, heapAfter: after.heap, externalAfter: after.external, startNs, peakRss: procKb(process.pid, 'status', 'VmHWM') };
  } finally {
    try {
      await host.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

async function ports(): Promise<ScaleResult> {
  const fakeCli = fileURLToPath(new URL('../../spec/support/fake-cli.mjs', import.meta.url));
  const before = await memory();
  const firstLines = new Map<string, Promise<void>>();
  const logic = createSupervisor({
    name: 'bench-scale',
    strategy: 'one_for_one',
    children: Array.from({ length: count }, (_, index) => ({
      id: `port-${index}`,
      start: { logic: portLogic, input: { command: process.execPath, args: [fakeCli, '--banner', `{"ready":${index}}`] } },
    })),
  });
  const supervisor: AnyActorRef = createActor(logic);
  supervisor.on('child.started', (event: { childId: string }) => {
    const port = whichChildren(supervisor).find((row) => row.id === event.childId)?.ref as AnyActorRef;
    firstLines.set(event.childId, new Promise<void>((resolve) => {
      const subscription = port.on('port.message', () => {
        subscription.unsubscribe();
        resolve();
      });
    }));
  });
  const start = process.hrtime.bigint();
  supervisor.start();
  await Promise.all(firstLines.values());
  const startNs = Number(process.hrtime.bigint() - start);
  const pids = whichChildren(supervisor).map((row) => (row.ref?.getSnapshot() as { context?: { pid?: number } } | undefined)?.context?.pid as number);
  check(firstLines.size === count && pids.every((pid) => typeof pid === 'number'), `${count} ports running, each printed its banner`);
  try {
    const after = await memory();
    let childrenRss = 0;
    let childrenPss = 0;
    for (const pid of pids) {
      childrenRss += procKb(pid, 'status', 'VmRSS');
      childrenPss += procKb(pid, 'smaps_rollup', 'Pss');
    }
    return { kind, count, rssBefore: before.rss, heapBefore: before.heap, rssAfter: after.rss, heapAfter: after.heap, externalAfter: after.external, startNs, childrenRss, childrenPss, peakRss: procKb(process.pid, 'status', 'VmHWM') };
  } finally {
    await shutdown(supervisor);
    const left = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    check(left.length === 0, `no port process left after shutdown (${left.join(', ')})`);
  }
}

/** The baseline of `ports`: the same N processes by bare `spawn()` (same environment, detached), no port, no supervisor. */
async function bare(): Promise<ScaleResult> {
  const fakeCli = fileURLToPath(new URL('../../spec/support/fake-cli.mjs', import.meta.url));
  const env = buildEnvironment();
  const before = await memory();
  const start = process.hrtime.bigint();
  const children = Array.from({ length: count }, (_, index) => spawn(process.execPath, [fakeCli, '--banner', `{"ready":${index}}`], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true }));
  await Promise.all(children.map((child) => new Promise<void>((resolve) => {
    child.stderr.resume();
    child.stdout.once('data', () => {
      child.stdout.resume();
      resolve();
    });
  })));
  const startNs = Number(process.hrtime.bigint() - start);
  const pids = children.map((child) => child.pid as number);
  try {
    const after = await memory();
    let childrenRss = 0;
    let childrenPss = 0;
    for (const pid of pids) {
      childrenRss += procKb(pid, 'status', 'VmRSS');
      childrenPss += procKb(pid, 'smaps_rollup', 'Pss');
    }
    return { kind, count, rssBefore: before.rss, heapBefore: before.heap, rssAfter: after.rss, heapAfter: after.heap, externalAfter: after.external, startNs, childrenRss, childrenPss, peakRss: procKb(process.pid, 'status', 'VmHWM') };
  } finally {
    await Promise.all(children.map((child) => new Promise<void>((resolve) => {
      child.once('close', () => resolve());
      child.stdin.end();
    })));
    const left = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    check(left.length === 0, `no bare process left (${left.join(', ')})`);
  }
}

const cases: Record<string, () => Promise<ScaleResult>> = { runtime, demo: native, minimal: native, ports, bare };
const run = cases[kind];
if (!run) throw new Error(`unknown scale case "${kind}"; expected ${Object.keys(cases).join(', ')}`);
const result = await run();
process.stdout.write(`${JSON.stringify(result)}\n`);
