/**
 * The manual's relative links resolve: every `[text](target)` in README.md and docs/ (outside
 * code) names a file or directory of the repository, and a `#fragment` names a heading of the
 * page it points to (GitHub's anchors). Also the manual's shape: no plan documents, and
 * docs/benchmarks.md one current table per area (≤ 400 lines, each area with the command that
 * prints it; the dated runs are in docs/measurement-log.md).
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));

/** README.md and every .md under docs/. */
function pages(): string[] {
  const docs = readdirSync(join(repo, 'docs'), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => join(entry.parentPath, entry.name));
  return [join(repo, 'README.md'), ...docs];
}

/** The markdown without fenced code blocks and inline code (links there are examples, not links). */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gmu, '').replace(/`[^`\n]*`/gu, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gmu, '');
  for (const match of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gmu)) {
    const slug = (match[1] as string).toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/gu, '-');
    let unique = slug;
    for (let n = 1; found.has(unique); n++) unique = `${slug}-${n}`;
    found.add(unique);
  }
  for (const match of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/gu)) found.add(match[1] as string);
  return found;
}

/** The relative links of a page: [text](target) and [text]: target, without external schemes. */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown);
  const targets = [
    ...[...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/gu)].map((match) => match[1] as string),
    ...[...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gmu)].map((match) => match[1] as string),
  ];
  return targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/iu.test(target));
}

describe('the manual (README.md and docs/)', () => {
  it('every relative link names a file that exists, and every #fragment a heading of it', () => {
    const broken: string[] = [];
    for (const page of pages()) {
      const markdown = readFileSync(page, 'utf8');
      for (const link of relativeLinks(markdown)) {
        const [path = '', fragment] = link.split('#', 2);
        const target = path === '' ? page : join(dirname(page), decodeURIComponent(path));
        const where = `${relative(repo, page)}: ${link}`;
        if (!existsSync(target)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (fragment !== undefined && target.endsWith('.md') && statSync(target).isFile() && !anchors(readFileSync(target, 'utf8')).has(fragment)) {
          broken.push(`${where} (no such heading)`);
        }
      }
    }
    expect(broken, 'broken relative links').to.deep.equal([]);
  });

  it('has no plan documents: what is built is described by its guide (git keeps the plans)', () => {
    const plans = readdirSync(join(repo, 'docs')).filter((name) => /plan\.md$/u.test(name));
    expect(plans).to.deep.equal([]);
  });

  it('docs/benchmarks.md is at most 400 lines, each area with the npm run bench command that prints it', () => {
    const markdown = readFileSync(join(repo, 'docs', 'benchmarks.md'), 'utf8');
    expect(markdown.split('\n').length - 1, 'lines').to.be.at.most(400);
    const areas = markdown.split(/^## /mu).slice(1);
    expect(areas.length).to.be.above(10);
    for (const area of areas) expect(area, area.split('\n')[0]).to.match(/npm run bench -- [a-z-]+/u);
  });
});
