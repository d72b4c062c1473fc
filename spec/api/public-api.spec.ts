/**
 * The package as a user gets it: built with tsconfig.build.json, packed with `npm pack` (so
 * "files" decides what ships), unpacked into an application's node_modules, and imported by
 * name through package.json "exports". The root export is counted there (at most 80 names,
 * values and types, each with TSDoc) and every subpath is imported. Every name of every entry
 * point, subpaths included, is checked for TSDoc from the sources by
 * spec/docs/api-reference.spec.ts, which also keeps docs/reference/api.md current.
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const manifest = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { types: string; import: string }>;
  dependencies: Record<string, string>;
};
const maxRootNames = 80;
/** The entry points an embedder starts from: their TSDoc shows how (`@example`). */
const withExamples = ['createHost', 'sqliteJournal', 'createSupervisor', 'createDynamicSupervisor', 'createAdapterAgent'];

/** Builds and packs a copy of the package, and installs the tarball into a fresh application directory. */
function installPacked(work: string): string {
  // A copy of the checkout (sources, configs, docs), built there as `npm run build` builds:
  // the repository's own dist/ is left alone.
  const staging = join(work, 'staging');
  mkdirSync(staging);
  for (const file of ['package.json', 'README.md', 'docs', 'src', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(repo, file), join(staging, file), { recursive: true });
  symlinkSync(join(repo, 'node_modules'), join(staging, 'node_modules'), 'dir');
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  const built = spawnSync(process.execPath, [tsc, '-p', join(staging, 'tsconfig.build.json')], { cwd: staging, encoding: 'utf8', timeout: 120_000 });
  if (built.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed: ${built.stdout}${built.stderr}`);
  // --ignore-scripts: `prepare` would build again; the build above is the same one.
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', work], { cwd: staging, encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop() as string;
  const app = join(work, 'app');
  const installed = join(app, 'node_modules', manifest.name);
  mkdirSync(installed, { recursive: true });
  // The application's own package.json: without it Node looks upwards for the nearest one, and
  // a package.json named like this package above the temp directory (a checkout in /tmp, a
  // stray copy) would resolve the name to itself instead of to node_modules.
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'warden-api-app', private: true, type: 'module' }));
  execFileSync('tar', ['-xzf', join(work, tarball), '-C', installed, '--strip-components=1']);
  // The dependencies, as npm would have installed them next to the package (the repository's copies).
  for (const dependency of Object.keys(manifest.dependencies)) {
    const link = join(app, 'node_modules', dependency);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(join(repo, 'node_modules', dependency), link, 'dir');
  }
  return app;
}

/** Runs an ES module in the application directory, as the application would, and parses what it prints. */
function runInApp(app: string, source: string): unknown {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: app, encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`the application failed (status ${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The names a declaration file re-exports, by the module each comes from; `export *` is refused (it would hide the count). */
function reExports(declarations: string): Map<string, string> {
  expect(declarations, 'the root re-exports names one by one').not.to.match(/export \* from/u);
  const names = new Map<string, string>();
  for (const match of declarations.matchAll(/export (?:type )?\{([^}]*)\} from ['"]([^'"]+)['"]/gu)) {
    for (const specifier of (match[1] as string).split(',')) {
      const name = specifier.trim().replace(/^type\s+/u, '').split(/\s+as\s+/u).pop()?.trim();
      if (name) names.set(name, match[2] as string);
    }
  }
  return names;
}

/** The doc comment of `name`'s declaration in a .d.ts file, following re-exports; undefined without one. */
function docOf(file: string, name: string, depth = 0): string | undefined {
  if (depth > 4 || !existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  const declaration = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\s*export (?:declare )?(?:abstract )?(?:function|const|class|interface|type|enum|let|var) ${name}\\b`, 'u');
  const found = declaration.exec(text);
  if (found) return found[1];
  const from = reExports(text).get(name);
  return from ? docOf(join(dirname(file), from.replace(/\.js$/u, '.d.ts')), name, depth + 1) : undefined;
}

describe('the public API, as a user installs it', function () {
  this.timeout(180_000);
  let work: string;
  let app: string;

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'warden-api-'));
    app = installPacked(work);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('the root export has at most 80 names (values and types), each with TSDoc, the entry points with an @example', () => {
    const dist = join(app, 'node_modules', manifest.name, 'dist');
    const declared = reExports(readFileSync(join(dist, 'index.d.ts'), 'utf8'));
    const values = runInApp(app, `const root = await import('${manifest.name}'); console.log(JSON.stringify(Object.keys(root)));`) as string[];
    // Every value the module has is declared (nothing reaches users untyped), and the count holds both.
    expect(values.filter((name) => !declared.has(name)), 'values without a declaration').to.deep.equal([]);
    const names = [...declared.keys()];
    expect(names.length, `the root exports ${names.length} names: ${names.join(', ')}`).to.be.at.most(maxRootNames);
    expect(values).to.include.members(['createHost', 'sqliteJournal', 'createSupervisor', 'createAdapterAgent']);
    const undocumented = names.filter((name) => !docOf(join(dist, (declared.get(name) as string).replace(/\.js$/u, '.d.ts')), name)?.trim());
    expect(undocumented, 'root names without TSDoc').to.deep.equal([]);
    const withoutExample = withExamples.filter((name) => !docOf(join(dist, (declared.get(name) as string).replace(/\.js$/u, '.d.ts')), name)?.includes('@example'));
    expect(withoutExample, 'entry points without an @example').to.deep.equal([]);
  });

  it('keeps internals off the root: framers, write queues, reapers, normalisers, logic objects', () => {
    const values = runInApp(app, `console.log(JSON.stringify(Object.keys(await import('${manifest.name}'))));`) as string[];
    for (const internal of ['LineFramer', 'WriteQueue', 'setOrphanReaper', 'normalizeChildSpec', 'normalizeFlags', 'portLogic', 'connectionLogic', 'agentServerLogic', 'hostAgentLogic', 'scanEnvelope']) {
      expect(values, internal).not.to.include(internal);
    }
  });

  it('imports every subpath of package.json "exports" by name, each with its types shipped', () => {
    const subpaths = Object.keys(manifest.exports).filter((key) => key.startsWith('./') && key !== './package.json');
    expect(subpaths).to.include.members(['./supervision', './port', './jsonrpc', './acp', './adapters', './host', './inspect']);
    const specifiers = subpaths.map((key) => `${manifest.name}/${key.slice(2)}`);
    const loaded = runInApp(
      app,
      `const out = {}; for (const specifier of ${JSON.stringify(specifiers)}) out[specifier] = Object.keys(await import(specifier)); console.log(JSON.stringify(out));`,
    ) as Record<string, string[]>;
    // What each subpath is for: one name of it that the root does not have.
    const expected: Record<string, string> = {
      supervision: 'normalizeChildSpec',
      port: 'LineFramer',
      jsonrpc: 'connectionLogic',
      acp: 'agentServerLogic',
      adapters: 'claudeAdapter',
      host: 'hostAgentLogic',
      inspect: 'connectInspector',
    };
    for (const [subpath, name] of Object.entries(expected)) expect(loaded[`${manifest.name}/${subpath}`], subpath).to.include(name);
    const installed = join(app, 'node_modules', manifest.name);
    for (const key of subpaths) {
      const entry = manifest.exports[key] as { types: string; import: string };
      expect(existsSync(join(installed, entry.types)), `${key} types ${entry.types}`).to.equal(true);
    }
    // The bin ships too (an editor launches it).
    expect(readdirSync(join(installed, 'dist', 'cli'))).to.include('main.js');
  });

  it('ships source maps whose sources a debugger can show (in the map or in the package)', () => {
    const installed = join(app, 'node_modules', manifest.name);
    for (const map of ['dist/index.js.map', 'dist/cli/main.js.map', 'dist/port/port.js.map']) {
      const parsed = JSON.parse(readFileSync(join(installed, map), 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null> };
      parsed.sources.forEach((source, index) => {
        const shown = typeof parsed.sourcesContent?.[index] === 'string' || existsSync(join(installed, dirname(map), source));
        expect(shown, `${map}: source ${source}`).to.equal(true);
      });
    }
  });
});
