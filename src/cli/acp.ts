/**
 * `warden acp --agent NAME`: an ACP agent on this process's stdio, serving the named agent
 * through a host (journal, recovery, session/list and session/load). stdout carries ACP
 * messages only; everything else goes to stderr or the log file.
 */
import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { agentFor, type AgentOptions } from '../adapters/agent-factory.js';
import { AgentUnavailableError, defaultHangAfter } from '../adapters/registry.js';
import { createHost, type HostEvent } from '../host/host.js';
import { stdioTransport, type StdioTransport } from '../jsonrpc/stdio-transport.js';
import { defaultDrainTimeoutMs } from '../acp/agent-server.js';
import { logLevels, type LogLevel } from '../host/host-log.js';
import { createLogSink, LogFileError, logFileWriter } from '../inspect/log-sink.js';
import { ArgumentError, oneOf, positiveNumber, readFlags, restartIntensity } from './arguments.js';
import { agentRestartDefaults } from '../supervision/agent-restart-defaults.js';

/** What `warden acp` was asked for. */
export interface AcpCommandOptions {
  readonly agent: string;
  readonly agentCommand: string | undefined;
  readonly env: Record<string, string | undefined>;
  readonly passthrough: string[];
  readonly inheritEnv: boolean;
  /** The journal: a path or `:memory:`; default under the user's state directory. */
  readonly store: string | undefined;
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
  /** The longest line read from the editor and from the agent process, in bytes (default 64 MiB). */
  readonly maxLineBytes: number | undefined;
  /** After the editor's EOF, how long its requests may still run, in ms (default 30 s). */
  readonly drainTimeoutMs: number | undefined;
}

/** `warden acp --help`. */
export const acpUsage = `Usage: warden acp --agent NAME [options]

An ACP agent on stdio (what an editor launches), serving NAME under supervision. stdout
carries ACP messages only.

Options:
  --agent NAME                  claude, codex, gemini, opencode, claude-acp, codex-acp, demo,
                                or acp:<command line>
  --agent-command PATH          the agent's executable (instead of PATH / CLAUDE_CODE_EXECUTABLE / CODEX_PATH)
  --cwd DIR                     run from DIR (relative paths, native ACP agents' working directory)
  --store PATH                  the session journal (SQLite file, or :memory:);
                                default $XDG_STATE_HOME/acp-warden/journal.sqlite
  --log-file PATH               write the log there (JSON lines, level info) instead of stderr
                                (pretty lines, level warn)
  --log-level LEVEL             debug, info, warn or error: the least severe written
  --log-format FORMAT           json (one object per line: time, level, message, the event) or pretty
  --restart-intensity N/SECONDS at most N restarts of an agent process in SECONDS (default ${agentRestartDefaults.intensity}/${agentRestartDefaults.period / 1000})
  --hang-after SECONDS          an agent silent this long while it owes output (a prompt or a
                                handshake in flight, no tool running) is killed as hung and
                                restarted (default 120; waits for permission answers never
                                count; 0 turns the watchdog off)
  --tool-hang-after SECONDS     the silence allowed while one of the agent's tool calls runs
                                (a build, a test suite) before it is killed as hung (default
                                1800)
  --max-line-mib N              the longest message line read from the editor and from the
                                agent, in MiB (default 64); a longer editor request is answered
                                -32600 by its id; a longer agent line is skipped and logged,
                                and the agent goes on
  --drain-timeout SECONDS       when stdin ends, what the editor already sent is still served and
                                answered for at most SECONDS (default 30); then running turns are
                                cancelled and what is left is answered -32603
  --env NAME[=VALUE]            pass a host variable (NAME) or set one (NAME=VALUE) for the agent
  --inherit-env                 give the agent this process's whole environment
  --inspect URL                 send every actor to the XState inspector at this WebSocket
                                address (say ws://127.0.0.1:8080); secrets redacted
  -h, --help                    this help

stdin and exit: when stdin ends (the editor half-closed, or "printf ... | warden acp"), nothing
more is read, but every request already received is answered (prompts run to their end) and
stdout is flushed; then the agents stop and warden exits 0. If stdout is closed too (EPIPE),
or on SIGTERM/SIGINT, it stops at once: what is unanswered gets -32603 (if it can be written).

Exit status: 0 when the editor closed the connection, 1 on an internal error, 2 on a usage
error, an agent that is not installed, or a journal or log file that cannot be opened.`;

const shortUsage = 'Run "warden acp --help" for the options.';

/** Parses `warden acp` arguments; a problem is a message that names it and the fix. */
export function parseAcpArgs(args: readonly string[]): AcpCommandOptions | { error: string } | { help: true } {
  let agent: string | undefined;
  let agentCommand: string | undefined;
  const env: Record<string, string | undefined> = {};
  const passthrough: string[] = [];
  let inheritEnv = false;
  let store: string | undefined;
  let cwd: string | undefined;
  let logFile: string | undefined;
  let restart: AcpCommandOptions['restart'];
  let hangAfterMs = defaultHangAfter.idleMs;
  let toolHangAfterMs = defaultHangAfter.toolIdleMs;
  let inspect: string | undefined;
  let logLevel: LogLevel | undefined;
  let logFormat: 'json' | 'pretty' | undefined;
  let maxLineBytes: number | undefined;
  let drainTimeoutMs: number | undefined;
  try {
    const help = readFlags(args, {
      '--agent': (value) => (agent = value()),
      '--agent-command': (value) => (agentCommand = value()),
      '--inherit-env': () => (inheritEnv = true),
      '--env': (value) => {
        const setting = value();
        const at = setting.indexOf('=');
        if (at < 0) passthrough.push(setting);
        else env[setting.slice(0, at)] = setting.slice(at + 1);
      },
      '--store': (value) => (store = value()),
      '--cwd': (value) => (cwd = value()),
      '--log-file': (value) => (logFile = value()),
      '--log-level': (value) => (logLevel = oneOf('--log-level', value(), logLevels)),
      '--log-format': (value) => (logFormat = oneOf('--log-format', value(), ['json', 'pretty'] as const)),
      '--restart-intensity': (value) => (restart = restartIntensity('--restart-intensity', value())),
      '--hang-after': (value) => (hangAfterMs = secondsOrOff('--hang-after', value()) * 1000),
      '--tool-hang-after': (value) => (toolHangAfterMs = positiveNumber('--tool-hang-after', value()) * 1000),
      '--max-line-mib': (value) => (maxLineBytes = Math.max(1, Math.floor(positiveNumber('--max-line-mib', value()) * 1024 * 1024))),
      '--drain-timeout': (value) => (drainTimeoutMs = positiveNumber('--drain-timeout', value()) * 1000),
      '--inspect': (value) => {
        const url = value();
        if (!/^wss?:\/\/\S+$/u.test(url)) throw new ArgumentError(`--inspect expects the inspector's WebSocket address (say ws://127.0.0.1:8080), got ${JSON.stringify(url)}`);
        inspect = url;
      },
    }, shortUsage);
    if (help) return { help: true };
  } catch (error) {
    if (error instanceof ArgumentError) return { error: `warden acp: ${error.message}` };
    throw error;
  }
  if (!agent) return { error: `warden acp: --agent is required (claude, codex, gemini, opencode, claude-acp, codex-acp, demo, or acp:<command line>). ${shortUsage}` };
  return { agent, agentCommand, env, passthrough, inheritEnv, store, cwd, logFile, restart, hangAfterMs, toolHangAfterMs, inspect, logLevel, logFormat, maxLineBytes, drainTimeoutMs };
}

/** How `warden acp` runs its agents, from its command line (the watchdog on unless `--hang-after 0`). */
export function agentOptionsOf(parsed: AcpCommandOptions): AgentOptions {
  return {
    ...(parsed.agentCommand ? { agentCommand: parsed.agentCommand } : {}),
    env: parsed.env,
    passthrough: parsed.passthrough,
    envPolicy: parsed.inheritEnv ? 'inherit' : 'isolated',
    ...(parsed.restart ? { restart: parsed.restart } : {}),
    ...(parsed.hangAfterMs > 0 ? { hangAfterMs: parsed.hangAfterMs, toolHangAfterMs: parsed.toolHangAfterMs } : {}),
    ...(parsed.maxLineBytes ? { maxLineBytes: parsed.maxLineBytes } : {}),
  };
}

/** `--hang-after SECONDS`: a positive number, or 0 (off). */
function secondsOrOff(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !(value >= 0) || !Number.isFinite(value)) throw new ArgumentError(`${flag} expects a number of seconds (0 turns the watchdog off), got ${JSON.stringify(text)}`);
  return value;
}

/**
 * Runs the ACP agent until the editor closes stdin and everything it asked is answered (or
 * stdout fails, or a signal); resolves with the exit status.
 */
export async function runAcp(args: readonly string[]): Promise<number> {
  const parsed = parseAcpArgs(args);
  if ('help' in parsed) {
    process.stderr.write(`${acpUsage}\n`);
    return 0;
  }
  if ('error' in parsed) {
    process.stderr.write(`${parsed.error}\n`);
    return 2;
  }
  if (parsed.cwd) {
    const dir = resolvePath(parsed.cwd);
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
      process.stderr.write(`warden acp: --cwd ${dir} is not a directory; give an existing directory\n`);
      return 2;
    }
    process.chdir(dir);
  }
  const agentOptions = agentOptionsOf(parsed);
  let log: EventLog;
  try {
    // A log file that cannot be written would lose every line: refused before anything starts.
    log = eventLog(parsed);
  } catch (error) {
    if (!(error instanceof LogFileError)) throw error;
    process.stderr.write(`warden acp: --log-file: ${error.message}\n`);
    return 2;
  }
  let host;
  try {
    // Fail at once, before the editor's first request, when the agent is not installed.
    agentFor(parsed.agent, agentOptions);
    host = createHost({ defaultAgent: parsed.agent, agentOptions, ...(parsed.store ? { store: parsed.store } : {}), ...(parsed.inspect ? { inspect: parsed.inspect } : {}) });
  } catch (error) {
    process.stderr.write(`warden acp: ${(error as Error).message}\n`);
    log.close();
    if (error instanceof AgentUnavailableError || /cannot open the journal/.test((error as Error).message)) return 2;
    return 1;
  }
  host.on(log.listener);
  const stdio = stdioTransport(process.stdin, process.stdout, parsed.maxLineBytes ? { maxLineBytes: parsed.maxLineBytes } : {});
  // stdin's EOF drains (what was asked is answered, bounded by the drain timeout); stdout's EPIPE and the signals stop at once.
  const server = host.serve(stdio, parsed.drainTimeoutMs ? { drainTimeoutMs: parsed.drainTimeoutMs } : {});
  const ended = new Promise<number>((resolve) => {
    server.subscribe({
      complete: () => resolve(0),
      error: (error) => {
        process.stderr.write(`warden acp: ${error instanceof Error ? error.message : String(error)}\n`);
        resolve(1);
      },
    });
  });
  const stop = () => {
    if (server.getSnapshot().status === 'active') server.send({ type: 'supervisor.shutdown' });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const code = await ended;
  // Every answer reaches the pipe before we exit (the caller exits at once), unless the editor
  // stopped reading for good: the wait is bounded by the drain timeout.
  await flushed(stdio, parsed.drainTimeoutMs ?? defaultDrainTimeoutMs);
  // The editor is gone: every agent process stops gracefully before we exit.
  await host.stop();
  log.close();
  return code;
}

/** Waits for stdout to take everything sent, for at most `boundMs`. */
async function flushed(stdio: StdioTransport, boundMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([stdio.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))]);
  clearTimeout(timer);
}

/** The host's log: its listener, and the closing of its file (if any). */
interface EventLog {
  readonly listener: (event: HostEvent) => void;
  readonly close: () => void;
}

/**
 * Where host events go: log lines at or above the level, to the log file (JSON by default)
 * or to stderr (pretty by default; also where the file's lines go once it cannot be
 * written). Never stdout: that is the protocol channel.
 */
function eventLog(parsed: AcpCommandOptions): EventLog {
  const toFile = parsed.logFile;
  const toStderr = (line: string) => process.stderr.write(`warden acp: ${line}`);
  const file = toFile ? logFileWriter(toFile, { fallback: toStderr, report: (message) => toStderr(`--log-file: ${message}\n`) }) : undefined;
  const listener = createLogSink({
    format: parsed.logFormat ?? (toFile ? 'json' : 'pretty'),
    level: parsed.logLevel ?? (toFile ? 'info' : 'warn'),
    write: file ?? toStderr,
  });
  return { listener, close: () => file?.close() };
}
