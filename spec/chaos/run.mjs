#!/usr/bin/env node
// `npm run chaos [-- options]`: runs the chaos walk (spec/chaos/) alone, or with --cluster the
// cluster walk (spec/cluster/cluster-walk.spec.ts: three warden serve hosts on PostgreSQL).
//   --long            the long profile: 300 walks of up to 60 steps (thousands of faults);
//                     with --cluster, 20 walks of 40 steps
//   --cluster         the cluster walk instead: 5 walks of 20 steps unless told
//   --runs N          walks            --steps N   steps per walk (at most, for the chaos walk)
//   --seed N          replay a seed    --path P    and the path fast-check printed
//   --shrink          shrink a failure to a smaller walk (slow: real processes)
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const chaosFlags = { '--runs': 'CHAOS_RUNS', '--steps': 'CHAOS_COMMANDS', '--seed': 'CHAOS_SEED', '--path': 'CHAOS_PATH', '--replay-path': 'CHAOS_REPLAY_PATH' };
const clusterFlags = { '--runs': 'CLUSTER_WALK_RUNS', '--steps': 'CLUSTER_WALK_STEPS', '--seed': 'CLUSTER_WALK_SEED', '--path': 'CLUSTER_WALK_PATH' };
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write('Usage: npm run chaos -- [--cluster] [--long] [--runs N] [--steps N] [--seed N [--path P]] [--shrink]\n');
  process.exit(0);
}
const cluster = args.includes('--cluster');
const flags = cluster ? clusterFlags : chaosFlags;
const env = { ...process.env };
let long = false;
for (let index = 0; index < args.length; index++) {
  const arg = args[index];
  if (arg === '--cluster') continue;
  if (arg === '--long') long = true;
  else if (arg === '--shrink') env[cluster ? 'CLUSTER_WALK_SHRINK' : 'CHAOS_SHRINK'] = '1';
  else if (arg in flags) {
    const value = args[++index];
    if (value === undefined || value.startsWith('--')) fail(`${arg} needs a value`);
    env[flags[arg]] = value;
  } else fail(`unknown option ${arg}${cluster && arg in chaosFlags ? ' with --cluster' : ''}`);
}
if (cluster) {
  env.CLUSTER_WALK_RUNS ??= long ? '20' : '5';
  env.CLUSTER_WALK_STEPS ??= long ? '40' : '20';
} else if (long) env.CHAOS_PROFILE = 'long';

function fail(why) {
  process.stderr.write(`npm run chaos: ${why} (try --help)\n`);
  process.exit(2);
}

const spec = cluster ? 'spec/cluster/cluster-walk.spec.ts' : 'spec/chaos/chaos.spec.ts';
const mocha = join(root, 'node_modules', '.bin', 'mocha');
// The cluster walk's fixture builds dist/ when src/ is newer (the hosts run the build): the spec setup does it.
const setup = cluster ? ['--require', 'spec/support/fresh-build.ts'] : [];
const child = spawn(mocha, ['--no-config', '--node-option', 'import=tsx', '--extension', 'ts', '--timeout', '0', ...setup, spec], { cwd: root, env, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
