/**
 * The inspection stream, received by a local WebSocket server (127.0.0.1, closed at the end):
 * a host with `inspect` sends its actors; a restart of the agent process shows up as a new
 * actor under the same supervisor; errors keep their message; secrets never leave.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { createHost, type Host } from '../../src/runtime/host.js';
import { inspectionPayload, REDACTED } from '../../src/inspect/inspection-payload.js';
import { parentSessionId } from '../../src/inspect/inspector.js';
import { isAlive, waitUntil } from '../support/processes.js';

interface Received {
  type: string;
  sessionId: string;
  parentId?: string;
  name?: string;
  snapshot?: { status?: string; error?: { name?: string; message?: string; stack?: string } };
  event?: { type?: string };
  taken?: unknown;
}

describe('XState inspector wiring', function () {
  this.timeout(60_000);
  let server: WebSocketServer;
  let url: string;
  const lines: string[] = [];
  let dir: string;
  const hosts: Host[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warden-inspect-'));
    lines.length = 0;
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on('connection', (socket) => socket.on('message', (data) => lines.push(data.toString('utf8'))));
  });

  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const events = () => lines.map((line) => JSON.parse(line) as Received);

  it('streams every actor; a killed agent process comes back as a new actor under the same supervisor; its error keeps its message; the secret never leaves', async () => {
    const secret = 'sk-inspect-0123456789abcdef';
    const host = createHost({ store: ':memory:', inspect: url, agentOptions: { env: { OPENAI_API_KEY: secret, DEMO_WORD_DELAY_MS: '1' } } });
    hosts.push(host);
    const session = await host.newSession({ cwd: dir });
    expect((await session.prompt('hello').result).stopReason).to.equal('end_turn');
    const first = host.processes()[0];
    expect(first).to.not.equal(undefined);
    const supervisorId = parentSessionId(first?.port as never);
    process.kill(first?.pid as number, 'SIGKILL');
    await waitUntil(() => host.processes().some((entry) => entry.pid !== first?.pid) && session.state() === 'ready', 'the agent process to be restarted', 20_000);
    const second = host.processes()[0];
    await waitUntil(() => events().some((event) => event.type === '@xstate.actor' && event.sessionId === second?.port.sessionId), 'the restarted port in the stream', 10_000);

    const actors = events().filter((event) => event.type === '@xstate.actor');
    const ports = actors.filter((event) => event.parentId === supervisorId && (event.sessionId === first?.port.sessionId || event.sessionId === second?.port.sessionId));
    expect(ports.map((event) => event.sessionId)).to.deep.equal([first?.port.sessionId, second?.port.sessionId]);
    // The whole tree is there: the server at the root, the session chart among the rest.
    expect(actors.length).to.be.greaterThan(6);
    // The killed port's last snapshot says why, as data (not `{}`).
    await waitUntil(() => events().some((event) => event.sessionId === first?.port.sessionId && event.snapshot?.status === 'error'), 'the error snapshot');
    const failed = events().find((event) => event.sessionId === first?.port.sessionId && event.snapshot?.status === 'error');
    expect(failed?.snapshot?.error?.message).to.contain('SIGKILL');
    expect(failed?.snapshot?.error?.stack).to.be.a('string');
    expect(lines.join('\n')).to.not.contain(secret);
    // The session chart's snapshots carry the transitions their event took (acp-warden's `taken`: the live view lights them).
    const prompted = events().find((event) => event.type === '@xstate.snapshot' && event.event?.type === 'prompt' && event.taken !== undefined);
    expect(prompted?.taken).to.deep.equal({ from: 'ready', to: 'prompting', transitions: [{ source: 'ready', event: 'prompt', targets: ['prompting'] }] });
    await host.stop();
    hosts.length = 0;
    expect(isAlive(second?.pid)).to.equal(false);
  });

  it('an inspector that is not listening costs nothing: the host works and stops', async () => {
    const host = createHost({ store: ':memory:', inspect: 'ws://127.0.0.1:9', agentOptions: { env: { DEMO_WORD_DELAY_MS: '1' } } });
    hosts.push(host);
    const session = await host.newSession({ cwd: dir });
    expect((await session.prompt('hello').result).stopReason).to.equal('end_turn');
  });

  describe('payloads', () => {
    it('errors become { name, message, stack } with their cause', () => {
      const error = new Error('outer', { cause: new TypeError('inner') });
      const copy = inspectionPayload({ error }) as { error: { name: string; message: string; stack: string; cause: { name: string; message: string } } };
      expect(copy.error).to.include({ name: 'Error', message: 'outer' });
      expect(copy.error.stack).to.contain('outer');
      expect(copy.error.cause).to.include({ name: 'TypeError', message: 'inner' });
    });

    it('redacts secrets by key and by shape, and leaves the rest', () => {
      const copy = inspectionPayload({ env: { PATH: '/bin' }, apiKey: 'x', headers: { Authorization: 'Bearer abc' }, note: 'sk-ant-api03-abcdefghijk', plain: 'hello' });
      expect(copy).to.deep.equal({ env: REDACTED, apiKey: REDACTED, headers: { Authorization: REDACTED }, note: REDACTED, plain: 'hello' });
    });

    it('cuts long strings, long arrays, wide objects, deep nesting and cycles', () => {
      const cyclic: Record<string, unknown> = { name: 'loop' };
      cyclic.self = cyclic;
      let deep: Record<string, unknown> = { leaf: true };
      for (let level = 0; level < 20; level++) deep = { deep };
      const copy = inspectionPayload({ text: 'x'.repeat(5000), list: Array.from({ length: 500 }, (_, index) => index), cyclic, deep }, { maxString: 100, maxItems: 10, maxDepth: 5 }) as Record<string, unknown>;
      expect(copy.text).to.match(/^x{100}… \(4900 more characters\)$/u);
      expect(copy.list).to.have.length(11);
      expect((copy.list as unknown[]).at(-1)).to.equal('… 490 more items');
      expect((copy.cyclic as Record<string, unknown>).self).to.equal('[circular]');
      expect(JSON.stringify(copy.deep)).to.contain('[…]');
    });
  });
});
