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
import { agentSettingsOf, type AgentOptions, type AgentSettings } from './agent-settings.js';
import { findAgent, resolveExecutable } from './registry.js';
import { crashChoiceOf } from './crash-policy.js';

export type { AgentOptions } from './agent-settings.js';


/** The port options the settings set (hang watchdog, line limit, memory limits), over the definition's. */
function portOverrides(settings: AgentSettings, base: AdapterDefinition['port'] = {}): { port?: AdapterDefinition['port'] } {
  if (!settings.watchdog && !settings.maxLineBytes && !settings.memoryLimit && !settings.cpuLimit) return {};
  return {
    port: {
      ...base,
      ...(settings.watchdog ? { watchdog: settings.watchdog } : {}),
      ...(settings.maxLineBytes ? { maxLineBytes: settings.maxLineBytes } : {}),
      ...(settings.memoryLimit ? { memoryLimit: settings.memoryLimit } : {}),
      ...(settings.cpuLimit ? { cpuLimit: settings.cpuLimit } : {}),
    },
  };
}

/**
 * The native agent for `name`. Throws `AgentUnavailableError` (with how to install it)
 * when the agent is unknown or not installed: fail at once, not at the first prompt.
 */
export function agentFor(name: string, options: AgentOptions = {}): NativeAgent {
  return agentOf(name, agentSettingsOf(options));
}

/**
 * The native agent for `name`, run as `settings` say (made once by {@link agentSettingsOf}:
 * `createHost` and the command line hand theirs down as is). Throws as {@link agentFor}.
 */
export function agentOf(name: string, settings: AgentSettings): NativeAgent {
  const entry = findAgent(name);
  // The demo agent runs as a real subprocess, so that it crashes and recovers like the others.
  if (entry.kind === 'builtin') {
    return demoAgentProcess({
      ...(settings.restart ? { restart: settings.restart } : {}),
      ...(settings.watchdog ? { watchdog: settings.watchdog } : {}),
      ...(settings.env ? { env: settings.env } : {}),
      ...(settings.memoryLimit ? { memoryLimit: settings.memoryLimit } : {}),
      ...(settings.cpuLimit ? { cpuLimit: settings.cpuLimit } : {}),
    });
  }
  // Found where warden itself looks (its own PATH and variables, as `warden agents` does);
  // `settings.env` is the agent's environment, not where to find it.
  const executable = resolveExecutable(entry, settings.lookup);
  if (entry.kind === 'adapter' && entry.adapter) {
    return createAdapterAgent({
      definition: {
        ...entry.adapter,
        ...(settings.restart ? { restart: { ...entry.adapter.restart, ...settings.restart } } : {}),
        ...portOverrides(settings, entry.adapter.port),
      },
      executable,
      ...(settings.envPolicy ? { envPolicy: settings.envPolicy } : {}),
      ...(settings.env ? { env: settings.env } : {}),
      ...(settings.passthrough ? { passthrough: settings.passthrough } : {}),
      // Unset, each session adapter takes its own default (Claude and Codex resume: `continue`).
      ...(settings.onCrash !== undefined || settings.maxContinuations !== undefined || settings.rateLimitRetries !== undefined ? { crash: crashChoiceOf(settings) } : {}),
    });
  }
  return createAcpPassthrough({
    name: entry.name,
    executable,
    args: entry.acpArgs ?? [],
    passthrough: [...(entry.passthrough ?? []), ...(settings.passthrough ?? [])],
    ...(settings.envPolicy ? { envPolicy: settings.envPolicy } : {}),
    ...(settings.env ? { env: settings.env } : {}),
    ...(settings.restart ? { restart: settings.restart } : {}),
    ...(settings.protocol ? { protocol: settings.protocol } : {}),
    // Unset: `continue` when the agent advertises session/resume or session/load, else `fail` (cut-prompts.ts).
    ...(settings.onCrash !== undefined || settings.maxContinuations !== undefined || settings.rateLimitRetries !== undefined ? { crash: crashChoiceOf(settings) } : {}),
    ...portOverrides(settings),
  });
}
