/**
 * Restart benchmark: how long an agent CLI under a supervisor is gone after SIGKILL, against
 * a bare `child_process.spawn` of the same binary to its first line, measured in the same
 * process, cases interleaved round by round. Prints figures; asserts nothing about speed (it
 * checks that each restart is a new process that printed its banner, and that every process
 * started is gone at the end).
 *
 * - supervised: a port running `node spec/support/fake-cli.mjs --banner LINE` as the only
 *   child of a one_for_one supervisor (permanent, no backoff: OTP restarts at once), killed
 *   with `process.kill(pid, 'SIGKILL')`; timed from the kill to the first `port.message` of
 *   the restarted port, with the kill -> `child.exited` and kill -> `child.started` parts;
 * - bare spawn: `spawn()` of the same command and environment, detached as a port's is, to
 *   the first newline on its stdout (the port benchmark's baseline; the goal is stated
 *   against it);
 * - bare respawn: the same child killed with SIGKILL and spawned again from its `exit`
 *   event, timed from the kill to the new child's first line (a restart by hand).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { buildEnvironment, portLogic, reaperPid } from '../src/port/index.js';
import { createSupervisor, shutdown, whichChildren, type SupervisionEvent } from '../src/supervision/index.js';
import { check, formatNs, formatRatio, formatStats, measureInterleaved, now, since, summarize, table, withDeadline, type Plan, type Stats } from './support/measure.js';
import { exists } from './support/process-exists.js';

const fakeCli = fileURLToPath(new URL('../spec/support/fake-cli.mjs', import.meta.url));
const banner = '{"ready":true}';
const bannerArgs = [fakeCli, '--banner', banner];

/** Every pid this file started, to check at the end that none is left. */
const spawned: number[] = [];

function record(pid: number | undefined): number {
  check(pid !== undefined, 'the process was spawned');
  spawned.push(pid as number);
  return pid as number;
}


// ---------------------------------------------------------------------------------------
// Supervised

/** Kill -> exit noticed, kill -> restarted child started, per repetition (ns). */
const noticed: number[] = [];
const restarted: number[] = [];
/** Kill -> `exit` event of the bare child, per repetition (ns). */
const bareNoticed: number[] = [];

function portOf(supervisor: AnyActorRef): AnyActorRef {
  const ref = whichChildren(supervisor).find((row) => row.id === 'port')?.ref;
  check(ref !== undefined, 'the supervisor has a running port');
  return ref as AnyActorRef;
}

/** Resolves with the port's first message (listening from now on). */
function firstMessage(port: AnyActorRef): Promise<unknown> {
  return new Promise((resolve) => {
    const subscription = port.on('port.message', (event: { message: unknown }) => {
      subscription.unsubscribe();
      resolve(event.message);
    });
  });
}

interface Supervised {
  readonly supervisor: AnyActorRef;
  /** Kills the running port with SIGKILL; ns from the kill to the new port's first line. */
  restart(): Promise<number>;
}

async function supervised(): Promise<Supervised> {
  const logic = createSupervisor({
    name: 'bench-restart',
    strategy: 'one_for_one',
    // Every repetition is a restart: allow all of them within the period.
    intensity: 10_000,
    period: 60_000,
    children: [{ id: 'port', start: { logic: portLogic, input: { command: process.execPath, args: bannerArgs } } }],
  });
  const supervisor = createActor(logic);
  let ready: Promise<unknown> | undefined;
  const events: Array<Extract<SupervisionEvent, { type: 'child.started' | 'child.exited' }>> = [];
  supervisor.on('child.started', (event: Extract<SupervisionEvent, { type: 'child.started' }>) => {
    // Emitted as the port starts, before any of its output can be read: listen now.
    ready = firstMessage(portOf(supervisor));
    events.push(event);
  });
  supervisor.on('child.exited', (event: Extract<SupervisionEvent, { type: 'child.exited' }>) => events.push(event));
  supervisor.start();
  check(ready !== undefined, 'the port started with the supervisor');
  await withDeadline(ready as Promise<unknown>, 'supervised: first start');
  return {
    supervisor,
    async restart() {
      const old = portOf(supervisor);
      const pid = record((old.getSnapshot() as { context: { pid?: number } }).context.pid);
      const before = ready;
      events.length = 0;
      let exitedAt = 0;
      let startedAt = 0;
      const watch = supervisor.on('*', () => {
        const elapsed = since(start);
        if (exitedAt === 0 && events.some((event) => event.type === 'child.exited')) exitedAt = elapsed;
        if (startedAt === 0 && events.some((event) => event.type === 'child.started')) startedAt = elapsed;
      });
      const start = now();
      process.kill(pid, 'SIGKILL');
      await withDeadline((async () => {
        while (ready === before) await new Promise((resolve) => setImmediate(resolve));
      })(), 'supervised: restart');
      const message = await withDeadline(ready as Promise<unknown>, 'supervised: first line after the restart');
      const elapsed = since(start);
      watch.unsubscribe();
      const exit = events.find((event) => event.type === 'child.exited');
      const next = portOf(supervisor);
      check(exit?.type === 'child.exited' && exit.action === 'restart', 'the port exited and was restarted at once');
      check(next !== old && (message as { ready?: unknown }).ready === true, 'the restarted port printed its banner');
      check((next.getSnapshot() as { context: { pid?: number } }).context.pid !== pid, 'the restarted port is a new process');
      check(!exists(pid), `killed process ${pid} is gone`);
      noticed.push(exitedAt);
      restarted.push(startedAt);
      return elapsed;
    },
  };
}

// ---------------------------------------------------------------------------------------
// Bare

/** Spawns the fake CLI; resolves with the child once its first line is in. */
function spawnToFirstLine(env: Record<string, string>): { child: ChildProcess; firstLine: Promise<void> } {
  // Detached, as a port is (its own process group and session): with Linux's autogroup
  // scheduling a new session also gets its own share of the CPU, which matters when other
  // work loads the machine.
  const child = spawn(process.execPath, bannerArgs, { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  record(child.pid);
  child.stderr?.resume();
  let text = '';
  const firstLine = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (!text.includes('\n')) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      if (text.startsWith(`${banner}\n`)) resolve();
      else reject(new Error('benchmark invariant broken: the bare child printed something else first'));
    };
    child.stdout?.on('data', onData);
  });
  return { child, firstLine };
}

/** Ends a bare child gracefully (stdin EOF) and waits until it is reaped. */
async function endChild(child: ChildProcess): Promise<void> {
  const closed = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end();
  await withDeadline(closed, 'bare: exit');
  check(!exists(child.pid as number), `bare child ${child.pid} is gone`);
}

async function bareSpawn(env: Record<string, string>): Promise<number> {
  const start = now();
  const { child, firstLine } = spawnToFirstLine(env);
  await withDeadline(firstLine, 'bare spawn: first line');
  const elapsed = since(start);
  await endChild(child);
  return elapsed;
}

/** A bare child, running; each call kills it and spawns the next from its `exit` event. */
function bareRespawner(env: Record<string, string>) {
  let current: ChildProcess | undefined;
  return {
    async start() {
      const spawned = spawnToFirstLine(env);
      await withDeadline(spawned.firstLine, 'bare respawn: first start');
      current = spawned.child;
    },
    async respawn(): Promise<number> {
      const old = current as ChildProcess;
      let next: { child: ChildProcess; firstLine: Promise<void> } | undefined;
      const start = now();
      const restarted = new Promise<void>((resolve) => {
        old.once('exit', () => {
          bareNoticed.push(since(start));
          next = spawnToFirstLine(env);
          resolve();
        });
      });
      process.kill(old.pid as number, 'SIGKILL');
      await withDeadline(restarted, 'bare respawn: exit');
      await withDeadline((next as { firstLine: Promise<void> }).firstLine, 'bare respawn: first line');
      const elapsed = since(start);
      check(!exists(old.pid as number), `killed bare child ${old.pid} is gone`);
      current = (next as { child: ChildProcess }).child;
      return elapsed;
    },
    async stop() {
      if (current) await endChild(current);
    },
  };
}

// ---------------------------------------------------------------------------------------

/** Runs the restart benchmark and prints its table. */
export async function restart(): Promise<void> {
  const begun = now();
  console.log('\n## Restart');
  // The port's default environment (`isolated`), given to the bare children as well.
  const env = buildEnvironment();
  const plan: Plan = { warmup: 5, repetitions: 41 };
  const subject = await supervised();
  const respawner = bareRespawner(env);
  await respawner.start();
  let r: Record<'supervised' | 'bare' | 'respawn', Stats>;
  try {
    r = await measureInterleaved(plan, {
      supervised: () => subject.restart(),
      bare: () => bareSpawn(env),
      respawn: () => respawner.respawn(),
    });
  } finally {
    const last = (portOf(subject.supervisor).getSnapshot() as { context: { pid?: number } }).context.pid;
    if (last !== undefined) spawned.push(last);
    await withDeadline(shutdown(subject.supervisor), 'supervisor shutdown');
    await respawner.stop();
  }
  const exitNoticed = summarize(noticed.slice(plan.warmup));
  const childStarted = summarize(restarted.slice(plan.warmup));
  const bareExit = summarize(bareNoticed.slice(plan.warmup));
  console.log(`\n(per restart or start; median (min–max); ${plan.repetitions} repetitions each after ${plan.warmup} warm-up rounds, interleaved)\n`);
  console.log(table(['case', 'time', 'supervised / this', 'supervised − this (medians)'], [
    ['supervised: SIGKILL -> restarted port\'s first port.message', formatStats(r.supervised), '', ''],
    ['bare: spawn() -> first newline on stdout', formatStats(r.bare), formatRatio(r.supervised.median / r.bare.median), difference(r.supervised, r.bare)],
    ['bare by hand: SIGKILL -> exit event -> spawn() -> first newline', formatStats(r.respawn), formatRatio(r.supervised.median / r.respawn.median), difference(r.supervised, r.respawn)],
    ['of which supervised: SIGKILL -> child.exited (restart decided)', formatStats(exitNoticed), '', ''],
    ['of which supervised: SIGKILL -> child.started (new port spawned)', formatStats(childStarted), '', ''],
    ['of which by hand: SIGKILL -> the child\'s exit event', formatStats(bareExit), formatRatio(exitNoticed.median / bareExit.median), difference(exitNoticed, bareExit)],
  ]));
  console.log(`\nCommand: node spec/support/fake-cli.mjs --banner '${banner}' (prints the line at once, then waits`);
  console.log('on stdin), in the port\'s isolated environment for all three, each in its own process group (detached,');
  console.log('as a port starts it). Supervisor: one_for_one, one');
  console.log('permanent port child, no backoff (restarts at once), intensity 10,000 in 60 s so that no');
  console.log('repetition hits it. The kill is `process.kill(pid, \'SIGKILL\')` of the running process.');
  const left = spawned.filter((pid) => exists(pid));
  check(left.length === 0, `no process left (left: ${left.join(', ')})`);
  console.log(`\nProcesses started: ${new Set(spawned).size}; left alive: 0 (process.kill(pid, 0) on each). The orphan reaper`);
  console.log(`(pid ${reaperPid() ?? 'none'}) stays until this process exits, by design.`);
  console.log(`(restart benchmark: ${formatNs(since(begun))})`);
}

/** A signed difference of medians: `+1.78 ms`, `−1.13 ms`. */
function difference(a: Stats, b: Stats): string {
  const ns = a.median - b.median;
  return `${ns < 0 ? '−' : '+'}${formatNs(Math.abs(ns))}`;
}
