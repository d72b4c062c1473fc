/**
 * `warden acp` end to end: the official SDK client (spec/support/sdk-client.mjs) launches
 * `warden acp --agent claude --agent-command <fake claude>` as an editor would, and talks
 * ACP to it over stdio.
 */
import { expect } from 'chai';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '../support/processes.js';
import { fileURLToPath } from 'node:url';
import { acpUsage, parseAcpArgs } from '../../src/cli/acp.js';

const sdkClient = fileURLToPath(new URL('../support/sdk-client.mjs', import.meta.url));
const main = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const fakeClaude = fileURLToPath(new URL('../support/fake-claude.mjs', import.meta.url));

function drive(scenario: string, wardenArgs: string[], extra: string[] = []): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [sdkClient, '--scenario', scenario, ...extra, '--', process.execPath, main, 'acp', '--store', ':memory:', ...wardenArgs], { timeout: 60_000 }, (_error, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Record<string, unknown>);
      } catch {
        reject(new Error(`no report:\n${stdout}\n${stderr}`));
      }
    });
  });
}

describe('warden acp', function () {
  this.timeout(90_000);

  it('serves Claude Code (a fake replaying a transcript) to the SDK client: a streamed turn', async () => {
    const report = await drive('permission', ['--agent', 'claude', '--agent-command', fakeClaude, '--env', 'FAKE_CLAUDE_FIXTURE=tool-write-permission-allow']);
    expect(report.ok, JSON.stringify(report.error)).to.equal(true);
    const summary = report.summary as { stopReason: string; toolCallStatuses: string[]; permissionRequests: unknown[] };
    expect(summary.stopReason).to.equal('end_turn');
    expect(summary.permissionRequests).to.have.length(1);
    expect(summary.toolCallStatuses).to.include('tool_call_update:completed');
  });

  it('serves the demo agent through every stable method', async () => {
    const report = await drive('lifecycle', ['--agent', 'demo']);
    expect(report.ok).to.equal(true);
    expect((report.summary as { prompt: { stopReason: string } }).prompt.stopReason).to.equal('end_turn');
  });
});

describe('warden acp arguments', () => {
  it('reads every option, inline values too', () => {
    const parsed = parseAcpArgs(['--agent=claude', '--store', ':memory:', '--cwd', '/tmp', '--log-file', '/tmp/x.log', '--restart-intensity', '5/30', '--hang-after', '2.5', '--env', 'A=1', '--env', 'B', '--inherit-env']);
    expect(parsed).to.deep.include({ agent: 'claude', store: ':memory:', cwd: '/tmp', logFile: '/tmp/x.log', restart: { intensity: 5, period: 30_000 }, hangAfterMs: 2500, env: { A: '1' }, passthrough: ['B'], inheritEnv: true });
  });

  it('names the problem and the fix', () => {
    expect(parseAcpArgs(['--agent', 'claude', '--restart-intensity', 'lots'])).to.deep.equal({ error: 'warden acp: --restart-intensity expects N/SECONDS (say 3/60: at most 3 restarts in 60 s), got "lots"' });
    expect((parseAcpArgs(['--agent', 'claude', '--bogus']) as { error: string }).error).to.contain('unknown option --bogus');
    expect((parseAcpArgs(['--store']) as { error: string }).error).to.contain('--store needs a value');
    expect((parseAcpArgs([]) as { error: string }).error).to.contain('--agent is required');
    expect((parseAcpArgs(['--agent', 'demo', '--inspect', 'localhost:8080']) as { error: string }).error).to.contain('--inspect expects the inspector\'s WebSocket address');
    expect(parseAcpArgs(['--agent', 'demo', '--inspect', 'ws://127.0.0.1:8080'])).to.deep.include({ inspect: 'ws://127.0.0.1:8080' });
    expect((parseAcpArgs(['--agent', 'demo', '--log-level', 'loud']) as { error: string }).error).to.contain('--log-level expects one of debug, info, warn, error, got "loud"');
    expect(parseAcpArgs(['--agent', 'demo', '--log-level', 'debug', '--log-format', 'pretty'])).to.deep.include({ logLevel: 'debug', logFormat: 'pretty' });
    expect(parseAcpArgs(['--help'])).to.deep.equal({ help: true });
  });

  it('--help describes every option it parses, and its options block holds only option lines', () => {
    const flags = ['--agent', '--agent-command', '--cwd', '--store', '--log-file', '--log-level', '--log-format', '--restart-intensity', '--hang-after', '--max-line-mib', '--drain-timeout', '--env', '--inherit-env', '--inspect'];
    for (const flag of flags) expect(acpUsage, flag).to.match(new RegExp(`^  ${flag} `, 'mu'));
    // Each flag above is really parsed (an unknown one would be a usage error).
    for (const flag of flags) expect(JSON.stringify(parseAcpArgs(['--agent', 'demo', flag, 'x'])), flag).not.to.contain(`unknown option ${flag}`);
    const block = acpUsage.slice(acpUsage.indexOf('Options:\n') + 'Options:\n'.length, acpUsage.indexOf('\n\n', acpUsage.indexOf('Options:\n')));
    for (const line of block.split('\n')) expect(line, 'a line of the options block').to.match(/^ {2}(--[a-z-]+|-h, --help)\b| {32}\S/u);
  });
});

describe('warden acp logs', function () {
  this.timeout(60_000);

  it('--log-file with --log-level debug: JSON lines of the session events and of a dropped editor message; nothing but protocol on stdout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-log-'));
    const logFile = join(dir, 'warden.log');
    try {
      const child = spawn(process.execPath, [main, 'acp', '--agent', 'claude', '--agent-command', fakeClaude, '--store', ':memory:', '--log-file', logFile, '--log-level', 'debug', '--env', 'FAKE_CLAUDE_FIXTURE=hello'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
      });
      const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
      send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } });
      send({ jsonrpc: '2.0', method: 'nonsense/notify', params: {} });
      send({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: dir, mcpServers: [] } });
      await waitUntil(() => stdout.includes('"id":2'), 'the session/new answer', 30_000);
      child.stdin.end();
      await new Promise((resolve) => child.once('exit', resolve));
      // Only JSON-RPC messages on stdout.
      for (const line of stdout.trim().split('\n')) expect(JSON.parse(line).jsonrpc, line).to.equal('2.0');
      const entries = readFileSync(logFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { level: string; type: string; reason?: string });
      expect(entries.find((entry) => entry.type === 'protocol.dropped')).to.deep.include({ level: 'warn', reason: 'unknown_notification' });
      expect(entries.some((entry) => entry.type === 'session.opened' && entry.level === 'info')).to.equal(true);
      expect(entries.some((entry) => entry.type === 'child.started' && entry.level === 'debug')).to.equal(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--log-file in a directory that does not exist: exit 2 at once naming the path and the fix, nothing on stdout (the initialize sent is not served)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-log-'));
    const logFile = join(dir, 'missing', 'warden.log');
    try {
      // The editor would send initialize at once: it must not be served with a log that loses every line.
      const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`;
      const run = spawnSync(process.execPath, [main, 'acp', '--agent', 'demo', '--store', ':memory:', '--log-file', logFile], { input: initialize, encoding: 'utf8', timeout: 60_000 });
      expect(run.status).to.equal(2);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.contain(`--log-file: cannot open the log file ${logFile}: its directory ${join(dir, 'missing')} does not exist; create it`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--log-file that is a directory: exit 2 naming the path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-log-'));
    try {
      const run = spawnSync(process.execPath, [main, 'acp', '--agent', 'demo', '--store', ':memory:', '--log-file', dir], { input: '', encoding: 'utf8', timeout: 60_000 });
      expect(run.status).to.equal(2);
      expect(run.stdout).to.equal('');
      expect(run.stderr).to.contain(`cannot open the log file ${dir}: it is a directory`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
