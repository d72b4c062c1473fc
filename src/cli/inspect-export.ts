/**
 * `warden inspect --export mermaid|json [--machine NAME] [--out DIR]`: writes the state
 * charts of the host's machines and actors (chart-catalog.ts) as Mermaid `stateDiagram-v2`
 * or as JSON (`acp-warden.chart/1`, chart-model.ts). Needs no agent and starts nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { allCharts, chartNamed, chartNames } from '../inspect/chart-catalog.js';
import { toMermaid } from '../inspect/chart-mermaid.js';
import type { Chart } from '../inspect/chart-model.js';
import { ArgumentError, oneOf, readFlags } from './arguments.js';

/** The usage text of `warden inspect --export`. */
export const inspectExportUsage = `Usage: warden inspect --export mermaid|json [--machine NAME] [--out DIR]

Writes the state charts of warden's machines and actors: the session chart, the port, the
pending request, the supervisor, the connection, the ACP agent server and client, the Claude
Code and Codex session adapters, the Codex lister and the demo agent.

Options:
  --export FORMAT    mermaid (stateDiagram-v2) or json (format acp-warden.chart/1)
  --machine NAME     only this chart; one of: ${chartNames().join(', ')}
  --out DIR          write NAME.mmd or NAME.json into DIR (created if missing), one per chart,
                     and print the paths written; without it the charts go to stdout
                     (Mermaid: one diagram after another, a blank line between them;
                     JSON: the chart with --machine, else an array of every chart)
  -h, --help         show this help

Exit status: 0 written, 1 a file could not be written, 2 a bad command line.`;

/** Where the export writes; the process's streams by default. */
export interface InspectExportIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const processIo: InspectExportIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

type Format = 'mermaid' | 'json';

interface ExportOptions {
  readonly format: Format;
  readonly machine: string | undefined;
  readonly out: string | undefined;
}

/**
 * Runs `warden inspect --export …`: `args` are the arguments after `inspect` (they must
 * include `--export FORMAT`). Resolves with the exit status: 0 written, 1 a file could not be
 * written, 2 a bad command line (the one-line reason on stderr).
 *
 * @example
 * ```ts
 * await runInspectExport(['--export', 'mermaid', '--machine', 'session']);   // prints the session chart
 * await runInspectExport(['--export=json', '--out', 'charts']);             // writes charts/NAME.json
 * ```
 */
export async function runInspectExport(args: readonly string[], io: InspectExportIo = processIo): Promise<number> {
  let options: ExportOptions;
  try {
    const parsed = parseExportArgs(args);
    if (parsed === 'help') {
      io.stderr(`${inspectExportUsage}\n`);
      return 0;
    }
    options = parsed;
  } catch (error) {
    if (!(error instanceof ArgumentError)) throw error;
    io.stderr(`warden inspect: ${error.message}\n`);
    return 2;
  }
  const charts = options.machine === undefined ? [...allCharts()] : [chartNamed(options.machine) as Chart];
  if (options.out === undefined) {
    io.stdout(options.format === 'json'
      ? `${JSON.stringify(options.machine === undefined ? charts : charts[0], null, 2)}\n`
      : charts.map(toMermaid).join('\n'));
    return 0;
  }
  try {
    await mkdir(options.out, { recursive: true });
    for (const chart of charts) {
      const file = join(options.out, `${chart.name}.${options.format === 'json' ? 'json' : 'mmd'}`);
      await writeFile(file, options.format === 'json' ? `${JSON.stringify(chart, null, 2)}\n` : toMermaid(chart));
      io.stdout(`${file}\n`);
    }
  } catch (error) {
    io.stderr(`warden inspect: cannot write the charts to ${options.out}: ${(error as Error).message}\n`);
    return 1;
  }
  return 0;
}

function parseExportArgs(args: readonly string[]): ExportOptions | 'help' {
  let format: Format | undefined;
  let machine: string | undefined;
  let out: string | undefined;
  const hint = 'See warden inspect --help.';
  const help = readFlags(args, {
    '--export': (value) => {
      format = oneOf('--export', value(), ['mermaid', 'json'] as const);
    },
    '--machine': (value) => {
      machine = value();
    },
    '--out': (value) => {
      out = value();
      if (out.length === 0) throw new ArgumentError(`--out expects a directory. ${hint}`);
    },
  }, hint);
  if (help) return 'help';
  if (format === undefined) throw new ArgumentError(`--export mermaid|json is required to export charts. ${hint}`);
  if (machine !== undefined && !chartNamed(machine)) {
    throw new ArgumentError(`unknown machine ${JSON.stringify(machine)}; the machines are ${chartNames().join(', ')}`);
  }
  return { format, machine, out };
}
