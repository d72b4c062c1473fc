/**
 * Host benchmarks: what the journal and the host agent cost, against baselines measured in
 * the same process, cases interleaved round by round. Prints figures; asserts nothing about
 * speed (it checks that each case did what it claims).
 *
 * 1. journal append: one `session/update` entry appended to the SQLite journal (a file in
 *    WAL mode, the default durability; and `:memory:`), against `JSON.stringify` of the same
 *    entry (what any journal must at least do);
 * 2. a prompt through the host: a prompt to the in-process demo agent (no delay between its
 *    words: 13 updates and an answer) through the host agent with a file journal, against the
 *    same prompt served by the agent server with the demo agent directly (no host, no journal).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor } from 'xstate';
import { agentClientLogic, initialize, newSession, prompt } from '../src/acp/agent-client.js';
import { agentServerLogic } from '../src/acp/agent-server.js';
import { demoAgent } from '../src/acp/demo-agent.js';
import type { NativeAgent } from '../src/protocol/native-agent.js';
import { createHostAgent } from '../src/host/host-agent.js';
import type { Journal, JournalEntry } from '../src/journal/journal.js';
import { sqliteJournal } from '../src/journal/sqlite-journal.js';
import { createMemoryTransportPair } from '../src/jsonrpc/memory-transport.js';
import { check, formatRatio, formatStats, measureInterleaved, now, since, table, withDeadline } from './support/measure.js';

const update: JournalEntry = {
  kind: 'update',
  update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'a chunk of an answer, about as long as a streamed delta usually is. ' } },
};

export async function journalAppend(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-'));
  const onDisk = sqliteJournal(join(dir, 'journal.sqlite'));
  const inMemory = sqliteJournal(':memory:');
  onDisk.createSession({ sessionId: 's', agent: 'bench', cwd: '/' });
  inMemory.createSession({ sessionId: 's', agent: 'bench', cwd: '/' });
  const batch = 2000;
  let sink = 0;
  const appends = (journal: Journal) => () => {
    const start = now();
    for (let index = 0; index < batch; index++) journal.append('s', update);
    return since(start) / batch;
  };
  try {
    const stats = await measureInterleaved({ warmup: 2, repetitions: 9 }, {
      stringify: () => {
        const start = now();
        for (let index = 0; index < batch; index++) sink += JSON.stringify(update).length;
        return since(start) / batch;
      },
      memory: appends(inMemory),
      file: appends(onDisk),
    });
    check(sink > 0 && onDisk.entries('s').length === batch * 11, 'every append landed');
    console.log('\n## journal: appending one session/update entry');
    console.log(table(['case', 'per append', 'vs JSON.stringify'], [
      ['JSON.stringify of the entry (baseline)', formatStats(stats.stringify), '1×'],
      ['sqliteJournal(":memory:").append', formatStats(stats.memory), formatRatio(stats.memory.median / stats.stringify.median)],
      ['sqliteJournal(file, WAL).append', formatStats(stats.file), formatRatio(stats.file.median / stats.stringify.median)],
    ]));
  } finally {
    onDisk.close();
    inMemory.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function promptThroughHost(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-'));
  const journal = sqliteJournal(join(dir, 'journal.sqlite'));
  const direct = demoAgent({ wordDelayMs: 0 });
  const hosted = createHostAgent({ defaultAgent: 'demo', resolve: () => demoAgent({ wordDelayMs: 0 }), journal });
  const open = async (agent: NativeAgent) => {
    const [editorSide, agentSide] = createMemoryTransportPair();
    const server = createActor(agentServerLogic, { input: { transport: agentSide, agent } }).start();
    const client = createActor(agentClientLogic, { input: { transport: editorSide } }).start();
    await initialize(client);
    const { sessionId } = await newSession(client, { cwd: dir });
    return { server, client, sessionId };
  };
  const plain = await open(direct);
  const withHost = await open(hosted);
  const prompts = 20;
  const run = (side: Awaited<ReturnType<typeof open>>) => async () => {
    const start = now();
    for (let index = 0; index < prompts; index++) {
      const handle = prompt(side.client, side.sessionId, [{ type: 'text', text: 'hello' }]);
      let updates = 0;
      for await (const _ of handle.updates) updates++;
      const result = await withDeadline(handle.result, 'a prompt');
      check(result.stopReason === 'end_turn' && updates >= 10, 'the prompt streamed and ended');
    }
    return since(start) / prompts;
  };
  try {
    const stats = await measureInterleaved({ warmup: 2, repetitions: 9 }, { direct: run(plain), host: run(withHost) });
    const journaled = journal.entries(withHost.sessionId).length;
    check(journaled > prompts * 11 * 10, 'the host journaled every update');
    console.log('\n## a prompt (13 streamed words and the answer) to the in-process demo agent');
    console.log(table(['case', 'per prompt', 'vs direct'], [
      ['agent server + demo agent (baseline)', formatStats(stats.direct), '1×'],
      ['agent server + host agent (file journal) + demo agent', formatStats(stats.host), formatRatio(stats.host.median / stats.direct.median)],
    ]));
    console.log(`journal entries written by the host case: ${journaled}`);
  } finally {
    for (const side of [plain, withHost]) {
      side.client.stop();
      side.server.stop();
    }
    journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
