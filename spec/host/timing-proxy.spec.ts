/**
 * The timing proxy (spec/support/timing-proxy.ts, issue 28) over a TCP echo server: random
 * latency per chunk keeps each connection's bytes in order, a stall holds everything until
 * it ends, and cuts close connections.
 */
import { expect } from 'chai';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { waitUntil } from '../support/processes.js';
import { startTimingProxy, type TimingProxy } from '../support/timing-proxy.js';

describe('a timing proxy in front of a TCP server', function () {
  this.timeout(30_000);
  let echo: Server;
  let proxy: TimingProxy | undefined;
  const sockets: Socket[] = [];

  beforeEach(async () => {
    echo = createServer((socket) => socket.on('error', () => undefined).pipe(socket));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await proxy?.close();
    proxy = undefined;
    await new Promise((resolve) => echo.close(resolve));
  });

  /** A client of the proxy collecting what comes back. */
  async function client(): Promise<{ socket: Socket; received: () => string; closed: Promise<unknown> }> {
    const socket = connect((proxy as TimingProxy).port, '127.0.0.1');
    sockets.push(socket);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', () => undefined);
    const closed = once(socket, 'close');
    await once(socket, 'connect');
    return { socket, received: () => received, closed };
  }

  it('delays each chunk by a seeded random latency and keeps every connection\'s bytes in order', async () => {
    proxy = await startTimingProxy((echo.address() as { port: number }).port, { seed: 7, toServer: [0, 15], toClient: [0, 15] });
    const clients = await Promise.all([client(), client(), client()]);
    const messages = Array.from({ length: 150 }, (_, n) => `<${n}>`);
    for (const message of messages) {
      for (const one of clients) one.socket.write(message);
      // Separate chunks: each draws its own latency.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const whole = messages.join('');
    await waitUntil(() => clients.every((one) => one.received().length >= whole.length), 'every message echoed back', 20_000);
    for (const one of clients) expect(one.received()).to.equal(whole);
    expect(proxy.stats.connections).to.equal(3);
    // Both ways, at least one chunk per message and connection (TCP may merge some).
    expect(proxy.stats.chunks).to.be.at.least(2 * 3);
    expect(proxy.stats.delayedMs).to.be.greaterThan(0);
  });

  it('holds all traffic during a stall and lets it go in order after, connections kept', async () => {
    proxy = await startTimingProxy((echo.address() as { port: number }).port, { seed: 1, toServer: [0, 5], toClient: [0, 5] });
    const one = await client();
    one.socket.write('before ');
    await waitUntil(() => one.received() === 'before ', 'the echo before the stall');
    const stallMs = 500;
    const stalled = proxy.stall(stallMs);
    const stallEnds = Date.now() + stallMs;
    one.socket.write('during ');
    one.socket.write('stall');
    let firstAfter = 0;
    one.socket.on('data', () => (firstAfter ||= Date.now()));
    await stalled;
    await waitUntil(() => one.received() === 'before during stall', 'the held bytes, in order');
    // Nothing came back before the stall's end (the clock only, no speed: the proxy cannot write earlier).
    expect(firstAfter).to.be.at.least(stallEnds - 5);
    expect(proxy.stats.stalls).to.equal(1);
    expect(one.socket.destroyed).to.equal(false);
  });

  it('cuts one connection drawn at random, or all of them; new ones pass', async () => {
    proxy = await startTimingProxy((echo.address() as { port: number }).port, { seed: 3 });
    const [a, b] = [await client(), await client()];
    await waitUntil(() => proxy!.stats.connections === 2, 'both connections through');
    expect(proxy.cutOne()).to.equal(true);
    await Promise.race([a.closed, b.closed]);
    expect([a, b].filter((one) => one.socket.destroyed || one.socket.readableEnded).length).to.equal(1);
    proxy.cutAll();
    await Promise.all([a.closed, b.closed]);
    expect(proxy.stats.cuts).to.equal(2);
    expect(proxy.cutOne()).to.equal(false);
    const c = await client();
    c.socket.write('again');
    await waitUntil(() => c.received() === 'again', 'a new connection echoed');
  });
});
