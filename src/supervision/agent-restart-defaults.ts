/**
 * How an agent's process is restarted unless told otherwise, declared once (as OTP declares
 * `?default_flags`): the Claude Code and Codex adapters, native ACP agents (the passthrough),
 * `createHost({ supervision })` and `warden acp --restart-intensity` fall back to these. The
 * supervisor's own defaults (supervisor-flags.ts: 3 in 5 s, no backoff) stay OTP's; an agent
 * CLI takes seconds to start, so its window is longer and its restarts are spaced.
 */
import type { BackoffOptions } from './backoff.js';

/** The restart limits of one agent's processes. */
export interface AgentRestartDefaults {
  /** At most this many restarts... */
  readonly intensity: number;
  /** ...in this many ms, else the session (or the native agent) fails. */
  readonly period: number;
  /** The delay before each restart. */
  readonly backoff: BackoffOptions;
}

/** A real agent CLI: 3 restarts in 60 s, 200 ms doubling up to 5 s between them. */
export const agentRestartDefaults: AgentRestartDefaults = Object.freeze({
  intensity: 3,
  period: 60_000,
  backoff: Object.freeze({ minDelay: 200, maxDelay: 5000 }),
});

/**
 * The demo agent (`warden demo`, `--agent demo`): the same intensity in a shorter window,
 * with quicker restarts, so that a crash loop shows in seconds.
 */
export const demoAgentRestartDefaults: AgentRestartDefaults = Object.freeze({
  intensity: agentRestartDefaults.intensity,
  period: 30_000,
  backoff: Object.freeze({ minDelay: 100, maxDelay: 400 }),
});
