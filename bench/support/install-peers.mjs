#!/usr/bin/env node
// Installs the peers that the benchmarks compare warden with, into .cache/peers (git-ignored):
// `@agentclientprotocol/claude-agent-acp` 0.101.0, the ACP adapter of Claude Code that editors
// use today (bench/claude-path.ts). `npm run bench:peers`.
//
// - Does nothing when the peer is already installed at that version.
// - Its engines say Node >= 22; it runs on Node 20 for what the benchmark does (fixtures
//   README, 3b), so it is installed with `--engine-strict=false` on whatever Node runs this.
// - It brings the Claude Agent SDK's native Claude Code binary (about 400 MB, an optional
//   dependency for this platform); the benchmark does not run it (it points the SDK at the
//   project's fake CLI), but npm installs it anyway.
// - Never fails for network reasons: when the registry cannot be reached (or npm fails), it
//   says so and exits 0; the benchmark then skips with a message.
//
// Environment: WARDEN_PEERS_DIR (default <repo>/.cache/peers), WARDEN_PEERS_INSTALL_TIMEOUT_MS
// (default 600000).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const target = resolve(process.env.WARDEN_PEERS_DIR ?? join(root, '.cache', 'peers'));
const timeout = Number(process.env.WARDEN_PEERS_INSTALL_TIMEOUT_MS ?? 600_000);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const peers = [{ name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0', entry: 'dist/index.js' }];

const say = (line) => process.stdout.write(`bench:peers: ${line}\n`);

function installedVersion(peer) {
  try {
    return JSON.parse(readFileSync(join(target, 'node_modules', peer.name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

const ready = (peer) => installedVersion(peer) === peer.version && existsSync(join(target, 'node_modules', peer.name, peer.entry));

const missing = peers.filter((peer) => !ready(peer));
for (const peer of peers.filter((entry) => !missing.includes(entry))) say(`${peer.name}@${peer.version} already installed in ${target}`);
if (missing.length === 0) process.exit(0);

mkdirSync(target, { recursive: true });
const manifestPath = join(target, 'package.json');
if (!existsSync(manifestPath)) writeFileSync(manifestPath, `${JSON.stringify({ name: 'warden-bench-peers', private: true }, null, 2)}\n`);

const specs = missing.map((peer) => `${peer.name}@${peer.version}`);
const errorLines = (text) => text.split('\n').filter((line) => /ERR!|error/iu.test(line) && !/^\s*npm error\s+at /u.test(line)).slice(0, 6);
const skipHint = 'bench/claude-path.ts will skip. Run `npm run bench:peers` again with network access to include it.';

// A quick look at the registry first: without network, npm install retries for minutes.
const probe = spawnSync(npm, ['view', specs[0], 'version', '--fetch-retries=0', '--fetch-timeout=20000'], { cwd: target, encoding: 'utf8', timeout: 60_000 });
if (probe.status !== 0) {
  const why = probe.error?.code === 'ETIMEDOUT' ? 'no answer in 60 s' : errorLines(`${probe.stdout ?? ''}${probe.stderr ?? ''}`)[0]?.trim() ?? `exit code ${probe.status}`;
  say(`the npm registry is unreachable (npm view ${specs[0]}: ${why}).`);
  say(skipHint);
  process.exit(0);
}
say(`npm install --engine-strict=false ${specs.join(' ')} (into ${target}; about 400 MB, 20-60 s)`);
const started = Date.now();
const install = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--save-exact', '--engine-strict=false', '--fetch-retries=1', ...specs], {
  cwd: target,
  encoding: 'utf8',
  timeout,
  stdio: ['ignore', 'pipe', 'pipe'],
});
const output = `${install.stdout ?? ''}${install.stderr ?? ''}`.trim();
if (install.status !== 0) {
  const why = install.error?.code === 'ETIMEDOUT' ? `timed out after ${timeout} ms` : install.error?.message ?? `exit code ${install.status}`;
  const network = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network|fetch failed|registry/iu.test(output) || install.error?.code === 'ETIMEDOUT';
  say(`npm install failed (${why})${network ? ': the npm registry looks unreachable' : ''}.`);
  for (const line of errorLines(output)) say(`  ${line}`);
  say(skipHint);
  process.exit(0);
}
say(`npm install done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
for (const peer of missing) {
  if (ready(peer)) say(`${peer.name}@${installedVersion(peer)} installed`);
  else say(`${peer.name} was not installed as expected (no ${peer.entry}); ${skipHint}`);
}
