/**
 * The source files of src/, read as text, for specs that check a rule over the whole tree
 * (an option read in one place only, a default never copied).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** src/, as a path ending in a slash. */
export const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every .ts file under `dir` (default: all of src/). */
export function sourcesUnder(dir: string = src): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The code of a file without its comments (a doc comment may name what the code must not). */
export function codeOf(file: string): string {
  return readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//gu, '').replace(/(^|[^:'"`])\/\/.*$/gmu, '$1');
}
