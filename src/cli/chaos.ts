/**
 * `warden chaos --agent NAME`: drives the agent through prompts while injecting faults into
 * its processes, then prints recovery figures. Faults: `kill` (SIGKILL), `hang` (SIGSTOP; the
 * watchdog of `--hang-after` must catch it), `garbage` (a line that is not the protocol,
 * injected into the port as if the agent had printed it). A session that gives up is opened
 * again from the journal (`session/resume`), so the run goes on.
 */
import { createHost, type HostSessionHandle } from '../runtime/host.js';
import { ArgumentError, positiveNumber } from './arguments.js';
import { positive, restartLimit, seconds } from './flag-shapes.js';
import { argumentProblem, helpRow, optionRows, parseFlags, type FlagTable, type Shape } from './flag-table.js';
import { isAlive } from './process-alive.js';
import { seededRandom } from '../journal/seeded-random.js';
import { allowOnce } from '../acp/permission-choice.js';

/** The faults `warden chaos` injects. */
export type ChaosFault = 'kill' | 'hang' | 'garbage';

/** What `warden chaos` was asked for. */
export interface ChaosOptions {
  readonly agent: string;
  readonly agentCommand: string | undefined;
  readonly env: Record<string, string | undefined>;
  readonly faults: readonly ChaosFault[];
  /** Faults per second. */
  readonly rate: number;
  readonly durationMs: number;
  readonly hangAfterMs: number;
  readonly restart: { readonly intensity: number; readonly period: number };
  readonly json: boolean;
  /** Seed of the fault schedule (printed, so a run can be replayed). */
  readonly seed: number;
}

/** The figures of a chaos run. */
export interface ChaosReport {
  readonly agent: string;
  readonly seed: number;
  readonly durationMs: number;
  readonly faults: Readonly<Record<ChaosFault, number>>;
  readonly prompts: { readonly sent: number; readonly completed: number; readonly failed: number; readonly unsettled: number };
  readonly recoveries: number;
  readonly recoverMs: { readonly p50: number | null; readonly p99: number | null; readonly max: number | null };
  readonly sessionsFailed: number;
  readonly sessionsReopened: number;
  /** Attempts to reopen a failed session (or start a new one) that failed under the faults. */
  readonly reopenFailures: number;
  readonly processesStarted: number;
  readonly processesLeaked: number;
}

/** `warden chaos`'s defaults: quicker than `warden acp`'s, so that a run of seconds sees hangs caught and restarts. */
const chaosDefaults: { readonly rate: number; readonly durationMs: number; readonly hangAfterMs: number; readonly restart: { readonly intensity: number; readonly period: number } } = Object.freeze({ rate: 0.5, durationMs: 20_000, hangAfterMs: 1000, restart: Object.freeze({ intensity: 5, period: 10_000 }) });

const allFaults: readonly ChaosFault[] = ['kill', 'hang', 'garbage'];

/** `--faults kill,hang`: a comma-separated list of faults, at least one. */
const faultList: Shape<ChaosFault[]> = {
  accepts: `a comma-separated list of ${allFaults.join(', ')}`,
  read(flag, text) {
    const list = text.split(',').map((entry) => entry.trim()).filter(Boolean);
    const unknown = list.filter((entry) => !allFaults.includes(entry as ChaosFault));
    if (unknown.length > 0 || list.length === 0) throw new ArgumentError(`${flag} takes a comma-separated list of ${allFaults.join(', ')}; got ${JSON.stringify(list.join(','))}`);
    return list as ChaosFault[];
  },
};

/** `--env NAME=VALUE`: a variable set for the agent (chaos passes none from the host). */
const envAssignment: Shape<readonly [string, string]> = {
  accepts: 'NAME=VALUE',
  read(flag, text) {
    const at = text.indexOf('=');
    if (at < 1) throw new ArgumentError(`${flag} expects NAME=VALUE, got ${JSON.stringify(text)}`);
    return [text.slice(0, at), text.slice(at + 1)] as const;
  },
};

/** The flags of `warden chaos` as its table fills them. */
type ChaosFlagValues = Omit<ChaosOptions, 'agent' | 'env'> & { agent: string | undefined; env: Array<readonly [string, string]> };

/** The flags of `warden chaos`. */
export const chaosFlags: FlagTable<ChaosFlagValues> = {
  '--agent': { field: 'agent', value: 'NAME', help: 'any agent warden acp takes (demo runs the demo agent as a subprocess)' },
  '--agent-command': { field: 'agentCommand', value: 'PATH', help: "the agent's executable" },
  '--env': { field: 'env', value: 'NAME=VALUE', shape: envAssignment, repeat: 'append', help: 'set a variable for the agent (repeatable)' },
  '--faults': { field: 'faults', value: 'LIST', shape: faultList, default: allFaults, help: 'comma-separated: kill, hang, garbage (default: all three)' },
  '--rate': { field: 'rate', value: 'R', shape: positive, default: chaosDefaults.rate, help: `faults per second (default ${chaosDefaults.rate})` },
  '--duration': { field: 'durationMs', value: 'SECONDS', shape: seconds, default: chaosDefaults.durationMs, help: `how long to run (default ${chaosDefaults.durationMs / 1000})` },
  '--hang-after': { field: 'hangAfterMs', value: 'SECONDS', shape: seconds, default: chaosDefaults.hangAfterMs, help: `the watchdog's patience, which catches hangs (default ${chaosDefaults.hangAfterMs / 1000})` },
  '--restart-intensity': { field: 'restart', value: 'N/SECONDS', shape: restartLimit, default: chaosDefaults.restart, help: `restarts allowed per session (default ${chaosDefaults.restart.intensity}/${chaosDefaults.restart.period / 1000})` },
  '--seed': { field: 'seed', value: 'N', shape: { accepts: 'a number > 0, rounded down', read: (flag, text) => Math.floor(positiveNumber(flag, text)) }, default: () => Math.floor(Math.random() * 2 ** 31), help: "the fault schedule's seed (default: random, printed)" },
  '--json': { field: 'json', help: 'print the report as JSON' },
};

/** `warden chaos --help`. */
export const chaosUsage = `Usage: warden chaos --agent NAME [options]

Drives NAME through prompts while injecting faults, then prints recovery figures.

Options:
${optionRows(chaosFlags, 30, { extra: [helpRow()] })}

Exit status: 0 when every prompt settled and no process was left, 1 otherwise, 2 on a usage
error or an agent that is not installed.`;

/** Parses `warden chaos` arguments; a problem is a message that names it and the fix. */
export function parseChaosArgs(args: readonly string[]): ChaosOptions | { error: string } | { help: true } {
  let values: ChaosFlagValues;
  try {
    const parsed = parseFlags(chaosFlags, args, 'Run "warden chaos --help" for the options.');
    if (parsed === 'help') return { help: true };
    values = parsed;
  } catch (error) {
    return argumentProblem('warden chaos', error);
  }
  const { agent, env, ...rest } = values;
  if (!agent) return { error: 'warden chaos: --agent is required (say --agent demo). Run "warden chaos --help" for the options.' };
  return { ...rest, agent, env: Object.fromEntries(env) };
}

const garbageLines = ['this is not JSON', '{"jsonrpc":"2.0","id":', '\u0000\u0001\u0002 binary noise', '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":42}}', '[1,2,3]', '{"id":"nobody-asked","result":{}}'];
const prompts = ['hello', 'please run the tool', 'a longer answer, word by word'];
/** A prompt that takes longer than this has hung despite everything: counted unsettled. */
const promptDeadlineMs = 60_000;

/** Runs the chaos and returns its figures. */
export async function runChaos(options: ChaosOptions, progress: (line: string) => void = () => undefined): Promise<ChaosReport> {
  const next = seededRandom(options.seed);
  const agentOptions = {
    ...(options.agentCommand ? { agentCommand: options.agentCommand } : {}),
    // The demo agent streams faster under chaos (more turns per second); agentFor('demo') runs it as a process.
    env: options.agent === 'demo' ? { DEMO_WORD_DELAY_MS: '15', ...options.env } : options.env,
    hangAfterMs: options.hangAfterMs,
    restart: options.restart,
  };
  const host = createHost({
    store: ':memory:',
    defaultAgent: options.agent,
    agentOptions,
    // Allowed once, by kind: never allow_always (the first option of Claude and Codex).
    permission: (request) => allowOnce(request.options),
  });
  const started = Date.now();
  const faults: Record<ChaosFault, number> = { kill: 0, hang: 0, garbage: 0 };
  const prompted = { sent: 0, completed: 0, failed: 0, unsettled: 0 };
  const recoverMs: number[] = [];
  const awaitingRecovery: number[] = [];
  let sessionsFailed = 0;
  let sessionsReopened = 0;
  const pids = new Set<number>();
  const notePids = () => {
    for (const process of host.processes()) pids.add(process.pid);
  };
  const at = () => `${String(Date.now() - started).padStart(6)} ms`;
  host.on((event) => {
    if (event.type === 'session.restarting' || event.type === 'session.recovered' || event.type === 'session.failed') {
      progress(`${at()}  ${event.type.slice('session.'.length)}${'restarts' in event ? ` (restart ${event.restarts})` : ''}${'reason' in event ? `: ${event.reason}` : ''}`);
    }
    if (event.type === 'session.recovered') {
      const since = awaitingRecovery.shift();
      if (since !== undefined) recoverMs.push(Date.now() - since);
      notePids();
    }
    if (event.type === 'session.failed') {
      sessionsFailed++;
      awaitingRecovery.length = 0; // those faults ended in a failure, not a recovery
    }
  });
  const end = started + options.durationMs;
  let running = true;
  let reopenFailures = 0;
  /**
   * A failed session comes back from the journal (`session/resume`), else a new one starts.
   * Faults keep coming meanwhile, so an attempt may fail too: up to 10 tries, 200 ms apart.
   */
  const reopen = async (sessionId: string): Promise<HostSessionHandle | undefined> => {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        const again = await host.openSession(sessionId);
        sessionsReopened++;
        return again;
      } catch {
        reopenFailures++;
      }
      try {
        return await host.newSession({ cwd: process.cwd() });
      } catch {
        reopenFailures++;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    progress(`${at()}  could not reopen the session in 10 attempts; stopping early`);
    return undefined;
  };
  try {
    let session: HostSessionHandle = await host.newSession({ cwd: process.cwd() });
    notePids();
    const faultLoop = (async () => {
      while (running && Date.now() < end) {
        // Exponential gaps: faults arrive as a Poisson process of the given rate.
        const gap = -Math.log(1 - next()) * (1000 / options.rate);
        await new Promise((resolve) => setTimeout(resolve, Math.min(gap, Math.max(0, end - Date.now()))));
        if (!running || Date.now() >= end) break;
        const target = host.processes()[0];
        if (!target) continue;
        pids.add(target.pid);
        const fault = options.faults[Math.floor(next() * options.faults.length)] as ChaosFault;
        faults[fault]++;
        progress(`${at()}  ${fault} → pid ${target.pid}`);
        if (fault === 'garbage') {
          target.port.send({ type: 'port.injectLine', line: garbageLines[Math.floor(next() * garbageLines.length)] as string });
          continue;
        }
        awaitingRecovery.push(Date.now());
        try {
          process.kill(target.pid, fault === 'kill' ? 'SIGKILL' : 'SIGSTOP');
        } catch {
          awaitingRecovery.pop(); // it was already gone
        }
      }
    })();
    for (let turn = 0; Date.now() < end; turn++) {
      if (session.state() === 'failed') {
        const reopened = await reopen(session.sessionId);
        if (!reopened) break;
        session = reopened;
        notePids();
      }
      prompted.sent++;
      const run = session.prompt(prompts[turn % prompts.length] as string);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'unsettled'>((resolve) => {
        timer = setTimeout(() => resolve('unsettled'), promptDeadlineMs);
      });
      const outcome = await Promise.race([run.result.then(() => 'completed' as const, () => 'failed' as const), deadline]);
      clearTimeout(timer);
      prompted[outcome]++;
      progress(`${at()}  prompt ${prompted.sent}: ${outcome}`);
      notePids();
      if (outcome === 'unsettled') break;
    }
    running = false;
    await faultLoop;
  } finally {
    running = false;
    notePids();
    await host.stop();
  }
  // Stopped processes (SIGSTOP) die with their group too; give the kernel a moment to reap.
  const deadline = Date.now() + 5000;
  let leaked = [...pids].filter(isAlive);
  while (leaked.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    leaked = leaked.filter(isAlive);
  }
  const sorted = [...recoverMs].sort((a, b) => a - b);
  const quantile = (q: number) => (sorted.length === 0 ? null : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number));
  return {
    agent: options.agent,
    seed: options.seed,
    durationMs: Date.now() - started,
    faults,
    prompts: prompted,
    recoveries: recoverMs.length,
    recoverMs: { p50: quantile(0.5), p99: quantile(0.99), max: sorted.at(-1) ?? null },
    sessionsFailed,
    sessionsReopened,
    reopenFailures,
    processesStarted: pids.size,
    processesLeaked: leaked.length,
  };
}

/** The report as a few readable lines. */
export function formatChaosReport(report: ChaosReport): string {
  const ms = (value: number | null) => (value === null ? 'n/a' : `${value} ms`);
  return [
    `warden chaos: ${report.agent}, ${(report.durationMs / 1000).toFixed(1)} s, seed ${report.seed}`,
    `  faults injected     kill ${report.faults.kill}, hang ${report.faults.hang}, garbage ${report.faults.garbage}`,
    `  prompts             sent ${report.prompts.sent}, completed ${report.prompts.completed}, failed with a clean error ${report.prompts.failed}, unsettled ${report.prompts.unsettled}`,
    `  recoveries          ${report.recoveries} (time to recover p50 ${ms(report.recoverMs.p50)}, p99 ${ms(report.recoverMs.p99)}, max ${ms(report.recoverMs.max)})`,
    `  sessions            failed ${report.sessionsFailed}, reopened from the journal ${report.sessionsReopened} (attempts that failed under faults: ${report.reopenFailures})`,
    `  agent processes     started ${report.processesStarted}, leaked ${report.processesLeaked}`,
  ].join('\n');
}

