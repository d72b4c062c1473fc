/**
 * `warden serve --agent demo` as a real process (issue 16): who may connect (no token, a wrong
 * token, a foreign origin: refused before the upgrade), what bad frames get (garbage, oversize,
 * binary: answered, the connection lives; far oversize: closed 1009), a half-open client
 * closed by the keepalive, plain HTTP answered 401/406/404, and the ACP SDK's WebSocket client
 * through a whole turn.
 */
import { methods } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, type ClientOptions } from 'ws';
import { answerText, rawClient, sdkOverWebSocket, startServe, upgradeAnswer, type ServeDaemon } from '../support/serve-daemon.js';
import { killGroups } from '../support/warden-process.js';
import { waitUntil } from '../support/processes.js';

const launched: ChildProcess[] = [];
const sockets: WebSocket[] = [];
const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } };

describe('warden serve (issue 16)', function () {
  this.timeout(90_000);
  let state: string;
  let daemon: ServeDaemon;

  before(async () => {
    state = realpathSync(mkdtempSync(join(tmpdir(), 'warden-serve-')));
    daemon = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', join(state, 'journal.sqlite'), '--max-line-mib', '1', '--allow-origin', 'https://editor.example', '--env', 'DEMO_WORD_DELAY_MS=1'], launched);
  });

  afterEach(() => {
    for (const socket of sockets.splice(0)) {
      socket.on('error', () => undefined); // terminating one still connecting reports it
      socket.terminate();
    }
  });

  after(async () => {
    await killGroups(launched, { descendants: true });
    rmSync(state, { recursive: true, force: true });
  });

  describe('access, before the upgrade', () => {
    it('no token: 401 with a Bearer challenge; a wrong token: 401 invalid_token; the right one: 101', async () => {
      const none = await upgradeAnswer(daemon.url, {});
      expect(none.status).to.equal(401);
      expect(none.headers['www-authenticate']).to.equal('Bearer realm="acp-warden"');
      const wrong = await upgradeAnswer(daemon.url, { Authorization: 'Bearer not-the-token' });
      expect(wrong.status).to.equal(401);
      expect(wrong.headers['www-authenticate']).to.include('error="invalid_token"');
      expect(wrong.body).to.not.include(daemon.token);
      expect((await upgradeAnswer(daemon.url, { Authorization: `Bearer ${daemon.token}` })).status).to.equal(101);
    });

    it('a foreign Origin: 403 even with the right token; a listed origin is let in; another path: 404', async () => {
      const foreign = await upgradeAnswer(daemon.url, { Authorization: `Bearer ${daemon.token}`, Origin: 'https://evil.example' });
      expect(foreign.status).to.equal(403);
      expect(foreign.body).to.include('--allow-origin');
      expect((await upgradeAnswer(daemon.url, { Authorization: `Bearer ${daemon.token}`, Origin: 'https://editor.example' })).status).to.equal(101);
      expect((await upgradeAnswer(daemon.url, { Authorization: `Bearer ${daemon.token}` }, '/other')).status).to.equal(404);
    });

    it('a ws client without the token, or from a foreign origin, gets the HTTP refusal as its unexpected-response', async () => {
      const statusOf = async (options: ClientOptions) => {
        const socket = new WebSocket(daemon.url, options);
        sockets.push(socket);
        const [, response] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }];
        return response.statusCode;
      };
      expect(await statusOf({})).to.equal(401);
      expect(await statusOf({ headers: { Authorization: `Bearer ${daemon.token}` }, origin: 'https://evil.example' })).to.equal(403);
    });

    it('plain HTTP (no upgrade, no event stream): 401 at /acp without the token, 406 with it; 404 elsewhere; each with a one-line body', async () => {
      const get = async (path: string, headers: Record<string, string> = {}) => {
        const response = await fetch(`${daemon.url.replace(/^ws/, 'http').replace(/\/acp$/, '')}${path}`, { headers });
        return { status: response.status, body: await response.text() };
      };
      expect((await get('/acp')).status).to.equal(401);
      const acp = await get('/acp', { Authorization: `Bearer ${daemon.token}` });
      expect(acp.status).to.equal(406);
      expect(acp.body).to.include('WebSocket upgrade');
      expect(acp.body.trim().split('\n')).to.have.length(1);
      expect((await get('/')).status).to.equal(404);
    });
  });

  describe('bad frames cost nothing', () => {
    it('a garbage text frame is answered -32700 and the connection goes on to initialize', async () => {
      const { socket, frames } = await rawClient(daemon, sockets);
      socket.send('this is not json');
      await waitUntil(() => frames.length === 1, 'the parse error');
      expect(frames[0]).to.deep.include({ id: null });
      expect((frames[0]?.error as { code: number }).code).to.equal(-32700);
      socket.send(JSON.stringify(initialize));
      await waitUntil(() => frames.some((frame) => frame.id === 1), 'the initialize answer', 30_000);
      expect(frames.find((frame) => frame.id === 1)).to.have.property('result');
    });

    it('a binary frame is answered -32700 (ACP over WebSocket is text frames); the connection lives', async () => {
      const { socket, frames } = await rawClient(daemon, sockets);
      socket.send(Buffer.from(JSON.stringify(initialize)), { binary: true });
      await waitUntil(() => frames.length === 1, 'the binary frame answered');
      expect((frames[0]?.error as { code: number }).code).to.equal(-32700);
      socket.send(JSON.stringify(initialize));
      await waitUntil(() => frames.some((frame) => frame.id === 1 && 'result' in frame), 'the initialize answer', 30_000);
    });

    it('a frame over --max-line-mib is answered by its id (-32600) and the connection lives; one far over it is closed 1009', async () => {
      const { socket, frames, closed } = await rawClient(daemon, sockets);
      socket.send(JSON.stringify(initialize));
      await waitUntil(() => frames.some((frame) => frame.id === 1), 'the initialize answer', 30_000);
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'session/new', params: { cwd: '/', mcpServers: [], padding: 'x'.repeat(1.5 * 1024 * 1024) } }));
      await waitUntil(() => frames.some((frame) => frame.id === 7), 'the oversize answer', 30_000);
      expect((frames.find((frame) => frame.id === 7)?.error as { code: number }).code).to.equal(-32600);
      socket.send(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'session/list', params: {} }));
      await waitUntil(() => frames.some((frame) => frame.id === 8), 'the next request answered', 30_000);
      expect(frames.find((frame) => frame.id === 8)).to.have.property('result');
      socket.send('x'.repeat(3 * 1024 * 1024));
      expect(await closed).to.equal(1009);
    });
  });

  it('a half-open client (upgraded, then silent: no pong) is closed by the keepalive', async () => {
    const quick = await startServe(state, ['--listen', '127.0.0.1:0', '--agent', 'demo', '--store', ':memory:', '--keepalive', '0.5'], launched);
    const { hostname, port } = new URL(quick.url.replace(/^ws/, 'http'));
    const raw: Socket = netConnect({ host: hostname, port: Number(port) });
    try {
      await once(raw, 'connect');
      let heard = '';
      raw.on('data', (chunk: Buffer) => (heard += chunk.toString('latin1')));
      const ended = new Promise<void>((resolve) => raw.once('close', () => resolve()));
      raw.write(['GET /acp HTTP/1.1', `Host: ${hostname}:${port}`, 'Upgrade: websocket', 'Connection: Upgrade', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version: 13', `Authorization: Bearer ${quick.token}`, '', ''].join('\r\n'));
      await ended;
      expect(heard).to.match(/^HTTP\/1\.1 101/);
    } finally {
      raw.destroy();
    }
  });

  it('the ACP SDK client over createWebSocketStream: initialize, session/new, a prompt streamed in order', async () => {
    const sdk = sdkOverWebSocket(daemon);
    try {
      const init = await sdk.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'serve-test-editor', version: '1' } });
      expect(init.agentInfo).to.deep.include({ name: 'acp-warden-demo' });
      const { sessionId } = (await sdk.agent.request(methods.agent.session.new, { cwd: state, mcpServers: [] })) as { sessionId: string };
      const result = await sdk.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'hello daemon' }] });
      expect(result).to.deep.equal({ stopReason: 'end_turn' });
      expect(answerText(sdk.updates, sessionId)).to.equal('You said: hello daemon. This is the acp-warden demo agent, answering word by word.');
      // Every update carries its journal sequence number, increasing.
      const seqs = sdk.updates.map((entry) => (entry as unknown as { _meta?: Record<string, unknown> })._meta?.['acp-warden/seq']).filter((seq) => seq !== undefined) as number[];
      expect(seqs).to.have.length.above(0);
      expect(seqs).to.deep.equal([...seqs].sort((a, b) => a - b));
    } finally {
      sdk.close();
    }
  });
});
