/**
 * The connection hub (`host.hub()`, what `warden serve` runs): sessions that outlive their
 * connection, re-attach from a cursor, one controller and observers, control handover, the
 * agent's permission requests with no controller, `_acp-warden/sessions`, idle sessions.
 * Real host agent and journal (a SQLite file), the in-process demo agent, clients over memory
 * transports speaking JSON-RPC.
 */
import type { Journal } from '../../src/journal/journal.js';
import { expect } from 'chai';
import type { InspectionEvent } from 'xstate';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createHost, type Host } from '../../src/runtime/host.js';
import type { HubOptions } from '../../src/serve/connection-hub.js';
import { attachClient, type HubClient } from '../support/hub-client.js';
import { errorOf } from '../support/raw-editor.js';

const turnEnded = (update: { sessionUpdate: string; _meta?: unknown }) => update.sessionUpdate === 'session_info_update' && (update._meta as Record<string, unknown> | undefined)?.['acp-warden/turnEnded'] !== undefined;

describe('connection hub (warden serve)', function () {
  this.timeout(30_000);
  let dir: string;
  let host: Host;
  const clients: HubClient[] = [];

  const open = (options: HubOptions = {}, wordDelayMs = 2) => {
    host = createHost({ store: join(dir, 'journal.sqlite'), agents: { demo: demoAgent({ wordDelayMs }) } });
    return host.hub(options);
  };
  const client = async (name: string, options: HubOptions = {}) => {
    const attached = await attachClient(host ? host.hub() : open(options), name);
    clients.push(attached);
    return attached;
  };
  const updateSeqs = (sessionId: string) => (host.journal as Journal).entries(sessionId).filter((record) => record.entry.kind === 'update').map((record) => record.seq);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-hub-'));
  });
  afterEach(async () => {
    for (const attached of clients.splice(0)) attached.close();
    await host?.stop();
    (host as Host | undefined) = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('a turn goes on when its connection drops; a client resuming from the last seq it saw gets every later update once, in order, and the turn end', async () => {
    open({}, 5);
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    void a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'tell me a long story about supervisors and restarts and journals' }] }).catch(() => undefined);
    await a.until(() => a.updates.filter((u) => u.update.sessionUpdate === 'agent_message_chunk').length >= 3, 'three chunks on a');
    a.close();
    const seen = a.updates.filter((u) => u.sessionId === sessionId && u.seq !== undefined && u.update.sessionUpdate !== 'user_message_chunk').map((u) => u.seq as number);
    const last = Math.max(...seen);
    const b = await client('b');
    await b.request('session/resume', { sessionId, cwd: dir, _meta: { 'acp-warden/after': last } });
    await b.until(() => b.updates.some((u) => turnEnded(u.update)), 'the turn end on b');
    const afterSeqs = b.updates.filter((u) => u.update.sessionUpdate !== 'session_info_update' && u.update.sessionUpdate !== 'user_message_chunk').map((u) => u.seq as number);
    // Every update once, in order, across the two connections.
    expect([...seen, ...afterSeqs]).to.deep.equal(updateSeqs(sessionId));
    expect(afterSeqs.every((seq) => seq > last)).to.equal(true);
    const end = b.updates.find((u) => turnEnded(u.update));
    expect((end?.update._meta as Record<string, unknown>)['acp-warden/turnEnded']).to.deep.equal({ stopReason: 'end_turn' });
  });

  it('observers get the history, the controller prompt and every update and the turn end; a prompt from an observer is refused naming the rule', async () => {
    open();
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    await a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first' }] });
    const b = await client('b');
    await b.request('session/load', { sessionId, cwd: dir, mcpServers: [] });
    expect(b.updates.filter((u) => u.update.sessionUpdate === 'user_message_chunk')).to.have.length(1);
    expect(b.updates.filter((u) => turnEnded(u.update))).to.have.length(1);
    const refused = await errorOf(b.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'mine' }] }));
    expect(refused.code).to.equal(-32600);
    expect((refused.data as { reason: string }).reason).to.equal('not_controller');
    expect(refused.message).to.match(/only its controller/);
    const before = b.updates.length;
    const aBefore = a.updates.length;
    await a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'second' }] });
    await b.until(() => b.updates.slice(before).some((u) => turnEnded(u.update)), 'the second turn end on b');
    const live = b.updates.slice(before);
    expect(live[0]?.update.sessionUpdate).to.equal('user_message_chunk');
    // The observer saw what the controller saw, and the controller saw neither its own prompt echoed nor a turn-end update.
    const aLive = a.updates.slice(aBefore);
    expect(live.filter((u) => u.update.sessionUpdate === 'agent_message_chunk').map((u) => u.seq)).to.deep.equal(aLive.filter((u) => u.update.sessionUpdate === 'agent_message_chunk').map((u) => u.seq));
    expect(aLive.some((u) => u.update.sessionUpdate === 'user_message_chunk' || turnEnded(u.update))).to.equal(false);
  });

  it('control passes to the observer attached longest when the controller leaves, or when an observer takes it', async () => {
    open();
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const b = await client('b');
    const c = await client('c');
    await b.request('session/resume', { sessionId, cwd: dir });
    await c.request('session/resume', { sessionId, cwd: dir });
    expect(await c.request('_acp-warden/take_control', { sessionId })).to.deep.equal({ role: 'controller' });
    expect((await errorOf(a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] }))).data).to.include({ reason: 'not_controller' });
    c.close();
    // b was attached before a became an observer again: b controls now.
    await b.until(async () => (await host.hub().sessions()).find((s) => s.sessionId === sessionId)?.clients.find((client) => client.role === 'controller')?.peer === 'b', 'b in control');
    const result = (await b.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'now me' }] })) as { stopReason: string };
    expect(result.stopReason).to.equal('end_turn');
    const listed = (await host.hub().sessions()).find((s) => s.sessionId === sessionId);
    expect(listed?.clients.map((client) => [client.peer, client.role])).to.deep.equal([['b', 'controller'], ['a', 'observer']]);
    expect(listed?.state).to.be.a('string').and.not.equal('stored');
  });

  it('what the live view shows: the hub snapshot lists each connection with its role and cursor per session, as it stands when read', async () => {
    // The hub's snapshots as an inspection observer (the live view's tap) gets them.
    let hubSnapshot: { context: { connections: number; sessions: number; clients: unknown } } | undefined;
    const inspect = { next: (event: InspectionEvent) => {
      if (event.type !== '@xstate.snapshot') return;
      const snapshot = event.snapshot as { context?: { clients?: unknown } };
      if (snapshot.context && 'clients' in snapshot.context) hubSnapshot = snapshot as typeof hubSnapshot;
    } };
    host = createHost({ store: join(dir, 'journal.sqlite'), agents: { demo: demoAgent({ wordDelayMs: 2 }) }, inspect });
    host.hub();
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    await a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello there' }] });
    const b = await client('b');
    await client('c');
    await b.request('session/load', { sessionId, cwd: dir, mcpServers: [] });
    // The controller's cursor stands at the last update it was sent; the observer's replay went on to the turn's end.
    const last = Math.max(...updateSeqs(sessionId));
    const stop = (host.journal as Journal).entries(sessionId).find((record) => record.entry.kind === 'stop')?.seq;
    const expected = [
      { connectionId: 'c1', peer: 'a', sessions: [{ sessionId, role: 'controller', delivered: last, state: 'live' }] },
      { connectionId: 'c2', peer: 'b', sessions: [{ sessionId, role: 'observer', delivered: stop, state: 'live' }] },
      { connectionId: 'c3', peer: 'c', sessions: [] },
    ];
    expect(host.hub().connections()).to.deep.equal(expected);
    expect(hubSnapshot?.context).to.include({ connections: 3, sessions: 1 });
    expect(hubSnapshot?.context.clients).to.deep.equal(expected);
    // Read once, a snapshot keeps what it showed; a later one shows the change (b took control).
    await b.request('_acp-warden/take_control', { sessionId });
    const [first, second] = (hubSnapshot?.context.clients as typeof expected).slice(0, 2).map((client) => client.sessions[0]?.role);
    expect([first, second]).to.deep.equal(['observer', 'controller']);
  });

  it('a connection that did not attach a session may not prompt it, nor take control of it; it may close it with _acp-warden/close_session', async () => {
    open();
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const b = await client('b');
    // Its server knows no such session on this connection.
    expect((await errorOf(b.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'x' }] }))).code).to.equal(-32002);
    expect((await errorOf(b.request('_acp-warden/take_control', { sessionId }))).data).to.include({ reason: 'not_attached' });
    const c = await client('c');
    await c.request('session/resume', { sessionId, cwd: dir });
    expect((await errorOf(c.request('_acp-warden/close_session', { sessionId }))).data).to.include({ reason: 'not_controller' });
    expect(await b.request('_acp-warden/close_session', { sessionId })).to.deep.equal({});
    expect((host.journal as Journal).getSession(sessionId)?.state).to.equal('closed');
    expect((await host.hub().sessions()).find((s) => s.sessionId === sessionId)?.clients).to.deep.equal([]);
  });

  it('unattended wait: a permission asked while no controller is attached goes to the next controller', async () => {
    open({ unattended: { policy: 'wait', timeoutMs: 60_000 } });
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const running = a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run the tool' }] }).catch(() => undefined);
    await a.until(() => a.clientRequests.length > 0, 'the permission request on a');
    a.close();
    void running;
    const b = await client('b');
    await b.request('session/resume', { sessionId, cwd: dir, _meta: { 'acp-warden/after': 0 } });
    await b.until(() => b.clientRequests.some((r) => r.method === 'session/request_permission'), 'the permission request re-sent to b');
    const ask = b.clientRequests.find((r) => r.method === 'session/request_permission') as { id: string | number; params: { options: Array<{ optionId: string; kind: string }> } };
    b.answerClient(ask.id, { outcome: { outcome: 'selected', optionId: ask.params.options.find((o) => o.kind === 'allow_once')?.optionId } });
    await b.until(() => b.updates.some((u) => turnEnded(u.update)), 'the turn end on b');
    const text = b.updates.filter((u) => u.update.sessionUpdate === 'tool_call_update').map((u) => JSON.stringify(u.update)).join('');
    expect(text).to.contain('hello from the tool');
  });

  it('unattended deny: a permission asked while no controller is attached is rejected at once', async () => {
    open({ unattended: { policy: 'deny', timeoutMs: 60_000 } });
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    a.close();
    // Nobody attached: the hub's own way in is a second client that attaches, prompts, and leaves before the permission.
    const b = await client('b');
    await b.request('session/resume', { sessionId, cwd: dir });
    void b.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run the tool' }] }).catch(() => undefined);
    await b.until(() => b.clientRequests.length > 0, 'the permission request on b');
    b.close();
    const entries = () => (host.journal as Journal).entries(sessionId);
    await b.until(() => entries().some((record) => record.entry.kind === 'stop'), 'the turn to end');
    const permission = entries().find((record) => record.entry.kind === 'permission');
    expect(JSON.stringify(permission?.entry)).to.match(/reject/);
  });

  it('unattended wait past its timeout: a permission asked while no controller is attached is denied (its reject option), and the turn ends', async () => {
    open({ unattended: { policy: 'wait', timeoutMs: 300 } });
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    void a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'run the tool' }] }).catch(() => undefined);
    await a.until(() => a.clientRequests.length > 0, 'the permission request on a');
    a.close();
    // Nobody attaches again: the wait runs out and the permission is answered for the user.
    const entries = () => (host.journal as Journal).entries(sessionId);
    await a.until(() => entries().some((record) => record.entry.kind === 'stop'), 'the turn to end without a controller');
    const permission = entries().find((record) => record.entry.kind === 'permission');
    expect(JSON.stringify(permission?.entry)).to.match(/reject/);
    expect(JSON.stringify(permission?.entry)).not.to.match(/allow/);
    expect(entries().filter((record) => record.entry.kind === 'permission')).to.have.length(1);
  });

  it('a controller and two observers: both observers get every update the controller gets, in the same order; handover goes to the longest-attached observer, then on to the other', async () => {
    open();
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const b = await client('b');
    await b.request('session/resume', { sessionId, cwd: dir });
    const c = await client('c');
    await c.request('session/resume', { sessionId, cwd: dir });
    const roles = async () => Object.fromEntries(((await host.hub().sessions()).find((listed) => listed.sessionId === sessionId)?.clients ?? []).map((listed) => [listed.peer, listed.role]));
    expect(await roles()).to.deep.equal({ a: 'controller', b: 'observer', c: 'observer' });
    const chunks = (of: HubClient) => of.updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === 'agent_message_chunk').map((u) => u.seq);
    await a.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'tell me about three clients' }] });
    await b.until(() => b.updates.some((u) => turnEnded(u.update)), 'the turn end on b');
    await c.until(() => c.updates.some((u) => turnEnded(u.update)), 'the turn end on c');
    expect(chunks(a)).to.have.length.above(2);
    expect(chunks(b)).to.deep.equal(chunks(a));
    expect(chunks(c)).to.deep.equal(chunks(a));
    // Observers may not prompt; the controller leaving hands over to b (attached first), c stays an observer.
    expect(((await errorOf(c.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'mine' }] }))).data as { reason: string }).reason).to.equal('not_controller');
    a.close();
    await b.until(async () => (await roles()).b === 'controller', 'b in control');
    expect(await roles()).to.deep.equal({ b: 'controller', c: 'observer' });
    b.close();
    await c.until(async () => (await roles()).c === 'controller', 'c in control');
    await c.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'now mine' }] });
    expect((host.journal as Journal).entries(sessionId).filter((record) => record.entry.kind === 'prompt')).to.have.length(2);
  });

  it('a session without any connection for the idle timeout is closed on its agent and restored on the next attach', async () => {
    open({ idleTimeoutMs: 200 });
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    a.close();
    await a.until(async () => (await host.hub().sessions()).find((s) => s.sessionId === sessionId)?.state === 'stored' || !host.tree().children.some((child) => child.id === `session:${sessionId}`), 'the idle session closed');
    const b = await client('b');
    await b.request('session/resume', { sessionId, cwd: dir });
    const result = (await b.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'back' }] })) as { stopReason: string };
    expect(result.stopReason).to.equal('end_turn');
  });

  it('_acp-warden/sessions lists the sessions with agent, state, clients and last activity', async () => {
    open();
    const a = await client('a');
    const { sessionId } = (await a.request('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
    const listed = (await a.request('_acp-warden/sessions', {})) as { sessions: Array<{ sessionId: string; agent: string; clients: Array<{ role: string; peer: string }>; lastActivity: string }> };
    const mine = listed.sessions.find((s) => s.sessionId === sessionId);
    expect(mine?.agent).to.equal('demo');
    expect(mine?.clients).to.have.length(1);
    expect(mine?.clients[0]).to.include({ role: 'controller', peer: 'a' });
    expect(Date.parse(mine?.lastActivity ?? '')).to.be.a('number').and.not.NaN;
  });
});
