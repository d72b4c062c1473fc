import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { checkUpgrade, rejectUpgrade, type AccessPolicy } from '../../src/serve/access.js';

const token = 'Zm9yLXRlc3RzLW9ubHktYS0zMi1ieXRlLXRva2VuLXZhbHVl';
const policy: AccessPolicy = { token, allowOrigins: ['https://editor.example', 'http://127.0.0.1:5173'] };

/** What a client saw: the socket opened, or the HTTP answer that refused it. */
type Outcome = { opened: true } | { opened: false; status: number; headers: IncomingMessage['headers']; body: string };

describe('serve: access to the WebSocket endpoint (checkUpgrade, rejectUpgrade)', () => {
  let server: Server;
  let sockets: WebSocketServer;
  let port: number;
  const clients = new Set<WebSocket>();

  before(async () => {
    sockets = new WebSocketServer({ noServer: true });
    server = createServer((_request, response) => response.writeHead(426).end());
    server.on('upgrade', (request, socket, head) => {
      const access = checkUpgrade(request, policy);
      if (!access.ok) return rejectUpgrade(socket, access);
      sockets.handleUpgrade(request, socket, head, (ws) => ws.send('welcome'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(() => {
    for (const client of clients) client.terminate();
    clients.clear();
  });
  after(async () => {
    for (const ws of sockets.clients) ws.terminate();
    sockets.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Opens a real `ws` client and reports whether the server let it in. */
  const attempt = (path: string, headers: Record<string, string>): Promise<Outcome> =>
    new Promise((resolve, reject) => {
      const client = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
      clients.add(client);
      client.once('message', (data) => (data.toString() === 'welcome' ? resolve({ opened: true }) : reject(new Error(`unexpected frame ${data.toString()}`))));
      client.once('unexpected-response', (_request, response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.once('end', () => resolve({ opened: false, status: response.statusCode ?? 0, headers: response.headers, body }));
      });
      client.once('error', reject);
    });

  const bearer = (value: string) => ({ Authorization: `Bearer ${value}` });

  it('opens with the right bearer token (and a lower-case scheme)', async () => {
    expect(await attempt('/acp', bearer(token))).to.deep.equal({ opened: true });
    expect(await attempt('/acp?client=cli', { Authorization: `bearer ${token}` })).to.deep.equal({ opened: true });
  });

  for (const [what, headers] of [
    ['no Authorization header', {}],
    ['a wrong token of the same length', bearer(`${token.slice(0, -1)}X`)],
    ['a wrong token of another length', bearer(token.slice(0, 10))],
    ['a longer token starting with the right one', bearer(`${token}A`)],
    ['another scheme', { Authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` }],
  ] as Array<[string, Record<string, string>]>) {
    it(`answers 401 with a Bearer challenge to ${what}`, async () => {
      const outcome = await attempt('/acp', headers);
      expect(outcome).to.include({ opened: false, status: 401 });
      if (outcome.opened) return;
      expect(outcome.headers['www-authenticate']).to.match(/^Bearer realm="acp-warden"/);
      expect(outcome.body).to.include('Authorization: Bearer <token>').and.include('token file');
      expect(outcome.body).to.not.include(token);
    });
  }

  it('answers 403 naming --allow-origin to a browser origin not listed, even with the right token', async () => {
    const outcome = await attempt('/acp', { ...bearer(token), Origin: 'http://evil.example' });
    expect(outcome).to.include({ opened: false, status: 403 });
    if (!outcome.opened) expect(outcome.body).to.include('--allow-origin http://evil.example');
    expect(await attempt('/acp', { ...bearer(token), Origin: 'null' })).to.include({ opened: false, status: 403 });
    expect(await attempt('/acp', { ...bearer(token), Origin: 'https://editor.example.evil.example' })).to.include({ opened: false, status: 403 });
  });

  it('opens for a listed origin (compared as the browser serializes it) with the right token', async () => {
    expect(await attempt('/acp', { ...bearer(token), Origin: 'https://editor.example' })).to.deep.equal({ opened: true });
    expect(await attempt('/acp', { ...bearer(token), Origin: 'https://EDITOR.example:443' })).to.deep.equal({ opened: true });
    expect(await attempt('/acp', { ...bearer(token), Origin: 'http://127.0.0.1:5173' })).to.deep.equal({ opened: true });
    expect(await attempt('/acp', { Origin: 'https://editor.example' })).to.include({ opened: false, status: 401 });
  });

  it('answers 404 to any other path, token or not', async () => {
    for (const path of ['/other', '/acp/', '/', '/ACP']) {
      const outcome = await attempt(path, bearer(token));
      expect(outcome, path).to.include({ opened: false, status: 404 });
      if (!outcome.opened) expect(outcome.body).to.include('/acp');
    }
  });

  it('closes the connection after refusing, even for a client that keeps its end open', async () => {
    const raw = connect(port, '127.0.0.1');
    try {
      raw.write(`GET /acp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${Buffer.alloc(16, 1).toString('base64')}\r\n\r\n`);
      let answer = '';
      raw.setEncoding('utf8');
      raw.on('data', (chunk: string) => (answer += chunk));
      // Our side never ends; the server's 'end' (then 'close') is what proves it let go.
      await new Promise<void>((resolve, reject) => {
        raw.once('end', resolve);
        raw.once('error', reject);
      });
      expect(answer).to.match(/^HTTP\/1\.1 401 Unauthorized\r\n/);
      expect(answer).to.include('WWW-Authenticate: Bearer realm="acp-warden"').and.include('Connection: close');
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      expect(Number(/Content-Length: (\d+)/.exec(head)?.[1])).to.equal(Buffer.byteLength(body));
    } finally {
      raw.destroy();
    }
  });
});
