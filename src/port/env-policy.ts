/**
 * The environment an agent CLI gets. `isolated` (the default) starts from a small baseline
 * of the host's variables; `inherit` starts from all of them. In both, the API keys of
 * agents are removed unless the adapter passes them through by name, so one agent's key
 * never reaches another agent. Then the adapter's variables, then the explicit ones
 * (where `undefined` unsets), win in that order.
 */
export type EnvPolicy = 'isolated' | 'inherit';

/** Variables an isolated CLI keeps from the host: what a program needs to run, and nothing secret. */
export const baselineVariables: readonly string[] = Object.freeze([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LANGUAGE', 'TZ',
  'TMPDIR', 'TEMP', 'TMP',
  'SSL_CERT_FILE', 'SSL_CERT_DIR', 'NIX_SSL_CERT_FILE', 'NODE_EXTRA_CA_CERTS',
]);

/** Prefixes an isolated CLI keeps (locale settings). */
export const baselinePrefixes: readonly string[] = Object.freeze(['LC_']);

/**
 * Secrets of agents and model providers, removed in both policies unless passed through.
 * Variables whose names end in `_API_KEY`, `_AUTH_TOKEN` or `_ACCESS_TOKEN` count as well.
 */
export const agentSecretVariables: readonly string[] = Object.freeze([
  'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY', 'CODEX_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY',
  'AZURE_OPENAI_API_KEY', 'MISTRAL_API_KEY', 'GROQ_API_KEY', 'OPENROUTER_API_KEY',
  // Session markers of a parent agent: a CLI started from inside another must not think
  // it is that agent's child.
  'CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', 'CLAUDE_SESSION_ID',
]);

const secretSuffixes = ['_API_KEY', '_AUTH_TOKEN', '_ACCESS_TOKEN'];

/** Whether a variable name is treated as an agent secret. */
export function isAgentSecret(name: string): boolean {
  return agentSecretVariables.includes(name) || secretSuffixes.some((suffix) => name.endsWith(suffix));
}

/** What {@link buildEnvironment} combines. */
export interface EnvironmentInput {
  /** Default `isolated`. */
  readonly policy?: EnvPolicy;
  /** The host's environment; default `process.env`. */
  readonly parent?: Readonly<Record<string, string | undefined>>;
  /** Names copied from the host even when secret or outside the baseline (an adapter's own key). */
  readonly passthrough?: readonly string[];
  /** The adapter's variables. */
  readonly adapter?: Readonly<Record<string, string | undefined>>;
  /** Explicit variables (options, the user); `undefined` removes a variable. */
  readonly explicit?: Readonly<Record<string, string | undefined>>;
}

/** Builds the child's environment; a pure function of its input. */
export function buildEnvironment(input: EnvironmentInput = {}): Record<string, string> {
  const policy = input.policy ?? 'isolated';
  if (policy !== 'isolated' && policy !== 'inherit') {
    throw new TypeError(`Expected the \`env\` policy to be 'isolated' or 'inherit', got \`${String(policy)}\` (${typeof policy}).`);
  }
  const parent = input.parent ?? process.env;
  const env: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    const kept = policy === 'inherit' || baselineVariables.includes(name) || baselinePrefixes.some((prefix) => name.startsWith(prefix));
    if (kept && !isAgentSecret(name)) env[name] = value;
  }
  for (const name of input.passthrough ?? []) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  for (const layer of [input.adapter, input.explicit]) {
    for (const [name, value] of Object.entries(layer ?? {})) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
  }
  return { ...env };
}
