/**
 * The suite's global setup (`.mocharc.json` `require`): the processes specs start run warden's
 * build (dist/, as the package's `bin` does), so before any spec runs, dist/ is rebuilt with the
 * project's tsc when a file of src/ or a tsconfig is newer than the last build. A spec run
 * right after an edit of src/ therefore never starts a stale warden; an unchanged checkout
 * (CI after `npm ci`, whose `prepare` built it) builds nothing.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
/** Written after each build this setup made or found current: its mtime is the build's. */
const stamp = join(repo, 'dist', '.built-from-src');

/** The newest mtime (ms) of the files under `directory`, recursively. */
function newestUnder(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** The build's time: the stamp's, else dist/cli/main.js's (a build by `npm ci`), else 0 (none). */
function builtAt(): number {
  for (const path of [stamp, join(repo, 'dist', 'cli', 'main.js')]) {
    const found = statSync(path, { throwIfNoEntry: false });
    if (found) return found.mtimeMs;
  }
  return 0;
}

/** Mocha's global setup: builds dist/ when src/ changed since. */
export function mochaGlobalSetup(): void {
  const sources = Math.max(newestUnder(join(repo, 'src')), ...['tsconfig.json', 'tsconfig.build.json'].map((name) => statSync(join(repo, name)).mtimeMs));
  if (builtAt() >= sources) return;
  const started = Date.now();
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(repo, 'tsconfig.build.json')], { cwd: repo, stdio: 'inherit' });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  process.stderr.write(`spec/support/fresh-build: src/ was newer than dist/: built in ${Date.now() - started} ms\n`);
}
