/**
 * The `warden` commands: for each, its usage (what `--help` prints), its flag tables (what
 * docs/reference/cli.md lists, spec/docs/support/cli-reference.ts) and how it runs. Each
 * command's module is imported only when that command runs or shows its help (main.ts).
 */
import { argumentProblem, parseFlags, type FlagTable } from './flag-table.js';

/** The table of a command that takes no flags. */
const noFlags: FlagTable<never> = {};

/** The flags of `warden agents`. */
export const agentsFlags: FlagTable<{ json: boolean }> = { '--json': { field: 'json', help: 'print the same as JSON' } };

/**
 * The settings `args` give by `flags`, or exit status 2 with the problem said on stderr. (The
 * commands here take no `--help` of their own: main.ts answers it first.)
 */
function settingsOr<TSettings>(command: string, flags: FlagTable<TSettings>, args: readonly string[], hint: string): TSettings | number {
  try {
    const parsed = parseFlags(flags, args, hint);
    return parsed === 'help' ? 0 : parsed;
  } catch (error) {
    process.stderr.write(`${argumentProblem(command, error).error}\n`);
    return 2;
  }
}

/** `warden --help`. */
export const topUsage = `Usage: warden <command> [options]

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

/** One of the command lines a command takes, with its flag table (what the reference lists). */
export interface CommandForm {
  /** `warden acp --connect URL`. */
  readonly line: string;
  // The table's settings type differs by command: the reference reads only the flags' declarations.
  readonly flags: FlagTable<never>;
  /** The help of this form, when it has its own (`warden inspect --export --help`): the arguments that print it and its text. */
  readonly help?: { readonly args: readonly string[]; readonly text: string };
}

/** A `warden` command. */
export interface Command {
  /** A string, or the command's module's own (loaded for `--help` only then). */
  readonly usage: string | (() => Promise<string>);
  /** The command's flag tables, one per form of its command line (loaded for the reference only). */
  readonly forms: () => Promise<readonly CommandForm[]>;
  /** The command answers --help itself (its usage depends on its other arguments). */
  readonly ownHelp?: boolean;
  /** Resolves with the exit status; `exit: true` ends the process at once (protocol commands). */
  run(args: readonly string[]): Promise<number | { exit: number }>;
}

/** The commands, in the order `warden --help` lists them. */
export const commands: Readonly<Record<string, Command>> = {
  demo: {
    usage: `Usage: warden demo

Runs the built-in demo agent as a real subprocess under supervision, sends it prompts, kills
it mid-answer, freezes it (the watchdog catches the hang), drives it into a crash loop past its
restart intensity, and prints each restart, the recovered session, the supervision tree and
the journal. Needs no agent installed and no network. Colour on a terminal (NO_COLOR turns it off).`,
    forms: async () => [{ line: 'warden demo', flags: noFlags }],
    async run(args) {
      const settings = settingsOr('warden demo', noFlags, args, 'warden demo takes no options (see warden demo --help)');
      if (typeof settings === 'number') return settings;
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
    forms: async () => [{ line: 'warden demo-agent', flags: noFlags }],
    async run(args) {
      const settings = settingsOr('warden demo-agent', noFlags, args, 'It takes none (see warden demo-agent --help)');
      if (typeof settings === 'number') return settings;
      const { runDemoAgent } = await import('./demo-agent.js');
      return { exit: await runDemoAgent() };
    },
  },
  acp: {
    usage: async () => (await import('./acp.js')).acpUsage,
    forms: async () => [
      { line: 'warden acp --agent NAME', flags: (await import('./acp.js')).acpFlags },
      { line: 'warden acp --connect URL | --agent NAME --daemon', flags: (await import('./bridge-flags.js')).bridgeFlags },
    ],
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
    forms: async () => [{ line: 'warden agents', flags: agentsFlags }],
    async run(args) {
      const settings = settingsOr('warden agents', agentsFlags, args, 'The only option is --json (see warden agents --help)');
      if (typeof settings === 'number') return settings;
      const { runAgents } = await import('./agents.js');
      return runAgents({ json: settings.json, write: (text) => process.stdout.write(text) });
    },
  },
  chaos: {
    usage: async () => (await import('./chaos.js')).chaosUsage,
    forms: async () => [{ line: 'warden chaos', flags: (await import('./chaos.js')).chaosFlags }],
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
    forms: async () => [{ line: 'warden serve', flags: (await import('./serve.js')).serveFlags }],
    run: async (args) => ({ exit: await (await import('./serve.js')).runServe(args) }),
  },
  sessions: {
    usage: async () => (await import('./sessions.js')).sessionsUsage,
    forms: async () => [{ line: 'warden sessions', flags: (await import('./sessions.js')).sessionsFlags }],
    run: async (args) => (await import('./sessions.js')).runSessions(args, (text) => process.stdout.write(text)),
  },
  cluster: {
    usage: async () => (await import('./cluster-status.js')).clusterUsage,
    forms: async () => [{ line: 'warden cluster status', flags: (await import('./cluster-status.js')).clusterFlags }],
    run: async (args) => (await import('./cluster-status.js')).runCluster(args, (text) => process.stdout.write(text), (text) => process.stderr.write(text)),
  },
  inspect: {
    usage: async () => (await import('./inspect.js')).inspectUsage,
    forms: async () => {
      const [{ inspectFlags }, { inspectExportFlags, inspectExportUsage }] = await Promise.all([import('./inspect.js'), import('./inspect-export.js')]);
      return [
        { line: 'warden inspect', flags: inspectFlags },
        { line: 'warden inspect --export FORMAT', flags: inspectExportFlags, help: { args: ['inspect', '--export', '--help'], text: inspectExportUsage } },
      ];
    },
    ownHelp: true,
    run: async (args) => (await import('./inspect.js')).runInspect(args),
  },
};
