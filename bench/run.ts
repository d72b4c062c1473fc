/**
 * Benchmark entry point: `npm run bench` (= `node --expose-gc --import tsx bench/run.ts`).
 *
 * Imports every `bench/*.ts` file except this one and calls each function it exports, in
 * file order. Helpers live in `bench/support/` and are not run. Prints figures only.
 * Arguments filter the files: `npm run bench -- port` runs only the files whose name
 * contains `port` (any of the arguments, when several).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { arch, cpus, loadavg, platform } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { basename, dirname, join } from 'node:path';
import { collectGarbage, formatNs, now, since } from './support/measure.js';

const here = dirname(fileURLToPath(import.meta.url));
const self = basename(fileURLToPath(import.meta.url));

function xstateVersion(): string {
  try {
    const manifest = JSON.parse(readFileSync(join(here, '..', 'node_modules', 'xstate', 'package.json'), 'utf8')) as { version?: string };
    return manifest.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

const filters = process.argv.slice(2);
const started = now();
const processors = cpus();
console.log('# acp-warden benchmarks');
console.log(`date:    ${new Date().toISOString()}`);
console.log(`node:    ${process.version} (${platform()} ${arch()})`);
console.log(`cpu:     ${processors.length} × ${processors[0]?.model.trim() ?? 'unknown'}`);
console.log(`xstate:  ${xstateVersion()}`);
console.log(`load:    ${loadavg().map((value) => value.toFixed(2)).join(' ')} (1, 5, 15 min)`);
console.log(`gc:      ${typeof globalThis.gc === 'function' ? 'exposed (collected between phases)' : 'not exposed (run with --expose-gc)'}`);
if (filters.length > 0) console.log(`only:    files whose name contains ${filters.map((filter) => `"${filter}"`).join(' or ')}`);

const files = readdirSync(here)
  .filter((file) => file.endsWith('.ts') && file !== self && !file.endsWith('.d.ts'))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort();
for (const file of files) {
  const module = (await import(pathToFileURL(join(here, file)).href)) as Record<string, unknown>;
  for (const value of Object.values(module)) {
    if (typeof value !== 'function') continue;
    collectGarbage();
    await (value as () => unknown)();
  }
}
console.log(`\ntotal: ${formatNs(since(started))}; load at the end: ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);
