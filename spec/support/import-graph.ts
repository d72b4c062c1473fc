/**
 * The static imports of src/, read from the source text (spec/api/import-graph.spec.ts checks
 * its circles, spec/architecture/layers.spec.ts its direction): every `import … from`,
 * `export … from` and bare `import '…'` of a relative path, type-only ones included. A dynamic
 * `import('…')` is a load on demand, not an edge.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The src/ folder, with its trailing slash. */
export const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every .ts file under `dir`. */
export function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative modules `file` imports statically, as paths of .ts files. */
export function staticImportsOf(file: string, text = readFileSync(file, 'utf8')): string[] {
  // Comments out first, so that an example in a doc comment is no edge.
  const code = text.replace(/\/\*[\s\S]*?\*\//gu, '').replace(/(^|[^:'"`])\/\/.*$/gmu, '$1');
  const specifiers = [
    ...code.matchAll(/^\s*(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/gmu),
  ].map((match) => match[1]!);
  return specifiers.filter((specifier) => specifier.startsWith('.')).map((specifier) => resolve(dirname(file), specifier.replace(/\.js$/u, '.ts')));
}

/** The import graph of src/: each file with the files it imports. */
export function importGraph(): Map<string, string[]> {
  return new Map(sourcesUnder(src).map((file) => [file, staticImportsOf(file)]));
}
