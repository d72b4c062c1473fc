/**
 * The agent registry: the agents acp-warden knows, how to find each one's executable, how
 * to read its version, whether it is installed here. An @xstate/store: a machine would be
 * overkill for a table that only records probe results.
 */
import { createStore } from '@xstate/store';
import { findExecutable } from '../port/resolve-executable.js';
import { defaultToolIdleMs } from '../port/watchdog.js';
import type { AdapterDefinition, ExecutableSpec } from './adapter.js';
import { claudeAdapter } from './claude/adapter.js';
import { codexAdapter } from './codex/adapter.js';

/** How an agent is run. */
export type AgentKind =
  /** A CLI with its own protocol, behind an adapter (`claude`, `codex`). */
  | 'adapter'
  /** A CLI that speaks ACP itself (`gemini --acp`). */
  | 'acp'
  /** Built into acp-warden (`demo`). */
  | 'builtin';

/** A known agent. */
export interface AgentEntry {
  readonly name: string;
  readonly kind: AgentKind;
  readonly description: string;
  /** Where its executable comes from (none for built-in agents). */
  readonly executable?: ExecutableSpec;
  /** Arguments that make it speak ACP (native ACP agents). */
  readonly acpArgs?: readonly string[];
  /** Host variables it needs (native ACP agents; adapters declare theirs). */
  readonly passthrough?: readonly string[];
  readonly adapter?: AdapterDefinition;
}

/**
 * The hang watchdog `warden acp` runs every agent process with, unless told otherwise
 * (`--hang-after`, `--tool-hang-after`). `idleMs`, 120 s: the silence allowed while the agent
 * owes output (a handshake or a prompt in flight, no tool running, no permission asked); a
 * model streams its first token within seconds, and the recorded Claude Code and Codex
 * transcripts are never silent for more than 1 s while they owe output. `toolIdleMs`, 30 min:
 * the silence allowed while one of its tool calls runs (Claude Code's Bash runs up to 10
 * minutes by itself; builds and test suites print nothing to the agent's stdout).
 */
export const defaultHangAfter: { readonly idleMs: number; readonly toolIdleMs: number } = Object.freeze({ idleMs: 120_000, toolIdleMs: defaultToolIdleMs });

/** The agents acp-warden knows. `acp:<command line>` runs any other ACP agent. */
export const knownAgents: readonly AgentEntry[] = [
  { name: 'claude', kind: 'adapter', description: 'Claude Code CLI (stream-json control protocol)', executable: claudeAdapter.executable, adapter: claudeAdapter },
  { name: 'codex', kind: 'adapter', description: 'Codex CLI (app-server JSON-RPC)', executable: codexAdapter.executable, adapter: codexAdapter },
  {
    name: 'gemini',
    kind: 'acp',
    description: 'Gemini CLI, native ACP',
    executable: { name: 'gemini', envVar: 'GEMINI_CLI_PATH', versionArgs: ['--version'], install: 'npm install -g @google/gemini-cli' },
    acpArgs: ['--acp'],
    // GOOGLE_GEMINI_BASE_URL points the CLI at a gateway (or a local fake: it selects auth type `gateway`).
    passthrough: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_GEMINI_BASE_URL', 'GEMINI_MODEL', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'],
  },
  {
    name: 'opencode',
    kind: 'acp',
    description: 'OpenCode, native ACP',
    executable: { name: 'opencode', envVar: 'OPENCODE_PATH', versionArgs: ['--version'], install: 'npm install -g opencode-ai' },
    acpArgs: ['acp'],
    // opencode keeps its config, data and state under the XDG directories, and reads its
    // providers from OPENCODE_CONFIG / OPENCODE_CONFIG_CONTENT; the OPENCODE_DISABLE_* switches
    // keep it off the network (models.dev, updates, LSP downloads, plugins, sharing).
    passthrough: [
      'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENCODE_CONFIG', 'OPENCODE_CONFIG_CONTENT', 'OPENCODE_CONFIG_DIR',
      'OPENCODE_DISABLE_MODELS_FETCH', 'OPENCODE_DISABLE_AUTOUPDATE', 'OPENCODE_DISABLE_LSP_DOWNLOAD', 'OPENCODE_DISABLE_DEFAULT_PLUGINS',
      'OPENCODE_DISABLE_SHARE', 'OPENCODE_DISABLE_CLAUDE_CODE',
      'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY',
    ],
  },
  {
    name: 'claude-acp',
    kind: 'acp',
    description: 'Claude Code through @agentclientprotocol/claude-agent-acp',
    executable: { name: 'claude-agent-acp', envVar: 'CLAUDE_AGENT_ACP_PATH', install: 'npm install -g @agentclientprotocol/claude-agent-acp' },
    acpArgs: [],
    passthrough: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'CLAUDE_CODE_EXECUTABLE', 'CLAUDE_CONFIG_DIR'],
  },
  {
    name: 'codex-acp',
    kind: 'acp',
    description: 'Codex through @agentclientprotocol/codex-acp',
    executable: { name: 'codex-acp', envVar: 'CODEX_ACP_PATH', install: 'npm install -g @agentclientprotocol/codex-acp' },
    acpArgs: [],
    passthrough: ['OPENAI_API_KEY', 'CODEX_HOME', 'CODEX_PATH'],
  },
  { name: 'demo', kind: 'builtin', description: 'The built-in demo agent (no model, no network)' },
];

/** What a probe found out about one agent. */
export interface AgentAvailability {
  readonly name: string;
  readonly installed: boolean;
  readonly path: string | undefined;
  readonly version: string | undefined;
  /** Why it is not available, and how to fix it. */
  readonly problem: string | undefined;
}

/** The registry store: known agents and what the last probe found. */
export function createRegistry(agents: readonly AgentEntry[] = knownAgents) {
  return createStore({
    context: { agents, availability: {} as Readonly<Record<string, AgentAvailability>> },
    on: {
      probed: (context, event: { availability: AgentAvailability }) => ({
        ...context,
        availability: { ...context.availability, [event.availability.name]: event.availability },
      }),
    },
  });
}

/** The registry store type. */
export type Registry = ReturnType<typeof createRegistry>;

/**
 * Where to look: `--agent-command` first, then the agent's environment variable, then the PATH.
 * `warden agents` and `warden acp` both look with these (the defaults: warden's own
 * environment and working directory), so that they always agree.
 */
export interface ResolveOptions {
  readonly agentCommand?: string;
  /**
   * The environment the executable is looked up in (its PATH, `CLAUDE_CODE_EXECUTABLE`,
   * `CODEX_PATH`, …): the one warden was started with, default `process.env`. Never the
   * agent's own environment (`--env`, the isolated policy): that is what the agent runs
   * with, not where it is found.
   */
  readonly lookupEnv?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
}

/** The error for an agent that cannot run here; its message says how to fix it. */
export class AgentUnavailableError extends Error {
  override readonly name = 'AgentUnavailableError';
  readonly agent: string;
  constructor(agent: string, message: string) {
    super(message);
    this.agent = agent;
  }
}

/** Looks up an agent by name; `acp:<command line>` makes an entry on the fly. */
export function findAgent(name: string, agents: readonly AgentEntry[] = knownAgents): AgentEntry {
  if (name.startsWith('acp:')) {
    const words = splitCommandLine(name.slice(4));
    if (words.length === 0) throw new AgentUnavailableError(name, 'Expected a command line after "acp:", as in --agent "acp:my-agent --stdio".');
    const [command, ...args] = words as [string, ...string[]];
    return { name, kind: 'acp', description: `ACP agent: ${command}`, executable: { name: command, install: `make sure "${command}" is installed and on the PATH` }, acpArgs: args };
  }
  const entry = agents.find((agent) => agent.name === name);
  if (!entry) {
    throw new AgentUnavailableError(name, `Unknown agent "${name}". Known agents: ${agents.map((agent) => agent.name).join(', ')}; or use acp:<command line> for any ACP agent.`);
  }
  return entry;
}

/** Splits a command line on spaces, honouring simple single and double quotes (no shell). */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/gu;
  for (const match of text.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3] ?? '');
  return words;
}

/** The executable an agent runs, or an `AgentUnavailableError` that says how to install it. */
export function resolveExecutable(entry: AgentEntry, options: ResolveOptions = {}): string {
  const spec = entry.executable;
  if (!spec) throw new AgentUnavailableError(entry.name, `Agent "${entry.name}" is built in and has no executable.`);
  const env = options.lookupEnv ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const candidate = options.agentCommand ?? (spec.envVar ? env[spec.envVar] : undefined) ?? spec.name;
  const source = options.agentCommand ? '--agent-command' : spec.envVar && env[spec.envVar] ? spec.envVar : 'PATH';
  const found = findExecutable(candidate, { PATH: env.PATH ?? '' }, cwd);
  if ('path' in found) return candidate.includes('/') ? candidate : found.path;
  const how = found.code === 'EACCES'
    ? `${candidate} (from ${source}) is not executable; check its permissions`
    : source === 'PATH'
      ? `"${candidate}" is not installed (not found on the PATH). Install it with: ${spec.install}${spec.envVar ? `; or point ${spec.envVar} or --agent-command at it` : '; or point --agent-command at it'}`
      : `${candidate} (from ${source}) does not exist`;
  throw new AgentUnavailableError(entry.name, `Agent "${entry.name}" cannot run: ${how}.`);
}

/** Probes one agent: is it installed, where, which version (with a short timeout). */
export async function probeAgent(entry: AgentEntry, options: ResolveOptions = {}): Promise<AgentAvailability> {
  if (entry.kind === 'builtin') return { name: entry.name, installed: true, path: undefined, version: 'built in', problem: undefined };
  let path: string;
  try {
    path = resolveExecutable(entry, options);
  } catch (error) {
    return { name: entry.name, installed: false, path: undefined, version: undefined, problem: (error as Error).message };
  }
  const versionArgs = entry.executable?.versionArgs;
  if (!versionArgs) return { name: entry.name, installed: true, path, version: undefined, problem: undefined };
  const env = options.lookupEnv ?? process.env;
  // Loaded here, not at import: `warden acp` reads the registry but probes nothing.
  const { execa } = await import('execa');
  const result = await execa(path, [...versionArgs], { reject: false, timeout: 5000, stdin: 'ignore', env: { PATH: env.PATH ?? '', HOME: env.HOME ?? '' }, extendEnv: false });
  if (result.exitCode === 0) return { name: entry.name, installed: true, path, version: String(result.stdout).trim().split('\n')[0], problem: undefined };
  // One line: execa's short message puts the spawn error on a line of its own.
  const why = (result.shortMessage ?? `exit code ${String(result.exitCode)}`).split('\n').map((part) => part.trim()).filter(Boolean).join('; ');
  return { name: entry.name, installed: true, path, version: undefined, problem: `Agent "${entry.name}" is installed at ${path} but \`${versionArgs.join(' ')}\` failed: ${why}.` };
}

/** Probes every known agent into the registry store; resolves with the availability table. */
export async function probeAll(registry: Registry, options: ResolveOptions = {}): Promise<AgentAvailability[]> {
  const results = await Promise.all(registry.getSnapshot().context.agents.map((entry) => probeAgent(entry, options)));
  for (const availability of results) registry.send({ type: 'probed', availability });
  return results;
}
