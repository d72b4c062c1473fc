/**
 * Idempotent prompts at the host (issue 30), with the demo agent behind the host agent and a
 * v1 editor sending the key in `_meta["acp-warden/idempotencyKey"]`. The journal is the proof of
 * "inserted once": its prompt entries are counted. A turn is held running by the demo tool's
 * permission request (mode ask) until the test answers it, so no case depends on timing.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { createHostAgent } from '../../src/host/host-agent.js';
import type { Journal } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { errorOf, initialized, type Editor } from '../support/raw-editor.js';
import { waitUntil } from '../support/processes.js';

const keyMeta = 'acp-warden/idempotencyKey';
const keyed = (sessionId: string, text: string, key: unknown) => ({ sessionId, prompt: [{ type: 'text', text }], _meta: { [keyMeta]: key } });
const promptsOf = (journal: Journal, sessionId: string) => journal.entries(sessionId).filter((record) => record.entry.kind === 'prompt');
const endsOf = (journal: Journal, sessionId: string) => journal.entries(sessionId).filter((record) => record.entry.kind === 'stop' || record.entry.kind === 'error');

describe('host: idempotent prompts (issue 30)', function () {
  this.timeout(30_000);
  let dir: string;
  let path: string;
  let journal: Journal;
  let editor: Editor;
  let sessionId: string;
  const open = async () => {
    journal = sqliteJournal(path);
    editor = await initialized(createHostAgent({ defaultAgent: 'demo', resolve: () => demoAgent({ wordDelayMs: 1 }), journal }));
  };
  const close = () => {
    editor.server.stop();
    journal.close();
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warden-idem-'));
    path = join(dir, 'journal.sqlite');
    await open();
    ({ sessionId } = (await editor.request('session/new', { cwd: '/work', mcpServers: [] })) as { sessionId: string });
  });
  afterEach(() => {
    close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a turn held by the tool's permission: `whileRunning` runs while it waits, then the tool is allowed. */
  const heldTurn = async (key: string, whileRunning: () => Promise<void>): Promise<unknown> => {
    const asked = editor.clientRequests.length;
    const first = editor.request('session/prompt', keyed(sessionId, 'tool', key));
    await waitUntil(() => editor.clientRequests.length > asked, 'the tool asking for permission');
    await whileRunning();
    editor.answerClient(editor.clientRequests[asked]!.id, { outcome: { outcome: 'selected', optionId: 'allow' } });
    return first;
  };

  it('the same key three times while its turn runs: one journaled prompt, one turn, all three answered with the same outcome and the prompt entry seq', async () => {
    let retries: Array<Promise<unknown>> = [];
    const first = await heldTurn('K-1', async () => {
      retries = [editor.request('session/prompt', keyed(sessionId, 'tool', 'K-1')), editor.request('session/prompt', keyed(sessionId, 'tool', 'K-1'))];
      // Another prompt under the key while it runs is refused at once; its answer also says the two retries were read.
      const reused = await errorOf(editor.request('session/prompt', keyed(sessionId, 'something else', 'K-1')));
      expect(reused.code).to.equal(-32602);
      expect(reused.data).to.deep.include({ reason: 'idempotency_key_reused', idempotencyKey: 'K-1' });
    });
    const [prompt] = promptsOf(journal, sessionId);
    expect(promptsOf(journal, sessionId)).to.have.length(1);
    expect(prompt?.entry).to.deep.include({ idempotencyKey: 'K-1' }).and.to.have.property('promptDigest').that.matches(/^[0-9a-f]{64}$/u);
    expect(first).to.deep.include({ stopReason: 'end_turn', _meta: { 'acp-warden/promptSeq': prompt?.seq } });
    expect(await Promise.all(retries)).to.deep.equal([first, first]);
    expect(endsOf(journal, sessionId)).to.have.length(1);
    expect(editor.clientRequests.filter((request) => request.method === 'session/request_permission')).to.have.length(1);
  });

  it('the same key after its turn ended: answered at once with the journaled outcome, nothing inserted; another prompt under it is refused -32602 naming the key', async () => {
    const first = await heldTurn('K-2', async () => undefined);
    const last = journal.lastSeq!(sessionId);
    const again = await editor.request('session/prompt', keyed(sessionId, 'tool', 'K-2'));
    expect(again).to.deep.equal({ stopReason: 'end_turn', _meta: { 'acp-warden/promptSeq': promptsOf(journal, sessionId)[0]?.seq } });
    expect(again).to.deep.equal(first);
    const reused = await errorOf(editor.request('session/prompt', keyed(sessionId, 'tool, but another', 'K-2')));
    expect(reused.code).to.equal(-32602);
    expect(reused.message).to.include('"K-2"');
    expect(reused.data).to.deep.equal({ reason: 'idempotency_key_reused', idempotencyKey: 'K-2', promptSeq: promptsOf(journal, sessionId)[0]?.seq });
    expect(journal.lastSeq!(sessionId)).to.equal(last);
  });

  it('after a restart of the host (the journal persists): the key is found in the journal, answered at once, nothing inserted', async () => {
    const first = await heldTurn('K-3', async () => undefined);
    close();
    await open();
    await editor.request('session/load', { sessionId, cwd: '/work', mcpServers: [] });
    const last = journal.lastSeq!(sessionId);
    expect(await editor.request('session/prompt', keyed(sessionId, 'tool', 'K-3'))).to.deep.equal(first);
    expect(journal.lastSeq!(sessionId)).to.equal(last);
    expect(promptsOf(journal, sessionId)).to.have.length(1);
  });

  it('a key that is empty, longer than 255 characters, holds U+0000 or is not a string is refused -32602, nothing inserted; 255 characters are taken', async () => {
    for (const key of ['', 'k'.repeat(256), 'a\u0000b', 7]) {
      const refused = await errorOf(editor.request('session/prompt', keyed(sessionId, 'hello', key)));
      expect(refused.code, JSON.stringify(key)).to.equal(-32602);
      expect(refused.data).to.deep.equal({ idempotencyKey: key });
    }
    expect(promptsOf(journal, sessionId)).to.have.length(0);
    expect(await editor.request('session/prompt', keyed(sessionId, 'hello', 'k'.repeat(255)))).to.deep.include({ stopReason: 'end_turn' });
    expect(promptsOf(journal, sessionId)).to.have.length(1);
  });

  it('without a key, as before: the same prompt twice is two prompts, two turns, and its answer has no promptSeq', async () => {
    const params = { sessionId, prompt: [{ type: 'text', text: 'hello' }] };
    expect(await editor.request('session/prompt', params)).to.deep.equal({ stopReason: 'end_turn' });
    expect(await editor.request('session/prompt', params)).to.deep.equal({ stopReason: 'end_turn' });
    // Nothing but the prompt and its request's key: no idempotency key, no digest.
    const entries = promptsOf(journal, sessionId).map((record) => record.entry as { requestId?: string });
    expect(entries.map(({ requestId, ...entry }) => ({ ...entry, hasRequestId: typeof requestId === 'string' }))).to.deep.equal([
      { kind: 'prompt', prompt: params.prompt, hasRequestId: true },
      { kind: 'prompt', prompt: params.prompt, hasRequestId: true },
    ]);
    expect(endsOf(journal, sessionId)).to.have.length(2);
  });
});
