/**
 * An idempotent prompt across a failover (issue 30): two `warden serve` hosts on one real
 * PostgreSQL (spec/support/cluster.ts; skipped, saying why, without one), lease 2 s, the demo
 * agent. Host A runs a keyed prompt to its end and holds a second keyed prompt's turn (the demo
 * tool's permission, never answered); A is SIGKILLed; the client's `session/resume` on host B
 * takes the session once A's lease ran out. There, the first key is answered at once with the
 * end A journaled, the second with the `host_lost` end B journaled for the cut turn: the
 * database (the proof) holds one prompt entry per key, and B started no turn for either.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { clusterFixture, startClusterHost } from '../support/cluster.js';
import { waitUntil } from '../support/processes.js';
import { postgresTurnEntries } from '../support/journal-rows.js';
import { initializeParams, socketClient, startServe, type Frame } from '../support/serve-daemon.js';

const keyMeta = 'acp-warden/idempotencyKey';

describe('failover: an idempotent prompt retried on the host that took its session over (issue 30)', function () {
  this.timeout(120_000);
  const fixture = clusterFixture('idempotent_failover');
  /** A connection to `host` that initialized and resumed `sessionId`, tried again while the killed owner's lease runs (refused session_owned). */
  const claim = async (host: Parameters<typeof socketClient>[0], sessionId: string) => {
    const client = await socketClient(host, fixture.sockets);
    await client.request(1, 'initialize', initializeParams('idempotent-failover-test'));
    let answer: Frame | undefined;
    let id = 10;
    // Refused (session_owned) while the killed owner's lease runs; taken once it ran out.
    await waitUntil(async () => {
      answer = await client.request(id++, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [] });
      return answer.error?.data?.reason !== 'session_owned';
    }, 'the resume to take the session', 30_000, 250);
    expect(answer?.error, JSON.stringify(answer?.error)).to.equal(undefined);
    return client;
  };

  it('the keys of an ended turn and of a turn the kill cut, sent again to the new owner: answered from the journal (end_turn; host_lost), one prompt entry each', async () => {
    const a = await startClusterHost(join(fixture.state, 'a'), fixture.launched, { store: fixture.url, lease: 2, args: ['--env', 'DEMO_WORD_DELAY_MS=1'] });
    const b = await startServe(join(fixture.state, 'b'), ['--listen', '127.0.0.1:0', '--lease', '2', '--agent', 'demo', '--store', fixture.url, '--env', 'DEMO_WORD_DELAY_MS=1'], fixture.launched);
    const client = await socketClient(a, fixture.sockets);
    await client.request(1, 'initialize', initializeParams('idempotent-failover-test'));
    const sessionId = ((await client.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] })).result as { sessionId: string }).sessionId;
    const ended = { sessionId, prompt: [{ type: 'text', text: 'hello' }], _meta: { [keyMeta]: 'ended' } };
    const cut = { sessionId, prompt: [{ type: 'text', text: 'tool' }], _meta: { [keyMeta]: 'cut' } };
    const original = await client.request(3, 'session/prompt', ended);
    expect(original.result, JSON.stringify(original)).to.have.property('stopReason', 'end_turn');
    client.send({ id: 4, method: 'session/prompt', params: cut });
    await waitUntil(() => client.frames.some((frame) => frame.method === 'session/request_permission'), 'the permission request on A', 30_000);
    a.process.kill('SIGKILL');
    await a.exited;

    const resumed = await claim(b, sessionId);

    expect((await resumed.request(2, 'session/prompt', ended)).result).to.deep.equal(original.result);
    const retried = await resumed.request(3, 'session/prompt', cut);
    expect(retried.error?.data, JSON.stringify(retried)).to.deep.include({ reason: 'host_lost' });

    const rows = await postgresTurnEntries(fixture.url, sessionId);
    expect(rows).to.deep.equal([
      { kind: 'prompt', key: 'ended' },
      { kind: 'stop', key: null },
      { kind: 'prompt', key: 'cut' },
      { kind: 'error', key: null },
    ]);
  });
  it('one key sent 3 times (to A; to A restarted after kill -9; to B after A is killed again and B took over): one prompt entry, one turn, the same answer each time', async () => {
    const startA = () => startClusterHost(join(fixture.state, 'a'), fixture.launched, { store: fixture.url, lease: 2, args: ['--env', 'DEMO_WORD_DELAY_MS=1'] });
    let a = await startA();
    const b = await startServe(join(fixture.state, 'b'), ['--listen', '127.0.0.1:0', '--lease', '2', '--agent', 'demo', '--store', fixture.url, '--env', 'DEMO_WORD_DELAY_MS=1'], fixture.launched);
    const first = await socketClient(a, fixture.sockets);
    await first.request(1, 'initialize', initializeParams('idempotent-failover-test'));
    const sessionId = ((await first.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] })).result as { sessionId: string }).sessionId;
    const keyed = { sessionId, prompt: [{ type: 'text', text: 'hello' }], _meta: { [keyMeta]: 'three-sends' } };
    const original = await first.request(3, 'session/prompt', keyed);
    expect(original.result, JSON.stringify(original)).to.have.property('stopReason', 'end_turn');

    a.process.kill('SIGKILL');
    await a.exited;
    a = await startA();
    const afterRestart = await (await claim(a, sessionId)).request(3, 'session/prompt', keyed);
    expect(afterRestart.result, JSON.stringify(afterRestart)).to.deep.equal(original.result);

    a.process.kill('SIGKILL');
    await a.exited;
    const afterFailover = await (await claim(b, sessionId)).request(3, 'session/prompt', keyed);
    expect(afterFailover.result, JSON.stringify(afterFailover)).to.deep.equal(original.result);

    const rows = await postgresTurnEntries(fixture.url, sessionId);
    expect(rows).to.deep.equal([
      { kind: 'prompt', key: 'three-sends' },
      { kind: 'stop', key: null },
    ]);
  });
});
