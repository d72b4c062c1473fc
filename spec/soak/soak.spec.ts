/**
 * The soak (`npm run soak`, bench/soak/): its pure parts (arguments, the flatness verdict,
 * the log counts) on their own, then a short run through the real entry point as a
 * subprocess: a real `warden acp`, 4 sessions and a high fault rate, so that every fault kind
 * lands. The run's facts are asserted (every request settled, each fault kind injected,
 * restarts counted, the series sampled, no process left in /proc), never its timing.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { faultKinds, parseSoakArgs, type SoakOptions } from '../../bench/soak/args.js';
import { isAlive } from '../../bench/soak/proc.js';
import { bag, seeded } from '../../bench/soak/random.js';
import { quantiles, type SoakReport } from '../../bench/soak/report.js';
import { defaultRule, flatness, type Sample } from '../../bench/soak/verdict.js';
import { countLine, type LogCounts } from '../../bench/soak/warden-log.js';
import { wardenArgs } from '../../bench/soak/warden.js';
import { waitUntil } from '../support/processes.js';

const main = fileURLToPath(new URL('../../bench/soak/main.ts', import.meta.url));

function parsed(args: string[]): SoakOptions {
  const result = parseSoakArgs(args, () => 0.5);
  if ('error' in result || 'help' in result) throw new Error(`expected options, got ${JSON.stringify(result)}`);
  return result;
}

function problem(args: string[]): string {
  const result = parseSoakArgs(args);
  if (!('error' in result)) throw new Error(`expected an error for ${args.join(' ')}`);
  return result.error;
}

/** A series of `count` samples, one every 5 s, from `rss(i)` and `fds(i)`. */
function series(count: number, rss: (i: number) => number, fds: (i: number) => number): Sample[] {
  return Array.from({ length: count }, (_, i) => ({ t: i * 5000, rssKb: rss(i), fds: fds(i), clis: 20 }));
}

describe('soak: arguments', () => {
  it('defaults: 10 minutes, 20 sessions, 6 faults a minute of every kind but leak, a seed drawn and printed', () => {
    const options = parsed([]);
    expect(options).to.include({ minutes: 10, sessions: 20, faultRate: 6, seed: Math.floor(0.5 * 2 ** 31), json: false, keep: false, maxMemoryMb: undefined, leakRateMb: 50 });
    expect(options.faults).to.deep.equal(faultKinds.filter((kind) => kind !== 'leak'));
    expect(options.sampleEveryMs).to.equal(5000);
  });

  it('takes fractional minutes, and samples a short run often enough to judge it', () => {
    const options = parsed(['--minutes', '0.5', '--sessions', '4', '--fault-rate', '60', '--seed', '7', '--faults', 'kill,hang', '--json']);
    expect(options).to.include({ minutes: 0.5, sessions: 4, faultRate: 60, seed: 7, json: true });
    expect(options.faults).to.deep.equal(['kill', 'hang']);
    expect(options.sampleEveryMs).to.equal(1000); // 30 s / 30
    expect(parsed(['--minutes=0.1']).sampleEveryMs).to.equal(500);
    expect(parsed(['--fault-rate', '0']).faultRate).to.equal(0);
  });

  it('names the flag, what it expects and what it got', () => {
    expect(problem(['--minutes', 'ten'])).to.match(/--minutes expects a positive number, got "ten"/);
    expect(problem(['--sessions', '0'])).to.match(/--sessions expects a whole number of at least 1, got "0"/);
    expect(problem(['--sessions', '2.5'])).to.match(/--sessions expects a whole number/);
    expect(problem(['--faults', 'kill,explode'])).to.match(/--faults takes a comma-separated list of kill, hang, garbage, half, huge, close-stdin.*unknown: explode/);
    expect(problem(['--cancel-share', '2'])).to.match(/--cancel-share expects a share between 0 and 1/);
    expect(problem(['--restart-intensity', 'three'])).to.match(/--restart-intensity expects N\/SECONDS \(say 3\/60/);
    expect(problem(['--seed', '-1'])).to.match(/--seed/);
    expect(problem(['--faults', 'leak'])).to.match(/--faults leak needs --max-memory MB/);
    expect(problem(['--max-memory', 'lots'])).to.match(/--max-memory expects a whole number/);
  });

  it('the leak fault with --max-memory, passed on to warden; the leak rate in MB a second', () => {
    const options = parsed(['--faults', 'leak,kill', '--max-memory', '300', '--leak-rate', '40']);
    expect(options).to.include({ maxMemoryMb: 300, leakRateMb: 40 });
    expect(options.faults).to.deep.equal(['leak', 'kill']);
    expect(wardenArgs({ store: 's', logFile: 'l', startLog: 'x', hangAfter: 2, restartIntensity: undefined, maxMemoryMb: 300 }).join(' ')).to.include('--max-memory 300');
  });

  it('an unknown option or a missing value points at --help', () => {
    expect(problem(['--minute', '3'])).to.match(/unknown option --minute\. Run "npm run soak -- --help"/);
    expect(problem(['--minutes'])).to.match(/--minutes needs a value\. Run "npm run soak -- --help"/);
    expect(parseSoakArgs(['--sessions', '3', '--help'])).to.deep.equal({ help: true });
  });
});

describe('soak: the flatness verdict', () => {
  it('a flat series passes', () => {
    const verdict = flatness(series(120, () => 150_000, () => 88));
    expect(verdict.judged && verdict.flat).to.equal(true);
  });

  it('noise passes: a GC sawtooth of ±6 MB and fds jumping by a restart in flight', () => {
    const next = seeded(42);
    const verdict = flatness(series(120, (i) => 150_000 + (i % 7) * 1500 + next() * 3000 - 6000, () => 88 + (next() < 0.2 ? 3 : 0) - (next() < 0.2 ? 3 : 0)));
    expect(verdict.judged).to.equal(true);
    expect(verdict.flat, JSON.stringify(verdict)).to.equal(true);
  });

  it('the warm-up is not judged: growth in the first 20% passes', () => {
    const verdict = flatness(series(100, (i) => (i < 20 ? 100_000 + i * 3000 : 160_000), (i) => (i < 20 ? 60 + i : 80)));
    expect(verdict.flat).to.equal(true);
  });

  it('an RSS leak fails: 100 kB per sample, 60 MB over the run', () => {
    const verdict = flatness(series(600, (i) => 150_000 + i * 100, () => 88));
    if (!verdict.judged) throw new Error('expected a judged verdict');
    expect(verdict.flat).to.equal(false);
    expect(verdict.rss.flat).to.equal(false);
    expect(verdict.fds.flat).to.equal(true);
    expect(verdict.rss.growth).to.be.greaterThan(verdict.rss.bound);
  });

  it('an fd leak fails: one fd every 10 samples', () => {
    const verdict = flatness(series(120, () => 150_000, (i) => 88 + Math.floor(i / 10)));
    if (!verdict.judged) throw new Error('expected a judged verdict');
    expect(verdict.fds.flat).to.equal(false);
    expect(verdict.rss.flat).to.equal(true);
    expect(verdict.flat).to.equal(false);
  });

  it('the RSS bound is 10% of the level, at least 8 MiB', () => {
    const big = flatness(series(60, (i) => (i < 30 ? 400_000 : 435_000), () => 88));
    const small = flatness(series(60, (i) => (i < 30 ? 40_000 : 47_000), () => 88));
    if (!big.judged || !small.judged) throw new Error('expected judged verdicts');
    expect(big.rss.bound).to.equal(40_000);
    expect(big.flat).to.equal(true);
    expect(small.rss.bound).to.equal(defaultRule.rssFloorKb);
    expect(small.flat).to.equal(true);
  });

  it('too few samples: not judged (and not a failure), saying how to get more', () => {
    const verdict = flatness(series(5, (i) => 100_000 + i * 50_000, () => 88));
    expect(verdict.judged).to.equal(false);
    expect(verdict.flat).to.equal(true);
    expect(!verdict.judged && verdict.why).to.match(/--sample-every/);
  });
});

describe('soak: small parts', () => {
  it('the fault bag gives every kind once before any twice', () => {
    const next = bag(seeded(1), faultKinds);
    const first = Array.from({ length: faultKinds.length }, () => next());
    expect([...first].sort()).to.deep.equal([...faultKinds].sort());
  });

  it('quantiles are nearest-rank; none of an empty list', () => {
    expect(quantiles([5, 1, 4, 2, 3])).to.deep.equal({ count: 5, p50: 3, p99: 5, max: 5 });
    expect(quantiles([])).to.deep.equal({ count: 0, p50: null, p99: null, max: null });
  });

  it("warden's JSON log: restarts, recoveries and failures counted by event type; other lines ignored", () => {
    const counts: LogCounts = { restarts: 0, memory: { soft: 0, hard: 0, maxMiB: 0 }, recovered: 0, failed: 0, errors: 0, errorSamples: [] };
    for (const line of [
      '{"level":"warn","message":"session b: agent process ended (Agent process tree used 258 MiB of memory (sampled from /proc), over its soft limit of 250 MiB, and was recycled between turns); restart 1","type":"session.restarting"}',
      '{"level":"warn","message":"session b: agent process ended (Agent process tree used 377 MiB of memory (sampled from /proc), over its hard limit of 375 MiB, and was killed); restart 2","type":"session.restarting"}',
      '{"level":"warn","message":"session a: agent process ended (signaled SIGKILL); restart 1","type":"session.restarting"}',
      '{"level":"info","message":"session a: resumed after restart 1","type":"session.recovered"}',
      '{"level":"error","message":"session a failed: intensity","type":"session.failed"}',
      'not json',
    ]) countLine(counts, line);
    expect(counts).to.deep.equal({ restarts: 3, memory: { soft: 1, hard: 1, maxMiB: 377 }, recovered: 1, failed: 1, errors: 1, errorSamples: ['session a failed: intensity'] });
  });
});

interface Run {
  readonly report: SoakReport;
  readonly exitCode: number | null;
}

/**
 * Runs the soak's entry point with `--json --keep`; with `interrupt`, sends it SIGINT once the
 * first sample is printed (Ctrl-C in a terminal).
 */
async function runSoak(args: string[], interrupt = false): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', main, ...args, '--json', '--keep'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    if (interrupt && / rss /.test(stderr)) {
      interrupt = false;
      child.kill('SIGINT');
    }
  });
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    return { report: JSON.parse(stdout) as SoakReport, exitCode };
  } catch {
    throw new Error(`the soak printed no JSON report (exit ${exitCode}); stderr:\n${stderr.slice(-4000)}`);
  }
}

/** Pids of every CLI the run's warden started, from the fake's start log in the kept directory. */
function cliPids(report: SoakReport): number[] {
  return readFileSync(join(report.directory.path, 'starts.ndjson'), 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { pid: number }).pid);
}

describe('soak: runs through the real entry point', function () {
  this.timeout(90_000);
  let report: SoakReport;
  let exitCode: number | null;
  let interrupted: Run;

  before(async () => {
    // Both at once, to keep the spec short; the interrupted one is small and fault-free.
    [{ report, exitCode }, interrupted] = await Promise.all([
      runSoak(['--minutes', '0.35', '--sessions', '4', '--fault-rate', '60', '--seed', '7', '--faults', faultKinds.join(','), '--max-memory', '300']),
      runSoak(['--minutes', '5', '--sessions', '2', '--fault-rate', '0', '--seed', '8'], true),
    ]);
  });

  after(() => {
    for (const run of [report, interrupted?.report]) if (run?.directory.kept) rmSync(run.directory.path, { recursive: true, force: true });
  });

  it('every request settled, and the exit status says whether the run passed', () => {
    expect(report.requests.sent).to.be.greaterThan(0);
    expect(report.requests.unsettled, JSON.stringify(report.requests.unsettledDetail)).to.equal(0);
    expect(report.requests.settled).to.equal(report.requests.sent);
    expect(report.prompts.sent).to.be.greaterThan(0);
    // Sessions 1 and 3 replay transcripts that ask for a permission.
    expect(report.prompts.permissions.asked).to.be.greaterThan(0);
    expect(exitCode).to.equal(report.ok ? 0 : 1);
    expect(report.problems.filter((entry) => !/RSS|fds/.test(entry)), 'no problem but (perhaps) flatness on so short a run').to.deep.equal([]);
  });

  it('faults of every kind were injected, and warden restarted agent processes', () => {
    for (const kind of faultKinds) expect(report.faults.injected[kind], kind).to.be.greaterThan(0);
    expect(report.restarts.total).to.be.greaterThan(0);
    expect(report.restarts.cliStarts).to.be.greaterThan(report.sessions);
    expect(report.seed).to.equal(7);
  });

  it("warden's RSS, fds and live CLIs were sampled over the run and judged", () => {
    expect(report.samples.length).to.be.greaterThan(10);
    for (const sample of report.samples) {
      expect(sample.rssKb).to.be.greaterThan(0);
      expect(sample.fds).to.be.greaterThan(0);
    }
    expect(report.samples.some((sample) => sample.clis === report.sessions)).to.equal(true);
    expect(report.verdict.judged).to.equal(true);
  });

  it('no process is left: warden exited 0 and every CLI it started is gone from /proc', async () => {
    expect(report.warden.exit).to.equal(0);
    expect(report.leaked).to.deep.equal([]);
    const starts = cliPids(report);
    expect(starts.length).to.equal(report.restarts.cliStarts);
    for (const pid of [report.warden.pid, ...starts]) await waitUntil(() => !isAlive(pid), `process ${pid} to be gone`, 5000);
  });

  it('Ctrl-C ends the load early: every request still settles, the report comes, nothing is left', async () => {
    const { report: cut } = interrupted;
    expect(cut.loadMs).to.be.lessThan(5 * 60_000);
    expect(cut.requests.unsettled).to.equal(0);
    expect(cut.warden.exit).to.equal(0);
    expect(cut.leaked).to.deep.equal([]);
    const starts = cliPids(cut);
    expect(starts.length).to.be.greaterThanOrEqual(2);
    for (const pid of [cut.warden.pid, ...starts]) await waitUntil(() => !isAlive(pid), `process ${pid} to be gone`, 5000);
  });
});
