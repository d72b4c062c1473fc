#!/usr/bin/env node
// `npm run chaos [-- options]`: runs the chaos walk (spec/chaos/) alone.
//   --long            the long profile: 300 walks of up to 60 steps (thousands of faults)
//   --runs N          walks            --steps N   steps per walk at most
//   --seed N          replay a seed    --path P    and the path fast-check printed
//   --shrink          shrink a failure to a smaller walk (slow: real processes)
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const flags = { '--runs': 'CHAOS_RUNS', '--steps': 'CHAOS_COMMANDS', '--seed': 'CHAOS_SEED', '--path': 'CHAOS_PATH', '--replay-path': 'CHAOS_REPLAY_PATH' };
const env = { ...process.env };
const args = process.argv.slice(2);
for (let index = 0; index < args.length; index++) {
  const arg = args[index];
  if (arg === '--long') env.CHAOS_PROFILE = 'long';
  else if (arg === '--shrink') env.CHAOS_SHRINK = '1';
  else if (arg in flags) {
    const value = args[++index];
    if (value === undefined || value.startsWith('--')) fail(`${arg} needs a value`);
    env[flags[arg]] = value;
  } else if (arg === '--help' || arg === '-h') {
    process.stdout.write('Usage: npm run chaos -- [--long] [--runs N] [--steps N] [--seed N [--path P]] [--shrink]\n');
    process.exit(0);
  } else fail(`unknown option ${arg}`);
}

function fail(why) {
  process.stderr.write(`npm run chaos: ${why} (try --help)\n`);
  process.exit(2);
}

const mocha = join(root, 'node_modules', '.bin', 'mocha');
const child = spawn(mocha, ['--no-config', '--node-option', 'import=tsx', '--extension', 'ts', '--timeout', '0', 'spec/chaos/chaos.spec.ts'], { cwd: root, env, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
