/**
 * The fault injector: faults as a Poisson process over all sessions together, each landing
 * on the agent CLI of a random session that has one. The CLI is found as a child of warden
 * in /proc whose working directory is the session's. `kill` is SIGKILL, `hang` SIGSTOP (the
 * watchdog of warden's `--hang-after` must catch it), and the rest are the fake CLI's own
 * faults through real pipes (spec/support/fault-signals.mjs: the fault's name in
 * `.fake-fault` in its cwd, then SIGUSR2).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FaultKind } from './args.js';
import { childrenOf } from './proc.js';
import { bag, exponential, pick } from './random.js';

/** What the injector did. */
export interface FaultStats {
  readonly injected: Record<FaultKind, number>;
  /** Fault times with no session's CLI to take them (all restarting, or all too young). */
  skipped: number;
  /** Pids of every CLI a fault landed on. */
  readonly targets: Set<number>;
}

/**
 * A CLI younger than this is left alone: the fake installs its SIGUSR2 handler only once Node
 * has started, and SIGUSR2 before that kills it (a `kill`, miscounted).
 */
const minAgeSeconds = 1.5;

/** Injects faults until `stop()`; `log` receives one line per fault. */
export class FaultInjector {
  readonly stats: FaultStats;
  #running = true;
  #timer: NodeJS.Timeout | undefined;
  #done: (() => void) | undefined;
  readonly #nextKind: () => FaultKind;

  constructor(
    private readonly wardenPid: number,
    private readonly marker: string,
    private readonly sessionDirs: readonly string[],
    kinds: readonly FaultKind[],
    /** Faults per minute. */
    private readonly rate: number,
    private readonly random: () => number,
    private readonly log: (line: string) => void = () => undefined,
    /** MB a second a CLI given the `leak` fault keeps. */
    private readonly leakRateMb = 50,
  ) {
    this.#nextKind = bag(random, kinds);
    this.stats = { injected: Object.fromEntries(kinds.map((kind) => [kind, 0])) as Record<FaultKind, number>, skipped: 0, targets: new Set() };
  }

  /** Runs until `stop()`. */
  async run(): Promise<void> {
    if (this.rate <= 0) return;
    while (this.#running) {
      await new Promise<void>((resolve) => {
        this.#done = resolve;
        this.#timer = setTimeout(resolve, exponential(this.random, 60_000 / this.rate));
      });
      if (!this.#running) break;
      this.#injectOne();
    }
  }

  stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#done?.();
  }

  #injectOne(): void {
    const dirs = new Set(this.sessionDirs);
    const candidates = childrenOf(this.wardenPid, this.marker).filter((child) => child.cwd !== undefined && dirs.has(child.cwd) && child.state !== 'T' && child.ageSeconds >= minAgeSeconds);
    if (candidates.length === 0) {
      this.stats.skipped++;
      return;
    }
    const target = pick(this.random, candidates);
    const kind = this.#nextKind();
    try {
      if (kind === 'kill') process.kill(target.pid, 'SIGKILL');
      else if (kind === 'hang') process.kill(target.pid, 'SIGSTOP');
      else {
        writeFileSync(join(target.cwd as string, '.fake-fault'), kind === 'leak' ? `leak ${this.leakRateMb}` : kind);
        process.kill(target.pid, 'SIGUSR2');
      }
    } catch {
      this.stats.skipped++; // it ended between the scan and the signal
      return;
    }
    this.stats.injected[kind]++;
    this.stats.targets.add(target.pid);
    this.log(`${kind} → pid ${target.pid} (${target.cwd})`);
  }
}
