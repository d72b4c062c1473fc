/**
 * `warden agents [--json]`: the known agents, whether each is installed here, its version
 * and path. An agent that is missing says how to install it. Then how memory limits
 * (`--max-memory`) and CPU limits (`--max-cpu`) are enforced here.
 */
import { memoryLimitMethod } from '../port/memory-limit.js';
import { cpuLimitMethod } from '../port/cpu-limit.js';
import { createRegistry, probeAll, type AgentAvailability } from '../adapters/registry.js';

export async function runAgents(options: { json: boolean; write: (text: string) => void }): Promise<number> {
  const registry = createRegistry();
  const results = await probeAll(registry);
  const entries = registry.getSnapshot().context.agents;
  if (options.json) {
    const table = results.map((result) => ({ name: result.name, kind: entries.find((entry) => entry.name === result.name)?.kind ?? null, installed: result.installed, version: result.version ?? null, path: result.path ?? null, problem: result.problem ?? null }));
    options.write(`${JSON.stringify(table, null, 2)}\n`);
    return 0;
  }
  const rows = results.map((result: AgentAvailability) => {
    const entry = entries.find((candidate) => candidate.name === result.name);
    return [result.name, entry?.kind ?? '', result.installed ? 'yes' : 'no', result.version ?? '', result.path ?? ''];
  });
  const header = ['agent', 'kind', 'installed', 'version', 'path'];
  const widths = header.map((title, index) => Math.max(title.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, index) => cell.padEnd(widths[index] ?? 0)).join('  ').trimEnd();
  options.write(`${line(header)}\n${rows.map(line).join('\n')}\n`);
  // Every problem, one line each: a missing agent, and an installed one whose version probe failed.
  const problems = results.flatMap((result) => (result.problem ? [`- ${result.problem.replace(/\s*\n\s*/gu, '; ')}\n`] : []));
  if (problems.length > 0) options.write(`\n${problems.join('')}`);
  options.write(`\n${memoryLimitMethod()}\n${cpuLimitMethod()}\n`);
  options.write('Any other ACP agent: warden acp --agent "acp:<command line>"\n');
  return 0;
}
