/** How to run a native ACP agent behind the passthrough. */
import type { PortInput } from '../../port/port.js';
import type { BackoffOptions } from '../../supervision/backoff.js';
import type { AgentProtocol } from '../../acp/agent-client-contract.js';
import type { CrashChoice } from '../crash-policy.js';

/** How to run a native ACP agent. */
export interface AcpPassthroughOptions {
  /** A name for the agent (`gemini`). */
  readonly name: string;
  readonly executable: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  readonly envPolicy?: 'isolated' | 'inherit';
  readonly passthrough?: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly restart?: { readonly intensity?: number; readonly period?: number; readonly backoff?: BackoffOptions };
  readonly port?: Partial<Omit<PortInput, 'command' | 'args' | 'env'>>;
  /** The ACP version offered the agent (default `v1`; `v2`, `auto`: the agent client's `protocol`). */
  readonly protocol?: AgentProtocol;
  /**
   * `--on-crash`, `--max-continuations`: what becomes of a prompt the agent process died under.
   * Default: `continue` for an agent that advertises `session/resume` or `loadSession` (the cut
   * prompt goes on once its session is re-attached, as a CLI session's does: crash-policy.ts),
   * else `fail` (`agent_crashed`).
   */
  readonly crash?: CrashChoice;
}

/** The port input for the agent process. */
export function portInputOf(options: AcpPassthroughOptions): PortInput {
  return {
    // A long line (an update with a screenshot, a big diff) is skipped, not a reason to kill the agent.
    oversize: 'skip',
    ...options.port,
    command: options.executable,
    args: options.args ?? [],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { policy: options.envPolicy ?? 'isolated', passthrough: options.passthrough ?? [], explicit: options.env ?? {} },
  };
}
