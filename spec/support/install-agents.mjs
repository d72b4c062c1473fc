#!/usr/bin/env node
// Installs the real agent CLIs that spec/e2e/real-agents.spec.ts, spec/e2e/real-acp-adapters.spec.ts
// and spec/e2e/launch-*.spec.ts run against fake model servers: Claude Code, Codex, Gemini CLI,
// opencode and the ACP adapters claude-agent-acp and codex-acp, at the versions the recorded
// transcripts come from, into .cache/agents (git-ignored). `npm run agents:install`.
//
// - Does nothing for a CLI already installed at that version whose `--version` works.
// - Never fails the build for network reasons: when the registry cannot be reached (or npm
//   fails), it says so and exits 0; the e2e tests then skip with a message.
// - Claude Code's and opencode's native binaries are put in place by their postinstall
//   scripts, which npm 11 blocks unless allowed: the cache's package.json allows them
//   (`allowScripts`), and a script is run by hand when npm skipped it anyway.
//
// Environment: WARDEN_AGENTS_DIR (default <repo>/.cache/agents), WARDEN_SKIP_AGENTS_INSTALL=1
// (do nothing), WARDEN_AGENTS_INSTALL_TIMEOUT_MS (default 600000).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const target = resolve(process.env.WARDEN_AGENTS_DIR ?? join(root, '.cache', 'agents'));
const timeout = Number(process.env.WARDEN_AGENTS_INSTALL_TIMEOUT_MS ?? 600_000);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const agents = [
  { name: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude', postinstall: 'install.cjs' },
  { name: '@openai/codex', version: '0.171.0', bin: 'codex' },
  { name: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  { name: 'opencode-ai', version: '1.18.33', bin: 'opencode', postinstall: 'postinstall.mjs' },
  // The ACP adapters over the two CLIs above (spec/e2e/real-acp-adapters.spec.ts): the tests run
  // them against the pinned CLIs through CLAUDE_CODE_EXECUTABLE and CODEX_PATH.
  // claude-agent-acp declares engines node>=22 but runs on Node 20: npm only warns (EBADENGINE),
  // and the install passes --engine-strict=false so that a user's engine-strict=true does not refuse it.
  { name: '@agentclientprotocol/claude-agent-acp', version: '0.101.0', bin: 'claude-agent-acp' },
  { name: '@agentclientprotocol/codex-acp', version: '2.6.0', bin: 'codex-acp' },
];

const say = (line) => process.stdout.write(`agents:install: ${line}\n`);

function installedVersion(agent) {
  try {
    return JSON.parse(readFileSync(join(target, 'node_modules', agent.name, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** What `<bin> --version` prints, or undefined when it does not run. */
function runs(agent) {
  const bin = join(target, 'node_modules', '.bin', agent.bin);
  if (!existsSync(bin)) return undefined;
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function ready(agent) {
  return installedVersion(agent) === agent.version && runs(agent) !== undefined;
}

function finish(code = 0) {
  process.exit(code);
}

if (process.env.WARDEN_SKIP_AGENTS_INSTALL === '1') {
  say('skipped (WARDEN_SKIP_AGENTS_INSTALL=1); the real-agent tests will skip.');
  finish();
}

const missing = agents.filter((agent) => !ready(agent));
if (missing.length === 0) {
  for (const agent of agents) say(`${agent.name}@${agent.version} already installed in ${target} (${runs(agent)})`);
  finish();
}
for (const agent of agents.filter((entry) => !missing.includes(entry))) say(`${agent.name}@${agent.version} already installed (${runs(agent)})`);

mkdirSync(target, { recursive: true });
const manifestPath = join(target, 'package.json');
if (!existsSync(manifestPath)) {
  say(`npm init -y in ${target}`);
  const init = spawnSync(npm, ['init', '-y'], { cwd: target, encoding: 'utf8', timeout: 60_000 });
  if (init.status !== 0) {
    say(`could not create ${manifestPath} (npm init -y: ${(init.stderr || init.error?.message || '').trim()}); the real-agent tests will skip.`);
    finish();
  }
}
// Allow the postinstalls that link a native binary (Claude Code over bin/claude.exe, opencode's).
try {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.private = true;
  manifest.allowScripts = { ...(manifest.allowScripts ?? {}), ...Object.fromEntries(agents.filter((agent) => agent.postinstall).map((agent) => [agent.name, true])) };
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
} catch (error) {
  say(`could not update ${manifestPath}: ${error.message}`);
}

const specs = missing.map((agent) => `${agent.name}@${agent.version}`);
const errorLines = (text) => text.split('\n').filter((entry) => /ERR!|error/iu.test(entry) && !/^\s*npm error\s+at /u.test(entry)).slice(0, 6);

// A quick look at the registry first: without network, npm install retries for minutes.
const probe = spawnSync(npm, ['view', specs[0], 'version', '--fetch-retries=0', '--fetch-timeout=20000'], { cwd: target, encoding: 'utf8', timeout: 60_000 });
if (probe.status !== 0) {
  const why = probe.error?.code === 'ETIMEDOUT' ? 'no answer in 60 s' : errorLines(`${probe.stdout ?? ''}${probe.stderr ?? ''}`)[0]?.trim() ?? `exit code ${probe.status}`;
  say(`the npm registry is unreachable (npm view ${specs[0]}: ${why}).`);
  say('The real-agent tests (spec/e2e/real-agents.spec.ts, spec/e2e/launch-*.spec.ts) will skip. Run `npm run agents:install` again with network access to include them.');
  finish();
}
say(`npm install --no-audit --no-fund ${specs.join(' ')} (into ${target}; about 1.8 GB for all six, 10-90 s)`);
const started = Date.now();
const install = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--save-exact', '--fetch-retries=1', '--engine-strict=false', ...specs], {
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
  say('The real-agent tests (spec/e2e/real-agents.spec.ts, spec/e2e/launch-*.spec.ts) will skip. Run `npm run agents:install` again with network access to include them.');
  finish();
}
say(`npm install done in ${((Date.now() - started) / 1000).toFixed(1)} s`);

for (const agent of missing) {
  if (runs(agent) === undefined && agent.postinstall) {
    // npm skipped the postinstall (install scripts blocked): run it ourselves.
    const directory = join(target, 'node_modules', agent.name);
    say(`${agent.bin} --version does not run yet: running ${agent.name}'s ${agent.postinstall}`);
    const script = spawnSync(process.execPath, [agent.postinstall], { cwd: directory, encoding: 'utf8', timeout: 120_000 });
    if (script.status !== 0) say(`  ${agent.postinstall} failed: ${(script.stderr || script.stdout || script.error?.message || '').trim().split('\n').slice(-3).join(' | ')}`);
  }
  const version = runs(agent);
  if (version !== undefined) say(`${agent.name}@${installedVersion(agent)} installed: ${version}`);
  else say(`${agent.name} was installed but \`${agent.bin} --version\` does not run; its real-agent tests will skip.`);
}
finish();
