/**
 * `warden inspect [--port N]`: the local live view as a relay. It takes the inspection streams
 * of `warden acp --inspect ws://127.0.0.1:N` (any number of them, and any XState program using
 * `@statelyai/inspect`'s WebSocket inspector) and serves the page for them at
 * http://127.0.0.1:N/, until SIGINT or SIGTERM. `warden inspect --export …` is the state chart
 * export (inspect-export.ts).
 */
import { sessionMachine } from '../session/session-machine.js';
import { portChart, supervisorChart } from '../inspect/chart-catalog.js';
import { createLiveViewModel } from '../inspect/live-view-model.js';
import { serveLiveView } from '../inspect/live-view-server.js';
import { ArgumentError } from './arguments.js';
import { argumentProblem, helpRow, optionRows, parseFlags, type FlagTable, type Shape } from './flag-table.js';
import { inspectExportFlags, runInspectExport } from './inspect-export.js';

/** The port `warden inspect` listens on without `--port`. */
export const DEFAULT_INSPECT_PORT = 8080;

/** `--port N`: 0 to 65535. */
const portNumber: Shape<number> = {
  accepts: 'a port number from 0 to 65535 (0: any free one)',
  read(flag, text) {
    const number = Number(text);
    if (!/^\d+$/u.test(text) || number > 65_535) throw new ArgumentError(`${flag} expects a port number from 0 to 65535 (0: any free port), got ${JSON.stringify(text)}`);
    return number;
  },
};

/** The flags of `warden inspect` (the live view; `--export` and its flags: inspect-export.ts). */
export const inspectFlags: FlagTable<{ port: number }> = {
  '--port': { field: 'port', value: 'N', shape: portNumber, default: DEFAULT_INSPECT_PORT, help: `the port on 127.0.0.1 (default ${DEFAULT_INSPECT_PORT}; 0 picks a free one)` },
};

/** `warden inspect --help`. */
export const inspectUsage = `Usage: warden inspect [--port N]
       warden inspect --export mermaid|json|svg [--machine NAME] [--state PATH] [--out DIR]

The local live view: listens on 127.0.0.1:N for the inspection streams of
  warden acp --agent NAME --inspect ws://127.0.0.1:N
(as many as connect) and serves a page at http://127.0.0.1:N/ showing each one's supervision
tree (status, restarts, pids, uptime), the state of each session, supervisor and agent
process on its chart, the pending JSON-RPC requests with their age, and a timeline of
starts, exits with their reasons, restarts and escalations, updated live. Only this machine can reach it; the page loads nothing from
elsewhere. Runs until Ctrl-C (SIGINT) or SIGTERM.

With --export, writes the state charts instead (see warden inspect --export --help).

Options:
${optionRows(inspectFlags, 16)}
${optionRows(inspectExportFlags, 16, { only: ['--export'], overrides: { '--export': 'the state chart export: mermaid, json or svg' }, extra: [helpRow()] })}

Exit status: 0 when stopped by a signal, 2 on a usage error or a port already in use.`;

const shortUsage = 'Run "warden inspect --help" for the options.';

/** Parses `warden inspect` arguments (not `--export`). */
export function parseInspectArgs(args: readonly string[]): { port: number } | { help: true } | { error: string } {
  try {
    const parsed = parseFlags(inspectFlags, args, shortUsage);
    return parsed === 'help' ? { help: true } : parsed;
  } catch (error) {
    return argumentProblem('warden inspect', error);
  }
}

/** What `runInspect` writes to and waits for; the process's by default (tests give their own). */
export interface InspectIo {
  readonly stderr: (text: string) => void;
  /** Resolves when the relay should stop (default: SIGINT or SIGTERM). */
  readonly stopped?: Promise<unknown>;
}

/** Runs `warden inspect`; resolves with the exit status once stopped. */
export async function runInspect(args: readonly string[], io: InspectIo = { stderr: (text) => process.stderr.write(text) }): Promise<number> {
  if (args.some((arg) => arg === '--export' || arg.startsWith('--export='))) return runInspectExport(args, { stdout: (text) => process.stdout.write(text), stderr: io.stderr });
  const parsed = parseInspectArgs(args);
  if ('help' in parsed) {
    io.stderr(`${inspectUsage}\n`);
    return 0;
  }
  if ('error' in parsed) {
    io.stderr(`${parsed.error}\n`);
    return 2;
  }
  const model = createLiveViewModel({ machines: [sessionMachine.config], declared: { port: portChart, supervisor: supervisorChart } });
  let view;
  try {
    view = await serveLiveView({
      model,
      port: parsed.port,
      relay: true,
      title: 'acp-warden live view',
      onStream: (event) => io.stderr(`warden inspect: ${event.label} ${event.type === 'open' ? 'connected' : 'closed'}\n`),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') {
      io.stderr(`warden inspect: port ${parsed.port} on 127.0.0.1 is already in use; pick another with --port N (--port 0 takes any free one)\n`);
      return 2;
    }
    if (code === 'EACCES') {
      io.stderr(`warden inspect: not allowed to listen on port ${parsed.port}; pick one above 1023 with --port N\n`);
      return 2;
    }
    throw error;
  }
  const ws = view.url.replace(/^http:/u, 'ws:').replace(/\/$/u, '');
  io.stderr(`warden inspect: live view at ${view.url}\nwarden inspect: send it a warden with: warden acp --agent NAME --inspect ${ws}\n`);
  await (io.stopped ?? signalled());
  await view.close();
  return 0;
}

function signalled(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
