/**
 * Routing (issue 17): `warden serve` hosts on one real PostgreSQL sharing one token file, the
 * demo agent as a process. A client connected to a host that does not own its session is
 * served by the owner through that host: its resume with a cursor replays what a client of the
 * owner gets, its prompt streams the journal's updates with their seqs, once and in order, the
 * agent's permission request reaches it and its answer goes back, its cancel ends the turn. When
 * the owner is SIGKILLed mid-relay, the forwarded prompt settles with `peer_lost` at once; after
 * the takeover the client resumes through the same connection (served locally when its own
 * host took the session, forwarded again when another did).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import pg from 'pg';
import type { WebSocket } from 'ws';
import { isAlive, waitUntil } from '../support/processes.js';
import { clusterFixture } from '../support/cluster.js';
import { queryRows } from '../support/postgres.js';
import { freePort } from '../support/free-port.js';
import { demoAgentsOf, initializeParams, lastSeqOf, seqUpdatesOf, socketClient, startServe, wardenSessions, listedSessions, type Frame, type LineClient, type SeqUpdate, type ServeDaemon } from '../support/serve-daemon.js';

/** A prompt whose answer (the demo agent echoes it) streams for a while: 400 words, 30 ms apart (12 s: a cancel or a kill after its first words finds it running). */
const longPrompt = Array.from({ length: 400 }, (_, n) => `w${n}`).join(' ');

type Host = ServeDaemon & { readonly hostId: () => Promise<string> };

describe('routing: a client on a host that does not own its session', function () {
  this.timeout(120_000);
  const fixture = clusterFixture('routing');

  /** Starts a host on the shared token file (`advertise`: a cluster member others reach and which takes over lost hosts' sessions). */
  async function host(name: string, { advertise = true }: { readonly advertise?: boolean } = {}): Promise<Host> {
    const port = await freePort();
    const address = `ws://127.0.0.1:${port}/acp`;
    const args = ['--listen', `127.0.0.1:${port}`, '--token-file', join(fixture.state, 'token'), '--lease', '2', '--agent', 'demo', '--store', fixture.url, '--env', 'DEMO_WORD_DELAY_MS=30', ...(advertise ? ['--advertise', address] : [])];
    const daemon = await startServe(join(fixture.state, name), args, fixture.launched);
    return { ...daemon, hostId: async () => (await query<{ host_id: string }>('SELECT host_id FROM hosts WHERE pid = $1', [daemon.process.pid]))[0]!.host_id };
  }

  const query = <T extends pg.QueryResultRow>(text: string, values: unknown[]) => queryRows<T>(fixture.url, text, values);

  const ownerOf = async (sessionId: string) => (await query<{ owner_host: string | null }>('SELECT owner_host FROM sessions WHERE session_id = $1', [sessionId]))[0]?.owner_host ?? null;

  async function client(daemon: ServeDaemon, name: string): Promise<LineClient & { readonly socket: WebSocket }> {
    const opened = await socketClient(daemon, fixture.sockets);
    const init = await opened.request(1, 'initialize', initializeParams(name));
    expect(init.error, JSON.stringify(init.error)).to.equal(undefined);
    return opened;
  }

  /** A session made on `owner` by a client that prompted once and left: nobody is attached to it there. */
  async function sessionOn(owner: ServeDaemon): Promise<{ sessionId: string; seen: SeqUpdate[] }> {
    const maker = await client(owner, 'maker');
    const created = await maker.request(2, 'session/new', { cwd: fixture.state, mcpServers: [] });
    const sessionId = (created.result as { sessionId: string }).sessionId;
    const first = await maker.request(3, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello there' }] });
    expect((first.result as { stopReason?: string }).stopReason).to.equal('end_turn');
    const seen = seqUpdatesOf(maker.frames, sessionId);
    maker.socket.close();
    const lister = await client(owner, 'lister');
    let id = 10;
    await waitUntil(async () => {
      const listed = await lister.request(id++, '_acp-warden/sessions', {});
      const sessions = (listed.result as { sessions: Array<{ sessionId: string; clients: unknown[] }> }).sessions;
      return sessions.find((session) => session.sessionId === sessionId)?.clients.length === 0;
    }, 'the maker to be detached on the owner');
    lister.socket.close();
    return { sessionId, seen };
  }

  /** The answer frame to request `id`. */
  const answerOf = (frames: readonly Frame[], id: number) => frames.find((frame) => frame.id === id && frame.method === undefined);
  /** The seqs of `updates`, in the order they came. */
  const seqsOf = (updates: readonly SeqUpdate[]) => updates.map((update) => update.seq).filter((seq): seq is number => seq !== undefined);
  /** The updates before the answer to request `id` (a replay) and after it. */
  function split(frames: readonly Frame[], sessionId: string, id: number): { before: SeqUpdate[]; after: SeqUpdate[] } {
    const at = frames.indexOf(answerOf(frames, id) as Frame);
    return { before: seqUpdatesOf(frames.slice(0, at), sessionId), after: seqUpdatesOf(frames.slice(at + 1), sessionId) };
  }

  it('resumed with a cursor on a non-owner: the replay is the owner\'s, a prompt streams its seqs once and in order, a permission round trip, a cancel; a load replays it all', async () => {
    const [a, b] = [await host('a'), await host('b')];
    const { sessionId, seen } = await sessionOn(a);
    expect(await ownerOf(sessionId)).to.equal(await a.hostId());
    const cursor = seqsOf(seen)[2] as number;
    expect(cursor).to.be.a('number');

    // On B, which does not own it: forwarded to A. Then a client of A directly, for comparison (an observer there).
    const routed = await client(b, 'routed');
    const resumed = await routed.request(2, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': cursor } });
    expect(resumed.error, JSON.stringify(resumed.error)).to.equal(undefined);
    const direct = await client(a, 'direct');
    const resumedThere = await direct.request(2, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': cursor } });
    expect(resumedThere.error, JSON.stringify(resumedThere.error)).to.equal(undefined);
    expect(resumed.result, 'the same setup').to.deep.equal(resumedThere.result);
    const replay = split(routed.frames, sessionId, 2).before;
    expect(seqsOf(replay).length).to.be.greaterThan(0);
    expect(seqsOf(replay).every((seq) => seq > cursor), 'only what came after the cursor').to.equal(true);
    expect(replay.map((update) => [update.seq, update.update]), 'the replay a client of the owner gets').to.deep.equal(split(direct.frames, sessionId, 2).before.map((update) => [update.seq, update.update]));
    // The session stays the owner's.
    expect(await ownerOf(sessionId)).to.equal(await a.hostId());

    // A prompt asking for the tool: the permission request comes to the routed client (the controller), its answer goes back.
    routed.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'run the tool please' }] } });
    await waitUntil(() => routed.frames.some((frame) => frame.method === 'session/request_permission'), 'the permission request through B', 30_000);
    const asked = routed.frames.find((frame) => frame.method === 'session/request_permission') as Frame & { params: { sessionId: string; options: Array<{ optionId: string }> } };
    expect(asked.params.sessionId).to.equal(sessionId);
    routed.send({ id: asked.id, result: { outcome: { outcome: 'selected', optionId: 'allow' } } });
    await waitUntil(() => answerOf(routed.frames, 3) !== undefined, 'the prompt\'s answer through B', 30_000);
    expect((answerOf(routed.frames, 3)?.result as { stopReason?: string }).stopReason).to.equal('end_turn');
    const turn = split(routed.frames, sessionId, 2).after;
    const seqs = seqsOf(turn);
    expect(seqs.length).to.be.greaterThan(3);
    expect(seqs, 'in order, once').to.deep.equal([...new Set(seqs)].sort((x, y) => x - y));
    expect(seqs[0]).to.be.greaterThan(lastSeqOf(replay));
    const toolDone = turn.find((update) => update.kind === 'tool_call_update' && JSON.stringify(update.update).includes('completed'));
    expect(toolDone, 'the tool ran: the permission was answered allow').to.not.equal(undefined);
    // The seqs are the journal's: the observer on the owner got the same updates under the same seqs.
    await waitUntil(() => lastSeqOf(seqUpdatesOf(direct.frames, sessionId)) >= (seqs.at(-1) as number), 'the observer on A to see the turn');
    const observed = new Map(seqUpdatesOf(direct.frames, sessionId).map((update) => [update.seq, JSON.stringify(update.update)]));
    for (const update of turn.filter((one) => one.seq !== undefined)) expect(observed.get(update.seq), `seq ${update.seq}`).to.equal(JSON.stringify(update.update));

    // A long answer, cancelled through B after its first words.
    const before = routed.frames.length;
    routed.send({ id: 4, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: longPrompt }] } });
    await waitUntil(() => seqUpdatesOf(routed.frames.slice(before), sessionId).some((update) => update.kind === 'agent_message_chunk'), 'the long answer to start', 30_000);
    routed.send({ method: 'session/cancel', params: { sessionId } });
    await waitUntil(() => answerOf(routed.frames, 4) !== undefined, 'the cancelled prompt\'s answer', 30_000);
    expect((answerOf(routed.frames, 4)?.result as { stopReason?: string }).stopReason).to.equal('cancelled');

    // session/load through B replays the whole history, as on A.
    const loader = await client(b, 'loader');
    const loaded = await loader.request(2, 'session/load', { sessionId, cwd: fixture.state, mcpServers: [] });
    expect(loaded.error, JSON.stringify(loaded.error)).to.equal(undefined);
    const loaderThere = await client(a, 'loader-there');
    expect((await loaderThere.request(2, 'session/load', { sessionId, cwd: fixture.state, mcpServers: [] })).error).to.equal(undefined);
    const history = split(loader.frames, sessionId, 2).before;
    expect(seqsOf(history)[0], 'from the start').to.be.lessThan(cursor);
    expect(history.map((update) => [update.seq, update.update])).to.deep.equal(split(loaderThere.frames, sessionId, 2).before.map((update) => [update.seq, update.update]));
  });

  it('warden sessions --close through a host that does not own the session: forwarded to the owner, closed there', async () => {
    const [a, b] = [await host('a'), await host('b')];
    const { sessionId } = await sessionOn(a);
    expect(listedSessions(fixture.state, a).find((listed) => listed.sessionId === sessionId)?.state, 'running on its owner').not.to.equal('stored');
    const closed = wardenSessions(fixture.state, b, ['--close', sessionId]);
    expect(closed.status, closed.stderr).to.equal(0);
    expect((await query<{ state: string }>('SELECT state FROM sessions WHERE session_id = $1', [sessionId]))[0]?.state, 'closed in the journal').to.equal('closed');
    expect(listedSessions(fixture.state, a).find((listed) => listed.sessionId === sessionId)?.state, 'no longer running on the owner').to.equal('stored');

    // The owner SIGKILLed: once B took the session over, the close is B's own.
    const other = await sessionOn(a);
    a.process.kill('SIGKILL');
    await a.exited;
    const bId = await b.hostId();
    await waitUntil(async () => (await ownerOf(other.sessionId)) === bId, 'B to take the session over', 30_000);
    const closedHere = wardenSessions(fixture.state, b, ['--close', other.sessionId]);
    expect(closedHere.status, closedHere.stderr).to.equal(0);
    expect((await query<{ state: string }>('SELECT state FROM sessions WHERE session_id = $1', [other.sessionId]))[0]?.state).to.equal('closed');
  });

  it('the owner SIGKILLed mid-relay: the forwarded prompt settles peer_lost, no hang; the client resumes from its cursor once its own host took the session over, served there', async () => {
    const [a, b] = [await host('a'), await host('b')];
    const { sessionId } = await sessionOn(a);
    const routed = await client(b, 'routed');
    const resumed = await routed.request(2, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': 0 } });
    expect(resumed.error, JSON.stringify(resumed.error)).to.equal(undefined);
    routed.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: longPrompt }] } });
    await waitUntil(() => split(routed.frames, sessionId, 2).after.filter((update) => update.kind === 'agent_message_chunk').length >= 3, 'three chunks through B', 30_000);
    const agents = demoAgentsOf(a.process.pid);
    expect(agents).to.have.length(1);
    a.process.kill('SIGKILL');
    await a.exited;
    // The forwarded prompt settles at once (A's socket closed with it), with the reason.
    await waitUntil(() => answerOf(routed.frames, 3) !== undefined, 'the forwarded prompt to settle', 15_000);
    const lost = answerOf(routed.frames, 3)?.error as { code: number; data?: { reason?: string; owner?: string } };
    expect(lost?.code).to.equal(-32603);
    expect(lost?.data?.reason).to.equal('peer_lost');
    expect(lost?.data?.owner).to.equal(await query<{ host_id: string }>('SELECT host_id FROM hosts WHERE pid = $1', [a.process.pid]).then((rows) => rows[0]?.host_id));
    await waitUntil(() => agents.every((pid) => !isAlive(pid)), 'the dead host\'s agent to end', 15_000);
    const cursor = lastSeqOf(seqUpdatesOf(routed.frames, sessionId));
    // B takes the session once A's lease ran out; until then a resume is refused (A is live by its lease, but unreachable).
    const bId = await b.hostId();
    await waitUntil(async () => (await ownerOf(sessionId)) === bId, 'B to take the session over', 30_000, 100);
    const again = await routed.request(4, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': cursor } });
    expect(again.error, JSON.stringify(again.error)).to.equal(undefined);
    const settledAt = routed.frames.indexOf(answerOf(routed.frames, 3) as Frame);
    const rest = split(routed.frames.slice(settledAt + 1), sessionId, 4).before;
    const restSeqs = seqsOf(rest);
    expect(restSeqs.every((seq) => seq > cursor), 'only what came after the cursor').to.equal(true);
    expect(restSeqs, 'in order, once').to.deep.equal([...new Set(restSeqs)].sort((x, y) => x - y));
    // The turn A left running ended host_lost, journaled by B as it took the session over: the client got it once.
    const ends = rest.filter((update) => update.turnEnded !== undefined);
    expect(ends).to.have.length(1);
    expect((ends[0]!.turnEnded as { error?: { data?: { reason?: string } } }).error?.data?.reason).to.equal('host_lost');
    const next = await routed.request(5, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] }, 60_000);
    expect((next.result as { stopReason?: string } | undefined)?.stopReason, JSON.stringify(next)).to.equal('end_turn');
    expect(await ownerOf(sessionId)).to.equal(bId);
  });

  it('the owner stopped (SIGTERM, a rolling restart): the client hears the relay ended and resumes at once, served by its own host (the session was handed over to it)', async () => {
    const [a, b] = [await host('a'), await host('b')];
    const { sessionId, seen } = await sessionOn(a);
    const routed = await client(b, 'routed');
    const cursor = lastSeqOf(seen);
    const resumed = await routed.request(2, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': cursor } });
    expect(resumed.error, JSON.stringify(resumed.error)).to.equal(undefined);
    a.process.kill('SIGTERM');
    expect(await a.exited).to.equal(0);
    const notice = (update: SeqUpdate) => update.seq === undefined && JSON.stringify(update.update).includes('went away');
    await waitUntil(() => seqUpdatesOf(routed.frames, sessionId).some(notice), 'the notice that the relay ended', 15_000);
    expect(await ownerOf(sessionId), 'handed over by the owner as it stopped').to.equal(await b.hostId());
    const again = await routed.request(3, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': cursor } });
    expect(again.error, JSON.stringify(again.error)).to.equal(undefined);
    expect(await ownerOf(sessionId)).to.equal(await b.hostId());
    const next = await routed.request(4, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] }, 60_000);
    expect((next.result as { stopReason?: string } | undefined)?.stopReason, JSON.stringify(next)).to.equal('end_turn');
  });

  it('the owner SIGKILLed, another host takes the session over: the client of a third host resumes through it again, forwarded to the new owner', async () => {
    // B does not advertise: it never takes a session over, so C does.
    const [a, b, c] = [await host('a'), await host('b', { advertise: false }), await host('c')];
    const { sessionId } = await sessionOn(a);
    const routed = await client(b, 'routed');
    const resumed = await routed.request(2, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': 0 } });
    expect(resumed.error, JSON.stringify(resumed.error)).to.equal(undefined);
    routed.send({ id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: longPrompt }] } });
    await waitUntil(() => split(routed.frames, sessionId, 2).after.filter((update) => update.kind === 'agent_message_chunk').length >= 3, 'three chunks through B', 30_000);
    a.process.kill('SIGKILL');
    await a.exited;
    await waitUntil(() => answerOf(routed.frames, 3) !== undefined, 'the forwarded prompt to settle', 15_000);
    expect((answerOf(routed.frames, 3)?.error as { data?: { reason?: string } } | undefined)?.data?.reason).to.equal('peer_lost');
    const cursor = lastSeqOf(seqUpdatesOf(routed.frames, sessionId));
    const cId = await c.hostId();
    await waitUntil(async () => (await ownerOf(sessionId)) === cId, 'C to take the session over', 30_000, 100);
    const again = await routed.request(4, 'session/resume', { sessionId, cwd: fixture.state, mcpServers: [], _meta: { 'acp-warden/after': cursor } });
    expect(again.error, JSON.stringify(again.error)).to.equal(undefined);
    const settledAt = routed.frames.indexOf(answerOf(routed.frames, 3) as Frame);
    const rest = split(routed.frames.slice(settledAt + 1), sessionId, 4).before;
    const restSeqs = seqsOf(rest);
    expect(restSeqs.every((seq) => seq > cursor), 'only what came after the cursor').to.equal(true);
    expect(restSeqs, 'in order, once').to.deep.equal([...new Set(restSeqs)].sort((x, y) => x - y));
    // The turn A left running ended host_lost, journaled by C: the client got it once.
    const ends = rest.filter((update) => update.turnEnded !== undefined);
    expect(ends).to.have.length(1);
    expect((ends[0]!.turnEnded as { error?: { data?: { reason?: string } } }).error?.data?.reason).to.equal('host_lost');
    const next = await routed.request(5, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'still there?' }] }, 60_000);
    expect((next.result as { stopReason?: string } | undefined)?.stopReason, JSON.stringify(next)).to.equal('end_turn');
    expect(await ownerOf(sessionId), 'still C\'s: B forwarded').to.equal(cId);
  });
});
