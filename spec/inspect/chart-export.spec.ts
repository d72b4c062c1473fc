/**
 * `warden inspect --export`, called as main.ts calls it (`runInspectExport(args)` with the
 * arguments after `inspect`): to stdout and to files, one chart or all, and the command-line
 * errors. And the charts in docs/inspect.md are what the command prints today.
 */
import { expect } from 'chai';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspectExportUsage, runInspectExport } from '../../src/cli/inspect-export.js';
import { allCharts, chartNamed, chartNames } from '../../src/inspect/chart-catalog.js';
import { toMermaid } from '../../src/inspect/chart-mermaid.js';
import { chartSvg } from '../../src/inspect/chart-svg.js';
import { parseChart } from '../../src/inspect/chart-model.js';
import { parseMermaid } from './chart-mermaid-checker.js';

async function exportCharts(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const status = await runInspectExport(args, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
  return { status, stdout, stderr };
}

describe('warden inspect --export', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-charts-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  describe('to stdout', () => {
    it('prints one chart as Mermaid with --machine', async () => {
      const { status, stdout, stderr } = await exportCharts('--export', 'mermaid', '--machine', 'session');
      expect({ status, stderr }).to.deep.equal({ status: 0, stderr: '' });
      expect(stdout).to.equal(toMermaid(chartNamed('session')!));
      expect(stdout.startsWith('stateDiagram-v2\n')).to.equal(true);
    });

    it('prints every chart as Mermaid, a blank line between diagrams, each one valid', async () => {
      const { status, stdout } = await exportCharts('--export', 'mermaid');
      expect(status).to.equal(0);
      const diagrams = stdout.split('\n\n');
      expect(diagrams).to.have.length(allCharts().length);
      diagrams.forEach((text, index) => {
        const diagram = parseMermaid(text.endsWith('\n') ? text : `${text}\n`);
        expect(diagram.comments[0]).to.equal(`chart ${chartNames()[index]}: ${allCharts()[index]!.source}`);
      });
    });

    it('prints one chart as JSON with --machine (--export=json works too), readable back', async () => {
      const { status, stdout } = await exportCharts('--export=json', '--machine', 'port');
      expect(status).to.equal(0);
      expect(parseChart(JSON.parse(stdout))).to.deep.equal(chartNamed('port'));
    });

    it('prints an array of every chart as JSON without --machine', async () => {
      const { status, stdout } = await exportCharts('--export', 'json');
      expect(status).to.equal(0);
      const charts = (JSON.parse(stdout) as unknown[]).map(parseChart);
      expect(charts.map((chart) => chart.name)).to.deep.equal(chartNames());
    });
  });

  describe('as SVG graphs (laid out in this process, no browser)', () => {
    it('prints one chart as an SVG document with --machine, --state drawn as the current state', async () => {
      const { status, stdout, stderr } = await exportCharts('--export', 'svg', '--machine', 'session', '--state', 'recovering');
      expect({ status, stderr }).to.deep.equal({ status: 0, stderr: '' });
      expect(stdout).to.equal(await chartSvg(chartNamed('session')!, { active: ['recovering'] }));
      expect(stdout).to.match(/^<\?xml[^>]*>\n<svg [^>]*data-chart="session"/u);
      expect(stdout.match(/<g class="state [^"]*\bcurrent\b[^"]*" data-path="([^"]+)"/gu)).to.have.length(1);
      expect(stdout).to.include('class="state atomic active current" data-path="recovering"');
    });

    it('writes NAME.svg for every chart with --out, and prints the paths', async () => {
      const dir = tempDir();
      const { status, stdout } = await exportCharts('--export', 'svg', '--out', dir);
      expect(status).to.equal(0);
      expect(readdirSync(dir).sort()).to.deep.equal(chartNames().map((name) => `${name}.svg`).sort());
      expect(stdout.trim().split('\n')).to.deep.equal(chartNames().map((name) => join(dir, `${name}.svg`)));
      expect(readFileSync(join(dir, 'port.svg'), 'utf8')).to.equal(await chartSvg(chartNamed('port')!));
    });
  });

  describe('to files with --out', () => {
    it('writes NAME.mmd for every chart into a new directory, and prints the paths', async () => {
      const dir = join(tempDir(), 'charts', 'mermaid');
      const { status, stdout } = await exportCharts('--export', 'mermaid', '--out', dir);
      expect(status).to.equal(0);
      expect(readdirSync(dir).sort()).to.deep.equal(chartNames().map((name) => `${name}.mmd`).sort());
      expect(stdout.trim().split('\n')).to.deep.equal(chartNames().map((name) => join(dir, `${name}.mmd`)));
      expect(readFileSync(join(dir, 'supervisor.mmd'), 'utf8')).to.equal(toMermaid(chartNamed('supervisor')!));
    });

    it('writes only NAME.json with --machine', async () => {
      const dir = tempDir();
      const { status } = await exportCharts('--export', 'json', '--machine', 'pending-request', '--out', dir);
      expect(status).to.equal(0);
      expect(readdirSync(dir)).to.deep.equal(['pending-request.json']);
      expect(parseChart(JSON.parse(readFileSync(join(dir, 'pending-request.json'), 'utf8')))).to.deep.equal(chartNamed('pending-request'));
    });

    it('exits 1 naming the directory when it cannot write there', async () => {
      const file = join(tempDir(), 'a-file');
      writeFileSync(file, '');
      const { status, stderr } = await exportCharts('--export', 'json', '--out', file);
      expect(status).to.equal(1);
      expect(stderr).to.match(/^warden inspect: cannot write the charts to .*a-file: .+\n$/u);
    });
  });

  describe('command-line errors (exit 2, one line)', () => {
    it('names the valid machines for an unknown one', async () => {
      const { status, stdout, stderr } = await exportCharts('--export', 'mermaid', '--machine', 'sesion');
      expect(status).to.equal(2);
      expect(stdout).to.equal('');
      expect(stderr).to.equal(`warden inspect: unknown machine "sesion"; the machines are ${chartNames().join(', ')}\n`);
    });

    const cases: Array<[string, string[], string]> = [
      ['an unknown format', ['--export', 'png'], '--export expects one of mermaid, json, svg, got "png"'],
      ['no format', ['--machine', 'session'], '--export mermaid|json|svg is required'],
      ['svg of every chart to stdout', ['--export', 'svg'], '--export svg writes one document per chart: give --machine NAME, or --out DIR'],
      ['--state without svg', ['--export', 'mermaid', '--machine', 'session', '--state', 'ready'], '--state goes with --export svg and --machine NAME'],
      ['--state that is not a state', ['--export', 'svg', '--machine', 'session', '--state', 'redy'], '"redy" is not a state of session; its states are starting, ready,'],
      ['a flag without its value', ['--export', 'json', '--machine'], '--machine needs a value'],
      ['an unknown option', ['--export', 'json', '--pretty'], 'unknown option --pretty'],
    ];
    for (const [what, args, message] of cases) {
      it(`refuses ${what}`, async () => {
        const { status, stderr } = await exportCharts(...args);
        expect(status).to.equal(2);
        expect(stderr).to.contain(message);
        expect(stderr.trim().split('\n')).to.have.length(1);
      });
    }

    it('prints its usage on --help, with the machine names', async () => {
      const { status, stderr } = await exportCharts('--export', 'json', '--help');
      expect(status).to.equal(0);
      expect(stderr).to.equal(`${inspectExportUsage}\n`);
      expect(inspectExportUsage).to.contain(chartNames().join(', '));
    });
  });

  describe('docs/inspect.md', () => {
    it('shows the session, port, pending-request and supervisor charts as the command prints them today', () => {
      const docs = readFileSync(new URL('../../docs/inspect.md', import.meta.url), 'utf8');
      const section = docs.slice(docs.indexOf('\n## State charts'));
      expect(section.length, 'a "## State charts" section').to.be.greaterThan(20);
      const blocks = [...section.matchAll(/```mermaid\n([\s\S]*?)```/gu)].map((match) => match[1] as string);
      const shown = new Map(blocks.map((text) => [/%% chart ([\w-]+):/u.exec(text)?.[1], text]));
      for (const name of ['session', 'port', 'pending-request', 'supervisor']) {
        expect(shown.get(name), `the ${name} chart in docs/inspect.md (regenerate: warden inspect --export mermaid --machine ${name})`).to.equal(toMermaid(chartNamed(name)!));
      }
    });
  });
});
