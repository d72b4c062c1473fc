/**
 * `warden acp --agent NAME`: an ACP agent on this process's stdio, serving the named agent
 * through a host (journal, recovery, session/list and session/load). stdout carries ACP
 * messages only; everything else goes to stderr or the log file.
 */
import { journalDelayOfEnv } from './journal-delay-env.js';
import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { agentFor } from '../adapters/agent-factory.js';
import { AgentUnavailableError } from '../adapters/registry.js';
import { createHost } from '../runtime/host.js';
import { stdioTransport, type StdioTransport } from '../jsonrpc/stdio-transport.js';
import { defaultDrainTimeoutMs } from '../acp/drain-timeout.js';
import { LogFileError } from '../inspect/log-sink.js';
import { agentFlags, agentNames, agentOptionsOf, checkMemoryFlags, cpuLimitWarning, eventLog, otelHelp, postgresOptionsOf, settledAgentFlags, type AgentCommandOptions, type AgentFlagValues, type EventLog } from './agent-flags.js';
import { bridgeFlags } from './bridge-flags.js';
import { argumentProblem, helpRow, optionRows, parseFlags, type FlagTable } from './flag-table.js';
import { telemetrySettings } from '../telemetry/telemetry-settings.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/** What `warden acp` was asked for: the shared agent options, and `--otel`. */
export type AcpCommandOptions = AgentCommandOptions & {
  /** `--otel`: export traces and metrics over OTLP/HTTP even without `OTEL_EXPORTER_OTLP_ENDPOINT` (then to http://localhost:4318). */
  readonly otel: boolean;
};

/** The flags of `warden acp` (without `--connect` / `--daemon`: bridge-flags.ts). */
export const acpFlags: FlagTable<AgentFlagValues & { otel: boolean }> = { ...agentFlags, '--otel': { field: 'otel', help: otelHelp } };

/** `warden acp --help`. */
export const acpUsage = `Usage: warden acp --agent NAME [options]
       warden acp --connect URL [--token-file PATH] [--agent NAME] [--drain-timeout SECONDS] [--keepalive SECONDS]
       warden acp --agent NAME --daemon [--listen ADDRESS] [--token-file PATH] [--keepalive SECONDS] [options]

An ACP agent on stdio (what an editor launches), serving NAME under supervision. stdout
carries ACP messages only.

Options:
${optionRows(acpFlags, 30, { extra: [helpRow()] })}

Through a daemon (warden serve; docs/serve.md):
${optionRows(bridgeFlags, 30, { only: ['--connect', '--daemon', '--token-file', '--keepalive', '--otel'] })}

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
  let values: ReturnType<typeof settledAgentFlags<AgentFlagValues & { otel: boolean }>>;
  try {
    const parsed = parseFlags(acpFlags, args, shortUsage);
    if (parsed === 'help') return { help: true };
    values = settledAgentFlags(parsed);
    postgresOptionsOf(values);
    checkMemoryFlags(values);
  } catch (error) {
    return argumentProblem('warden acp', error);
  }
  const { agent } = values;
  if (!agent) return { error: `warden acp: --agent is required (${agentNames.replace('\n', ' ')}). ${shortUsage}` };
  return { ...values, agent };
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
  const cpuWarning = cpuLimitWarning(parsed);
  if (cpuWarning) process.stderr.write(`warden acp: ${cpuWarning}\n`);
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
