/**
 * From an agent name to something the ACP agent server can serve: an adapter agent
 * (`claude`, `codex`), a supervised passthrough (native ACP agents, `acp:<command line>`),
 * or the built-in demo agent (a real subprocess too: demo-process.ts). What `warden acp --agent NAME` runs.
 */
import { demoAgentProcess } from './demo-process.js';
import type { NativeAgent } from '../protocol/native-agent.js';
import { createAcpPassthrough } from './acp-passthrough.js';
import type { AdapterDefinition } from './adapter.js';
import { createAdapterAgent } from './adapter-agent.js';
import { findAgent, resolveExecutable, type ResolveOptions } from './registry.js';

/** Options of {@link agentFor}. */
export interface AgentOptions extends ResolveOptions {
  /** `isolated` (default) or `inherit` (`--inherit-env`). */
  readonly envPolicy?: 'isolated' | 'inherit';
  /** `--env NAME=VALUE`: the agent's own variables (not where it is looked up: `lookupEnv`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** `--env NAME`: host variables passed through. */
  readonly passthrough?: readonly string[];
  /** `--restart-intensity N/SECONDS`: at most `intensity` restarts of an agent process in `period` ms. */
  readonly restart?: { readonly intensity: number; readonly period: number };
  /**
   * `--hang-after SECONDS`: an agent process that prints nothing for this long while it
   * works on a prompt (not while it waits for a permission answer) is killed as hung and
   * restarted. Default: none here (`warden acp` passes its default, `defaultHangAfter`).
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
}

/** The port options the command line sets (hang watchdog, line limit), over the definition's. */
function portOverrides(options: AgentOptions, base: AdapterDefinition['port'] = {}): { port?: AdapterDefinition['port'] } {
  if (!options.hangAfterMs && !options.maxLineBytes) return {};
  return {
    port: {
      ...base,
      ...(options.hangAfterMs ? { watchdog: { idleMs: options.hangAfterMs, ...(options.toolHangAfterMs ? { toolIdleMs: options.toolHangAfterMs } : {}) } } : {}),
      ...(options.maxLineBytes ? { maxLineBytes: options.maxLineBytes } : {}),
    },
  };
}

/** The part of {@link AgentOptions} that says where the executable is looked up. */
function lookupOptions(options: AgentOptions): ResolveOptions {
  return {
    ...(options.agentCommand ? { agentCommand: options.agentCommand } : {}),
    ...(options.lookupEnv ? { lookupEnv: options.lookupEnv } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  };
}

/**
 * The native agent for `name`. Throws `AgentUnavailableError` (with how to install it)
 * when the agent is unknown or not installed: fail at once, not at the first prompt.
 */
export function agentFor(name: string, options: AgentOptions = {}): NativeAgent {
  const entry = findAgent(name);
  // The demo agent runs as a real subprocess, so that it crashes and recovers like the others.
  if (entry.kind === 'builtin') {
    return demoAgentProcess({
      ...(options.restart ? { restart: options.restart } : {}),
      ...(options.hangAfterMs ? { hangAfterMs: options.hangAfterMs } : {}),
      ...(options.env ? { env: options.env } : {}),
    });
  }
  // Found where warden itself looks (its own PATH and variables, as `warden agents` does);
  // `options.env` is the agent's environment, not where to find it.
  const executable = resolveExecutable(entry, lookupOptions(options));
  if (entry.kind === 'adapter' && entry.adapter) {
    return createAdapterAgent({
      definition: {
        ...entry.adapter,
        ...(options.restart ? { restart: { ...entry.adapter.restart, ...options.restart } } : {}),
        ...portOverrides(options, entry.adapter.port),
      },
      executable,
      ...(options.envPolicy ? { envPolicy: options.envPolicy } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.passthrough ? { passthrough: options.passthrough } : {}),
    });
  }
  return createAcpPassthrough({
    name: entry.name,
    executable,
    args: entry.acpArgs ?? [],
    passthrough: [...(entry.passthrough ?? []), ...(options.passthrough ?? [])],
    ...(options.envPolicy ? { envPolicy: options.envPolicy } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.restart ? { restart: options.restart } : {}),
    ...portOverrides(options),
  });
}
