#!/usr/bin/env node
/**
 * The `warden` command: runs the command named (commands.ts has each one's usage, flag tables
 * and runner), `--help` on every one. Exit statuses: docs/cli.md.
 *
 * Each command's module is imported when that command runs (or shows its help), so that
 * `warden acp`, what an editor starts and waits on, loads only its own code: not the demo,
 * the chaos runner or the inspector's server (docs/benchmarks.md, "Startup").
 */

import { commands, topUsage } from './commands.js';

async function main(argv: readonly string[]): Promise<number | { exit: number }> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    process.stderr.write(`${topUsage}\n`);
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
