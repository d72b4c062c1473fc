#!/usr/bin/env node
/**
 * The `warden` command: one entry per command with its usage, so that `--help` works on
 * every one. Commands that are not built yet say so and exit with status 2, naming the
 * command, instead of pretending to work. Exit statuses: docs/cli.md.
 *
 * Each command's module is imported when that command runs (or shows its help), so that
 * `warden acp`, what an editor starts and waits on, loads only its own code: not the demo,
 * the chaos runner or the inspector's server (docs/benchmarks.md, "Startup").
 */

const usage = `Usage: warden <command> [options]

Commands:
  demo                     the demo agent as a supervised subprocess, faults injected, recovery shown
  acp --agent NAME         ACP agent on stdio (what an editor launches), serving NAME under supervision
  acp --connect URL        the same through a running warden serve (--daemon: the default one, started if need be)
  serve [--listen ADDR]    long-running host serving ACP over WebSocket (token-guarded, loopback by default)
  agents [--json]          known agents, whether each is installed, version and path
  chaos --agent NAME       drives an agent through prompts while injecting faults; recovery figures
  demo-agent               the built-in demo agent alone, as an ACP agent on stdio (what demo runs)
  sessions [--json]        the sessions of a running warden serve (--close ID closes one)
  cluster status --store postgres://…
                           the hosts of a cluster on one PostgreSQL: heartbeats, leases, sessions
  inspect [--port N]       the local live view on 127.0.0.1 for warden acp --inspect streams
                           (--export mermaid|json|svg: the state charts)

"warden <command> --help" describes each command.

Options:
  -h, --help               show this help
  --version                print the version`;

interface Command {
  /** A string, or the command's module's own (loaded for `--help` only then). */
  readonly usage: string | (() => Promise<string>);
  /** The command answers --help itself (its usage depends on its other arguments). */
  readonly ownHelp?: boolean;
  /** Resolves with the exit status; `exit: true` ends the process at once (protocol commands). */
  run(args: readonly string[]): Promise<number | { exit: number }>;
}

const commands: Record<string, Command> = {
  demo: {
    usage: `Usage: warden demo

Runs the built-in demo agent as a real subprocess under supervision, sends it prompts, kills
it mid-answer, freezes it (the watchdog catches the hang), drives it into a crash loop past its
restart intensity, and prints each restart, the recovered session, the supervision tree and
the journal. Needs no agent installed and no network. Colour on a terminal (NO_COLOR turns it off).`,
    async run(args) {
      if (args.length > 0) {
        process.stderr.write(`warden demo: unknown option ${args[0]}; warden demo takes no options (see warden demo --help)\n`);
        return 2;
      }
      const { runDemo } = await import('./demo.js');
      await runDemo({ write: (line) => process.stdout.write(`${line}\n`), colour: process.stdout.isTTY === true && !process.env.NO_COLOR });
      return 0;
    },
  },
  'demo-agent': {
    usage: `Usage: warden demo-agent

The built-in demo agent alone, served as an ACP agent on stdio with no host around it (what
warden demo and warden chaos --agent demo run as their subprocess). DEMO_WORD_DELAY_MS sets the
pause between streamed words.`,
    async run(args) {
      if (args.length > 0) {
        process.stderr.write(`warden demo-agent: unknown option ${args[0]}; it takes none (see warden demo-agent --help)\n`);
        return 2;
      }
      const { runDemoAgent } = await import('./demo-agent.js');
      return { exit: await runDemoAgent() };
    },
  },
  acp: {
    usage: async () => (await import('./acp.js')).acpUsage,
    // The protocol channel is done: end now, whatever timers remain.
    run: async (args) => {
      // The bridge to a daemon loads none of the host: it must start fast (docs/benchmarks.md).
      if (args.some((arg) => arg === '--connect' || arg.startsWith('--connect=') || arg === '--daemon')) {
        const { runAcpBridge } = await import('./acp-bridge.js');
        return { exit: await runAcpBridge(args) };
      }
      const { runAcp } = await import('./acp.js');
      return { exit: await runAcp(args) };
    },
  },
  agents: {
    usage: `Usage: warden agents [--json]

The agents warden knows, whether each is installed here, its version and path; a missing one
says how to install it. --json prints the same as JSON.`,
    async run(args) {
      const unknown = args.filter((arg) => arg !== '--json');
      if (unknown.length > 0) {
        process.stderr.write(`warden agents: unknown option ${unknown[0]}; the only option is --json\n`);
        return 2;
      }
      const { runAgents } = await import('./agents.js');
      return runAgents({ json: args.includes('--json'), write: (text) => process.stdout.write(text) });
    },
  },
  chaos: {
    usage: async () => (await import('./chaos.js')).chaosUsage,
    async run(args) {
      const [{ formatChaosReport, parseChaosArgs, runChaos }, { AgentUnavailableError }] = await Promise.all([import('./chaos.js'), import('../adapters/registry.js')]);
      const parsed = parseChaosArgs(args);
      if ('help' in parsed) return 0;
      if ('error' in parsed) {
        process.stderr.write(`${parsed.error}\n`);
        return 2;
      }
      try {
        const report = await runChaos(parsed, parsed.json ? undefined : (line) => process.stderr.write(`${line}\n`));
        process.stdout.write(parsed.json ? `${JSON.stringify(report)}\n` : `${formatChaosReport(report)}\n`);
        return { exit: report.prompts.unsettled === 0 && report.processesLeaked === 0 ? 0 : 1 };
      } catch (error) {
        process.stderr.write(`warden chaos: ${(error as Error).message}\n`);
        return { exit: error instanceof AgentUnavailableError || /not installed|cannot run/.test((error as Error).message) ? 2 : 1 };
      }
    },
  },
  serve: {
    usage: async () => (await import('./serve.js')).serveUsage,
    run: async (args) => ({ exit: await (await import('./serve.js')).runServe(args) }),
  },
  sessions: {
    usage: async () => (await import('./sessions.js')).sessionsUsage,
    run: async (args) => (await import('./sessions.js')).runSessions(args, (text) => process.stdout.write(text)),
  },
  cluster: {
    usage: async () => (await import('./cluster-status.js')).clusterUsage,
    run: async (args) => (await import('./cluster-status.js')).runCluster(args, (text) => process.stdout.write(text), (text) => process.stderr.write(text)),
  },
  inspect: {
    usage: async () => (await import('./inspect.js')).inspectUsage,
    ownHelp: true,
    run: async (args) => (await import('./inspect.js')).runInspect(args),
  },
};

async function main(argv: readonly string[]): Promise<number | { exit: number }> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stderr.write(`${usage}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    const { createRequire } = await import('node:module');
    const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(`warden: unknown command "${name}". Run "warden --help" for the list.\n`);
    return 2;
  }
  if (!command.ownHelp && (rest.includes('--help') || rest.includes('-h'))) {
    process.stderr.write(`${typeof command.usage === 'string' ? command.usage : await command.usage()}\n`);
    return 0;
  }
  return command.run(rest);
}

// A closed stdout (`warden demo | head`) ends the command quietly instead of crashing it.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

main(process.argv.slice(2)).then(
  (status) => {
    if (typeof status === 'object') process.exit(status.exit);
    process.exitCode = status;
  },
  (error: unknown) => {
    process.stderr.write(`warden: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
