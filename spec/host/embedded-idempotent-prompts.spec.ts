/**
 * Idempotent prompts through the embedding API (issue 30): `session.prompt(content, {
 * idempotencyKey })` of `createHost`, with the demo agent, on a SQLite file store. The journal's
 * prompt entries are the proof of "inserted at most once"; a second host on the same file is the
 * program restarted.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { demoAgent } from '../../src/acp/demo-agent.js';
import type { Journal } from '../../src/journal/journal.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { createHost, type Host, type HostPromptRun } from '../../src/runtime/host.js';

const promptSeqMeta = 'acp-warden/promptSeq';

describe('createHost: prompts with an idempotency key (issue 30)', function () {
  this.timeout(30_000);
  let dir: string;
  let store: string;
  const hosts: Host[] = [];
  const open = () => {
    const host = createHost({ store, agents: { demo: demoAgent({ wordDelayMs: 1 }) } });
    hosts.push(host);
    return host;
  };
  const promptsOf = (host: Host, sessionId: string) => (host.journal as Journal).entries(sessionId).filter((record) => record.entry.kind === 'prompt');
  const drained = async (run: HostPromptRun) => {
    const updates: SessionUpdate[] = [];
    for await (const update of run) updates.push(update);
    return { updates, result: await run.result };
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-embed-key-'));
    store = join(dir, 'journal.sqlite');
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a retry sent before the first ended (it waits its turn, as the program\'s prompts do) and one after: one journaled prompt, one turn, the same result with the prompt entry seq', async () => {
    const host = open();
    const session = await host.newSession({ cwd: dir });
    const first = session.prompt('hello', { idempotencyKey: 'K-1' });
    const during = session.prompt('hello', { idempotencyKey: 'K-1' });
    const [one, two] = await Promise.all([drained(first), drained(during)]);
    const after = await drained(session.prompt('hello', { idempotencyKey: 'K-1' }));
    const prompts = promptsOf(host, session.sessionId);
    expect(prompts).to.have.length(1);
    expect(prompts[0]?.entry).to.deep.include({ idempotencyKey: 'K-1' });
    expect(one.result).to.deep.equal({ stopReason: 'end_turn', _meta: { [promptSeqMeta]: prompts[0]?.seq } });
    expect(two.result).to.deep.equal(one.result);
    expect(after.result).to.deep.equal(one.result);
    // Only the first ran a turn: the retries show no agent output of their own.
    expect(one.updates.some((update) => update.sessionUpdate === 'agent_message_chunk')).to.equal(true);
    expect(two.updates.filter((update) => update.sessionUpdate === 'agent_message_chunk')).to.deep.equal([]);
    expect(after.updates.filter((update) => update.sessionUpdate === 'agent_message_chunk')).to.deep.equal([]);
  });

  it('after the program restarts on the same store: the retry is answered with the journaled outcome, nothing inserted', async () => {
    const before = open();
    const session = await before.newSession({ cwd: dir });
    const original = await drained(session.prompt('hello', { idempotencyKey: 'K-restart' }));
    await before.stop();
    hosts.splice(hosts.indexOf(before), 1);

    const after = open();
    const reopened = await after.openSession(session.sessionId, { how: 'resume' });
    const retry = await drained(reopened.prompt('hello', { idempotencyKey: 'K-restart' }));
    expect(retry.result).to.deep.equal(original.result);
    expect(promptsOf(after, session.sessionId)).to.have.length(1);
    // A prompt without a key is a new prompt, as always.
    await drained(reopened.prompt('hello'));
    expect(promptsOf(after, session.sessionId)).to.have.length(2);
  });

  it('the key reused for other content rejects -32602 idempotency_key_reused; a key that is not 1 to 255 characters rejects -32602; neither is inserted', async () => {
    const host = open();
    const session = await host.newSession({ cwd: dir });
    await drained(session.prompt('hello', { idempotencyKey: 'K-2' }));
    const reused = await session.prompt('something else', { idempotencyKey: 'K-2' }).result.then(() => undefined, (error: unknown) => error);
    expect(reused).to.be.instanceOf(RpcError);
    expect((reused as RpcError).code).to.equal(-32602);
    expect((reused as RpcError).data).to.deep.include({ reason: 'idempotency_key_reused', idempotencyKey: 'K-2' });
    const tooLong = await session.prompt('hello', { idempotencyKey: 'k'.repeat(256) }).result.then(() => undefined, (error: unknown) => error);
    expect((tooLong as RpcError).code).to.equal(-32602);
    expect(promptsOf(host, session.sessionId)).to.have.length(1);
  });
});
