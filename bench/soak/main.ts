/**
 * `npm run soak -- --minutes N`: a real `warden acp` under many sessions of random prompts
 * and a low rate of faults, for N minutes. Prints a time series of warden's RSS, open fds and
 * live agent CLIs, then a report: requests settled, prompt latency, restarts per minute,
 * faults by kind, and whether RSS and fds stayed flat. Exit 1 when a request never settled,
 * a process was left behind, or RSS or fds grew. docs/soak.md says how to read it.
 *
 * Every process it starts is killed at the end, also on Ctrl-C / SIGTERM: the first signal
 * ends the load early (the report still comes), a second kills everything at once.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSoakArgs, soakUsage, type SoakOptions } from './args.js';
import { FaultInjector } from './faults.js';
import { fixtures, LoadGenerator, type SoakSession } from './load.js';
import { childrenOf, groupMembers, isAlive, openFds, rssKb } from './proc.js';
import { seeded } from './random.js';
import { formatReport, machineLine, problemsOf, quantiles, sampleLine, summarise, type SoakReport } from './report.js';
import { flatness, type Sample } from './verdict.js';
import { LogFollower } from './warden-log.js';
import { cliMarker, launchWarden, type Warden } from './warden.js';

/** How long requests in flight at the end may take to settle before they count as unsettled. */
const drainMs = 60_000;
/** How long warden may take to exit once the editor closed its stdin. */
const exitMs = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pids of every fake CLI warden started (the fake logs one JSON line per start). */
function startedPids(startLog: string): number[] {
  try {
    return readFileSync(startLog, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { pid: number }).pid);
  } catch {
    return [];
  }
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // gone already
  }
}

async function soak(options: SoakOptions, out: (line: string) => void): Promise<SoakReport> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-soak-')));
  const startLog = join(dir, 'starts.ndjson');
  const logFile = join(dir, 'warden.log');
  const faultLog = join(dir, 'faults.log');
  const sessions: SoakSession[] = Array.from({ length: options.sessions }, (_, index) => {
    const sessionDir = join(dir, `s${String(index).padStart(3, '0')}`);
    mkdirSync(sessionDir);
    const fixture = fixtures[index % fixtures.length] as string;
    writeFileSync(join(sessionDir, '.soak-fixture'), fixture);
    return { dir: sessionDir, fixture, sessionId: undefined, failed: false };
  });
  out(`soak: ${options.sessions} sessions, ${options.minutes} min, faults ${options.faultRate}/min (${options.faults.join(', ')}${options.faults.includes('leak') ? ` at ${options.leakRateMb} MB/s` : ''})${options.maxMemoryMb !== undefined ? `, --max-memory ${options.maxMemoryMb}` : ''}, seed ${options.seed}; run directory ${dir}`);

  // Separate streams, so that the permission answers do not shift the fault schedule.
  const loadRandom = seeded(options.seed);
  const faultRandom = seeded(options.seed ^ 0x5eed5eed);
  const permissionRandom = seeded(options.seed ^ 0x0a11c0de);
  const permissions = { asked: 0, allowed: 0, rejected: 0 };
  let warden: Warden | undefined;
  const seenPids = new Set<number>();
  // Last resort: whatever happens, nothing the soak started outlives it.
  const killAll = () => {
    if (warden) killGroup(warden.pid);
    for (const pid of new Set([...seenPids, ...startedPids(startLog)])) if (isAlive(pid)) killGroup(pid);
  };
  process.once('exit', killAll);
  let stopRequested = false;
  let wakeMain: (() => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopRequested) {
      killAll();
      process.exit(130);
    }
    stopRequested = true;
    process.stderr.write(`soak: ${signal}: ending the load now (again to kill everything at once)\n`);
    wakeMain?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  warden = await launchWarden({
    store: join(dir, 'journal.sqlite'),
    logFile,
    startLog,
    hangAfter: options.hangAfter,
    restartIntensity: options.restartIntensity,
    maxMemoryMb: options.maxMemoryMb,
    // Mostly allowed, sometimes rejected: both paths of the adapter stay in the run.
    permission: (request) => {
      const kind = permissionRandom() < 0.8 ? 'allow_once' : 'reject_once';
      permissions.asked++;
      permissions[kind === 'allow_once' ? 'allowed' : 'rejected']++;
      const option = request.options.find((entry) => entry.kind === kind) ?? request.options[0];
      return option ? { outcome: 'selected', optionId: option.optionId } : { outcome: 'cancelled' };
    },
  });
  const wardenPid = warden.pid;
  // Reset once the sessions are open: the load's clock.
  let started = Date.now();
  // warden must live until the soak closes its stdin; an exit before that is a finding.
  let closing = false;
  let exitedEarly: { afterMs: number; exit: number | string } | null = null;
  void warden.exited.then((exit) => {
    if (!closing) exitedEarly = { afterMs: Date.now() - started, exit };
  });
  const load = new LoadGenerator(warden.agent, options, loadRandom);
  const follower = new LogFollower(logFile);
  const samples: Sample[] = [];

  // Sessions open one by one: 20 CLIs starting at once on a small machine would look like hangs.
  for (const session of sessions) await load.open(session);
  started = Date.now();
  const sample = () => {
    const rss = rssKb(wardenPid);
    const fds = openFds(wardenPid);
    if (rss === undefined || fds === undefined) return; // warden is gone; the report says so
    const clis = childrenOf(wardenPid, cliMarker);
    for (const child of clis) seenPids.add(child.pid);
    const taken: Sample = { t: Date.now() - started, rssKb: rss, fds, clis: clis.length };
    samples.push(taken);
    const settled = load.stats.requests.ok + load.stats.requests.failed;
    out(sampleLine(taken, { settled, unsettled: load.stats.pending.size, restarts: follower.read().restarts }));
  };
  sample();
  const sampler = setInterval(sample, options.sampleEveryMs);
  const injector = new FaultInjector(wardenPid, cliMarker, sessions.map((session) => session.dir), options.faults, options.faultRate, faultRandom, (line) => {
    appendFileSync(faultLog, `${new Date().toISOString()} ${line}\n`);
  }, options.leakRateMb);
  const drivers = sessions.map((session) => load.drive(session));
  const faulting = injector.run();
  const loadEnds = started + options.minutes * 60_000;
  await Promise.race([
    sleep(Math.max(0, loadEnds - Date.now())),
    new Promise<void>((resolve) => (wakeMain = resolve)),
    warden.exited,
  ]);
  injector.stop();
  load.stop();
  clearInterval(sampler);
  sample(); // the last point of the series: the load's end
  const loadMs = Date.now() - started;
  await faulting;
  // Every request sent must settle: give the ones in flight their time (a hung CLI needs the
  // watchdog, a cancelled prompt the cancel grace), then count what is left.
  const drainEnds = Date.now() + drainMs;
  while (load.stats.pending.size > 0 && Date.now() < drainEnds && !(await Promise.race([warden.exited.then(() => true), sleep(100).then(() => false)]))) {
    // waiting
  }
  const unsettledDetail = [...load.stats.pending.values()].map((entry) => ({ method: entry.method, ageMs: Date.now() - entry.sentAt }));

  // The editor goes away: warden must stop every agent and exit 0.
  closing = true;
  warden.process.stdin?.end();
  const exit = await Promise.race([warden.exited, sleep(exitMs).then(() => `still running ${exitMs / 1000} s after its stdin closed` as const)]);
  if (typeof exit === 'string' && exit.startsWith('still running')) killGroup(wardenPid);
  await Promise.race([Promise.all(drivers), sleep(5000)]);

  // None of warden's children may outlive it: every CLI started, checked in /proc.
  const everyPid = new Set([...seenPids, ...startedPids(startLog), ...injector.stats.targets]);
  const deadline = Date.now() + 10_000;
  let alive = [...everyPid].filter(isAlive);
  while (alive.length > 0 && Date.now() < deadline) {
    await sleep(100);
    alive = alive.filter(isAlive);
  }
  const leaked = [...alive, ...groupMembers(wardenPid)];
  for (const pid of leaked) killGroup(pid);

  const counts = follower.read();
  const stats = load.stats;
  const settled = stats.requests.ok + stats.requests.failed;
  const partial: Omit<SoakReport, 'ok' | 'problems' | 'directory'> = {
    seed: options.seed,
    machine: machineLine(),
    sessions: options.sessions,
    faultRatePerMinute: options.faultRate,
    loadMs,
    requests: { sent: stats.requests.sent, settled, ok: stats.requests.ok, failed: stats.requests.failed, unsettled: stats.requests.sent - settled, byMethod: stats.byMethod, unsettledDetail },
    prompts: {
      ...stats.prompts,
      cancelsSent: stats.cancelsSent,
      permissions,
      latencyMs: quantiles(stats.latencies),
      errorLatencyMs: quantiles(stats.errorLatencies),
    },
    faults: { injected: injector.stats.injected, skipped: injector.stats.skipped },
    restarts: { total: counts.restarts, perMinute: counts.restarts / (loadMs / 60_000), recovered: counts.recovered, cliStarts: startedPids(startLog).length, memory: counts.memory },
    sessionsFailed: Math.max(stats.sessionsFailed, counts.failed),
    sessionsResumed: stats.sessionsResumed,
    rss: summarise(samples.map((entry) => entry.rssKb)),
    fds: summarise(samples.map((entry) => entry.fds)),
    clis: summarise(samples.map((entry) => entry.clis)),
    samples,
    verdict: flatness(samples),
    warden: { pid: wardenPid, exit, exitedEarly, errorLines: counts.errors, errorSamples: counts.errorSamples },
    leaked,
  };
  const problems = problemsOf(partial);
  const keep = problems.length > 0 || options.keep;
  if (keep) {
    if (warden.stderrTail()) writeFileSync(join(dir, 'warden.stderr'), warden.stderrTail());
    out(`soak: the run's directory is kept: ${dir} (warden.log, faults.log, starts.ndjson, journal.sqlite${warden.stderrTail() ? ', warden.stderr' : ''})`);
  } else {
    rmSync(dir, { recursive: true, force: true });
  }
  process.off('exit', killAll);
  return { ...partial, directory: { path: dir, kept: keep }, ok: problems.length === 0, problems };
}

const parsed = parseSoakArgs(process.argv.slice(2));
if ('help' in parsed) {
  process.stdout.write(`${soakUsage}\n`);
  process.exit(0);
}
if ('error' in parsed) {
  process.stderr.write(`${parsed.error}\n`);
  process.exit(2);
}
// With --json, stdout is the report alone; the time series goes to stderr.
const out = (line: string) => (parsed.json ? process.stderr : process.stdout).write(`${line}\n`);
try {
  const report = await soak(parsed, out);
  process.stdout.write(parsed.json ? `${JSON.stringify(report, null, 2)}\n` : `\n${formatReport(report)}\n`);
  process.exit(report.ok ? 0 : 1);
} catch (error) {
  process.stderr.write(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
