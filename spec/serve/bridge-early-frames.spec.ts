/**
 * Frames a daemon sends at once with its upgrade answer (the same TCP read as the `101`: `ws`
 * hands them over as the upgrade's head and parses them on the next tick) reach stdout: the
 * bridge's socket is paused from its `open` until `pumpBridge` listens. A raw TCP peer writes
 * the `101` and the frames in one write, so that the bridge reads them together every time.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eagerPeer } from '../support/eager-websocket-peer.js';
import { waitUntil } from '../support/processes.js';
import { stateEnv } from '../support/serve-daemon.js';
import { exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';

const launched: ChildProcess[] = [];

describe('warden acp --connect: frames sent with the upgrade answer (issue 16)', function () {
  this.timeout(90_000);
  let state: string;
  let peer: { url: string; server: Server } | undefined;

  beforeEach(() => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-early-')));
  });

  afterEach(async () => {
    await killGroups(launched, { descendants: true });
    if (peer) await new Promise((resolve) => peer?.server.close(resolve));
    peer = undefined;
    rmSync(state, { recursive: true, force: true });
  });

  it('every frame read together with the 101 reaches stdout, in order; exit 0 at the end of stdin', async () => {
    const frames = Array.from({ length: 3 }, (_, n) => JSON.stringify({ jsonrpc: '2.0', method: 'early', params: { n } }));
    peer = await eagerPeer(frames);
    const tokenFile = join(state, 'token');
    writeFileSync(tokenFile, 'a-token-for-raw-peers\n', { mode: 0o600 });
    const child = spawn(process.execPath, [wardenMain, 'acp', '--connect', peer.url, '--token-file', tokenFile, '--keepalive', '0'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: stateEnv(state) });
    launched.push(child);
    const stderr = stderrOf(child);
    const exited = exitCodeOf(child);
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    // Frames lost before the bridge listened never come: the wait ends at the deadline then.
    await waitUntil(() => stdout.split('\n').length > frames.length || child.exitCode !== null, 'the three frames on stdout', 30_000).catch(() => undefined);
    child.stdin?.end();
    expect(await exited, stderr()).to.equal(0);
    expect(stdout).to.equal(frames.map((frame) => `${frame}\n`).join(''));
    expect(stderr()).to.equal('');
  });
});
