/**
 * Idempotent retries over ACP v2 (issue 30): the SDK 2.4.0 v2 client as the editor of a real
 * `warden acp --agent acp:<spec/support/v2-agent.mjs> --agent-protocol v2`. A retry of a key
 * whose turn runs joins it: acknowledged at once with the original's messageId (the turn still
 * running, nothing inserted again), the turn's end shown once. A retry of a turn that ended in
 * error gets that error record. A `$/cancel_request` of a retry that joined a queued keyed prompt
 * ends the retry alone (-32800); the prompt it joined is inserted and runs. A repeated
 * `initialize` as the SDK's router allows it: for 2 or later, before any other request. Each turn is held open by the agent (`slow` until session/cancel,
 * `tool` until the editor answers its permission), never by timing. Nothing left running.
 */
import { client, ndJsonStream, type ActiveSession } from '@agentclientprotocol/sdk/experimental/v2';
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '../support/processes.js';
import { exitCodeOf, killGroups, stderrOf } from '../support/warden-process.js';
import { spawnWardenByName } from '../support/warden-by-name.js';

const v2Agent = fileURLToPath(new URL('../support/v2-agent.mjs', import.meta.url));

interface Notified {
  readonly sessionId: string;
  readonly update: { readonly sessionUpdate: string; readonly messageId?: string; readonly state?: string; readonly stopReason?: string; readonly error?: unknown };
}

describe('ACP v2 editor: idempotent retries, a cancelled retry, a repeated initialize (warden acp, a v2 agent)', function () {
  this.timeout(60_000);
  const launched: ChildProcess[] = [];
  const updates: Notified[] = [];
  /** Permission requests waiting on the test: each resolves with allow when released. */
  const permissions: Array<() => void> = [];
  let dir: string;
  let stderr: () => string;
  let agent: ReturnType<ReturnType<typeof client>['connect']>['agent'];

  before(async () => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-v2-retry-')));
    const child = spawnWardenByName(['acp', '--agent', `acp:${process.execPath} ${v2Agent}`, '--agent-protocol', 'v2', '--store', join(dir, 'journal.sqlite')], dir, launched);
    stderr = stderrOf(child);
    void exitCodeOf(child);
    const app = client({ name: 'v2-retry-spec' })
      .onNotification('session/update', ({ params }) => {
        updates.push(params as unknown as Notified);
      })
      .onRequest('session/request_permission', () => new Promise((resolve) => permissions.push(() => resolve({ outcome: { outcome: 'selected' as const, optionId: 'allow' } }))));
    agent = app.connect(ndJsonStream(Writable.toWeb(child.stdin as Writable), Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>)).agent;
    expect((await agent.request('initialize', { protocolVersion: 2, info: { name: 'v2-retry-spec', version: '1' }, capabilities: {} })).protocolVersion).to.equal(2);
  });

  after(async () => {
    await killGroups(launched, { descendants: true });
    rmSync(dir, { recursive: true, force: true });
  });

  const session = (): Promise<ActiveSession> => agent.buildSession(dir).start();
  const ofSession = (sessionId: string) => updates.filter((entry) => entry.sessionId === sessionId).map((entry) => entry.update);
  const statesOf = (sessionId: string) => ofSession(sessionId).filter((update) => update.sessionUpdate === 'state_update').map((update) => (update.stopReason ? `${update.state}:${update.stopReason}` : update.state));
  const keyed = (sessionId: string, text: string, idempotencyKey: string, options?: { cancellationSignal: AbortSignal }) =>
    agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }], idempotencyKey } as never, options as never) as Promise<{ messageId: string }>;
  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: { code: number; message: string; data?: unknown }) => error);

  it('a retry of a key whose turn runs joins it: acknowledged at once with the same messageId, nothing inserted again, the turn ends once', async () => {
    const { sessionId } = await session();
    const first = await keyed(sessionId, 'slow', 'running-key');
    await waitUntil(() => statesOf(sessionId).includes('running'), 'the turn to run');
    const retry = await keyed(sessionId, 'slow', 'running-key');
    expect(retry.messageId).to.equal(first.messageId);
    // Acknowledged while the turn still runs (the agent holds it until session/cancel).
    expect(statesOf(sessionId)).to.deep.equal(['running']);
    await agent.notify('session/cancel', { sessionId });
    await waitUntil(() => statesOf(sessionId).includes('idle:cancelled'), `the turn's end (${stderr()})`);
    expect(statesOf(sessionId)).to.deep.equal(['running', 'idle:cancelled']);
    expect(ofSession(sessionId).filter((update) => update.sessionUpdate === 'user_message').map((update) => update.messageId)).to.deep.equal([first.messageId]);
  });

  it('a retry of a turn that ended in error gets the same error record its idle carried', async () => {
    const { sessionId } = await session();
    await keyed(sessionId, 'fail', 'failing-key');
    await waitUntil(() => statesOf(sessionId).includes('idle:error'), 'the error end');
    const idle = ofSession(sessionId).find((update) => update.state === 'idle');
    const retried = await failure(keyed(sessionId, 'fail', 'failing-key'));
    expect(retried).to.not.equal(undefined);
    expect({ code: retried?.code, message: retried?.message, data: retried?.data }).to.deep.equal(idle?.error);
    expect(retried?.code).to.equal(-32050);
    expect(ofSession(sessionId).filter((update) => update.sessionUpdate === 'user_message')).to.have.length(1);
  });

  it('$/cancel_request of a retry that joined a queued keyed prompt: the retry alone ends -32800; the prompt it joined is inserted and runs, and a retry left alone is acknowledged with its messageId at that insertion', async () => {
    const { sessionId } = await session();
    await agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'tool' }] });
    await waitUntil(() => permissions.length === 1, 'the first turn to ask its permission');
    // Queued behind the held turn: not inserted yet, so the original and its retry both wait.
    const original = keyed(sessionId, 'hello', 'queued-key');
    const abort = new AbortController();
    const retry = failure(keyed(sessionId, 'hello', 'queued-key', { cancellationSignal: abort.signal }));
    // Another retry, left alone: acknowledged with the original's messageId once it is inserted.
    const kept = keyed(sessionId, 'hello', 'queued-key');
    abort.abort();
    expect((await retry)?.code).to.equal(-32800);
    permissions.shift()?.();
    const acknowledged = await original;
    expect((await kept).messageId).to.equal(acknowledged.messageId);
    await waitUntil(() => statesOf(sessionId).filter((state) => state === 'idle:end_turn').length === 2, `both turns to end (${stderr()})`);
    const users = ofSession(sessionId).filter((update) => update.sessionUpdate === 'user_message').map((update) => update.messageId);
    expect(users).to.have.length(2);
    expect(users[1]).to.equal(acknowledged.messageId);
    expect(statesOf(sessionId)).to.deep.equal(['running', 'requires_action', 'running', 'idle:end_turn', 'running', 'idle:end_turn']);
  });

  it('a repeated initialize, as the SDK router rules (raw lines; the SDK client itself refuses to send the later ones): for 2 before any other request, answered again; for 1, -32600; after another request, -32600, the first one still in effect', async () => {
    const child = spawnWardenByName(['acp', '--agent', `acp:${process.execPath} ${v2Agent}`, '--agent-protocol', 'v2', '--store', join(dir, 'raw.sqlite')], dir, launched);
    const lines = createInterface({ input: child.stdout as Readable })[Symbol.asyncIterator]();
    let id = 0;
    const ask = async (method: string, params: unknown) => {
      child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params })}\n`);
      for (;;) {
        const message = JSON.parse((await lines.next()).value as string) as { id?: number; result?: Record<string, unknown>; error?: { code: number; message: string } };
        if (message.id === id) return message;
      }
    };
    const init = (version: number) => ask('initialize', { protocolVersion: version, info: { name: 'raw', version: String(version) }, capabilities: {} });
    expect((await init(2)).result?.protocolVersion).to.equal(2);
    expect((await init(2)).result?.protocolVersion).to.equal(2);
    const lower = await init(1);
    expect(lower.error?.code).to.equal(-32600);
    expect(lower.error?.message).to.include('a repeated initialize must request protocol version 2 or later');
    const opened = await ask('session/new', { cwd: dir });
    expect(opened.result?.sessionId).to.be.a('string');
    const late = await init(2);
    expect(late.error?.code).to.equal(-32600);
    expect(late.error?.message).to.include('must not be repeated after other requests');
    // The first initialize is still in effect: the session serves a turn.
    const prompt = await ask('session/prompt', { sessionId: opened.result?.sessionId, prompt: [{ type: 'text', text: 'hello' }] });
    expect(prompt.result?.messageId).to.match(/^user-\d+$/u);
    child.stdin?.end();
  });
});
