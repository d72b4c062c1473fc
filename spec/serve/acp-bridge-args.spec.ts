/**
 * The command lines of `warden serve` and of the bridge (`warden acp --connect` / `--daemon`):
 * what each accepts and refuses, and that `--daemon` forwards exactly the agent options
 * `warden acp` itself takes to the daemon it starts.
 */
import { expect } from 'chai';
import { forwardedSwitches, forwardedValueFlags, parseBridgeArgs } from '../../src/cli/acp-bridge.js';
import { agentFlags } from '../../src/cli/agent-flags.js';
import { parseServeArgs } from '../../src/cli/serve.js';
import { defaultTokenPath } from '../../src/serve/token-file.js';

describe('warden serve and bridge arguments (issue 16)', () => {
  it('--daemon forwards every agent option of warden acp (but --agent and --drain-timeout, which it reads itself)', () => {
    const shared = Object.keys(agentFlags).filter((flag) => flag !== '--agent' && flag !== '--drain-timeout').sort();
    expect([...forwardedValueFlags, ...forwardedSwitches].sort()).to.deep.equal(shared);
  });

  it('--daemon: the serve it starts gets the agent, the address, the token file and the agent options', () => {
    const parsed = parseBridgeArgs(['--agent', 'demo', '--daemon', '--listen', 'unix:/tmp/w.sock', '--store', '/tmp/j.sqlite', '--inherit-env', '--drain-timeout', '5']);
    expect(parsed).to.deep.include({ mode: 'daemon', url: 'ws+unix:///tmp/w.sock:/acp', agent: 'demo', drainTimeoutMs: 5000, tokenFile: defaultTokenPath() });
    expect((parsed as unknown as { serveArgs: string[] }).serveArgs).to.deep.equal(['--agent', 'demo', '--listen', 'unix:/tmp/w.sock', '--drain-timeout', '5', '--store', '/tmp/j.sqlite', '--inherit-env']);
    expect(parseBridgeArgs(['--agent', 'demo', '--daemon'])).to.deep.include({ url: 'ws://127.0.0.1:8767/acp' });
  });

  it('--otel: with --daemon the serve it starts gets it; with --connect it is accepted and changes nothing (the daemon traces)', () => {
    const daemon = parseBridgeArgs(['--agent', 'demo', '--daemon', '--otel', '--store', '/tmp/j.sqlite']) as unknown as { serveArgs: string[] };
    expect(daemon.serveArgs).to.deep.equal(['--agent', 'demo', '--otel', '--store', '/tmp/j.sqlite']);
    expect(parseBridgeArgs(['--connect', 'ws://127.0.0.1:8767/acp', '--otel'])).to.deep.include({ mode: 'connect', serveArgs: [] });
    expect((parseBridgeArgs(['--agent', 'demo', '--daemon']) as unknown as { serveArgs: string[] }).serveArgs).not.to.include('--otel');
  });

  it('refuses what makes no sense, naming it', () => {
    expect((parseBridgeArgs(['--daemon']) as { error: string }).error).to.include('--daemon needs --agent NAME');
    expect((parseBridgeArgs(['--connect', 'ws://h/acp', '--daemon', '--agent', 'x']) as { error: string }).error).to.include('exclude each other');
    expect((parseBridgeArgs(['--connect', 'ws://h/acp', '--store', 'x']) as { error: string }).error).to.include('--store has no effect with --connect');
    expect((parseBridgeArgs(['--connect', 'http://h/acp']) as { error: string }).error).to.include("--connect expects the daemon's WebSocket URL");
    expect(parseBridgeArgs(['--connect', 'unix:/tmp/w.sock'])).to.deep.include({ url: 'ws+unix:///tmp/w.sock:/acp' });
  });

  it('warden serve: defaults, the policies stored for the hub, and refusals', () => {
    const parsed = parseServeArgs(['--idle-timeout', '60', '--unattended', 'deny', '--unattended-timeout', '5', '--drain-timeout', '2', '--allow-origin', 'https://a.example', '--keepalive', '0', '--load-limit', '0']);
    expect(parsed).to.deep.include({ agent: 'demo', listen: { kind: 'tcp', host: '127.0.0.1', port: 8767, loopback: true }, allowOrigins: ['https://a.example'], pingIntervalMs: 0 });
    expect((parsed as unknown as { settings: unknown }).settings).to.deep.equal({ idleTimeoutMs: 60_000, unattended: { policy: 'deny', timeoutMs: 5000 }, drainTimeoutMs: 2000, loadLimit: 0, maxLiveSessions: 0 });
    expect((parseServeArgs([]) as unknown as { settings: { loadLimit: number } }).settings.loadLimit, 'the default load limit').to.equal(50);
    expect((parseServeArgs(['--max-live-agents', '8']) as unknown as { settings: { maxLiveSessions: number } }).settings.maxLiveSessions, '--max-live-agents').to.equal(8);
    expect((parseServeArgs(['--max-live-agents', 'some']) as { error: string }).error).to.include('--max-live-agents expects a whole number ≥ 0');
    expect((parseServeArgs(['--load-limit', '2.5']) as { error: string }).error).to.include('--load-limit expects a whole number ≥ 0');
    expect((parseServeArgs(['--load-limit', '-1']) as { error: string }).error).to.include('--load-limit expects a whole number ≥ 0');
    expect((parseServeArgs(['--listen', '8767']) as { error: string }).error).to.include('write 127.0.0.1:8767');
    expect((parseServeArgs(['--unattended', 'maybe']) as { error: string }).error).to.include('--unattended expects one of wait, deny');
    expect((parseServeArgs(['--allow-origin', 'editor.example']) as { error: string }).error).to.include('--allow-origin expects an origin');
  });
});
