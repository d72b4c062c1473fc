/**
 * docs/reference/cli.md is what the commands print for `--help` (spec/docs/support/cli-reference.ts
 * generates it; `npm run docs:cli` rewrites it). A usage text changed without the page, or a
 * flag read by the command line that no usage text mentions, fails here.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliReferencePath, commandNames, generateCliReference } from './support/cli-reference.js';
import { firstDifference } from './support/first-difference.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** The `.ts` files under `directory`, recursively. */
function sourcesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('the command-line reference (docs/reference/cli.md)', function () {
  this.timeout(120_000);

  it('is what the built `warden` prints for --help, command by command (npm run docs:cli rewrites it)', () => {
    const drift = firstDifference(readFileSync(cliReferencePath, 'utf8'), generateCliReference('dist'));
    if (drift) expect.fail(`docs/reference/cli.md differs from the --help texts (npm run docs:cli rewrites it): ${drift}`);
  });

  it('lists every command of warden --help, each with its own section', () => {
    const page = readFileSync(cliReferencePath, 'utf8');
    const names = commandNames(page.slice(page.indexOf('Usage: warden <command>')));
    expect(names).to.include.members(['demo', 'acp', 'serve', 'agents', 'chaos', 'sessions', 'cluster', 'inspect']);
    for (const name of names) expect(page, name).to.include(`## \`warden ${name}\``);
  });

  it('mentions every flag the sources read (a handler key such as `\'--store\':`)', () => {
    const page = readFileSync(cliReferencePath, 'utf8');
    const flags = new Set<string>();
    for (const file of sourcesUnder(join(repo, 'src'))) {
      for (const match of readFileSync(file, 'utf8').matchAll(/'(--[a-z][a-z-]*)'\s*:/gu)) flags.add(match[1] as string);
    }
    expect(flags.size, 'flags found in src/').to.be.above(30);
    const missing = [...flags].filter((flag) => !new RegExp(`${flag}(?![a-z-])`, 'u').test(page));
    expect(missing, 'flags read by src/ that no --help mentions').to.deep.equal([]);
  });
});
