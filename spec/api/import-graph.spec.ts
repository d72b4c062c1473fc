/**
 * The module graph of src/ (issue 15, "Tidy as you go"): no import circle, and nothing in
 * src/host/ imports src/inspect/ (the inspector and the live view sit on top of the host, not
 * under it). Read from the source text: every static `import … from`, `export … from` and bare
 * `import '…'` of a relative path, type-only ones included (a circle of types is still a circle
 * a reader has to untangle). A dynamic `import('…')` is a load on demand, not an edge.
 */
import { expect } from 'chai';
import { join, relative } from 'node:path';
import { importGraph, src, staticImportsOf } from '../support/import-graph.js';

/** The circles of a graph (each once, as the path that closes it), by depth-first search. */
function circlesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const circles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return circles;
}

const name = (path: string) => relative(src, path);

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('reads the edges it should (checked on known text)', () => {
    const file = join(src, 'host', 'x.ts');
    const text = [
      "import type { A } from './a.js';",
      "import { b, type B } from '../b/b.js';",
      "export * from './c.js';",
      "export { d } from './d.js';",
      "import './e.js';",
      "import {\n  f,\n  g,\n} from './f.js';",
      "const lazy = await import('./lazy.js');",
      "/** import { no } from './doc.js'; */",
      "import { chai } from 'chai';",
    ].join('\n');
    expect(staticImportsOf(file, text).map(name)).to.deep.equal(['host/a.ts', 'b/b.ts', 'host/c.ts', 'host/d.ts', 'host/e.ts', 'host/f.ts']);
    expect(circlesOf(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).to.deep.equal([['a', 'b', 'c', 'a']]);
  });

  it('every relative import names a file that exists', () => {
    const missing = [...graph].flatMap(([file, imports]) => imports.filter((target) => !graph.has(target)).map((target) => `${name(file)} -> ${name(target)}`));
    expect(missing).to.deep.equal([]);
  });

  it('has no import circle', () => {
    expect(circlesOf(graph).map((circle) => circle.map(name).join(' -> '))).to.deep.equal([]);
  });

  it('nothing in src/host/ imports src/inspect/', () => {
    const inspect = join(src, 'inspect') + '/';
    const upward = [...graph]
      .filter(([file]) => file.startsWith(join(src, 'host') + '/'))
      .flatMap(([file, imports]) => imports.filter((target) => target.startsWith(inspect)).map((target) => `${name(file)} -> ${name(target)}`));
    expect(upward).to.deep.equal([]);
  });
});
