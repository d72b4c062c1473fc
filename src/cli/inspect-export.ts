/**
 * `warden inspect --export mermaid|json|svg [--machine NAME] [--state PATH] [--out DIR]`:
 * writes the state charts of the host's machines and actors (chart-catalog.ts) as Mermaid
 * `stateDiagram-v2`, as JSON (`acp-warden.chart/1`, chart-model.ts) or as SVG graphs laid out
 * by elkjs in this process (chart-svg.ts). Needs no agent, no browser, and starts nothing.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { allCharts, chartNamed, chartNames } from '../inspect/chart-catalog.js';
import { toMermaid } from '../inspect/chart-mermaid.js';
import { chartStates, type Chart } from '../inspect/chart-model.js';
import { chartSvg } from '../inspect/chart-svg.js';
import { ArgumentError } from './arguments.js';
import { choice } from './flag-shapes.js';
import { parseFlags, helpRow, optionRows, type FlagTable } from './flag-table.js';

type Format = 'mermaid' | 'json' | 'svg';

interface ExportOptions {
  readonly format: Format;
  readonly machine: string | undefined;
  readonly out: string | undefined;
  readonly state: string | undefined;
}

const hint = 'See warden inspect --help.';

/** The flags of `warden inspect --export`. */
export const inspectExportFlags: FlagTable<Omit<ExportOptions, 'format'> & { format: Format | undefined }> = {
  '--export': {
    field: 'format',
    value: 'FORMAT',
    shape: choice(['mermaid', 'json', 'svg'] as const),
    help: 'mermaid (stateDiagram-v2), json (format acp-warden.chart/1) or svg\n(the chart as a graph: states as boxes, nested ones inside their\nparent, transitions as labelled arrows; laid out here, no browser)',
  },
  '--machine': { field: 'machine', value: 'NAME', help: `only this chart; one of: ${chartNames().join(', ')}` },
  '--state': { field: 'state', value: 'PATH', help: 'svg with --machine: draw the chart in this state (its path, such as\nprompting or recovering.next), highlighted as the current one' },
  '--out': {
    field: 'out',
    value: 'DIR',
    shape: {
      accepts: 'a directory',
      read(flag, text) {
        if (text.length === 0) throw new ArgumentError(`${flag} expects a directory. ${hint}`);
        return text;
      },
    },
    help: 'write NAME.mmd, NAME.json or NAME.svg into DIR (created if missing), one\nper chart, and print the paths written; without it the charts go to\nstdout (Mermaid: one diagram after another, a blank line between them;\nJSON: the chart with --machine, else an array of every chart; SVG:\nneeds --machine, one document)',
  },
};

/** The usage text of `warden inspect --export`. */
export const inspectExportUsage = `Usage: warden inspect --export mermaid|json|svg [--machine NAME] [--state PATH] [--out DIR]

Writes the state charts of warden's machines and actors: the session chart, the port, the
pending request, the supervisor, the connection, the ACP agent server and client, the Claude
Code and Codex session adapters, the Codex lister and the demo agent.

Options:
${optionRows(inspectExportFlags, 19, { extra: [helpRow('show this help')] })}

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

const EXTENSION: Readonly<Record<Format, string>> = { mermaid: 'mmd', json: 'json', svg: 'svg' };

async function render(chart: Chart, options: ExportOptions): Promise<string> {
  switch (options.format) {
    case 'json':
      return `${JSON.stringify(chart, null, 2)}\n`;
    case 'svg':
      return chartSvg(chart, options.state === undefined ? {} : { active: [options.state] });
    default:
      return toMermaid(chart);
  }
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
    if (options.format === 'json') io.stdout(`${JSON.stringify(options.machine === undefined ? charts : charts[0], null, 2)}\n`);
    else if (options.format === 'svg') io.stdout(await render(charts[0] as Chart, options));
    else io.stdout(charts.map(toMermaid).join('\n'));
    return 0;
  }
  try {
    await mkdir(options.out, { recursive: true });
    for (const chart of charts) {
      const file = join(options.out, `${chart.name}.${EXTENSION[options.format]}`);
      await writeFile(file, await render(chart, options));
      io.stdout(`${file}\n`);
    }
  } catch (error) {
    io.stderr(`warden inspect: cannot write the charts to ${options.out}: ${(error as Error).message}\n`);
    return 1;
  }
  return 0;
}

function parseExportArgs(args: readonly string[]): ExportOptions | 'help' {
  const parsed = parseFlags(inspectExportFlags, args, hint);
  if (parsed === 'help') return 'help';
  const { format, machine, out, state } = parsed;
  if (format === undefined) throw new ArgumentError(`--export mermaid|json|svg is required to export charts. ${hint}`);
  if (machine !== undefined && !chartNamed(machine)) {
    throw new ArgumentError(`unknown machine ${JSON.stringify(machine)}; the machines are ${chartNames().join(', ')}`);
  }
  if (format === 'svg' && machine === undefined && out === undefined) {
    throw new ArgumentError(`--export svg writes one document per chart: give --machine NAME, or --out DIR for every chart. ${hint}`);
  }
  if (state !== undefined) {
    if (format !== 'svg' || machine === undefined) throw new ArgumentError(`--state goes with --export svg and --machine NAME. ${hint}`);
    const paths = chartStates(chartNamed(machine) as Chart).map((entry) => entry.path);
    if (!paths.includes(state)) throw new ArgumentError(`${JSON.stringify(state)} is not a state of ${machine}; its states are ${paths.join(', ')}`);
  }
  return { format, machine, out, state };
}
