/**
 * The bridge's own keepalive (`warden acp --connect URL --keepalive SECONDS`, issue 16): a
 * daemon whose host vanished without a FIN (half-open TCP) is played by a raw `ws` server that
 * never answers pings (`autoPong: false`): the bridge exits 5 with a stderr line naming it,
 * nothing on stdout. A healthy peer is not dropped across many intervals, not even while the
 * editor leaves stdout unread (the bridge then cannot read the pongs either); a real
 * `warden serve` answers a turn longer than several intervals.
 */
import { client, methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { parseBridgeArgs, type BridgeCommandOptions } from '../../src/cli/acp-bridge.js';
import { waitUntil } from '../support/processes.js';
import { answerText, startServe, stateEnv, type SdkUpdate } from '../support/serve-daemon.js';
import { connectOverStdio, exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';

const launched: ChildProcess[] = [];

/** `warden acp ARGS` (the bridge), in a group of its own, its stdout kept. */
function bridge(state: string, args: readonly string[]): { process: ChildProcess; stdout: () => string; lines: () => number; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [wardenMain, 'acp', ...args], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: stateEnv(state) });
  launched.push(child);
  const chunks: string[] = [];
  let lines = 0;
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    chunks.push(text);
    for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) lines++;
  });
  return { process: child, stdout: () => chunks.join(''), lines: () => lines, stderr: stderrOf(child), exited: exitCodeOf(child) };
}

/** A raw `ws` server on loopback playing the daemon; counts the pings each client sends. */
async function rawPeer(options: { autoPong: boolean }): Promise<{ url: string; pings: () => number; connected: () => WebSocket | undefined; dropped: () => boolean; close(): Promise<void> }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: options.autoPong });
  let pings = 0;
  let socket: WebSocket | undefined;
  let dropped = false;
  server.on('connection', (ws) => {
    socket = ws;
    ws.on('ping', () => pings++);
    ws.on('close', () => (dropped = true));
    // The editor's requests are answered (a healthy peer); the unanswering one never gets any.
    ws.on('message', (data) => {
      const request = JSON.parse(String(data)) as { id?: number };
      if (options.autoPong && request.id !== undefined) ws.send(JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { echoed: true } }));
    });
  });
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/acp`,
    pings: () => pings,
    connected: () => socket,
    dropped: () => dropped,
    close: () => {
      for (const ws of server.clients) ws.terminate();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('warden acp --connect --keepalive: the bridge finds a half-open connection (issue 16)', function () {
  this.timeout(90_000);
  let state: string;
  let tokenFile: string;
  const peers: Array<{ close(): Promise<void> }> = [];

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-keepalive-')));
    tokenFile = join(state, 'token');
    writeFileSync(tokenFile, 'a-token-for-raw-peers\n', { mode: 0o600 });
  });

  afterEach(async () => {
    await killGroups(launched, { descendants: true });
    for (const peer of peers.splice(0)) await peer.close();
    rmSync(state, { recursive: true, force: true });
  });

  it('--keepalive: seconds, 0 for never, 30 by default; anything else refused', () => {
    expect(parseBridgeArgs(['--connect', 'ws://127.0.0.1:1/acp', '--keepalive', '0.2'])).to.deep.include({ pingIntervalMs: 200 });
    expect(parseBridgeArgs(['--connect', 'ws://127.0.0.1:1/acp', '--keepalive', '0'])).to.deep.include({ pingIntervalMs: 0 });
    expect(parseBridgeArgs(['--connect', 'ws://127.0.0.1:1/acp'])).to.deep.include({ pingIntervalMs: 30_000 });
    expect(parseBridgeArgs(['--agent', 'demo', '--daemon', '--keepalive', '5'])).to.deep.include({ pingIntervalMs: 5000 });
    expect((parseBridgeArgs(['--agent', 'demo', '--daemon', '--keepalive', '5']) as BridgeCommandOptions).serveArgs, 'the bridge\'s own, not the daemon\'s').not.to.include('--keepalive');
    expect((parseBridgeArgs(['--connect', 'ws://127.0.0.1:1/acp', '--keepalive', 'soon']) as { error: string }).error).to.include('--keepalive expects a positive number');
  });

  it('a daemon that answers no ping (half-open): exit 5, a stderr line naming it, nothing on stdout', async () => {
    const peer = await rawPeer({ autoPong: false });
    peers.push(peer);
    const running = bridge(state, ['--connect', peer.url, '--token-file', tokenFile, '--keepalive', '0.2']);
    // stdin stays open: the editor is still there, only the daemon went silent.
    const status = await Promise.race([running.exited, new Promise((resolve) => setTimeout(() => resolve('still running after 60 s'), 60_000))]);
    expect(status, running.stderr()).to.equal(5);
    expect(peer.pings(), 'it pinged before giving up').to.be.at.least(2);
    expect(running.stderr()).to.match(/^warden acp: the daemon at ws:\/\/127\.0\.0\.1:\d+\/acp answered no ping for 0\.4 s \(two --keepalive intervals of 0\.2 s\): the connection is half-open/u);
    expect(running.stderr().trim().split('\n')).to.have.length(1);
    expect(running.stdout()).to.equal('');
  });

  it('a peer that answers its pings is kept across many intervals, and still relays', async () => {
    const peer = await rawPeer({ autoPong: true });
    peers.push(peer);
    const running = bridge(state, ['--connect', peer.url, '--token-file', tokenFile, '--keepalive', '0.2']);
    await waitUntil(() => peer.pings() >= 10 || running.process.exitCode !== null, 'ten pings (about ten intervals)', 60_000);
    expect(running.process.exitCode, running.stderr()).to.equal(null);
    running.process.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping/me', params: {} })}\n`);
    await waitUntil(() => running.stdout().includes('"id":7'), 'the answer relayed', 30_000);
    running.process.stdin?.end();
    expect(await running.exited).to.equal(0);
    expect(running.stderr()).to.equal('');
  });

  it('an editor that leaves stdout unread for many intervals (the pongs unread too): not dropped; every frame arrives once reading resumes', async () => {
    const peer = await rawPeer({ autoPong: true });
    peers.push(peer);
    const running = bridge(state, ['--connect', peer.url, '--token-file', tokenFile, '--keepalive', '0.2']);
    const stdout = running.process.stdout as NonNullable<ChildProcess['stdout']>;
    await waitUntil(() => peer.connected() !== undefined, 'the bridge to connect', 30_000);
    stdout.pause();
    const socket = peer.connected() as WebSocket;
    const pad = 'x'.repeat(16 * 1024);
    const frames = 1024; // 16 MiB: more than the pipe and loopback's socket buffers hold
    for (let n = 0; n < frames; n++) socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'flood', params: { n, pad } }));
    // The bridge stopped reading the socket (its stdout full): what the peer sends waits at the peer.
    await waitUntil(() => socket.bufferedAmount > 0 || peer.dropped(), 'the bridge to stop reading the socket', 60_000);
    const pingsWhilePaused = peer.pings();
    // (A bridge that gave up would wait for its stdout to drain before exiting: the peer sees the drop first.)
    await waitUntil(() => peer.pings() >= pingsWhilePaused + 5 || peer.dropped(), 'five more intervals with stdout unread', 60_000);
    expect(peer.dropped(), 'the bridge dropped a peer that answered every ping').to.equal(false);
    expect(running.process.exitCode, running.stderr()).to.equal(null);
    stdout.resume();
    await waitUntil(() => running.lines() >= frames || running.process.exitCode !== null, 'every frame on stdout', 60_000).catch((error: Error) => {
      throw new Error(`${error.message}: ${running.lines()} lines, peer dropped ${String(peer.dropped())}, bridge ${String(running.process.exitCode)}, stderr ${running.stderr()}`);
    });
    // The end of stdin first: parsing 16 MiB keeps this process (the peer) from answering pings
    // for a while under load, and a 0.2 s keepalive would rightly drop it meanwhile.
    running.process.stdin?.end();
    const exited = await running.exited;
    const numbers = running.stdout().trim().split('\n').map((line) => (JSON.parse(line) as { params: { n: number } }).params.n);
    expect(numbers).to.deep.equal(Array.from({ length: frames }, (_, n) => n));
    expect(exited, running.stderr()).to.equal(0);
    expect(running.stderr()).to.equal('');
  });

  it('a real warden serve: a turn longer than several intervals goes through, exit 0', async () => {
    const launchedDaemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--env', 'DEMO_WORD_DELAY_MS=20'], launched);
    const running = bridge(state, ['--connect', launchedDaemon.url, '--keepalive', '0.2']);
    const updates: SdkUpdate[] = [];
    const app = client({ name: 'keepalive-test-editor' }).onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params as unknown as SdkUpdate);
    });
    const agent = connectOverStdio(app as never, running.process);
    await agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'keepalive-test-editor', version: '1' } });
    const { sessionId } = (await agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] })) as { sessionId: string };
    const words = Array.from({ length: 60 }, (_, n) => `w${n}`).join(' ');
    const started = Date.now();
    // 60 words and more, each at least 20 ms apart: at least 1.2 s, six intervals.
    expect(await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: words }] })).to.deep.equal({ stopReason: 'end_turn' });
    expect(Date.now() - started).to.be.at.least(1200);
    expect(answerText(updates, sessionId)).to.include(words);
    running.process.stdin?.end();
    expect(await running.exited).to.equal(0);
    expect(running.stderr()).to.equal('');
  });
});
