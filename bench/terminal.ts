/**
 * Terminal output: what a terminal (`terminal/create` run as a port, output kept in an
 * `OutputTail`) costs next to a bare `child_process.spawn` draining the same command, for
 * 40 MB of output (`yes … | head -c 40000000`). Each case runs in a fresh process (its peak
 * RSS is its own), the cases interleaved round by round; medians of 3. Prints figures and
 * ratios; asserts only that each case kept what it should.
 *
 * Cases: the floor (spawn); an agent asking for `outputByteLimit` 1 GB (lowered to the host's
 * default cap, 16 MiB); an agent giving no limit (1 MiB); the same 1 GB ask with the host's
 * cap raised to 64 MiB, so all 40 MB are kept (the tail's cost with nothing dropped).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { check, formatRatio, table } from './support/measure.js';

const caseScript = fileURLToPath(new URL('./support/terminal-output-case.ts', import.meta.url));
const outputBytes = 40_000_000;

interface CaseFigures {
  readonly ms: number;
  readonly growthMb: number;
  readonly outputBytes: number;
  readonly truncated: boolean;
}

const cases: Record<string, readonly string[]> = {
  'spawn, drained (floor)': ['spawn'],
  'terminal, asks 1 GB (cap 16 MiB)': ['terminal', '1000000000'],
  'terminal, no limit given (1 MiB)': ['terminal', 'default'],
  'terminal, asks 1 GB, cap raised to 64 MiB': ['terminal', '1000000000', String(64 * 2 ** 20)],
};

function runCase(args: readonly string[]): CaseFigures {
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', caseScript, args[0] as string, String(outputBytes), ...args.slice(1)], { encoding: 'utf8', timeout: 600_000 });
  return JSON.parse(out.trim().split('\n').pop() as string) as CaseFigures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** 40 MB through a terminal: time and peak RSS growth against a bare spawn. */
export async function terminalOutput(): Promise<void> {
  console.log('\n## Terminal output (40 MB)');
  const samples = new Map<string, CaseFigures[]>(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < 3; round++) for (const [name, args] of Object.entries(cases)) samples.get(name)?.push(runCase(args));
  const floor = median((samples.get('spawn, drained (floor)') as CaseFigures[]).map((sample) => sample.ms));
  const rows = [...samples].map(([name, figures]) => {
    const ms = median(figures.map((sample) => sample.ms));
    const last = figures[figures.length - 1] as CaseFigures;
    return [name, `${ms.toFixed(0)} ms`, formatRatio(ms / floor), `${median(figures.map((sample) => sample.growthMb)).toFixed(0)} MB`, `${last.outputBytes} B${last.truncated ? ' (truncated)' : ''}`];
  });
  console.log(table(['case', 'median', 'vs spawn', 'peak RSS growth', 'output kept'], rows));
  const kept = (name: string) => (samples.get(name) as CaseFigures[])[0]?.outputBytes;
  check(kept('spawn, drained (floor)') === outputBytes, 'the floor read every byte');
  check(kept('terminal, asks 1 GB (cap 16 MiB)') === 16 * 2 ** 20, 'a 1 GB ask is lowered to the 16 MiB cap');
  check(kept('terminal, no limit given (1 MiB)') === 2 ** 20, 'no limit given keeps 1 MiB');
  check(kept('terminal, asks 1 GB, cap raised to 64 MiB') === outputBytes, 'with the cap raised, all 40 MB are kept');

  // The tail alone, fed 4 million one-character pieces (what a command writing a byte at a
  // time could deliver): the pieces are gathered into blocks, so few objects are held.
  const pieces = 4_000_000;
  const tiny = [0, 1, 2].map(() => JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', caseScript, 'tail-pieces', String(pieces)], { encoding: 'utf8', timeout: 600_000 }).trim()) as CaseFigures);
  check(tiny.every((sample) => sample.outputBytes === pieces), 'every piece was kept');
  console.log(`\n${table(['case', 'median', 'peak RSS growth'], [[`OutputTail(16 MiB), ${pieces} one-character appends`, `${median(tiny.map((sample) => sample.ms)).toFixed(0)} ms`, `${median(tiny.map((sample) => sample.growthMb)).toFixed(0)} MB`]])}`);
}
