/**
 * The layers of src/ (issue 29, "Layers that hide the one below"; docs/architecture.md,
 * "Layers"): each folder of src/ sits in one layer, and a file imports only from its own folder
 * or from a lower layer. Folders of the same layer do not import each other. The edges are the
 * static imports of spec/support/import-graph.ts (type-only ones included: a type from above
 * still ties a layer to the one above it); a dynamic `import('…')` is a load on demand, not an
 * edge.
 */
import { expect } from 'chai';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { importGraph, src } from '../support/import-graph.js';

/**
 * The layers, bottom first. A new folder of src/ goes in here (the spec fails until it does),
 * under the lowest layer it can sit on.
 */
const layers: ReadonlyArray<{ readonly name: string; readonly folders: readonly string[]; readonly holds: string }> = [
  { name: 'supervision', folders: ['supervision'], holds: 'OTP-style supervisors, restart policy, shutdown' },
  { name: 'port', folders: ['port'], holds: 'one agent process: spawn, framing, signals, the watchdog' },
  { name: 'jsonrpc', folders: ['jsonrpc'], holds: 'JSON-RPC connections over stdio, memory, WebSocket; the daemon socket' },
  { name: 'protocol', folders: ['protocol'], holds: 'the ACP vocabulary: method names, the native agent contract' },
  { name: 'journal', folders: ['journal'], holds: 'the journal contract and its stores (SQLite, PostgreSQL), the store URL and opener, the lease' },
  { name: 'session', folders: ['session'], holds: 'one session: its state chart, turns, cursors, subscribers' },
  { name: 'acp', folders: ['acp'], holds: 'the ACP agent server and client, files and terminals' },
  { name: 'adapters', folders: ['adapters'], holds: 'agent CLIs behind ACP (Claude, Codex, passthrough)' },
  { name: 'host', folders: ['host'], holds: 'the host agent: journaled sessions over several agents' },
  { name: 'cluster', folders: ['cluster'], holds: 'membership, takeover, placement, forwarding between hosts' },
  { name: 'serve', folders: ['serve'], holds: 'the daemon: connection hub, listeners, the stdio bridge' },
  { name: 'observe', folders: ['inspect', 'telemetry'], holds: 'the live view and inspector; OpenTelemetry, plugged in from above' },
  { name: 'runtime', folders: ['runtime'], holds: 'the composition: createHost with its store, hub, cluster duties, telemetry' },
  { name: 'entry', folders: ['cli', 'index.ts'], holds: 'the warden command and the root export' },
];

/** The layer of a folder of src/ (or of a file at its top), by its index in {@link layers}; -1 when the table misses it. */
function layerOf(folder: string): number {
  return layers.findIndex((layer) => layer.folders.includes(folder));
}

/** The folder of src/ a path is in (`index.ts` for a file at the top). */
const folderOf = (path: string) => relative(src, path).split('/')[0]!;

/** Each import that runs up or sideways across the layers, as `file -> import (layer -> layer)`. */
function upwardImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph].flatMap(([file, imports]) => {
    const from = folderOf(file);
    return imports
      .filter((target) => folderOf(target) !== from && !(layerOf(folderOf(target)) < layerOf(from)))
      .map((target) => {
        const to = folderOf(target);
        const layerName = (folder: string) => layers[layerOf(folder)]?.name ?? `${folder} (in no layer)`;
        return `${relative(src, file)} imports ${relative(src, target)}: layer ${layerName(from)} -> layer ${layerName(to)}, which is not below it`;
      });
  });
}

/** Every .ts file of src/, listed apart from the collector so that a collector that reads nothing shows. */
function filesOfSrc(): string[] {
  return readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.ts')).map((path) => join(src, path));
}

describe('the layers of src/', () => {
  const graph = importGraph();

  it('reads the whole of src/ (the checks below would pass on an empty graph)', () => {
    const files = filesOfSrc();
    expect(files.length, 'the .ts files of src/').to.be.above(200);
    expect([...graph.keys()].sort(), 'the files of the import graph').to.deep.equal(files.sort());
    const edges = [...graph.values()].flat();
    expect(edges.length, 'the imports of the graph').to.be.above(100);
    expect(edges.filter((target) => !graph.has(target)), 'imports naming no file of src/').to.deep.equal([]);
    const filesIn = (layer: number) => [...graph.keys()].filter((file) => layerOf(folderOf(file)) === layer);
    expect(layers.filter((_, layer) => filesIn(layer).length === 0).map((layer) => layer.name), 'layers with no file').to.deep.equal([]);
    // Each layer above the bottom leans on a lower one: a collector that drops the imports across folders shows here.
    const importsBelow = (layer: number) => filesIn(layer).some((file) => graph.get(file)!.some((target) => layerOf(folderOf(target)) < layer));
    expect(layers.filter((_, layer) => layer > 0 && !importsBelow(layer)).map((layer) => layer.name), 'layers importing nothing below them').to.deep.equal([]);
  });

  it('finds an import that runs up or sideways (checked on known edges)', () => {
    const edges = new Map([
      [join(src, 'session', 'a.ts'), [join(src, 'journal', 'j.ts'), join(src, 'session', 'b.ts'), join(src, 'host', 'h.ts')]],
      [join(src, 'inspect', 'i.ts'), [join(src, 'telemetry', 't.ts'), join(src, 'host', 'h.ts')]],
      [join(src, 'index.ts'), [join(src, 'runtime', 'r.ts')]],
    ]);
    expect(upwardImports(edges)).to.deep.equal([
      'session/a.ts imports host/h.ts: layer session -> layer host, which is not below it',
      'inspect/i.ts imports telemetry/t.ts: layer observe -> layer observe, which is not below it',
    ]);
  });

  it('names every folder of src/ in one layer', () => {
    const entries = readdirSync(src, { withFileTypes: true }).map((entry) => entry.name).filter((name) => !name.endsWith('.d.ts'));
    expect(entries.filter((name) => layerOf(name) < 0), 'folders of src/ missing from the layer table').to.deep.equal([]);
    const named = layers.flatMap((layer) => layer.folders);
    expect(named.filter((folder) => !existsSync(join(src, folder))), 'layers naming a folder src/ does not have').to.deep.equal([]);
    expect(new Set(named).size, 'a folder in two layers').to.equal(named.length);
  });

  it('has no import that runs up the layers', () => {
    expect(upwardImports(graph)).to.deep.equal([]);
  });

  it('keeps the bars of issue 29: host/ imports neither serve/ nor cluster/, session/ neither host/ nor acp/', () => {
    const crossing = (from: string, to: readonly string[]) =>
      [...graph].filter(([file]) => folderOf(file) === from).flatMap(([file, imports]) => imports.filter((target) => to.includes(folderOf(target))).map((target) => `${relative(src, file)} -> ${relative(src, target)}`));
    expect(crossing('host', ['serve', 'cluster'])).to.deep.equal([]);
    expect(crossing('session', ['host', 'acp'])).to.deep.equal([]);
  });
});
