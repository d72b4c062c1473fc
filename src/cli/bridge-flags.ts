/**
 * The flags of the bridge, `warden acp --connect URL` and `warden acp --agent NAME --daemon`
 * (acp-bridge.ts). Kept apart from the bridge's code so that `warden acp --help` can show them,
 * and apart from agent-flags.ts: the bridge must start fast, it loads none of the host.
 */
import { defaultDrainTimeoutMs } from '../acp/drain-timeout.js';
import { defaultKeepaliveIntervalMs } from '../jsonrpc/websocket-keepalive.js';
import { defaultTokenPath } from '../serve/token-file.js';
import { keepaliveSeconds, seconds } from './flag-shapes.js';
import type { Flag, FlagTable } from './flag-table.js';

/** The bridge's flags as its table fills them. */
export interface BridgeFlagValues {
  connect: string | undefined;
  daemon: boolean;
  tokenFile: string | undefined;
  listen: string | undefined;
  agent: string | undefined;
  /** `--drain-timeout`, ms; absent: the default, and not forwarded. */
  drainTimeoutMs: number | undefined;
  pingIntervalMs: number;
  otel: boolean;
  /** The agent options given, as `['--store', 'x', '--inherit-env', …]`, for the daemon `--daemon` starts. */
  forwarded: string[];
}

/** The agent options `warden acp` takes, forwarded to the daemon `--daemon` starts (kept equal to agent-flags.ts by spec/serve/acp-bridge-args.spec.ts). */
export const forwardedValueFlags = ['--agent-command', '--agent-protocol', '--env', '--store', '--lease', '--advertise', '--cwd', '--log-file', '--log-level', '--log-format', '--restart-intensity', '--hang-after', '--tool-hang-after', '--on-crash', '--max-continuations', '--rate-limit-retries', '--max-line-mib', '--max-memory', '--max-memory-hard', '--memory-poll', '--max-cpu', '--inspect'] as const;
/** See {@link forwardedValueFlags}: the ones without a value. */
export const forwardedSwitches = ['--inherit-env', '--memory-cgroup'] as const;

const forwardedHelp = 'with --daemon: handed to the daemon it starts, as warden acp takes it; with --connect: refused (the daemon runs the agents)';

/** The bridge's table; `warden acp --help` shows its own flags under "Through a daemon". */
export const bridgeFlags: FlagTable<BridgeFlagValues> = {
  '--connect': {
    field: 'connect',
    value: 'URL',
    help: 'a thin stdio <-> WebSocket bridge to the daemon at URL\n(ws://127.0.0.1:8767/acp, or unix:PATH); the daemon runs the\nagents; with --agent, new sessions ask for that agent',
  },
  '--daemon': {
    field: 'daemon',
    help: "the same to the user's default daemon (127.0.0.1:8767, or\n--listen), started in the background with these options when\nnone answers (its log, with its pid: serve.log beside the\ntoken file, --token-file's or the default)",
  },
  '--token-file': { field: 'tokenFile', value: 'PATH', help: `the daemon's token file (default ${defaultTokenPath()})` },
  '--keepalive': {
    field: 'pingIntervalMs',
    value: 'SECONDS',
    shape: keepaliveSeconds,
    default: defaultKeepaliveIntervalMs,
    help: `the bridge pings the daemon this often (default ${defaultKeepaliveIntervalMs / 1000}; 0 never); no\nanswer for two intervals (a half-open connection: the daemon's\nhost or network gone) and it exits with status 5`,
  },
  '--otel': { field: 'otel', help: 'with --daemon: the daemon it starts exports OpenTelemetry (the\nbridge itself traces nothing; with --connect the daemon decides)' },
  '--listen': { field: 'listen', value: 'ADDRESS', help: 'with --daemon: where the default daemon listens (and where the one started listens)' },
  '--agent': { field: 'agent', value: 'NAME', help: 'the agent of the editor\'s new sessions (with --daemon: required, and the default of the daemon started)' },
  '--drain-timeout': { field: 'drainTimeoutMs', value: 'SECONDS', shape: seconds, help: `when stdin ends, how long the bridge waits for the answers owed (default ${defaultDrainTimeoutMs / 1000}); forwarded with --daemon` },
  ...Object.fromEntries(forwardedValueFlags.map((flag): [string, Flag<BridgeFlagValues>] => [flag, { field: 'forwarded', value: 'VALUE', repeat: 'forward', help: forwardedHelp }])),
  ...Object.fromEntries(forwardedSwitches.map((flag): [string, Flag<BridgeFlagValues>] => [flag, { field: 'forwarded', repeat: 'forward', help: forwardedHelp }])),
};
