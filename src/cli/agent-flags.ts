/**
 * The options `warden acp` and `warden serve` share: which agent, how it is found and run
 * (command, environment, restarts, watchdog), the journal, the log, line limits and the
 * drain. Parsed here once, so both commands accept the same spellings and say the same
 * things about a bad value.
 */
import { isPostgresUrl } from '../journal/store-url.js';
import type { AgentOptions } from '../adapters/agent-factory.js';
import { defaultHangAfter } from '../adapters/registry.js';
import { logLevels, type LogLevel } from '../host/host-log.js';
import type { HostEvent } from '../runtime/host.js';
import { createLogSink, logFileWriter } from '../inspect/log-sink.js';
import { ArgumentError, oneOf, positiveNumber, restartIntensity, type FlagHandler } from './arguments.js';

/** What the shared agent options asked for. */
export interface AgentCommandOptions {
  readonly agent: string;
  readonly agentCommand: string | undefined;
  readonly env: Record<string, string | undefined>;
  readonly passthrough: string[];
  readonly inheritEnv: boolean;
  /** The journal: a path, `:memory:` or a `postgres://` URL; default under the user's state directory. */
  readonly store: string | undefined;
  /** A PostgreSQL store's lease, in ms (`--lease SECONDS`; the journal's default 12 s). */
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
}

/** The shared options as they are read, before `--agent` is known to be there. */
export type AgentFlagValues = { -readonly [K in Exclude<keyof AgentCommandOptions, 'agent'>]: AgentCommandOptions[K] } & { agent: string | undefined };

/** Fresh values with every default set. */
export function agentFlagDefaults(): AgentFlagValues {
  return {
    agent: undefined,
    agentCommand: undefined,
    env: {},
    passthrough: [],
    inheritEnv: false,
    store: undefined,
    lease: undefined,
    advertise: undefined,
    cwd: undefined,
    logFile: undefined,
    restart: undefined,
    hangAfterMs: defaultHangAfter.idleMs,
    toolHangAfterMs: defaultHangAfter.toolIdleMs,
    inspect: undefined,
    logLevel: undefined,
    logFormat: undefined,
    maxLineBytes: undefined,
    drainTimeoutMs: undefined,
  };
}

/** The flag handlers of the shared options, writing into `into` (for {@link readFlags}). */
export function agentFlagHandlers(into: AgentFlagValues): Record<string, FlagHandler> {
  return {
    '--agent': (value) => (into.agent = value()),
    '--agent-command': (value) => (into.agentCommand = value()),
    '--inherit-env': () => (into.inheritEnv = true),
    '--env': (value) => {
      const setting = value();
      const at = setting.indexOf('=');
      if (at < 0) into.passthrough.push(setting);
      else into.env[setting.slice(0, at)] = setting.slice(at + 1);
    },
    '--store': (value) => (into.store = value()),
    '--lease': (value) => (into.lease = leaseSeconds(value()) * 1000),
    '--advertise': (value) => (into.advertise = advertiseUrl(value())),
    '--cwd': (value) => (into.cwd = value()),
    '--log-file': (value) => (into.logFile = value()),
    '--log-level': (value) => (into.logLevel = oneOf('--log-level', value(), logLevels)),
    '--log-format': (value) => (into.logFormat = oneOf('--log-format', value(), ['json', 'pretty'] as const)),
    '--restart-intensity': (value) => (into.restart = restartIntensity('--restart-intensity', value())),
    '--hang-after': (value) => (into.hangAfterMs = secondsOrOff('--hang-after', value()) * 1000),
    '--tool-hang-after': (value) => (into.toolHangAfterMs = positiveNumber('--tool-hang-after', value()) * 1000),
    '--max-line-mib': (value) => (into.maxLineBytes = Math.max(1, Math.floor(positiveNumber('--max-line-mib', value()) * 1024 * 1024))),
    '--drain-timeout': (value) => (into.drainTimeoutMs = positiveNumber('--drain-timeout', value()) * 1000),
    '--inspect': (value) => {
      const url = value();
      if (!/^wss?:\/\/\S+$/u.test(url)) throw new ArgumentError(`--inspect expects the inspector's WebSocket address (say ws://127.0.0.1:8080), got ${JSON.stringify(url)}`);
      into.inspect = url;
    },
  };
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
  };
}

/** `--lease SECONDS`: at least 0.1, whole milliseconds. */
function leaseSeconds(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || !(value * 1000 >= 100) || !Number.isInteger(value * 1000)) throw new ArgumentError(`--lease expects a number of seconds of at least 0.1 (whole milliseconds), got ${JSON.stringify(text)}`);
  return value;
}

function advertiseUrl(text: string): string {
  if (!/^wss?:\/\/[^/\s]+/u.test(text)) throw new ArgumentError(`--advertise expects the ws://HOST:PORT/acp address other hosts reach this one at, got ${JSON.stringify(text)}`);
  return text;
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

/** `--hang-after SECONDS`: a positive number, or 0 (off). */
function secondsOrOff(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !(value >= 0) || !Number.isFinite(value)) throw new ArgumentError(`${flag} expects a number of seconds (0 turns the watchdog off), got ${JSON.stringify(text)}`);
  return value;
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
