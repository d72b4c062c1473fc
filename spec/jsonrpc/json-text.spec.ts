/**
 * JSON text made once (issue 28, defect 7): a journaled update's text, made by the host, is
 * spliced into its journal entry and into the editor's line instead of serializing the update
 * twice more. What a reader gets must be `JSON.stringify`'s text byte for byte, whatever the
 * values (escapes, -0, NaN, undefined members, toJSON), and a text must never outlive its value:
 * a copy whose member was replaced is serialized afresh. Randomized over seeded values (the seed
 * is printed on failure); then the whole path, a real agent process through the host and its
 * SQLite journal file to the editor's stdio lines: in-process, and as an editor runs it
 * (`warden acp` by name, HOME its own, the default journal file, a reader that lags).
 */
import { expect } from 'chai';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createAcpPassthrough } from '../../src/adapters/acp-passthrough.js';
import { messageText, memberTextOf, withMemberText } from '../../src/jsonrpc/json-text.js';
import { stdioTransport } from '../../src/jsonrpc/stdio-transport.js';
import { entryText } from '../../src/journal/entry-text.js';
import type { JournalEntry } from '../../src/journal/journal.js';
import { seededRandom } from '../../src/journal/seeded-random.js';
import { createHost } from '../../src/runtime/host.js';
import { openSession, PipeEditor, pipeEditorWorld } from '../support/pipe-editor.js';

/** A random JSON-ish value: what agents send, and what JSON.stringify treats specially. */
function valueOf(random: () => number, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 0 ? 14 : 10));
  const strings = ['', 'plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'ünïcødé ✓ 🚀', '\u0000\u001f control', '\ud800 lone surrogate', 'session/update'];
  switch (pick) {
    case 0: return strings[Math.floor(random() * strings.length)];
    case 1: return Math.floor(random() * 1e6) - 5e5;
    case 2: return random() * 1e-3;
    case 3: return [-0, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 5e-324][Math.floor(random() * 5)];
    case 4: return random() < 0.5;
    case 5: return null;
    case 6: return undefined;
    case 7: return () => 'a function';
    case 8: return new Date(Math.floor(random() * 1e12));
    case 9: return `id-${Math.floor(random() * 100)}`;
    case 10:
    case 11: return objectOf(random, depth - 1);
    case 12: return Array.from({ length: Math.floor(random() * 4) }, () => valueOf(random, depth - 1));
    default: return { toJSON: () => ({ replaced: true }) };
  }
}

function objectOf(random: () => number, depth: number): Record<string, unknown> {
  const keys = ['sessionId', 'update', '_meta', 'a"b', '0', '10', 'é', 'content', 'x'];
  const object: Record<string, unknown> = {};
  for (let n = Math.floor(random() * 5); n > 0; n--) object[keys[Math.floor(random() * keys.length)] as string] = valueOf(random, depth);
  return object;
}

/** A message as the connection builds it, its params carrying its `update`'s text. */
function messageOf(random: () => number): { message: Record<string, unknown>; params: Record<string, unknown> } {
  const update = objectOf(random, 3);
  const params: Record<string, unknown> = { sessionId: valueOf(random, 0), update, ...objectOf(random, 2) };
  params.update = update;
  withMemberText(params, 'update', JSON.stringify(update));
  return { message: { jsonrpc: '2.0', method: 'session/update', params }, params };
}

describe('json-text: a text made once, spliced', () => {
  const seed = Number(process.env.JSON_TEXT_SEED ?? Date.now() % 1e9);

  it(`writes JSON.stringify's text byte for byte, with and without carried texts (2,000 random messages, seed ${seed})`, () => {
    const random = seededRandom(seed);
    for (let run = 0; run < 2_000; run++) {
      const { message } = messageOf(random);
      expect(messageText(message), `seed ${seed}, run ${run}`).to.equal(JSON.stringify(message));
      const plain = objectOf(random, 3);
      expect(messageText(plain), `seed ${seed}, run ${run} (nothing carried)`).to.equal(JSON.stringify(plain));
    }
  });

  it('splices the carried text in (the member is not serialized again)', () => {
    const update = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } };
    const params = withMemberText({ sessionId: 's', update, _meta: { 'acp-warden/seq': 7 } }, 'update', '{"spliced":true}');
    expect(messageText({ jsonrpc: '2.0', method: 'session/update', params })).to.equal('{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"spliced":true},"_meta":{"acp-warden/seq":7}}}');
    expect(messageText(params, 1)).to.equal('{"sessionId":"s","update":{"spliced":true},"_meta":{"acp-warden/seq":7}}');
  });

  it('never uses a text once its member was replaced, in the object or in a copy of it', () => {
    const update = { sessionUpdate: 'agent_message_chunk' };
    const params = withMemberText({ sessionId: 's', update }, 'update', '{"stale":true}');
    const copy = { ...params, update: { sessionUpdate: 'notice' } }; // a spread copies the symbol-keyed text too
    expect(memberTextOf(copy, 'update')).to.equal(undefined);
    expect(messageText({ params: copy })).to.equal(JSON.stringify({ params: copy }));
    params.update = { sessionUpdate: 'plan' };
    expect(messageText({ params })).to.equal(JSON.stringify({ params }));
  });

  it('is invisible to JSON.stringify and to readers of the object', () => {
    const params = withMemberText({ sessionId: 's', update: { a: 1 } }, 'update', '{"a":1}');
    expect(Object.keys(params)).to.deep.equal(['sessionId', 'update']);
    expect(JSON.stringify(params)).to.equal('{"sessionId":"s","update":{"a":1}}');
    expect(memberTextOf(params, 'update')).to.equal('{"a":1}');
    expect(memberTextOf(params, 'sessionId')).to.equal(undefined);
  });

  it('leaves a text carried deeper than asked unused (JSON.stringify writes that level)', () => {
    const inner = withMemberText({ update: { a: 1 } }, 'update', '{"spliced":true}');
    expect(messageText({ outer: { inner } }, 2)).to.equal('{"outer":{"inner":{"update":{"a":1}}}}');
    expect(messageText({ outer: { inner } }, 3)).to.equal('{"outer":{"inner":{"update":{"spliced":true}}}}');
  });

  it("writes an update entry as JSON.stringify would, the update's text spliced", () => {
    const update = { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a "quoted" word' } } as never;
    const entry = withMemberText({ kind: 'update' as const, update }, 'update', JSON.stringify(update)) as JournalEntry;
    expect(entryText(entry)).to.equal(JSON.stringify(entry));
    const prompt: JournalEntry = { kind: 'prompt', prompt: [{ type: 'text', text: 'x' }], requestId: 'r1' } as JournalEntry;
    expect(entryText(prompt)).to.equal(JSON.stringify(prompt));
  });
});

describe('json-text on the relay path: a real agent through the host and its SQLite file to the editor', function () {
  this.timeout(60_000);
  const streamAgent = fileURLToPath(new URL('../support/stream-agent.mjs', import.meta.url));

  it("the editor's lines and the journal's rows are JSON.stringify's text of what they hold, each update once, in seq order", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-json-text-'));
    const store = join(dir, 'journal.sqlite');
    const lines: string[] = [];
    let pending = '';
    const waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
    const input = new PassThrough();
    const output = new Writable({
      decodeStrings: false,
      write(chunk: string | Buffer, _encoding, done) {
        pending += chunk.toString();
        for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          lines.push(line);
          const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown };
          if (typeof message.id === 'number') waiting.get(message.id)?.(message);
        }
        done();
      },
    });
    // 300 updates of about 400 bytes: written by the agent faster than one event-loop turn, so several groups.
    const host = createHost({ agents: { stream: createAcpPassthrough({ name: 'stream', executable: process.execPath, args: [streamAgent, '300', '400'] }) }, defaultAgent: 'stream', store });
    host.serve(stdioTransport(input, output));
    let nextId = 1;
    const call = (method: string, params: unknown) =>
      new Promise<unknown>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, (message) => (message.error ? reject(new Error(JSON.stringify(message.error))) : resolve(message.result)));
        input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      });
    try {
      await call('initialize', { protocolVersion: 1, clientCapabilities: {} });
      const { sessionId } = (await call('session/new', { cwd: dir, mcpServers: [] })) as { sessionId: string };
      const answer = (await call('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'say "a lot"' }] })) as { stopReason: string };
      expect(answer.stopReason).to.equal('end_turn');
      const updates = lines.filter((line) => line.includes('"session/update"') && line.includes('agent_message_chunk'));
      expect(updates).to.have.length(300);
      const seqs: number[] = [];
      updates.forEach((line, index) => {
        const message = JSON.parse(line) as { params: { update: { content: { text: string } }; _meta: Record<string, number> } };
        expect(line, `update ${index}`).to.equal(JSON.stringify(message));
        expect(message.params.update.content.text.startsWith(`#${index} `), `update ${index} in order`).to.equal(true);
        seqs.push(message.params._meta['acp-warden/seq'] as number);
      });
      expect(seqs.every((seq, index) => index === 0 || seq > (seqs[index - 1] as number)), 'seqs ascending').to.equal(true);
      await host.stop();
      const db = new Database(store, { readonly: true });
      try {
        const rows = db.prepare(`SELECT seq, entry FROM entries WHERE seq >= ? AND seq <= ? ORDER BY seq`).all(seqs[0], seqs[seqs.length - 1]) as Array<{ seq: number; entry: string }>;
        expect(rows.map((row) => row.seq)).to.deep.equal(seqs);
        rows.forEach((row, index) => {
          const entry = JSON.parse(row.entry) as { kind: string; update: unknown };
          expect(row.entry, `row ${row.seq}`).to.equal(JSON.stringify(entry));
          expect(entry.kind).to.equal('update');
          expect(entry.update).to.deep.equal((JSON.parse(updates[index] as string) as { params: { update: unknown } }).params.update);
        });
      } finally {
        db.close();
      }
    } finally {
      await host.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('json-text as an editor runs warden: `warden acp` by name, its default journal, a reader that lags', function () {
  this.timeout(60_000);
  const streamAgent = fileURLToPath(new URL('../support/stream-agent.mjs', import.meta.url));
  const world = pipeEditorWorld('warden-json-text-user-', { 'stream-agent': streamAgent });

  it("every update line is JSON.stringify's text of what it holds, once, in order, and equals the journal's row", async () => {
    const lines: string[] = [];
    // The agent as a user configures it (by name on PATH); warden's journal where it puts it by default: under HOME.
    const editor = (world.editor = PipeEditor.launch({ args: ['--agent', 'acp:stream-agent 300 400'], binDir: world.bin.dir, env: { HOME: world.dir, XDG_STATE_HOME: '' }, onLine: (line) => lines.push(line) }));
    const sessionId = await openSession(editor, world.dir);
    const prompt = editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'say a lot' }] });
    // An editor busy elsewhere: the pipe fills (300 lines of about 450 bytes) and warden waits for it.
    editor.pauseReading();
    await new Promise((resolve) => setTimeout(resolve, 500));
    editor.resumeReading();
    const answer = await prompt;
    expect(answer.result?.stopReason, editor.stderr).to.equal('end_turn');
    const updates = lines.filter((line) => line.includes('"session/update"') && line.includes('agent_message_chunk'));
    expect(updates).to.have.length(300);
    const seqs = updates.map((line, index) => {
      const message = JSON.parse(line) as { params: { update: { content: { text: string } }; _meta: Record<string, number> } };
      expect(line, `update ${index}`).to.equal(JSON.stringify(message));
      expect(message.params.update.content.text.startsWith(`#${index} `), `update ${index} in order`).to.equal(true);
      return message.params._meta['acp-warden/seq'] as number;
    });
    await editor.close();
    world.editor = undefined;
    const db = new Database(join(world.dir, '.local', 'state', 'acp-warden', 'journal.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare('SELECT seq, entry FROM entries WHERE seq >= ? AND seq <= ? ORDER BY seq').all(seqs[0], seqs[seqs.length - 1]) as Array<{ seq: number; entry: string }>;
      expect(rows.map((row) => row.seq)).to.deep.equal(seqs);
      rows.forEach((row, index) => {
        expect(row.entry, `row ${row.seq}`).to.equal(JSON.stringify(JSON.parse(row.entry)));
        expect(row.entry).to.equal(`{"kind":"update","update":${JSON.stringify((JSON.parse(updates[index] as string) as { params: { update: unknown } }).params.update)}}`);
      });
    } finally {
      db.close();
    }
  });
});
