/**
 * How known agents are run, normalised once (issue 29, "Options normalised once"): the
 * command line (`--hang-after`, `--tool-hang-after`, `--restart-intensity`, `--max-line-mib`,
 * `--env`, ...: src/cli/agent-flags.ts) and `createHost({ agentOptions, supervision })` are
 * the two edges, and both end in one {@link AgentSettings} made by {@link agentSettingsOf}.
 * Everything below takes it as is (the memory limits too: the port's `memoryLimit`): the hang watchdog is the port's `watchdog` option
 * (`{ idleMs, toolIdleMs }`, src/port/watchdog.ts) from here down, never seconds, never
 * `hangAfterMs`, never "0 means off".
 */
import { agentRestartDefaults } from '../supervision/agent-restart-defaults.js';
import { defaultToolIdleMs } from '../port/watchdog.js';
import { memoryLimitSettings, type MemoryLimitInput } from '../port/memory-limit.js';
import { cpuLimitSettings, type CpuLimitInput } from '../port/cpu-limit.js';
import type { ResolveOptions } from './registry.js';
import type { AgentProtocol } from '../acp/agent-client-contract.js';
import type { OnCrash } from './crash-policy.js';

/** Restarts of one session's agent process: at most `intensity` in `period` ms. */
export interface RestartLimits {
  readonly intensity: number;
  readonly period: number;
}

/** Options of `agentFor` and `createHost({ agentOptions })`: how known agents are found and run, as given. */
export interface AgentOptions extends ResolveOptions {
  /** `isolated` (default) or `inherit` (`--inherit-env`). */
  readonly envPolicy?: 'isolated' | 'inherit';
  /** `--env NAME=VALUE`: the agent's own variables (not where it is looked up: `lookupEnv`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `--env NAME`: host variables passed through. */
  readonly passthrough?: readonly string[];
  /** `--restart-intensity N/SECONDS`: at most `intensity` restarts of an agent process in `period` ms. */
  readonly restart?: RestartLimits;
  /**
   * `--hang-after SECONDS`: an agent process that prints nothing for this long while it
   * works on a prompt (not while it waits for a permission answer) is killed as hung and
   * restarted. Default: none here (`warden acp` passes its default, `defaultHangAfter`); 0
   * is none too. Normalised with the rest by `agentSettingsOf` into the port's `watchdog`.
   */
  readonly hangAfterMs?: number;
  /**
   * `--tool-hang-after SECONDS`: the silence allowed while one of the agent's tool calls
   * runs (the adapter says so), with `hangAfterMs` on. Default: the port's (30 minutes).
   */
  readonly toolHangAfterMs?: number;
  /**
   * `--max-line-mib`: the longest line read from the agent process, in bytes (default 64
   * MiB, as from the editor). A longer line is skipped as it streams, reported
   * (`agent.lineDropped`), and the process goes on.
   */
  readonly maxLineBytes?: number;
  /**
   * `--agent-protocol`: the ACP version offered a native ACP agent (`acp:`, `claude-acp`,
   * `codex-acp`, ...): `v1` (the default), `v2`, or `auto` (v2 offered, v1 if refused).
   * Adapters and the demo agent ignore it.
   */
  readonly agentProtocol?: AgentProtocol;
  /**
   * `--max-memory MIB`: the soft memory limit of each agent process tree, in bytes. Above
   * it, the agent process is recycled at the next turn boundary (stopped gracefully,
   * restarted, the conversation resumed; no turn cut). Default: none.
   */
  readonly maxMemoryBytes?: number;
  /**
   * `--max-memory-hard MIB`: the hard limit, in bytes. Above it, the agent's whole process
   * tree is killed at once (exit reason `memory_exceeded`; a prompt in flight fails as in a
   * crash). Default: 1.25 × `maxMemoryBytes`; none without it.
   */
  readonly maxMemoryHardBytes?: number;
  /** `--memory-poll SECONDS`: how often the tree's memory is sampled, in ms (default 1000). */
  readonly memoryPollMs?: number;
  /**
   * `--memory-cgroup`: also put each agent process in cgroups of its own where warden may
   * create them (a v1 memory cgroup with the hard limit, a v2 cgroup for `cgroup.kill`;
   * src/port/agent-cgroup.ts). Default `false`: /proc sampling only.
   */
  readonly memoryCgroup?: boolean;
  /**
   * `--max-cpu PERCENT`: the CPU limit of each agent process tree, in percent of one core
   * (100: one core), enforced by the kernel through a v1 cpu cgroup where this process may
   * create one (src/port/cpu-limit.ts; `cpuLimitMethod()` says whether it can). Default: none.
   */
  readonly maxCpuPercent?: number;
  /**
   * `--on-crash`: what becomes of a prompt the agent process died under: `continue` (the
   * default for agents that resume their conversation: Claude, Codex) sends the restarted agent
   * the prompt again when no tool call had started, else a text naming the tool calls the crash
   * cut, and the prompt ends normally; `retry` always sends the prompt again; `fail` answers it
   * `agent_crashed` (the default for agents that cannot resume). docs/recovery.md.
   */
  readonly onCrash?: OnCrash;
  /** `--max-continuations`: how many times one prompt is continued after crashes before it fails (default 2). */
  readonly maxContinuations?: number;
  /** `--rate-limit-retries`: how many times a prompt a rate limit or an overload ended (before any tool call) is sent again (default 3; 0: never). docs/recovery.md. */
  readonly rateLimitRetries?: number;
}

/** The hang watchdog's two limits, in ms: the port's `watchdog` option, handed down unchanged. */
export interface HangLimits {
  /** The silence allowed while the agent owes output (no tool running, no permission asked). */
  readonly idleMs: number;
  /** The silence allowed while one of its tool calls runs. */
  readonly toolIdleMs: number;
}

/** `createHost`'s `supervision` option: restart limits and the hang watchdog, each part optional. */
export interface SupervisionOptions {
  readonly intensity?: number;
  readonly period?: number;
  /** As {@link AgentOptions.hangAfterMs}, over it. */
  readonly hangAfterMs?: number;
  /** As {@link AgentOptions.toolHangAfterMs}, over it (accepted here too: `hangAfterMs` is, and the two go together). */
  readonly toolHangAfterMs?: number;
}

/**
 * How known agents are run, every option in its one shape; `undefined` means "not set here":
 * the agent's own default (restarts, line limit) or no watchdog.
 */
export interface AgentSettings {
  /** Where the executable is looked up (`--agent-command`, the lookup environment, the directory). */
  readonly lookup: ResolveOptions;
  /** `isolated` (default) or `inherit` (`--inherit-env`). */
  readonly envPolicy: 'isolated' | 'inherit' | undefined;
  /** The agent's own variables (`--env NAME=VALUE`). */
  readonly env: Readonly<Record<string, string | undefined>> | undefined;
  /** Host variables passed through (`--env NAME`). */
  readonly passthrough: readonly string[] | undefined;
  /** `--restart-intensity`, `supervision.intensity`/`period`; undefined: the agent's own. */
  readonly restart: RestartLimits | undefined;
  /** `--hang-after`/`--tool-hang-after`, `hangAfterMs`/`toolHangAfterMs`; undefined: no watchdog. */
  readonly watchdog: HangLimits | undefined;
  /** `--max-line-mib`: the longest line read from the agent process, in bytes; undefined: the port's 64 MiB. */
  readonly maxLineBytes: number | undefined;
  /** `--agent-protocol`; absent: v1. */
  readonly protocol: AgentProtocol | undefined;
  /** `--max-memory`, `--max-memory-hard`, `--memory-poll`: the port's `memoryLimit`; undefined: no limit. */
  readonly memoryLimit: MemoryLimitInput | undefined;
  /** `--max-cpu`: the port's `cpuLimit`; undefined: no limit. */
  readonly cpuLimit: CpuLimitInput | undefined;
  /** `--on-crash`; undefined: the agent's default (crash-policy.ts, `crashPolicyOf`). */
  readonly onCrash: OnCrash | undefined;
  /** `--max-continuations`; undefined: the default (2). */
  readonly maxContinuations: number | undefined;
  /** `--rate-limit-retries`; undefined: the default (3). */
  readonly rateLimitRetries: number | undefined;
}

/**
 * The one normalisation of the agent options: `supervision` (createHost's) over
 * `options` (createHost's `agentOptions`, or what the command line parsed). Restart limits
 * given in part are completed from {@link agentRestartDefaults}; a watchdog is on when
 * `hangAfterMs` is set and not 0 (a negative one is refused by the port), its tool limit then `toolHangAfterMs` or the port's
 * default ({@link defaultToolIdleMs}, 30 min).
 */
export function agentSettingsOf(options: AgentOptions = {}, supervision: SupervisionOptions = {}): AgentSettings {
  const restart: RestartLimits | undefined =
    supervision.intensity !== undefined || supervision.period !== undefined
      ? { intensity: supervision.intensity ?? agentRestartDefaults.intensity, period: supervision.period ?? agentRestartDefaults.period }
      : options.restart && { intensity: options.restart.intensity, period: options.restart.period };
  const hangAfterMs = supervision.hangAfterMs || options.hangAfterMs;
  return {
    lookup: {
      ...(options.agentCommand ? { agentCommand: options.agentCommand } : {}),
      ...(options.lookupEnv ? { lookupEnv: options.lookupEnv } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
    },
    envPolicy: options.envPolicy,
    env: options.env,
    passthrough: options.passthrough,
    restart,
    watchdog: hangAfterMs ? { idleMs: hangAfterMs, toolIdleMs: supervision.toolHangAfterMs || options.toolHangAfterMs || defaultToolIdleMs } : undefined,
    maxLineBytes: options.maxLineBytes || undefined,
    protocol: options.agentProtocol,
    memoryLimit: memoryLimitOf(options),
    cpuLimit: cpuLimitSettings(options.maxCpuPercent ? { percent: options.maxCpuPercent } : undefined),
    onCrash: options.onCrash,
    maxContinuations: options.maxContinuations,
    rateLimitRetries: options.rateLimitRetries,
  };
}

/** The port's memory limits from the options, checked here (a bad pair fails `createHost`, not the first session). */
function memoryLimitOf(options: AgentOptions): MemoryLimitInput | undefined {
  if (!options.maxMemoryBytes && !options.maxMemoryHardBytes) return undefined;
  const input: MemoryLimitInput = {
    ...(options.maxMemoryBytes ? { softBytes: options.maxMemoryBytes } : {}),
    ...(options.maxMemoryHardBytes ? { hardBytes: options.maxMemoryHardBytes } : {}),
    ...(options.memoryPollMs ? { pollMs: options.memoryPollMs } : {}),
    ...(options.memoryCgroup ? { cgroup: true } : {}),
  };
  memoryLimitSettings(input);
  return input;
}
