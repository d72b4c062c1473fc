/**
 * The port's hang watchdog, as plain rules: when it counts silence and how much it allows.
 *
 * Silence counts only while the agent owes output: the owner says it is busy (a request
 * to the CLI is outstanding) and no permission answer is awaited (the owner then says it
 * is not busy). While a tool runs (`toolRunning`: Claude's `tool_use` until its
 * `tool_result`, Codex's command or patch item until it completes) the CLI is silent by
 * design, often for minutes: a separate, longer limit applies. Before the first line,
 * the start allowance applies when it is longer (starting a runtime is slow, not hung).
 */

/** The watchdog option of a port. */
export interface WatchdogInput {
  /** Silence allowed while the agent owes output (busy, no tool running), in ms. */
  readonly idleMs: number;
  /**
   * Silence allowed while a tool runs (the owner sent `port.busy` with `toolRunning: true`),
   * in ms. Default {@link defaultToolIdleMs}, and never less than `idleMs`.
   */
  readonly toolIdleMs?: number;
  /** Count only while the owner says it is busy (default `true`). */
  readonly whileBusy?: boolean;
  /** Silence allowed before the process's first line, when longer than the limit in force. Default {@link defaultWatchdogStartupMs}. */
  readonly startupMs?: number;
}

/** The watchdog's settings, with the defaults filled in. */
export interface WatchdogSettings {
  readonly idleMs: number;
  readonly toolIdleMs: number;
  readonly whileBusy: boolean;
  readonly startupMs: number;
}

/** Silence allowed before a process's first line, when the watchdog is on (a runtime starting is not a hang). */
export const defaultWatchdogStartupMs = 20_000;

/**
 * Silence allowed while a tool runs, by default: 30 minutes. Claude Code's Bash tool may run
 * up to 10 minutes by itself (its longest timeout), Codex commands as long as the model asks;
 * builds and test suites run that long without printing to the agent's stdout.
 */
export const defaultToolIdleMs = 30 * 60_000;

/** What the watchdog looks at. */
export interface WatchdogFacts {
  /** The owner has a request outstanding and waits for nobody. */
  readonly busy: boolean;
  /** A tool call of the agent is running. */
  readonly toolRunning: boolean;
  /** The process has printed at least one line. */
  readonly printed: boolean;
}

/** The settings of a watchdog option; `undefined` (no watchdog) stays `undefined`. Throws a `TypeError` naming a bad value. */
export function watchdogSettings(input: WatchdogInput | undefined): WatchdogSettings | undefined {
  if (input === undefined) return undefined;
  if (typeof input.idleMs !== 'number' || !(input.idleMs > 0)) {
    throw new TypeError(`Expected the \`watchdog.idleMs\` option of the port to be a positive number, got ${describe(input.idleMs)}.`);
  }
  if (input.toolIdleMs !== undefined && (typeof input.toolIdleMs !== 'number' || !(input.toolIdleMs > 0))) {
    throw new TypeError(`Expected the \`watchdog.toolIdleMs\` option of the port to be a positive number, got ${describe(input.toolIdleMs)}.`);
  }
  return {
    idleMs: input.idleMs,
    toolIdleMs: Math.max(input.idleMs, input.toolIdleMs ?? defaultToolIdleMs),
    whileBusy: input.whileBusy ?? true,
    startupMs: input.startupMs ?? defaultWatchdogStartupMs,
  };
}

/** Whether silence counts now. */
export function silenceCounts(settings: WatchdogSettings, facts: WatchdogFacts): boolean {
  return !settings.whileBusy || facts.busy;
}

/** How long the process may stay silent now, in ms. */
export function allowedSilence(settings: WatchdogSettings, facts: WatchdogFacts): number {
  const limit = facts.toolRunning ? settings.toolIdleMs : settings.idleMs;
  return facts.printed ? limit : Math.max(limit, settings.startupMs);
}

function describe(value: unknown): string {
  return value === undefined ? '`undefined`' : `\`${String(value)}\` (${typeof value})`;
}
