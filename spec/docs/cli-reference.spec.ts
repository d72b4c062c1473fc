/**
 * docs/reference/cli.md is generated from the command line's flag tables (the usage texts
 * `--help` renders from them, and each flag as the parser reads it; spec/docs/support/cli-reference.ts
 * generates it, `npm run docs:cli` rewrites it). A table changed without the page, a help page
 * the built CLI prints otherwise, or a flag of the sources that no usage text mentions, fails here.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliReferencePath, commandNames, generateCliReference, helpPages, printedHelp } from './support/cli-reference.js';
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

  it('is what the flag tables give, command by command (npm run docs:cli rewrites it)', async () => {
    const drift = firstDifference(readFileSync(cliReferencePath, 'utf8'), await generateCliReference());
    if (drift) expect.fail(`docs/reference/cli.md differs from the flag tables (npm run docs:cli rewrites it): ${drift}`);
  });

  it('shows each help page as the built `warden` prints it for --help', async () => {
    const page = readFileSync(cliReferencePath, 'utf8');
    for (const args of await helpPages()) expect(page, `warden ${args.join(' ')}`).to.include(`\`\`\`text\n${printedHelp(args)}\n\`\`\``);
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
