/**
 * The live view's server on 127.0.0.1: the page and its assets under a strict content
 * security policy, the view as JSON and as Server-Sent Events, inspection streams over
 * WebSocket when it relays (one source each), refusals (another Host, a browser page's
 * stream, a relay that is off), and a port given back on close.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import WebSocket from 'ws';
import { createLiveViewModel, type LiveViewState } from '../../src/inspect/live-view-model.js';
import { serveLiveView, type LiveViewServer } from '../../src/inspect/live-view-server.js';
import { sessionMachine } from '../../src/session/session-machine.js';
import { waitUntil } from '../support/processes.js';

/** A GET (or another method) with the headers given; the whole answer. */
function get(url: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The first Server-Sent Event of `/events`, parsed. */
function firstEvent(url: string): Promise<LiveViewState> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}events`, (response) => {
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        const data = /^data: (.*)$/mu.exec(buffer);
        if (data) {
          req.destroy();
          resolve(JSON.parse(data[1] as string) as LiveViewState);
        }
      });
    });
    req.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    req.end();
  });
}

/** Opens a stream to `url`; resolves once open, or with the refusal. */
function stream(url: string, headers: Record<string, string> = {}): Promise<WebSocket | { refused: number }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => {
      resolve({ refused: response.statusCode ?? 0 });
      socket.terminate();
    });
    socket.once('error', () => resolve({ refused: 0 }));
  });
}

describe('live view server', function () {
  this.timeout(30_000);
  const servers: LiveViewServer[] = [];
  const sockets: WebSocket[] = [];

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    for (const server of servers.splice(0)) await server.close();
  });

  const serve = async (relay = false) => {
    const model = createLiveViewModel();
    const server = await serveLiveView({ model, relay, pushIntervalMs: 20 });
    servers.push(server);
    return { model, server };
  };

  it('serves the page and its assets from itself alone, under a content security policy', async () => {
    const { server } = await serve();
    expect(server.url).to.equal(`http://127.0.0.1:${server.port}/`);
    const page = await get(server.url);
    expect(page.status).to.equal(200);
    expect(page.headers['content-type']).to.equal('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).to.contain("default-src 'none'").and.to.contain("script-src 'self'").and.to.contain("connect-src 'self'");
    // Nothing the page refers to lives anywhere else.
    expect(page.body).to.contain('src="/live-view.js"').and.to.contain('href="/live-view.css"');
    expect(page.body).to.not.match(/(src|href)="(https?:)?\/\//u);
    const script = await get(`${server.url}live-view.js`);
    expect(script.status).to.equal(200);
    expect(script.headers['content-type']).to.equal('text/javascript; charset=utf-8');
    expect(script.body).to.contain("new EventSource('/events')");
    expect(script.body).to.not.contain('innerHTML');
    expect((await get(`${server.url}live-view.css`)).headers['content-type']).to.equal('text/css; charset=utf-8');
    expect((await get(`${server.url}nothing-here`)).status).to.equal(404);
    expect((await get(server.url, { method: 'POST' })).status).to.equal(405);
  });

  it('serves elkjs from its own installation and each chart\'s graph, for the page to lay out', async () => {
    const model = createLiveViewModel({ machines: [sessionMachine.config] });
    const server = await serveLiveView({ model, pushIntervalMs: 20 });
    servers.push(server);
    const page = await get(server.url);
    expect(page.body).to.contain('<script src="/elk.js" defer></script>');
    const elk = await get(`${server.url}elk.js`);
    expect(elk.status).to.equal(200);
    expect(elk.headers['content-type']).to.equal('text/javascript; charset=utf-8');
    expect(elk.body).to.equal(readFileSync(createRequire(import.meta.url).resolve('elkjs/lib/elk.bundled.js'), 'utf8'));
    // The page's policy allows no eval: the build must not need one.
    expect(elk.body).to.not.match(/\beval\(|new Function\(/u);
    const graph = await get(`${server.url}graph.json?chart=session`);
    expect(graph.status).to.equal(200);
    expect(JSON.parse(graph.body)).to.deep.equal(model.graph('session'));
    expect((await get(`${server.url}graph.json?chart=nothing`)).status).to.equal(404);
  });

  it('answers only to its own address: another Host is refused (no DNS rebinding)', async () => {
    const { server } = await serve();
    expect((await get(server.url, { headers: { host: `localhost:${server.port}` } })).status).to.equal(200);
    expect((await get(server.url, { headers: { host: `attacker.example:${server.port}` } })).status).to.equal(403);
    expect((await get(`${server.url}state.json`, { headers: { host: 'attacker.example' } })).status).to.equal(403);
  });

  it('gives the view as JSON and as Server-Sent Events, the first at once', async () => {
    const { model, server } = await serve();
    model.open('s', 'stream 1');
    model.apply('s', { type: '@xstate.actor', sessionId: 'x:0', name: 'agent', createdAt: '1', snapshot: { status: 'active' } });
    const state = JSON.parse((await get(`${server.url}state.json`)).body) as LiveViewState;
    expect(state.sources[0]?.roots[0]?.label).to.equal('agent');
    const pushed = await firstEvent(server.url);
    expect(pushed.sources[0]?.roots[0]?.label).to.equal('agent');
  });

  it('relays inspection streams, one source each, each message one event; a closed stream shows disconnected', async () => {
    const { model, server } = await serve(true);
    const wsUrl = server.url.replace('http:', 'ws:');
    const one = await stream(wsUrl);
    const two = await stream(wsUrl);
    if (!(one instanceof WebSocket) || !(two instanceof WebSocket)) throw new Error('a stream was refused');
    sockets.push(one, two);
    const actor = { type: '@xstate.actor', sessionId: 'x:0', name: 'agent', createdAt: '1', snapshot: { status: 'active' } };
    one.send(JSON.stringify(actor));
    two.send(JSON.stringify(actor));
    two.send('not json');
    await waitUntil(() => model.view().sources.filter((source) => source.roots.length === 1).length === 2, 'both streams in the view');
    expect(model.view().sources.map((source) => source.roots[0]?.key)).to.deep.equal(['stream-1/x:0', 'stream-2/x:0']);
    expect(model.view().dropped.events).to.equal(1);
    one.close();
    await waitUntil(() => model.view().sources[0]?.connected === false, 'the first stream shown disconnected');
    expect(model.view().sources[0]?.roots[0]?.status).to.equal('stopped');
  });

  it('refuses streams when it does not relay, and from a browser page of another origin', async () => {
    const plain = await serve(false);
    expect(await stream(plain.server.url.replace('http:', 'ws:'))).to.deep.equal({ refused: 403 });
    const relay = await serve(true);
    const wsUrl = relay.server.url.replace('http:', 'ws:');
    expect(await stream(wsUrl, { origin: 'https://attacker.example' })).to.deep.equal({ refused: 403 });
    const own = await stream(wsUrl, { origin: `http://127.0.0.1:${relay.server.port}` });
    expect(own).to.be.instanceOf(WebSocket);
    sockets.push(own as WebSocket);
  });

  it('a port in use rejects with EADDRINUSE; close gives the port back and ends open pages', async () => {
    const { server } = await serve();
    const taken = await serveLiveView({ model: createLiveViewModel(), port: server.port }).then(
      (extra) => {
        servers.push(extra);
        return 'listened';
      },
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(taken).to.equal('EADDRINUSE');
    const events = new Promise<void>((resolve) => {
      request(`${server.url}events`, (response) => {
        response.resume();
        response.once('end', () => resolve());
      }).end();
    });
    await firstEvent(server.url);
    await server.close();
    await server.close(); // idempotent
    await events;
    servers.splice(servers.indexOf(server), 1);
    // The port is free again.
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(server.port, '127.0.0.1', () => probe.close(() => resolve()));
    });
  });
});
