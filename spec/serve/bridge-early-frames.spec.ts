/**
 * Frames a daemon sends at once with its upgrade answer (the same TCP read as the `101`: `ws`
 * hands them over as the upgrade's head and parses them on the next tick) reach stdout: the
 * bridge's socket is paused from its `open` until `pumpBridge` listens. A raw TCP peer writes
 * the `101` and the frames in one write, so that the bridge reads them together every time.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '../support/processes.js';
import { stateEnv } from '../support/serve-daemon.js';
import { exitCodeOf, killGroups, stderrOf, wardenMain } from '../support/warden-process.js';

const launched: ChildProcess[] = [];

/** An unmasked text frame (a server's), FIN set. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  const header = payload.length < 126 ? Buffer.from([0x81, payload.length]) : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
  return Buffer.concat([header, payload]);
}

/** A TCP peer that answers the upgrade and sends `frames` in the same write; it answers a close frame with one. */
async function eagerPeer(frames: readonly string[]): Promise<{ url: string; server: Server }> {
  const server = createServer((socket) => {
    let request = '';
    let upgraded = false;
    socket.on('data', (chunk: Buffer) => {
      if (upgraded) {
        // The bridge sends nothing but its close (no stdin lines, no pings): answer it, end.
        if (((chunk[0] ?? 0) & 0x0f) === 0x08) socket.end(Buffer.from([0x88, 0x02, 0x03, 0xe8]));
        return;
      }
      request += chunk.toString('latin1');
      if (!request.includes('\r\n\r\n')) return;
      upgraded = true;
      const key = /^sec-websocket-key:\s*(\S+)/imu.exec(request)?.[1] ?? '';
      const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      const answer = `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`;
      socket.write(Buffer.concat([Buffer.from(answer, 'latin1'), ...frames.map(textFrame)]));
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/acp`, server };
}

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
    const child = spawn(process.execPath, ['--import', 'tsx', wardenMain, 'acp', '--connect', peer.url, '--token-file', tokenFile, '--keepalive', '0'], { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: stateEnv(state) });
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
