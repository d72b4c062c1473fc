/**
 * `warden serve`: a long-running host serving ACP over WebSocket at `/acp` (one JSON-RPC
 * message per text frame), its access guarded by a bearer token and an origin allowlist.
 * Nothing is written to stdout; the address and the token file are said on stderr.
 */
import { journalDelayOfEnv } from './journal-delay-env.js';
import { statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { agentFor } from '../adapters/agent-factory.js';
import { AgentUnavailableError, defaultHangAfter } from '../adapters/registry.js';
import { defaultStdioMaxLineBytes } from '../jsonrpc/stdio-transport.js';
import { defaultJournalPath } from '../journal/sqlite-journal.js';
import { createHost } from '../runtime/host.js';
import { LogFileError } from '../inspect/log-sink.js';
import { createConnectionOwner } from '../serve/connection-owner.js';
import { listenDaemon, type DaemonListener } from '../serve/daemon-listener.js';
import { defaultListen, parseListenAddress, type ListenAddress } from '../serve/listen-address.js';
import { defaultServeSettings, type ServeSettings } from '../serve/serve-settings.js';
import type { UnattendedPolicy } from '../serve/unattended-policy.js';
import { defaultTokenPath, readOrCreateToken } from '../serve/token-file.js';
import { agentFlags, agentNames, agentOptionsOf, checkMemoryFlags, cpuLimitWarning, eventLog, otelHelp, postgresOptionsOf, settledAgentFlags, type AgentCommandOptions, type AgentFlagValues, type EventLog } from './agent-flags.js';
import { choice, keepaliveSeconds, matching, seconds, secondsOrNever, whole } from './flag-shapes.js';
import { argumentProblem, helpRow, optionRows, parseFlags, type FlagTable } from './flag-table.js';
import { defaultKeepaliveIntervalMs } from '../jsonrpc/websocket-keepalive.js';
import { telemetrySettings } from '../telemetry/telemetry-settings.js';
import type { Telemetry } from '../telemetry/telemetry.js';

/** Exit status of `warden serve` when the listen address is taken (another daemon, or another program). */
export const addressInUseStatus = 3;

/** What `warden serve` was asked for. */
export interface ServeCommandOptions extends AgentCommandOptions {
  readonly listen: ListenAddress;
  readonly tokenFile: string;
  readonly allowOrigins: readonly string[];
  readonly settings: ServeSettings;
  /** The WebSocket keepalive's ping interval, ms (0: none). */
  readonly pingIntervalMs: number;
  /** `--otel`: export traces and metrics over OTLP/HTTP even without `OTEL_EXPORTER_OTLP_ENDPOINT` (then to http://localhost:4318). */
  readonly otel: boolean;
}

/** The agent of the daemon's sessions that name none, without `--agent`. */
const defaultServeAgent = 'demo';

/** The flags of `warden serve` as its table fills them. */
export type ServeFlagValues = AgentFlagValues & {
  listen: string;
  tokenFile: string | undefined;
  allowOrigins: string[];
  idleTimeoutMs: number;
  unattended: UnattendedPolicy['policy'];
  unattendedTimeoutMs: UnattendedPolicy['timeoutMs'];
  loadLimit: number;
  maxLiveSessions: number;
  pingIntervalMs: number;
  otel: boolean;
};

/** The flags of `warden serve`: its own, and the agent options with the help it shows for them. */
export const serveFlags: FlagTable<ServeFlagValues> = {
  '--listen': {
    field: 'listen',
    value: 'ADDRESS',
    default: defaultListen,
    help: `127.0.0.1:PORT (default ${defaultListen}), [::1]:PORT, localhost:PORT,\nunix:PATH; any other address (0.0.0.0:PORT, HOST:PORT) serves\nthe network in plain text: put TLS in front (docs/serve.md)`,
  },
  '--token-file': { field: 'tokenFile', value: 'PATH', help: `the bearer token's file, created (0600, random) when missing;\ndefault ${defaultTokenPath()}` },
  '--allow-origin': {
    field: 'allowOrigins',
    value: 'ORIGIN',
    repeat: 'append',
    shape: matching(/^(?:null|[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/\s]+\/?)$/u, 'scheme://host[:port], or null', 'an origin as a browser sends it (scheme://host[:port], say https://editor.example)'),
    help: 'a browser origin allowed to connect (repeatable); requests\nwith any other Origin header are refused 403',
  },
  '--agent': { ...agentFlags['--agent'], default: defaultServeAgent, help: `the agent of sessions that do not choose one (default ${defaultServeAgent}):\n${agentNames}` },
  '--idle-timeout': {
    field: 'idleTimeoutMs',
    value: 'SECONDS',
    shape: secondsOrNever,
    default: defaultServeSettings.idleTimeoutMs,
    help: `a session's agent is stopped after this long without any\nconnection (default ${defaultServeSettings.idleTimeoutMs / 1000}; 0: never; takes effect with detached sessions)`,
  },
  '--max-live-agents': {
    field: 'maxLiveSessions',
    value: 'N',
    shape: whole('sessions kept live on their agents'),
    default: defaultServeSettings.maxLiveSessions,
    help: 'at most N sessions live on their agents: past it, the least\nrecently used ones with no connection and no turn are hibernated\n(agent stopped, kept in the journal, resumed by the next attach;\ndefault 0: no cap)',
  },
  '--unattended': {
    field: 'unattended',
    value: 'wait|deny',
    shape: choice(['wait', 'deny'] as const),
    default: defaultServeSettings.unattended.policy,
    help: 'a permission request with no controller attached waits for one,\nor is rejected at once (default wait; takes effect with detached sessions)',
  },
  '--unattended-timeout': { field: 'unattendedTimeoutMs', value: 'SECONDS', shape: seconds, default: defaultServeSettings.unattended.timeoutMs, help: `with wait, answered cancelled after this long (default ${defaultServeSettings.unattended.timeoutMs / 1000})` },
  '--keepalive': {
    field: 'pingIntervalMs',
    value: 'SECONDS',
    shape: keepaliveSeconds,
    default: defaultKeepaliveIntervalMs,
    help: `ping every client this often; one silent for two intervals in a\nrow (a half-open connection) is closed (default ${defaultKeepaliveIntervalMs / 1000}; 0: never)`,
  },
  '--drain-timeout': { ...agentFlags['--drain-timeout'], help: `on SIGTERM/SIGINT, how long running turns may finish (default ${defaultServeSettings.drainTimeoutMs / 1000})` },
  '--agent-command': agentFlags['--agent-command'],
  '--agent-protocol': agentFlags['--agent-protocol'],
  '--cwd': { ...agentFlags['--cwd'], help: 'run from DIR' },
  '--store': { ...agentFlags['--store'], help: `the session journal (SQLite file, :memory:, or\na postgres://USER@HOST:PORT/DB URL, shared by hosts);\ndefault ${defaultJournalPath()}` },
  '--lease': agentFlags['--lease'],
  '--advertise': agentFlags['--advertise'],
  '--load-limit': {
    field: 'loadLimit',
    value: 'N',
    shape: whole('sessions this host owns before new ones go to other hosts'),
    default: defaultServeSettings.loadLimit,
    help: `a PostgreSQL store: sessions this host owns before a new one\ngoes to the least-loaded live host, if less loaded than this\none (default ${defaultServeSettings.loadLimit}; 0: whenever one is)`,
  },
  '--log-file': { ...agentFlags['--log-file'], help: 'the log (JSON lines, level info) instead of stderr (pretty, warn)' },
  '--log-level': { ...agentFlags['--log-level'], help: 'debug, info, warn or error' },
  '--log-format': { ...agentFlags['--log-format'], help: 'json or pretty' },
  '--restart-intensity': agentFlags['--restart-intensity'],
  '--hang-after': { ...agentFlags['--hang-after'], help: `the hang watchdog's limit (default ${defaultHangAfter.idleMs / 1000}; 0 turns it off)` },
  '--tool-hang-after': { ...agentFlags['--tool-hang-after'], help: `the silence allowed while a tool call runs (default ${defaultHangAfter.toolIdleMs / 1000})` },
  '--max-memory': { ...agentFlags['--max-memory'], help: 'the soft memory limit of each agent process tree, in MiB: the\nagent is restarted at the next turn boundary (default: none)' },
  '--max-memory-hard': { ...agentFlags['--max-memory-hard'], help: 'the hard limit: the tree is killed at once (memory_exceeded)\n(default 1.25 × --max-memory)' },
  '--memory-poll': agentFlags['--memory-poll'],
  '--memory-cgroup': agentFlags['--memory-cgroup'],
  '--max-cpu': agentFlags['--max-cpu'],
  '--on-crash': agentFlags['--on-crash'],
  '--max-continuations': agentFlags['--max-continuations'],
  '--rate-limit-retries': agentFlags['--rate-limit-retries'],
  '--max-line-mib': { ...agentFlags['--max-line-mib'], help: `the longest message frame read, in MiB (default ${defaultStdioMaxLineBytes / (1024 * 1024)})` },
  '--env': agentFlags['--env'],
  '--inherit-env': agentFlags['--inherit-env'],
  '--inspect': { ...agentFlags['--inspect'], help: 'send every actor to the XState inspector at this address' },
  '--otel': { field: 'otel', help: otelHelp },
};

/** `warden serve --help`. */
export const serveUsage = `Usage: warden serve [--listen ADDRESS] [--agent NAME] [options]

A long-running host serving ACP over WebSocket at ws://ADDRESS/acp, one JSON-RPC message per
text frame. Every connection sends "Authorization: Bearer <token>" (the token file's content);
editors keep their stdio configuration with "warden acp --connect URL" or "--daemon".

Options:
${optionRows(serveFlags, 30, { extra: [helpRow()] })}

SIGTERM or SIGINT: stops accepting connections, lets running turns finish for at most
--drain-timeout, then stops every agent and exits 0. With --advertise (a cluster on a
PostgreSQL store) the sessions are handed over to the other live hosts first.

Exit status: 0 after SIGTERM/SIGINT, 1 on an internal error, 2 on a usage error, an agent that
is not installed, or a journal, log or token file that cannot be used, ${addressInUseStatus} when the listen
address is in use (another daemon already listens there).`;

const shortUsage = 'Run "warden serve --help" for the options.';

/** Parses `warden serve` arguments; a problem is a message that names it and the fix. */
export function parseServeArgs(args: readonly string[]): ServeCommandOptions | { error: string } | { help: true } {
  let values: ServeFlagValues;
  let address: ListenAddress;
  try {
    const parsed = parseFlags(serveFlags, args, shortUsage);
    if (parsed === 'help') return { help: true };
    values = parsed;
    postgresOptionsOf(values);
    checkMemoryFlags(values);
    address = parseListenAddress(values.listen);
  } catch (error) {
    if (error instanceof TypeError) return { error: `warden serve: ${error.message}` };
    return argumentProblem('warden serve', error);
  }
  const { listen: _listen, tokenFile, idleTimeoutMs, unattended, unattendedTimeoutMs, loadLimit, maxLiveSessions, ...rest } = values;
  // The two flags of the unattended policy become the one shape the hub takes.
  const settings: ServeSettings = { idleTimeoutMs, unattended: { policy: unattended, timeoutMs: unattendedTimeoutMs }, drainTimeoutMs: values.drainTimeoutMs ?? defaultServeSettings.drainTimeoutMs, loadLimit, maxLiveSessions };
  return { ...settledAgentFlags(rest), agent: values.agent ?? defaultServeAgent, listen: address, tokenFile: tokenFile ?? defaultTokenPath(), settings };
}

/** Runs the daemon until SIGTERM or SIGINT; resolves with the exit status. */
export async function runServe(args: readonly string[]): Promise<number> {
  const parsed = parseServeArgs(args);
  const say = (line: string) => process.stderr.write(`warden serve: ${line}\n`);
  if ('help' in parsed) {
    process.stderr.write(`${serveUsage}\n`);
    return 0;
  }
  if ('error' in parsed) {
    process.stderr.write(`${parsed.error}\n`);
    return 2;
  }
  const cpuWarning = cpuLimitWarning(parsed);
  if (cpuWarning) say(cpuWarning);
  // Heard from the start: a signal while the daemon starts up still stops it cleanly.
  const signalled = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  if (parsed.cwd) {
    const dir = resolvePath(parsed.cwd);
    if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
      say(`--cwd ${dir} is not a directory; give an existing directory`);
      return 2;
    }
    process.chdir(dir);
  }
  let token: string;
  try {
    token = await readOrCreateToken(parsed.tokenFile);
  } catch (error) {
    say((error as Error).message);
    return 2;
  }
  let log: EventLog;
  try {
    log = eventLog(parsed, 'warden serve');
  } catch (error) {
    if (!(error instanceof LogFileError)) throw error;
    say(`--log-file: ${error.message}`);
    return 2;
  }
  const agentOptions = agentOptionsOf(parsed);
  const telemetry = await telemetryOf(parsed, say);
  let journalDelay: ReturnType<typeof journalDelayOfEnv>;
  try {
    journalDelay = journalDelayOfEnv();
  } catch (error) {
    say((error as Error).message);
    return 2;
  }
  let host: ReturnType<typeof createHost> | undefined;
  try {
    agentFor(parsed.agent, agentOptions);
    // The host taps every connection it serves (the turns' spans, the client's peer), times its journal, hears its events.
    host = createHost({ defaultAgent: parsed.agent, agentOptions, telemetry, ...(parsed.store ? { store: parsed.store } : {}), postgres: postgresOptionsOf(parsed), ...journalDelay, ...(parsed.inspect ? { inspect: parsed.inspect } : {}) });
    // A PostgreSQL store that cannot be reached fails here, before the daemon listens.
    await host.opened;
  } catch (error) {
    say((error as Error).message);
    await host?.stop();
    await telemetry?.shutdown();
    log.close();
    return error instanceof AgentUnavailableError || /cannot open the journal/.test((error as Error).message) ? 2 : 1;
  }
  host.on(log.listener);
  const owner = createConnectionOwner(host, parsed.settings, { token });
  // A member of a cluster (a PostgreSQL store, advertised) takes over lost hosts' sessions from its start, connections or not.
  if (parsed.advertise !== undefined) owner.startHub();
  let listener: DaemonListener;
  try {
    listener = await listenDaemon({
      address: parsed.listen,
      access: { token, allowOrigins: parsed.allowOrigins },
      accept: (transport, peer) => owner.attachConnection(transport, peer),
      pingIntervalMs: parsed.pingIntervalMs,
      ...(parsed.maxLineBytes ? { maxLineBytes: parsed.maxLineBytes } : {}),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = parsed.listen.kind === 'unix' ? `unix:${parsed.listen.path}` : `${parsed.listen.host}:${parsed.listen.port}`;
    say(code === 'EADDRINUSE' ? `cannot listen on ${where}: the address is in use (another warden serve, or another program, listens there)` : `cannot listen on ${where}: ${(error as Error).message}`);
    await host.stop();
    await telemetry?.shutdown();
    log.close();
    return code === 'EADDRINUSE' ? addressInUseStatus : 2;
  }
  say(`listening on ${listener.url} (pid ${process.pid})`);
  say(`token file ${parsed.tokenFile}`);
  if (parsed.listen.kind === 'tcp' && !parsed.listen.loopback) say(`${parsed.listen.host} is not loopback: connections and the token cross the network in plain text; put TLS in front (docs/serve.md)`);
  await signalled;
  listener.close();
  say(`stopping: no new connections; ${owner.connections()} open, their running turns given at most ${parsed.settings.drainTimeoutMs / 1000} s`);
  const drained = await owner.drain();
  if (!drained) say(`turns still running after --drain-timeout ${parsed.settings.drainTimeoutMs / 1000} s: they are stopped`);
  // A member of a cluster hands its sessions over to the others (rolling restart); a lone host releases them.
  if (parsed.advertise !== undefined) say('handing the sessions over to the other hosts of the cluster');
  await host.stop({ handOver: parsed.advertise !== undefined });
  // The spans still open end, and what is left is exported (bounded), after the agents stopped.
  await telemetry?.shutdown();
  log.close();
  return 0;
}

/**
 * Telemetry, when --otel or OpenTelemetry's variables ask for it (telemetry-settings.ts), as
 * `warden acp` decides; nothing of OpenTelemetry is loaded otherwise. An SDK that is not
 * installed is said on stderr, and the daemon serves without telemetry.
 */
async function telemetryOf(parsed: ServeCommandOptions, say: (line: string) => void): Promise<Telemetry | undefined> {
  const settings = telemetrySettings(parsed.otel);
  if (!settings.enabled) return undefined;
  try {
    return await (await import('../telemetry/telemetry.js')).startTelemetry(settings, 'warden serve');
  } catch (error) {
    say(`telemetry is off: ${(error as Error).message}`);
    return undefined;
  }
}
