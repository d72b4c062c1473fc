/**
 * The options `warden acp` and `warden serve` share: which agent, how it is found and run
 * (command, environment, restarts, watchdog, memory limits), the journal, the log, line limits and the
 * drain. Declared here once as a flag table (flag-table.ts), which both commands' tables take
 * entries from, so both accept the same spellings and say the same things about a bad value.
 */
import { isPostgresUrl } from '../journal/store-url.js';
import type { AgentOptions } from '../adapters/agent-factory.js';
import type { AgentProtocol } from '../acp/agent-client-contract.js';
import { defaultHangAfter } from '../adapters/registry.js';
import { logLevels, type LogLevel } from '../host/host-log.js';
import type { HostEvent } from '../runtime/host.js';
import { createLogSink, logFileWriter } from '../inspect/log-sink.js';
import { ArgumentError } from './arguments.js';
import { cgroupSupport } from '../port/agent-cgroup.js';
import { choice, cpuPercent, leaseSeconds, matching, mebibytes, restartLimit, seconds, watchdogSeconds, whole } from './flag-shapes.js';
import type { FlagTable } from './flag-table.js';
import { defaultDrainTimeoutMs } from '../acp/drain-timeout.js';
import { defaultStdioMaxLineBytes } from '../jsonrpc/stdio-transport.js';
import { agentRestartDefaults } from '../supervision/agent-restart-defaults.js';
import { defaultLeaseMs } from '../journal/lease.js';
import { defaultHardOverSoft, defaultMemoryPollMs } from '../port/memory-limit.js';
import { defaultMaxContinuations, onCrashChoices, type OnCrash } from '../adapters/crash-policy.js';
import { defaultRateLimitRetries } from '../adapters/rate-limit.js';

/** Bytes in a MiB (`--max-line-mib`). */
const mebibyte = 1024 * 1024;

/** What the shared agent options asked for. */
export interface AgentCommandOptions {
  readonly agent: string;
  readonly agentCommand: string | undefined;
  readonly env: Record<string, string | undefined>;
  readonly passthrough: string[];
  readonly inheritEnv: boolean;
  /** The journal: a path, `:memory:` or a `postgres://` URL; default under the user's state directory. */
  readonly store: string | undefined;
  /** A PostgreSQL store's lease, in ms (`--lease SECONDS`; default {@link defaultLeaseMs}). */
  readonly lease: number | undefined;
  /** The `ws://…` address other hosts of a PostgreSQL store reach this one at (`--advertise`). */
  readonly advertise: string | undefined;
  readonly cwd: string | undefined;
  readonly logFile: string | undefined;
  readonly restart: { readonly intensity: number; readonly period: number } | undefined;
  /** The hang watchdog's limit while the agent owes output, in ms; 0: no watchdog. Default 120 s. */
  readonly hangAfterMs: number;
  /** The watchdog's limit while a tool call of the agent runs, in ms. Default 30 min. */
  readonly toolHangAfterMs: number;
  /** The XState inspector's WebSocket address. */
  readonly inspect: string | undefined;
  readonly logLevel: LogLevel | undefined;
  readonly logFormat: 'json' | 'pretty' | undefined;
  /** The longest line (or frame) read from a client and from the agent process, in bytes (default 64 MiB). */
  readonly maxLineBytes: number | undefined;
  /** How long a client's requests may still run when it is going (EOF, or the daemon's SIGTERM), in ms (default 30 s). */
  readonly drainTimeoutMs: number | undefined;
  /** The ACP version offered a native ACP agent (`--agent-protocol`; default v1). */
  readonly agentProtocol: AgentProtocol | undefined;
  /** The soft memory limit of each agent process tree, in bytes (`--max-memory MIB`). */
  readonly maxMemoryBytes: number | undefined;
  /** The hard memory limit, in bytes (`--max-memory-hard MIB`; default 1.25 × the soft one). */
  readonly maxMemoryHardBytes: number | undefined;
  /** How often the tree's memory is sampled, in ms (`--memory-poll SECONDS`; default 1 s). */
  readonly memoryPollMs: number | undefined;
  /** Put each agent process in cgroups of its own where possible (`--memory-cgroup`). */
  readonly memoryCgroup: boolean;
  /** The CPU limit of each agent process tree, in percent of one core (`--max-cpu PERCENT`). */
  readonly maxCpuPercent: number | undefined;
  /** What becomes of a prompt the agent process died under (`--on-crash`; default: the agent's, crash-policy.ts). */
  readonly onCrash: OnCrash | undefined;
  /** How many times one prompt is continued after crashes (`--max-continuations`; default 2). */
  readonly maxContinuations: number | undefined;
  /** How many times a prompt a rate limit ended is sent again (`--rate-limit-retries`; default 3, 0: never). */
  readonly rateLimitRetries: number | undefined;
}

/** The shared options as the table fills them, before `--agent` is known to be there and `--env` is split. */
export type AgentFlagValues = { -readonly [K in Exclude<keyof AgentCommandOptions, 'agent' | 'env' | 'passthrough'>]: AgentCommandOptions[K] } & {
  agent: string | undefined;
  /** Each `--env` as given: `NAME` (passed from the host) or `NAME=VALUE` (set). */
  envSettings: string[];
};

/** The agents' list that `--agent` takes, as the help says it. */
export const agentNames = 'claude, codex, gemini, opencode, claude-acp, codex-acp, demo,\nor acp:<command line>';

/**
 * The shared agent options of `warden acp` and `warden serve`, with the help `warden acp`
 * prints (`warden serve` takes the same entries, some with a shorter help).
 */
export const agentFlags = {
  '--agent': { field: 'agent', value: 'NAME', help: agentNames },
  '--agent-command': { field: 'agentCommand', value: 'PATH', help: "the agent's executable (instead of PATH / CLAUDE_CODE_EXECUTABLE / CODEX_PATH)" },
  '--agent-protocol': {
    field: 'agentProtocol',
    value: 'VERSION',
    shape: choice(['v1', 'v2', 'auto'] as const),
    help: 'the ACP version offered a native ACP agent (acp:, claude-acp,\ncodex-acp, gemini, opencode): v1 (default), v2, or auto (v2\noffered, v1 if the agent answers 1 or refuses 2)',
  },
  '--cwd': { field: 'cwd', value: 'DIR', help: "run from DIR (relative paths, native ACP agents' working directory)" },
  '--store': { field: 'store', value: 'PATH', help: 'the session journal (SQLite file, :memory:, or\na postgres://USER@HOST:PORT/DB URL, shared by hosts);\ndefault $XDG_STATE_HOME/acp-warden/journal.sqlite' },
  '--lease': { field: 'lease', value: 'SECONDS', shape: leaseSeconds, help: `a PostgreSQL store: how long this host's sessions stay\nits own after its last heartbeat (default ${defaultLeaseMs / 1000})` },
  '--advertise': {
    field: 'advertise',
    value: 'ws://HOST:PORT/acp',
    shape: matching(/^wss?:\/\/[^/\s]+/u, 'a ws:// or wss:// address', 'the ws://HOST:PORT/acp address other hosts reach this one at'),
    help: 'a PostgreSQL store: where other hosts reach this one',
  },
  '--log-file': { field: 'logFile', value: 'PATH', help: 'write the log there (JSON lines, level info) instead of stderr\n(pretty lines, level warn)' },
  '--log-level': { field: 'logLevel', value: 'LEVEL', shape: choice(logLevels), help: 'debug, info, warn or error: the least severe written' },
  '--log-format': { field: 'logFormat', value: 'FORMAT', shape: choice(['json', 'pretty'] as const), help: 'json (one object per line: time, level, message, the event) or pretty' },
  '--restart-intensity': { field: 'restart', value: 'N/SECONDS', shape: restartLimit, help: `at most N restarts of an agent process in SECONDS (default ${agentRestartDefaults.intensity}/${agentRestartDefaults.period / 1000})` },
  '--hang-after': {
    field: 'hangAfterMs',
    value: 'SECONDS',
    shape: watchdogSeconds,
    default: defaultHangAfter.idleMs,
    help: `an agent silent this long while it owes output (a prompt or a\nhandshake in flight, no tool running) is killed as hung and\nrestarted (default ${defaultHangAfter.idleMs / 1000}; waits for permission answers never\ncount; 0 turns the watchdog off)`,
  },
  '--tool-hang-after': {
    field: 'toolHangAfterMs',
    value: 'SECONDS',
    shape: seconds,
    default: defaultHangAfter.toolIdleMs,
    help: `the silence allowed while one of the agent's tool calls runs\n(a build, a test suite) before it is killed as hung (default\n${defaultHangAfter.toolIdleMs / 1000})`,
  },
  '--on-crash': {
    field: 'onCrash',
    value: 'POLICY',
    shape: choice(onCrashChoices),
    help: 'a prompt whose agent process died: continue (once restarted\nand resumed, the agent gets the prompt again if no tool call had\nstarted, else a note of the tool calls the crash cut, and the\nprompt ends normally; the default for claude, codex and ACP\nagents with session/resume or session/load), retry (the prompt\nagain, always) or fail (-32603 agent_crashed; the demo agent\nalways fails so)',
  },
  '--max-continuations': {
    field: 'maxContinuations',
    value: 'N',
    shape: whole('continuations of one prompt'),
    help: `at most N continuations of one prompt after crashes (default\n${defaultMaxContinuations}); the next crash fails it agent_crashed`,
  },
  '--rate-limit-retries': {
    field: 'rateLimitRetries',
    value: 'N',
    shape: whole('retries after rate limits'),
    help: `a prompt the model provider refused with a rate limit or an\noverload (HTTP 429/529) before any tool call started: sent again\nafter the wait it names, else 1 s, 2 s, 4 s ..., at most N times\n(default ${defaultRateLimitRetries}; 0: never); not a crash, no restart is counted`,
  },
  '--max-line-mib': {
    field: 'maxLineBytes',
    value: 'N',
    shape: mebibytes,
    help: `the longest message line read from the editor and from the\nagent, in MiB (default ${defaultStdioMaxLineBytes / mebibyte}); a longer editor request is answered\n-32600 by its id; a longer agent line is skipped and logged,\nand the agent goes on`,
  },
  '--max-memory': {
    field: 'maxMemoryBytes',
    value: 'MIB',
    shape: mebibytes,
    help: `the soft memory limit of each agent process tree (the agent and\nevery process it started), in MiB: above it, the agent is restarted\nat the next turn boundary and its conversation resumed (no turn\ncut); polled from /proc (default: none)`,
  },
  '--max-memory-hard': {
    field: 'maxMemoryHardBytes',
    value: 'MIB',
    shape: mebibytes,
    help: `the hard limit: above it the whole tree is killed at once (exit\nreason memory_exceeded; a prompt in flight fails as in a crash)\n(default ${defaultHardOverSoft} × --max-memory)`,
  },
  '--memory-poll': {
    field: 'memoryPollMs',
    value: 'SECONDS',
    shape: seconds,
    help: `how often the memory of each agent process tree is sampled\n(default ${defaultMemoryPollMs / 1000}; about 1-2 ms of CPU per sample of 50 processes)`,
  },
  '--memory-cgroup': {
    field: 'memoryCgroup',
    help: 'also put each agent process in cgroups of its own where warden\nmay create them: the hard limit enforced by the kernel (a v1\nmemory cgroup), the tree killed with cgroup.kill (v2); warden\nagents says what this machine allows',
  },
  '--max-cpu': {
    field: 'maxCpuPercent',
    value: 'PERCENT',
    shape: cpuPercent,
    help: 'the CPU limit of each agent process tree, in percent of one core\n(100: one core), enforced by the kernel through a v1 cpu cgroup\nwhere warden may create one (else said at start and by warden\nagents); a tree held to it runs slower, nothing is killed',
  },
  '--drain-timeout': {
    field: 'drainTimeoutMs',
    value: 'SECONDS',
    shape: seconds,
    help: `when stdin ends, what the editor already sent is still served and\nanswered for at most SECONDS (default ${defaultDrainTimeoutMs / 1000}); then running turns are\ncancelled and what is left is answered -32603`,
  },
  '--env': { field: 'envSettings', value: 'NAME[=VALUE]', repeat: 'append', help: 'pass a host variable (NAME) or set one (NAME=VALUE) for the agent' },
  '--inherit-env': { field: 'inheritEnv', help: "give the agent this process's whole environment" },
  '--inspect': {
    field: 'inspect',
    value: 'URL',
    shape: matching(/^wss?:\/\/\S+$/u, 'a ws:// or wss:// address', "the inspector's WebSocket address (say ws://127.0.0.1:8080)"),
    help: 'send every actor to the XState inspector at this WebSocket\naddress (say ws://127.0.0.1:8080); secrets redacted',
  },
} satisfies FlagTable<AgentFlagValues>;

/** `--otel`, of `warden acp` and `warden serve`. */
export const otelHelp = "export OpenTelemetry traces and metrics over OTLP/HTTP (on as\nwell when OTEL_EXPORTER_OTLP_ENDPOINT is set; OpenTelemetry's\nOTEL_* variables apply; the SDK is an optional install:\ndocs/observability.md)";

/** The shared options with `--env` split into the variables set and those passed from the host. */
export function settledAgentFlags<T extends AgentFlagValues>(values: T): Omit<T, 'envSettings'> & Pick<AgentCommandOptions, 'env' | 'passthrough'> {
  const { envSettings, ...rest } = values;
  const env: Record<string, string | undefined> = {};
  const passthrough: string[] = [];
  for (const setting of envSettings) {
    const at = setting.indexOf('=');
    if (at < 0) passthrough.push(setting);
    else env[setting.slice(0, at)] = setting.slice(at + 1);
  }
  return { ...rest, env, passthrough };
}

/**
 * How the command runs its agents, from its command line: the options `createHost` takes
 * (`agentOptions`), normalised there by `agentSettingsOf` as a program's are (the watchdog on
 * unless `--hang-after 0`: a `hangAfterMs` of 0 is none there).
 */
export function agentOptionsOf(parsed: AgentCommandOptions): AgentOptions {
  return {
    ...(parsed.agentCommand ? { agentCommand: parsed.agentCommand } : {}),
    env: parsed.env,
    passthrough: parsed.passthrough,
    envPolicy: parsed.inheritEnv ? 'inherit' : 'isolated',
    ...(parsed.restart ? { restart: parsed.restart } : {}),
    hangAfterMs: parsed.hangAfterMs,
    toolHangAfterMs: parsed.toolHangAfterMs,
    ...(parsed.maxLineBytes ? { maxLineBytes: parsed.maxLineBytes } : {}),
    ...(parsed.agentProtocol ? { agentProtocol: parsed.agentProtocol } : {}),
    ...(parsed.maxMemoryBytes ? { maxMemoryBytes: parsed.maxMemoryBytes } : {}),
    ...(parsed.maxMemoryHardBytes ? { maxMemoryHardBytes: parsed.maxMemoryHardBytes } : {}),
    ...(parsed.memoryPollMs ? { memoryPollMs: parsed.memoryPollMs } : {}),
    ...(parsed.memoryCgroup ? { memoryCgroup: true } : {}),
    ...(parsed.maxCpuPercent ? { maxCpuPercent: parsed.maxCpuPercent } : {}),
    ...(parsed.onCrash ? { onCrash: parsed.onCrash } : {}),
    ...(parsed.maxContinuations !== undefined ? { maxContinuations: parsed.maxContinuations } : {}),
    ...(parsed.rateLimitRetries !== undefined ? { rateLimitRetries: parsed.rateLimitRetries } : {}),
  };
}

/** What to say on stderr at start when `--max-cpu` was given but this machine cannot enforce it (no cpu cgroup can be made); `undefined` otherwise. */
export function cpuLimitWarning(values: Pick<AgentCommandOptions, 'maxCpuPercent'>): string | undefined {
  const { cpuV1, missingCpu } = cgroupSupport();
  if (values.maxCpuPercent === undefined || cpuV1) return undefined;
  return `--max-cpu ${values.maxCpuPercent} is not enforced: ${missingCpu}`;
}

/** The memory flags checked together: a hard limit below the soft one, or a poll interval or cgroups with no limit, is refused naming the fix. */
export function checkMemoryFlags(values: Pick<AgentCommandOptions, 'maxMemoryBytes' | 'maxMemoryHardBytes' | 'memoryPollMs' | 'memoryCgroup'>): void {
  const { maxMemoryBytes: soft, maxMemoryHardBytes: hard, memoryPollMs, memoryCgroup } = values;
  if (memoryCgroup && soft === undefined && hard === undefined) throw new ArgumentError('--memory-cgroup applies with a memory limit only: add --max-memory MIB (or --max-memory-hard MIB), or leave --memory-cgroup out');
  if (soft !== undefined && hard !== undefined && hard < soft) throw new ArgumentError(`--max-memory-hard (${hard / mebibyte} MiB) must be at least --max-memory (${soft / mebibyte} MiB): the soft limit recycles the agent before the hard one kills it`);
  if (memoryPollMs !== undefined && soft === undefined && hard === undefined) throw new ArgumentError('--memory-poll applies with a memory limit only: add --max-memory MIB (or --max-memory-hard MIB), or leave --memory-poll out');
}

/**
 * The PostgreSQL journal's options from `--lease` and `--advertise`; refused (naming the fix)
 * with a store that is not PostgreSQL, where they would mean nothing.
 */
export function postgresOptionsOf(values: Pick<AgentCommandOptions, 'store' | 'lease' | 'advertise'>): { lease?: number; advertise?: string } {
  const given = values.lease !== undefined ? '--lease' : values.advertise !== undefined ? '--advertise' : undefined;
  if (given && !isPostgresUrl(values.store ?? '')) throw new ArgumentError(`${given} applies to a PostgreSQL store only: add --store postgres://USER@HOST:PORT/DB, or leave ${given} out`);
  return { ...(values.lease !== undefined ? { lease: values.lease } : {}), ...(values.advertise !== undefined ? { advertise: values.advertise } : {}) };
}

/** The host's log: its listener, and the closing of its file (if any). */
export interface EventLog {
  readonly listener: (event: HostEvent) => void;
  readonly close: () => void;
}

/**
 * Where host events go: log lines at or above the level, to the log file (JSON by default)
 * or to stderr (pretty by default; also where the file's lines go once it cannot be
 * written), each stderr line prefixed with `command` (`warden acp`). Never stdout: for
 * `warden acp` that is the protocol channel. Throws a `LogFileError` for a file that cannot be opened.
 */
export function eventLog(parsed: AgentCommandOptions, command: string): EventLog {
  const toFile = parsed.logFile;
  const toStderr = (line: string) => process.stderr.write(`${command}: ${line}`);
  const file = toFile ? logFileWriter(toFile, { fallback: toStderr, report: (message) => toStderr(`--log-file: ${message}\n`) }) : undefined;
  const listener = createLogSink({
    format: parsed.logFormat ?? (toFile ? 'json' : 'pretty'),
    level: parsed.logLevel ?? (toFile ? 'info' : 'warn'),
    write: file ?? toStderr,
  });
  return { listener, close: () => file?.close() };
}
