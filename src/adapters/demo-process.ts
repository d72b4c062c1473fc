/**
 * The built-in demo agent as a real, supervised subprocess: `warden demo-agent` (the demo
 * agent served alone on stdio) behind an ACP passthrough. What `--agent demo` runs, so that
 * the demo agent crashes, hangs and recovers like any other agent (`warden demo` and
 * `warden chaos --agent demo` inject faults into it). `demoAgent()` is the same agent
 * in-process, for tests and examples that need no process.
 */
import { fileURLToPath } from 'node:url';
import type { NativeAgent } from '../protocol/native-agent.js';
import { createAcpPassthrough } from './acp-passthrough.js';
import type { HangLimits } from './agent-settings.js';
import type { MemoryLimitInput } from '../port/memory-limit.js';
import type { CpuLimitInput } from '../port/cpu-limit.js';
import { demoAgentRestartDefaults } from '../supervision/agent-restart-defaults.js';

/** Options of {@link demoAgentProcess}. */
export interface DemoProcessOptions {
  /** Pause between streamed words, in ms (default 30). */
  readonly wordDelayMs?: number;
  /** The hang watchdog's limits (default: none), as `agentSettingsOf` made them. */
  readonly watchdog?: HangLimits;
  /** At most `intensity` restarts in `period` ms (default 3 in 30 s). */
  readonly restart?: { readonly intensity: number; readonly period: number };
  /** More variables for the process. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Memory limits of its process tree (default: none), as `agentSettingsOf` made them. */
  readonly memoryLimit?: MemoryLimitInput;
  /** The CPU limit of its process tree (default: none). */
  readonly cpuLimit?: CpuLimitInput;
}

/** The demo agent as a supervised subprocess of this same `warden`. */
export function demoAgentProcess(options: DemoProcessOptions = {}): NativeAgent {
  const main = fileURLToPath(new URL(`../cli/main.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url));
  return createAcpPassthrough({
    name: 'demo',
    executable: process.execPath,
    args: [...process.execArgv, main, 'demo-agent'],
    env: { DEMO_WORD_DELAY_MS: String(options.wordDelayMs ?? 30), ...options.env },
    restart: { intensity: options.restart?.intensity ?? demoAgentRestartDefaults.intensity, period: options.restart?.period ?? demoAgentRestartDefaults.period, backoff: demoAgentRestartDefaults.backoff },
    ...(options.watchdog || options.memoryLimit || options.cpuLimit ? { port: { ...(options.watchdog ? { watchdog: options.watchdog } : {}), ...(options.memoryLimit ? { memoryLimit: options.memoryLimit } : {}), ...(options.cpuLimit ? { cpuLimit: options.cpuLimit } : {}) } } : {}),
    // The demo agent keeps no conversation across its restarts: nothing to continue.
    crash: { onCrash: 'fail' },
  });
}
