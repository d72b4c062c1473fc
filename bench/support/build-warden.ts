/** Builds the warden a user runs (tsc with tsconfig.build.json), for benchmarks that launch `warden acp`. */
import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { check } from './measure.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Compiles src/ with the project's tsc into `directory` (plus package.json and node_modules, so it runs there); returns its dist/cli/main.js. */
export function buildWarden(directory: string): string {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(directory, 'dist'), '--declaration', 'false', '--sourceMap', 'false'], { encoding: 'utf8', timeout: 120_000 });
  check(build.status === 0, `tsc built src/ for the benchmark (${`${build.stdout}${build.stderr}`.trim().split('\n').slice(0, 5).join(' | ')})`);
  writeFileSync(join(directory, 'package.json'), readFileSync(join(root, 'package.json')));
  symlinkSync(join(root, 'node_modules'), join(directory, 'node_modules'), 'dir');
  return join(directory, 'dist', 'cli', 'main.js');
}
