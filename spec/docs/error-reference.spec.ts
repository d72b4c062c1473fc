/**
 * docs/reference/errors.md names every reason warden can give: each word of the `data.reason`
 * vocabulary, and each reason string the sources write (`reason: 'word'`, in a result, an event
 * or a type), plus every JSON-RPC error code warden declares. A new reason fails here until the
 * page says what it means and what to do. (spec/jsonrpc/rpc-reasons.spec.ts checks the
 * `data.reason` table row by row against the vocabulary.)
 */
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorCodes } from '../../src/jsonrpc/error-codes.js';
import { rpcReasons } from '../../src/jsonrpc/rpc-error.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const page = readFileSync(join(repo, 'docs', 'reference', 'errors.md'), 'utf8');

/**
 * The reason words written in src/: every quoted snake_case word of the expression after
 * `reason:` (a template literal is a message, not a reason), and of each `type …Reason =` union
 * (exit reasons, drop reasons), with where each was first found.
 */
function reasonsInSources(): Map<string, string> {
  const found = new Map<string, string>();
  const note = (text: string, where: string): void => {
    for (const word of text.matchAll(/['"]([a-z]+(?:_[a-z]+)*)['"]/gu)) if (!found.has(word[1] as string)) found.set(word[1] as string, where);
  };
  const files = readdirSync(join(repo, 'src'), { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile() && entry.name.endsWith('.ts'));
  for (const entry of files) {
    const path = join(entry.parentPath, entry.name);
    const text = readFileSync(path, 'utf8');
    const where = (index: number): string => `${path.slice(repo.length)}:${text.slice(0, index).split('\n').length}`;
    for (const match of text.matchAll(/\breason\??:\s*([^,;}\n]+)/gu)) {
      if (!(match[1] as string).startsWith('`')) note(match[1] as string, where(match.index));
    }
    for (const match of text.matchAll(/^export type \w*Reason =([^;]*);/gmu)) note(match[1] as string, where(match.index));
  }
  return found;
}

describe('the errors reference (docs/reference/errors.md)', () => {
  it('has every data.reason of the vocabulary as a table row', () => {
    const missing = Object.keys(rpcReasons).filter((reason) => !page.includes(`| \`${reason}\` |`));
    expect(missing, 'data.reason words without a row').to.deep.equal([]);
  });

  it('names every reason string the sources write (reason: \'word\')', () => {
    const reasons = reasonsInSources();
    expect(reasons.size, 'reasons found in src/').to.be.above(15);
    const missing = [...reasons].filter(([reason]) => !page.includes(`\`${reason}\``)).map(([reason, where]) => `${reason} (${where})`);
    expect(missing, 'reasons in src/ the page does not name').to.deep.equal([]);
  });

  it('has every JSON-RPC error code warden declares', () => {
    const missing = Object.entries(ErrorCodes).filter(([name, code]) => !page.includes(`| \`${code}\` | ${name} |`)).map(([name]) => name);
    expect(missing, 'codes without a row').to.deep.equal([]);
  });

  it('has a row for each exit status 0 to 5', () => {
    const section = page.slice(page.indexOf('## Exit statuses'));
    for (const status of [0, 1, 2, 3, 4, 5]) expect(section, `exit status ${status}`).to.match(new RegExp(`^\\| ${status} \\|`, 'mu'));
  });
});
