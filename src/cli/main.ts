#!/usr/bin/env node
/**
 * The `warden` command. Commands that are not built yet say so and exit with status 2,
 * naming the command, instead of pretending to work.
 */
import { runAcp } from './acp.js';
import { runAgents } from './agents.js';
import { runDemo } from './demo.js';
import { runDemoAgent } from './demo-agent.js';
import { chaosUsage, formatChaosReport, parseChaosArgs, runChaos } from './chaos.js';
import { AgentUnavailableError } from '../adapters/registry.js';

const usage = `Usage: warden <command> [options]

Commands:
  demo                     the demo agent as a supervised subprocess, faults injected, recovery shown
  demo-agent               the built-in demo agent alone, as an ACP agent on stdio (what demo runs)
  acp --agent NAME         ACP agent on stdio, serving NAME under supervision
      [--agent-command PATH] [--store PATH] [--cwd DIR] [--log-file PATH]
      [--restart-intensity N/SECONDS] [--env NAME[=VALUE]]... [--inherit-env]
  agents [--json]          known agents, whether each is installed, version and path
  inspect                  local live view of the supervision tree                 (not yet)
  chaos --agent NAME       drives an agent through prompts while injecting faults; recovery figures
      [--faults kill,hang,garbage] [--rate R] [--duration SECONDS]

Options:
  -h, --help               show this help
  --version                print the version`;

const planned = new Set(['inspect']);

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stderr.write(`${usage}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command === '--version') {
    const { createRequire } = await import('node:module');
    const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  if (command === 'demo') {
    if (rest.length > 0) {
      process.stderr.write(`warden demo: unknown option ${rest[0]}; warden demo takes no options\n`);
      return 2;
    }
    await runDemo({ write: (line) => process.stdout.write(`${line}\n`), colour: process.stdout.isTTY === true && !process.env.NO_COLOR });
    return 0;
  }
  if (command === 'demo-agent') process.exit(await runDemoAgent());
  if (command === 'chaos') {
    const parsed = parseChaosArgs(rest);
    if ('help' in parsed) {
      process.stderr.write(`${chaosUsage}\n`);
      return 0;
    }
    if ('error' in parsed) {
      process.stderr.write(`${parsed.error}\n`);
      return 2;
    }
    try {
      const report = await runChaos(parsed, parsed.json ? undefined : (line) => process.stderr.write(`${line}\n`));
      process.stdout.write(parsed.json ? `${JSON.stringify(report)}\n` : `${formatChaosReport(report)}\n`);
      process.exit(report.prompts.unsettled === 0 && report.processesLeaked === 0 ? 0 : 1);
    } catch (error) {
      process.stderr.write(`warden chaos: ${(error as Error).message}\n`);
      process.exit(error instanceof AgentUnavailableError || /not installed|cannot run/.test((error as Error).message) ? 2 : 1);
    }
  }
  if (command === 'acp') {
    const code = await runAcp(rest);
    // The protocol channel is done: end now, whatever timers remain.
    process.exit(code);
  }
  if (command === 'agents') {
    const unknown = rest.filter((arg) => arg !== '--json');
    if (unknown.length > 0) {
      process.stderr.write(`warden agents: unknown option ${unknown[0]}; the only option is --json\n`);
      return 2;
    }
    return runAgents({ json: rest.includes('--json'), write: (text) => process.stdout.write(text) });
  }
  if (planned.has(command)) {
    process.stderr.write(`warden ${command}: not available in this version yet; see README.md for what is built.\n`);
    return 2;
  }
  process.stderr.write(`warden: unknown command "${command}". Run "warden --help" for the list.\n`);
  return 2;
}

// A closed stdout (`warden demo | head`) ends the command quietly instead of crashing it.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`warden: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
