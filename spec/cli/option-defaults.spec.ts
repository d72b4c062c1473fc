/**
 * Each default declared once (issue 29, "Options normalised once"): `--help` prints the
 * declared value, not a copy of it, and the manual names the same; a "0 for never" spelling the
 * manual documents is accepted by every command that has the option.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { defaultDrainTimeoutMs } from '../../src/acp/drain-timeout.js';
import { defaultHangAfter } from '../../src/adapters/registry.js';
import { acpUsage } from '../../src/cli/acp.js';
import { defaultBridgeKeepaliveSeconds, parseBridgeArgs } from '../../src/cli/acp-bridge.js';
import { parseServeArgs, serveUsage, type ServeCommandOptions } from '../../src/cli/serve.js';
import { defaultStdioMaxLineBytes } from '../../src/jsonrpc/stdio-transport.js';
import { defaultHandshakeTimeoutMs } from '../../src/jsonrpc/websocket-handshake.js';
import { defaultKeepaliveIntervalMs } from '../../src/jsonrpc/websocket-keepalive.js';
import { defaultLeaseMs } from '../../src/journal/lease.js';
import { postgresConnectTimeoutMs, postgresConnectionConfig, postgresRetryBackoff } from '../../src/journal/postgres-connection.js';
import { defaultMaxLineBytes } from '../../src/port/line-framer.js';
import { defaultServeSettings } from '../../src/serve/serve-settings.js';
import { sourcesUnder, src } from '../support/source-files.js';

const doc = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');
/** The line of `text` that starts the description of `flag` (a help line or a table row). */
const lineOf = (text: string, start: string) => text.split('\n').find((line) => line.trimStart().startsWith(start)) ?? `(no line starts with ${start})`;
/** The help text of `flag`: its line and the indented lines under it. */
function helpOf(usage: string, flag: string): string {
  const lines = usage.split('\n');
  const at = lines.findIndex((line) => line.startsWith(`  ${flag} `));
  if (at < 0) return `(no ${flag} in the help)`;
  const rest = lines.slice(at + 1);
  const end = rest.findIndex((line) => !/^ {30,}\S/u.test(line));
  return [lines[at], ...rest.slice(0, end < 0 ? rest.length : end)].join(' ').replace(/\s+/gu, ' ');
}
const seconds = (ms: number) => String(ms / 1000);
const mib = (bytes: number) => String(bytes / (1024 * 1024));

describe('option defaults: declared once, named the same in --help and the manual', () => {
  it('the line limit of the editor and of the agent is one value, the keepalive of both ends another', () => {
    expect(defaultStdioMaxLineBytes).to.equal(defaultMaxLineBytes);
    expect(defaultBridgeKeepaliveSeconds * 1000).to.equal(defaultKeepaliveIntervalMs);
  });

  it('warden acp --help prints the declared defaults', () => {
    expect(helpOf(acpUsage, '--hang-after')).to.contain(`(default ${seconds(defaultHangAfter.idleMs)};`);
    expect(helpOf(acpUsage, '--tool-hang-after')).to.contain(`(default ${seconds(defaultHangAfter.toolIdleMs)})`);
    expect(helpOf(acpUsage, '--max-line-mib')).to.contain(`(default ${mib(defaultMaxLineBytes)})`);
    expect(helpOf(acpUsage, '--drain-timeout')).to.contain(`(default ${seconds(defaultDrainTimeoutMs)})`);
    expect(helpOf(acpUsage, '--keepalive')).to.contain(`(default ${seconds(defaultKeepaliveIntervalMs)}; 0 never)`);
    expect(helpOf(acpUsage, '--lease')).to.contain(`(default ${seconds(defaultLeaseMs)})`);
  });

  it('warden serve --help prints the declared defaults', () => {
    expect(helpOf(serveUsage, '--hang-after')).to.contain(`(default ${seconds(defaultHangAfter.idleMs)};`);
    expect(helpOf(serveUsage, '--tool-hang-after')).to.contain(`(default ${seconds(defaultHangAfter.toolIdleMs)})`);
    expect(helpOf(serveUsage, '--max-line-mib')).to.contain(`(default ${mib(defaultMaxLineBytes)})`);
    expect(helpOf(serveUsage, '--drain-timeout')).to.contain(`(default ${seconds(defaultDrainTimeoutMs)})`);
    expect(helpOf(serveUsage, '--keepalive')).to.contain(`(default ${seconds(defaultKeepaliveIntervalMs)}; 0: never)`);
    expect(helpOf(serveUsage, '--idle-timeout')).to.contain(`(default ${seconds(defaultServeSettings.idleTimeoutMs)}; 0: never;`);
    expect(helpOf(serveUsage, '--unattended-timeout')).to.contain(`(default ${seconds(defaultServeSettings.unattended.timeoutMs)})`);
  });

  it('docs/cli.md and docs/serve.md name the same defaults', () => {
    const cli = doc('cli.md');
    expect(lineOf(cli, '| `--hang-after SECONDS`')).to.contain(`Default **${seconds(defaultHangAfter.idleMs)}**`);
    expect(lineOf(cli, '| `--tool-hang-after SECONDS`')).to.contain(`Default **${seconds(defaultHangAfter.toolIdleMs)}**`);
    expect(lineOf(cli, '| `--max-line-mib N`')).to.contain(`(default \`${mib(defaultMaxLineBytes)}\``);
    expect(lineOf(cli, '| `--drain-timeout SECONDS`')).to.contain(`(default \`${seconds(defaultDrainTimeoutMs)}\`)`);
    expect(lineOf(cli, '| `--lease SECONDS`')).to.contain(`(default ${seconds(defaultLeaseMs)};`);
    const serve = doc('serve.md');
    expect(lineOf(serve, '| `--idle-timeout SECONDS`')).to.contain(`(default ${seconds(defaultServeSettings.idleTimeoutMs)}; \`0\` never)`);
    expect(lineOf(serve, '| `--drain-timeout SECONDS`')).to.contain(`(default ${seconds(defaultServeSettings.drainTimeoutMs)})`);
    expect(lineOf(serve, '| `--unattended wait')).to.contain(`default ${seconds(defaultServeSettings.unattended.timeoutMs)} s`);
    expect(lineOf(serve, '| `--max-line-mib N`')).to.contain(`(default ${mib(defaultMaxLineBytes)} MiB)`);
  });

  it('"0: never" is accepted where the manual says so: --idle-timeout, and --keepalive of warden serve and of the bridge', () => {
    expect((parseServeArgs(['--idle-timeout', '0']) as ServeCommandOptions).settings.idleTimeoutMs).to.equal(0);
    expect((parseServeArgs(['--idle-timeout', '90']) as ServeCommandOptions).settings.idleTimeoutMs).to.equal(90_000);
    expect((parseServeArgs(['--idle-timeout', '-1']) as { error: string }).error).to.contain('--idle-timeout expects a positive number');
    expect((parseServeArgs(['--keepalive', '0']) as ServeCommandOptions).pingIntervalMs).to.equal(0);
    expect((parseServeArgs([]) as ServeCommandOptions).pingIntervalMs).to.equal(defaultKeepaliveIntervalMs);
    expect(parseBridgeArgs(['--connect', 'ws://127.0.0.1:1/acp', '--keepalive', '0'])).to.deep.include({ pingIntervalMs: 0 });
    expect(parseBridgeArgs(['--connect', 'ws://127.0.0.1:1/acp'])).to.deep.include({ pingIntervalMs: defaultKeepaliveIntervalMs, drainTimeoutMs: defaultDrainTimeoutMs });
  });

  it('no fallback repeats a declared default as a number: the cancel grace, the drain, the idle timeout, the keepalive, the lease', () => {
    // `cancelGraceMs ?? 5000` and the like: a consumer falls back to the declared constant, never to a copy.
    const fallback = /\b(?:cancelGraceMs|drainTimeoutMs|idleTimeoutMs|pingIntervalMs|lease)\s*(?:\?\?|\|\|)\s*\d/u;
    const copies = sourcesUnder().filter((file) => fallback.test(readFileSync(file, 'utf8'))).map((file) => relative(src, file));
    expect(copies).to.deep.equal([]);
  });

  it('the WebSocket handshake timeout and the PostgreSQL connect timeout are each declared once', () => {
    // websocket-handshake.ts and postgres-connection.ts declare them; a number next to their names elsewhere is a copy.
    expect(defaultHandshakeTimeoutMs).to.equal(10_000);
    expect(postgresConnectTimeoutMs).to.equal(5_000);
    expect(postgresConnectionConfig('postgres://warden@127.0.0.1/warden')).to.deep.include({ connectionTimeoutMillis: postgresConnectTimeoutMs, keepAlive: true });
    const copy = /\bhandshakeTimeoutMs\s*(?:=|\?\?|\|\|)\s*\d|\bconnectionTimeoutMillis\s*:\s*\d/u;
    const declaredIn = ['jsonrpc/websocket-handshake.ts', 'journal/postgres-connection.ts'];
    const inJournalOrJsonRpc = (file: string) => /^(?:journal|jsonrpc)\//u.test(relative(src, file));
    const copies = sourcesUnder().filter((file) => inJournalOrJsonRpc(file) && copy.test(readFileSync(file, 'utf8'))).map((file) => relative(src, file));
    expect(copies.filter((file) => !declaredIn.includes(file))).to.deep.equal([]);
  });

  it('the backoff between attempts to reach the PostgreSQL store is declared once: 100 ms doubling to 2 s', () => {
    expect(postgresRetryBackoff).to.deep.equal({ firstMs: 100, longestMs: 2_000 });
    // The journal's retried calls and the LISTEN's reconnection both read it; a backoff constant of their own is a copy.
    const copy = /\b(?:first|longest|defaultLongest)(?:Backoff|RetryDelay)\w*\s*=\s*\d/u;
    const journalFiles = sourcesUnder().filter((file) => relative(src, file).startsWith('journal/'));
    expect(journalFiles.filter((file) => copy.test(readFileSync(file, 'utf8'))).map((file) => relative(src, file))).to.deep.equal([]);
  });
});
