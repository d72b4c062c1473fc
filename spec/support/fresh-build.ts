/**
 * The suite's global setup (`.mocharc.json` `require`): the processes specs start run warden's
 * build (dist/, as the package's `bin` does), so before any spec runs, dist/ is rebuilt with the
 * project's tsc when a file of src/ or a tsconfig is newer than the last build. A spec run
 * right after an edit of src/ therefore never starts a stale warden; an unchanged checkout
 * (CI after `npm ci`, whose `prepare` built it) builds nothing. Test runs started together
 * (two mocha processes right after an edit) take turns through a lock: one builds, the others
 * find the build current, and none rewrites dist/ under the other's running wardens.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/** Runs `work` holding this checkout's build lock (a directory: made by one process at a time; one older than 5 minutes was left by a dead run). */
function withBuildLock(work: () => void): void {
  const lock = join(tmpdir(), `warden-build-${createHash('sha256').update(repo).digest('hex').slice(0, 16)}.lock`);
  for (let waited = 0; ; waited += 100) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > 300_000) rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Mocha's global setup: builds dist/ when src/ changed since. */
export function mochaGlobalSetup(): void {
  const sources = () => Math.max(newestUnder(join(repo, 'src')), ...['tsconfig.json', 'tsconfig.build.json'].map((name) => statSync(join(repo, name)).mtimeMs));
  if (builtAt() >= sources()) return;
  withBuildLock(() => {
    // Another run may have built it while this one waited for the lock.
    if (builtAt() >= sources()) return;
    build();
  });
}

function build(): void {
  const started = Date.now();
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-p', join(repo, 'tsconfig.build.json')], { cwd: repo, stdio: 'inherit' });
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  process.stderr.write(`spec/support/fresh-build: src/ was newer than dist/: built in ${Date.now() - started} ms\n`);
}
