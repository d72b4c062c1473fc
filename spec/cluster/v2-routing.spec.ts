/**
 * An ACP v2 client on a host of a cluster (issue 30, slice S7): it is not relayed to the owner
 * of its session (a peer link carries the core's v1-shaped traffic). Its resume of a session a
 * live, advertised host owns is refused `session_owned` with `data.owner` that host's URL; a
 * resume there, on the owner, works; its `session/new` is made on the host it is connected to,
 * where a v1 client's is placed on a less loaded host.
 * Real `warden serve` hosts on one PostgreSQL, the demo agent.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { clusterFixture } from '../support/cluster.js';
import { queryRows } from '../support/postgres.js';
import { freePort } from '../support/free-port.js';
import { initializeParams, socketClient, startServe, type ServeDaemon } from '../support/serve-daemon.js';

const initializeV2 = { protocolVersion: 2, info: { name: 'v2-routing-spec', version: '1' }, capabilities: {} };

describe('routing: an ACP v2 client on a host that does not own its session', function () {
  this.timeout(120_000);
  const fixture = clusterFixture('v2routing');

  /** A host on the shared token file, advertised; `extra`: more arguments. */
  async function host(name: string, extra: readonly string[] = []): Promise<ServeDaemon & { readonly address: string }> {
    const port = await freePort();
    const address = `ws://127.0.0.1:${port}/acp`;
    const args = ['--listen', `127.0.0.1:${port}`, '--token-file', join(fixture.state, 'token'), '--lease', '2', '--agent', 'demo', '--store', fixture.url, '--advertise', address, ...extra];
    return { ...(await startServe(join(fixture.state, name), args, fixture.launched)), address };
  }
  const ownerPid = async (sessionId: string) =>
    (await queryRows<{ pid: number }>(fixture.url, 'SELECT h.pid FROM sessions s JOIN hosts h ON h.host_id = s.owner_host WHERE s.session_id = $1', [sessionId]))[0]?.pid;

  it('a resume of a session owned elsewhere is refused session_owned naming the owner; there it resumes; its new session is made where it is connected (a v1 client\'s is placed elsewhere)', async () => {
    // A places new sessions on any less loaded host (--load-limit 0): a v1 client's, not a v2 client's.
    const [a, b] = [await host('a', ['--load-limit', '0']), await host('b')];
    const maker = await socketClient(a, fixture.sockets);
    await maker.request(1, 'initialize', initializeParams('maker'));
    const sessionId = (await maker.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] })).result?.sessionId as string;
    expect(await ownerPid(sessionId)).to.equal(a.process.pid);

    const onB = await socketClient(b, fixture.sockets);
    expect((await onB.request(1, 'initialize', initializeV2)).result?.protocolVersion).to.equal(2);
    const refused = await onB.request(2, 'session/resume', { sessionId, cwd: fixture.state });
    expect(refused.error?.data?.reason, JSON.stringify(refused)).to.equal('session_owned');
    expect((refused.error?.data as { owner?: string } | undefined)?.owner).to.equal(a.address);
    expect(refused.error?.message).to.contain(a.address);

    const onA = await socketClient(a, fixture.sockets);
    await onA.request(1, 'initialize', initializeV2);
    expect((await onA.request(2, 'session/resume', { sessionId, cwd: fixture.state })).error).to.equal(undefined);

    // A runs one session, B none: a v1 client's new session on A goes to B; a v2 client's is made on A.
    const v1Made = await maker.request(3, 'session/new', { cwd: fixture.state, mcpServers: [] });
    expect(await ownerPid(v1Made.result?.sessionId as string)).to.equal(b.process.pid);
    const made = await onA.request(3, 'session/new', { cwd: fixture.state });
    const newId = made.result?.sessionId as string;
    expect(newId, JSON.stringify(made)).to.be.a('string');
    expect(await ownerPid(newId)).to.equal(a.process.pid);
  });
});
