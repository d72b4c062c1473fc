/**
 * The API reference: every name exported by an entry point of package.json "exports" (the root
 * and each subpath) has TSDoc, read from src/ by the TypeScript compiler, and
 * docs/reference/api.md is what spec/docs/support/api-reference.ts generates from it
 * (`npm run docs:api` rewrites it). spec/api/public-api.spec.ts checks the root once more as
 * a user installs it (the packed .d.ts files).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { type ApiEntry, apiReferencePath, entryPoints, generateApiReference, readApi } from './support/api-reference.js';
import { firstDifference } from './support/first-difference.js';

describe('the API reference (docs/reference/api.md)', function () {
  this.timeout(120_000);
  let entries: ApiEntry[];

  before(() => {
    entries = readApi();
  });

  it('covers every entry point of package.json "exports", each exporting names', () => {
    expect(entries.map((entry) => entry.specifier)).to.deep.equal(entryPoints().map((entry) => entry.specifier));
    expect(entries.map((entry) => entry.specifier)).to.include.members(['acp-warden', 'acp-warden/supervision', 'acp-warden/host']);
    for (const entry of entries) expect(entry.names.length, entry.specifier).to.be.above(0);
  });

  it('every exported name has a TSDoc comment', () => {
    const undocumented = entries.flatMap((entry) => entry.names.filter((name) => name.doc === '').map((name) => `${entry.specifier}: ${name.name}`));
    expect(undocumented, 'exports without TSDoc').to.deep.equal([]);
  });

  it('is what the TSDoc generates now (npm run docs:api rewrites it)', () => {
    const drift = firstDifference(readFileSync(apiReferencePath, 'utf8'), generateApiReference(entries));
    if (drift) expect.fail(`docs/reference/api.md differs from the TSDoc in src/ (npm run docs:api rewrites it): ${drift}`);
  });
});
