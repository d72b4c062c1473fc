/**
 * `warden acp --agent NAME`: an ACP agent on this process's stdio, serving the named agent
 * through a host (journal, recovery, session/list and session/load). stdout carries ACP
 * messages only; everything else goes to stderr or the log file.
 */
import { journalDelayOfEnv } from './journal-delay-env.js';
import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { agentFor } from '../adapters/agent-factory.js';
import { AgentUnavailableError, defaultHangAfter } from '../adapters/registry.js';
import { createHost } from '../runtime/host.js';
import { defaultStdioMaxLineBytes, stdioTransport, type StdioTransport } from '../jsonrpc/stdio-transport.js';
import { defaultKeepaliveIntervalMs } from '../jsonrpc/websocket-keepalive.js';
import { defaultDrainTimeoutMs } from '../acp/drain-timeout.js';
import { LogFileError } from '../inspect/log-sink.js';
import { agentFlagDefaults, agentFlagHandlers, agentOptionsOf, eventLog, postgresOptionsOf, type AgentCommandOptions, type EventLog } from './agent-flags.js';
import { ArgumentError, readFlags } from './arguments.js';
import { agentRestartDefaults } from '../supervision/agent-restart-defaults.js';
import { defaultTokenPath } from '../serve/token-file.js';
import { telemetrySettings } from '../telemetry/telemetry-settings.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/** What `warden acp` was asked for: the shared agent options, and `--otel`. */
export type AcpCommandOptions = AgentCommandOptions & {
  /** `--otel`: export traces and metrics over OTLP/HTTP even without `OTEL_EXPORTER_OTLP_ENDPOINT` (then to http://localhost:4318). */
  readonly otel: boolean;
};

/** Bytes in a MiB (`--max-line-mib`). */
const mebibyte = 1024 * 1024;

/** `warden acp --help`. */
export const acpUsage = `Usage: warden acp --agent NAME [options]
       warden acp --connect URL [--token-file PATH] [--agent NAME] [--drain-timeout SECONDS] [--keepalive SECONDS]
       warden acp --agent NAME --daemon [--listen ADDRESS] [--token-file PATH] [--keepalive SECONDS] [options]

An ACP agent on stdio (what an editor launches), serving NAME under supervision. stdout
carries ACP messages only.

Options:
  --agent NAME                  claude, codex, gemini, opencode, claude-acp, codex-acp, demo,
                                or acp:<command line>
  --agent-command PATH          the agent's executable (instead of PATH / CLAUDE_CODE_EXECUTABLE / CODEX_PATH)
  --cwd DIR                     run from DIR (relative paths, native ACP agents' working directory)
  --store PATH                  the session journal (SQLite file, :memory:, or
                                a postgres://USER@HOST:PORT/DB URL, shared by hosts);
                                default $XDG_STATE_HOME/acp-warden/journal.sqlite
  --lease SECONDS               a PostgreSQL store: how long this host's sessions stay
                                its own after its last heartbeat (default 12)
  --advertise ws://HOST:PORT/acp  a PostgreSQL store: where other hosts reach this one
  --log-file PATH               write the log there (JSON lines, level info) instead of stderr
                                (pretty lines, level warn)
  --log-level LEVEL             debug, info, warn or error: the least severe written
  --log-format FORMAT           json (one object per line: time, level, message, the event) or pretty
  --restart-intensity N/SECONDS at most N restarts of an agent process in SECONDS (default ${agentRestartDefaults.intensity}/${agentRestartDefaults.period / 1000})
  --hang-after SECONDS          an agent silent this long while it owes output (a prompt or a
                                handshake in flight, no tool running) is killed as hung and
                                restarted (default ${defaultHangAfter.idleMs / 1000}; waits for permission answers never
                                count; 0 turns the watchdog off)
  --tool-hang-after SECONDS     the silence allowed while one of the agent's tool calls runs
                                (a build, a test suite) before it is killed as hung (default
                                ${defaultHangAfter.toolIdleMs / 1000})
  --max-line-mib N              the longest message line read from the editor and from the
                                agent, in MiB (default ${defaultStdioMaxLineBytes / mebibyte}); a longer editor request is answered
                                -32600 by its id; a longer agent line is skipped and logged,
                                and the agent goes on
  --drain-timeout SECONDS       when stdin ends, what the editor already sent is still served and
                                answered for at most SECONDS (default ${defaultDrainTimeoutMs / 1000}); then running turns are
                                cancelled and what is left is answered -32603
  --env NAME[=VALUE]            pass a host variable (NAME) or set one (NAME=VALUE) for the agent
  --inherit-env                 give the agent this process's whole environment
  --inspect URL                 send every actor to the XState inspector at this WebSocket
                                address (say ws://127.0.0.1:8080); secrets redacted
  --otel                        export OpenTelemetry traces and metrics over OTLP/HTTP (on as
                                well when OTEL_EXPORTER_OTLP_ENDPOINT is set; OpenTelemetry's
                                OTEL_* variables apply; the SDK is an optional install:
                                docs/observability.md)
  -h, --help                    this help

Through a daemon (warden serve; docs/serve.md):
  --connect URL                 a thin stdio <-> WebSocket bridge to the daemon at URL
                                (ws://127.0.0.1:8767/acp, or unix:PATH); the daemon runs the
                                agents; with --agent, new sessions ask for that agent
  --daemon                      the same to the user's default daemon (127.0.0.1:8767, or
                                --listen), started in the background with these options when
                                none answers (its log, with its pid: serve.log beside the
                                token file, --token-file's or the default)
  --token-file PATH             the daemon's token file (default ${defaultTokenPath()})
  --keepalive SECONDS           the bridge pings the daemon this often (default ${defaultKeepaliveIntervalMs / 1000}; 0 never); no
                                answer for two intervals (a half-open connection: the daemon's
                                host or network gone) and it exits with status 5
  --otel                        with --daemon: the daemon it starts exports OpenTelemetry (the
                                bridge itself traces nothing; with --connect the daemon decides)

stdin and exit: when stdin ends (the editor half-closed, or "printf ... | warden acp"), nothing
more is read, but every request already received is answered (prompts run to their end) and
stdout is flushed; then the agents stop and warden exits 0. If stdout is closed too (EPIPE),
or on SIGTERM/SIGINT, it stops at once: what is unanswered gets -32603 (if it can be written).

Exit status: 0 when the editor closed the connection, 1 on an internal error, 2 on a usage
error, an agent that is not installed, or a journal, log or token file that cannot be opened;
with --connect or --daemon, 3 when no daemon answers (none could be started), 4 when the
daemon refused the connection (token, origin), 5 when it closed or lost it while in use.`;

const shortUsage = 'Run "warden acp --help" for the options.';

/** Parses `warden acp` arguments; a problem is a message that names it and the fix. */
export function parseAcpArgs(args: readonly string[]): AcpCommandOptions | { error: string } | { help: true } {
  const values = agentFlagDefaults();
  let otel = false;
  try {
    if (readFlags(args, { ...agentFlagHandlers(values), '--otel': () => (otel = true) }, shortUsage)) return { help: true };
    postgresOptionsOf(values);
  } catch (error) {
    if (error instanceof ArgumentError) return { error: `warden acp: ${error.message}` };
    throw error;
  }
  const { agent } = values;
  if (!agent) return { error: `warden acp: --agent is required (claude, codex, gemini, opencode, claude-acp, codex-acp, demo, or acp:<command line>). ${shortUsage}` };
  return { ...values, agent, otel };
}

export { agentOptionsOf };

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
    log = eventLog(parsed, 'warden acp');
  } catch (error) {
    if (!(error instanceof LogFileError)) throw error;
    process.stderr.write(`warden acp: --log-file: ${error.message}\n`);
    return 2;
  }
  const telemetry = await telemetryOf(parsed);
  let journalDelay: ReturnType<typeof journalDelayOfEnv>;
  try {
    journalDelay = journalDelayOfEnv();
  } catch (error) {
    process.stderr.write(`warden acp: ${(error as Error).message}\n`);
    return 2;
  }
  let host: ReturnType<typeof createHost> | undefined;
  try {
    // Fail at once, before the editor's first request, when the agent is not installed.
    agentFor(parsed.agent, agentOptions);
    // The host taps the editor's connection (turn spans), times its journal, hears its events.
    host = createHost({ defaultAgent: parsed.agent, agentOptions, telemetry, ...(parsed.store ? { store: parsed.store } : {}), postgres: postgresOptionsOf(parsed), ...journalDelay, ...(parsed.inspect ? { inspect: parsed.inspect } : {}) });
    // A PostgreSQL store that cannot be reached fails here, before the editor's first answer.
    await host.opened;
  } catch (error) {
    process.stderr.write(`warden acp: ${(error as Error).message}\n`);
    await host?.stop();
    await telemetry?.shutdown();
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
  // The spans still open end, and what is left is exported (bounded).
  await telemetry?.shutdown();
  log.close();
  return code;
}

/**
 * Telemetry, when --otel or OpenTelemetry's variables ask for it (telemetry-settings.ts);
 * nothing of OpenTelemetry is loaded otherwise. An SDK that is not installed is said on
 * stderr, and warden runs without telemetry: the editor's agent starts all the same.
 */
async function telemetryOf(parsed: AcpCommandOptions): Promise<Telemetry | undefined> {
  const settings = telemetrySettings(parsed.otel);
  if (!settings.enabled) return undefined;
  try {
    return await (await import('../telemetry/telemetry.js')).startTelemetry(settings, 'warden acp');
  } catch (error) {
    process.stderr.write(`warden acp: telemetry is off: ${(error as Error).message}\n`);
    return undefined;
  }
}

/** Waits for stdout to take everything sent, for at most `boundMs`. */
async function flushed(stdio: StdioTransport, boundMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([stdio.flush(), new Promise<void>((resolve) => (timer = setTimeout(resolve, boundMs)))]);
  clearTimeout(timer);
}
