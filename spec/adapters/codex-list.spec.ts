/**
 * Codex's `thread/list` behind ACP `session/list`: the mapping (pure functions, checked
 * against the recorded transcript spec/fixtures/codex-app-server-thread-list.ndjson of the
 * real Codex 0.171.0), the fake app-server answering the recorded requests as the real one
 * did, and the adapter agent served bare (no host): list, then resume a listed thread by its
 * id.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, type AnyActorRef } from 'xstate';
import { agentClientLogic, initialize, listSessions, prompt, resumeSession } from '../../src/acp/agent-client.js';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { RESUME_META_KEY } from '../../src/protocol/native-agent.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { codexAdapter } from '../../src/adapters/codex/adapter.js';
import { sessionInfoOfThread, sessionListOf, threadListParams } from '../../src/adapters/codex/mapping.js';
import { isUuid } from '../../src/adapters/resume-check.js';
import { createMemoryTransportPair } from '../../src/jsonrpc/memory-transport.js';
import { RpcError } from '../../src/jsonrpc/rpc-error.js';
import { isAlive, waitUntil } from '../support/processes.js';

const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/codex-app-server-thread-list.ndjson', import.meta.url));

interface Entry {
  dir: 'send' | 'recv';
  msg: { id?: number; method?: string; params?: Record<string, unknown>; result?: { data?: Array<Record<string, unknown>>; nextCursor?: string | null }; error?: { code: number; message: string } };
}
const recorded = readFileSync(fixture, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Entry);
/** The recorded thread/list requests with the real app-server's answers. */
const exchanges = recorded
  .filter((entry) => entry.dir === 'send' && entry.msg.method === 'thread/list')
  .map((entry) => ({ params: entry.msg.params ?? {}, answer: recorded.find((other) => other.dir === 'recv' && other.msg.method === undefined && other.msg.id === entry.msg.id)?.msg as Entry['msg'] }));
/** Every thread the real app-server listed, by id. */
const recordedThreads = new Map(exchanges.flatMap((exchange) => exchange.answer.result?.data ?? []).map((thread) => [thread.id as string, thread]));

describe('Codex thread/list behind session/list', function () {
  this.timeout(30_000);

  describe('mapping', () => {
    it('the recorded transcript has the requests the adapter sends and what Codex answered (pages, all cwds, exec threads, a bad cursor)', () => {
      expect(exchanges.map((exchange) => Object.keys(exchange.params).sort())).to.deep.include(['cursor', 'cwd', 'limit', 'sortKey']);
      expect(exchanges.at(-1)?.answer.error).to.deep.equal({ code: -32600, message: 'invalid cursor: nope' });
      expect(recordedThreads.size).to.equal(4);
    });

    it('session/list params → thread/list params: cwd as the exact filter, the cursor passed back, a limit, newest updated first', () => {
      expect(threadListParams({}, 50)).to.deep.equal({ cursor: null, limit: 50, sortKey: 'updated_at' });
      expect(threadListParams({ cwd: '/home/user/project', cursor: '2026-11-30T13:08:03.179Z|x' }, 1)).to.deep.equal({ cursor: '2026-11-30T13:08:03.179Z|x', limit: 1, sortKey: 'updated_at', cwd: '/home/user/project' });
      expect(threadListParams({ cwd: null, cursor: null })).to.deep.equal({ cursor: null, limit: 50, sortKey: 'updated_at' });
      // Exactly what the adapter sent in the recorded transcript (its first page request).
      expect(threadListParams({ cwd: '/home/user/project' }, 1)).to.deep.equal(exchanges[0]?.params);
    });

    it('a recorded Thread → SessionInfo: the thread id, its cwd, name or preview as title, updatedAt in ISO 8601, the agent and the resume state in _meta', () => {
      const thread = exchanges[0]?.answer.result?.data?.[0] as Record<string, unknown>;
      expect(sessionInfoOfThread(thread)).to.deep.equal({
        sessionId: thread.id,
        cwd: '/home/user/project',
        title: 'second thread in project',
        updatedAt: new Date((thread.updatedAt as number) * 1000).toISOString(),
        _meta: { 'acp-warden/agent': 'codex', [RESUME_META_KEY]: { threadId: thread.id } },
      });
      expect(sessionInfoOfThread({ ...thread, name: 'Renamed' })?.title).to.equal('Renamed');
      expect(sessionInfoOfThread({ ...thread, name: null, preview: `  ${'x'.repeat(100)}\nmore` })?.title).to.equal(`${'x'.repeat(79)}…`);
      expect(sessionInfoOfThread({ ...thread, name: null, preview: '' })?.title).to.equal(null);
      expect(sessionInfoOfThread({ ...thread, updatedAt: undefined })?.updatedAt).to.equal(null);
      expect(sessionInfoOfThread({ ...thread, id: undefined })).to.equal(undefined);
    });

    it('a thread/list result → a session/list result: every thread, nextCursor only when there is one', () => {
      const paged = exchanges[0]?.answer.result as Record<string, unknown>;
      const mapped = sessionListOf(paged);
      expect(mapped.sessions).to.have.length(1);
      expect(mapped.nextCursor).to.equal(paged.nextCursor);
      const all = sessionListOf(exchanges.find((exchange) => exchange.params.cwd === undefined && exchange.params.sourceKinds === undefined && exchange.answer.result)?.answer.result);
      expect(all.sessions.map((session) => session.cwd)).to.deep.equal(['/home/user/project', '/home/user/other', '/home/user/project']);
      expect(all).to.not.have.property('nextCursor');
      expect(sessionListOf(undefined)).to.deep.equal({ sessions: [] });
    });

    it('tells Codex thread ids (UUIDs) from warden session ids', () => {
      expect(isUuid('01a22c91-cf11-7521-88cd-753c7d28b148')).to.equal(true);
      expect(isUuid('codex-V1StGXR8_Z')).to.equal(false);
      expect(isUuid(undefined)).to.equal(false);
    });
  });

  describe('the fake app-server', () => {
    let base: string;
    beforeEach(() => {
      base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-codex-list-')));
    });
    afterEach(() => rmSync(base, { recursive: true, force: true }));

    it('answers the recorded thread/list requests as Codex 0.171.0 did, given the recorded threads on disk', async () => {
      const store = join(base, 'threads.ndjson');
      for (const thread of recordedThreads.values()) {
        appendFileSync(store, `${JSON.stringify({ id: thread.id, cwd: thread.cwd, preview: thread.preview, name: thread.name, createdAt: thread.createdAt, updatedAt: thread.updatedAt, source: thread.source, originator: thread.originator })}\n`);
      }
      const child = spawn(process.execPath, [fakeCodex], { env: { ...process.env, FAKE_CODEX_FIXTURE: 'hello', FAKE_CODEX_THREADS: store }, stdio: ['pipe', 'pipe', 'inherit'] });
      const answers = new Map<number, Entry['msg']>();
      let buffer = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
          const message = JSON.parse(buffer.slice(0, newline)) as Entry['msg'];
          buffer = buffer.slice(newline + 1);
          if (message.method === undefined && typeof message.id === 'number') answers.set(message.id, message);
        }
      });
      const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
      send({ id: 100, method: 'initialize', params: { clientInfo: { name: 'acp-warden', title: 'acp-warden', version: '0.1.0' }, capabilities: null } });
      send({ method: 'initialized' });
      exchanges.forEach((exchange, index) => send({ id: index, method: 'thread/list', params: exchange.params }));
      await waitUntil(() => answers.size === exchanges.length + 1, 'the fake\'s answers');
      child.stdin.end();
      await new Promise((resolve) => child.on('exit', resolve));
      exchanges.forEach((exchange, index) => {
        const fake = answers.get(index) as Entry['msg'];
        if (exchange.answer.error) {
          expect(fake.error, JSON.stringify(exchange.params)).to.deep.equal(exchange.answer.error);
          return;
        }
        const ids = (result: Entry['msg']['result']) => (result?.data ?? []).map((thread) => thread.id);
        expect(ids(fake.result), JSON.stringify(exchange.params)).to.deep.equal(ids(exchange.answer.result));
        expect(typeof fake.result?.nextCursor, 'nextCursor').to.equal(typeof exchange.answer.result?.nextCursor);
        // The same Thread objects, but for the runtime status and the path (rebuilt from the id).
        for (const thread of fake.result?.data ?? []) {
          const real = recordedThreads.get(thread.id as string) as Record<string, unknown>;
          expect(Object.keys(thread).sort()).to.deep.equal(Object.keys(real).sort());
          expect({ ...thread, path: null }).to.deep.equal({ ...real, path: null });
        }
      });
    });
  });

  describe('the adapter agent served bare (no host)', () => {
    const started: Array<{ client: AnyActorRef; server: AnyActorRef; base: string }> = [];
    afterEach(async () => {
      for (const { client, server, base } of started.splice(0)) {
        client.stop();
        server.stop();
        const log = join(base, 'argv.log');
        const pids = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { pid: number }).pid) : [];
        for (const pid of pids) await waitUntil(() => !isAlive(pid), `fake codex ${pid} to be gone`);
        rmSync(base, { recursive: true, force: true });
      }
    });

    async function connect(extra: Record<string, string> = {}, timeoutMs?: number) {
      const base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-codex-list-')));
      const env = { FAKE_CODEX_FIXTURE: 'hello', FAKE_CODEX_THREADS: join(base, 'threads.ndjson'), FAKE_CODEX_METHOD_LOG: join(base, 'methods.log'), FAKE_CODEX_ARGV_LOG: join(base, 'argv.log'), ...extra };
      const [editorSide, agentSide] = createMemoryTransportPair();
      const definition = timeoutMs ? { ...codexAdapter, list: { ...codexAdapter.list!, timeoutMs } } : codexAdapter;
      const agent = createAdapterAgent({ definition, executable: fakeCodex, env });
      const server = createActor(agentServerLogic, { input: { transport: agentSide, agent } }).start();
      const client = createActor(agentClientLogic, { input: { transport: editorSide, handler: {} } }).start();
      started.push({ client, server, base });
      const init = await initialize(client);
      const methods = () => (existsSync(env.FAKE_CODEX_METHOD_LOG) ? readFileSync(env.FAKE_CODEX_METHOD_LOG, 'utf8').trim().split('\n') : []);
      return { client, base, init, store: env.FAKE_CODEX_THREADS, methods };
    }

    it('advertises session/list; lists the threads; session/resume of a listed id (no journal, no _meta) resumes that thread and the prompt runs in it', async () => {
      const { client, base, init, store, methods } = await connect();
      expect(init.agentCapabilities?.sessionCapabilities).to.have.all.keys('resume', 'close', 'list');
      const id = '01a22c91-0000-7000-8000-00000000000a';
      appendFileSync(store, `${JSON.stringify({ id, cwd: base, preview: 'from the CLI', createdAt: 1796044000, updatedAt: 1796044000, source: 'cli' })}\n`);
      const listed = await listSessions(client, { cwd: base });
      expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([id]);
      expect(await listSessions(client, { cwd: join(base, 'elsewhere') })).to.deep.equal({ sessions: [] });

      await resumeSession(client, { sessionId: id, cwd: base });
      const run = prompt(client, id, [{ type: 'text', text: 'go on' }]);
      for await (const _update of run.updates) {
        // drained
      }
      expect(await run.result).to.deep.equal({ stopReason: 'end_turn' });
      expect(methods().filter((line) => /^(thread\/(start|resume)|turn\/start) /u.test(line))).to.deep.equal([`thread/resume ${JSON.stringify(id)}`, `turn/start ${JSON.stringify(id)}`]);
    });

    it('an app-server that exits or hangs before answering thread/list fails the request (-32603, naming the exit), and none is left', async () => {
      const exits = await connect({ FAKE_CODEX_LIST_FAULT: 'exit' });
      const exited = await listSessions(exits.client, {}).catch((caught: unknown) => caught);
      expect(exited).to.be.instanceOf(RpcError);
      expect((exited as RpcError).code).to.equal(-32603);
      expect((exited as RpcError).message).to.contain('ended before listing its threads').and.contain('exit code 1');
      expect(((exited as RpcError).data as { stderrTail?: string }).stderrTail).to.contain('thread/list failed on purpose');

      const hangs = await connect({ FAKE_CODEX_LIST_FAULT: 'hang' }, 300);
      const hung = await listSessions(hangs.client, {}).catch((caught: unknown) => caught);
      expect(hung).to.be.instanceOf(RpcError);
      expect((hung as RpcError).message).to.contain('ended before listing its threads').and.contain('hung');
      // The listing's own deadline (300 ms here, not the default 20 s) is what ended it.
      expect(((hung as RpcError).data as { exit?: unknown }).exit).to.deep.equal({ kind: 'hung', idleMs: 300 });
      // (afterEach waits for every fake app-server to be gone)
    });

    it('a cursor Codex did not make is -32602', async () => {
      const { client } = await connect();
      const error = await listSessions(client, { cursor: 'nope' }).catch((caught: unknown) => caught);
      expect(error).to.be.instanceOf(RpcError);
      expect((error as RpcError).code).to.equal(-32602);
      expect((error as RpcError).message).to.contain('invalid cursor: nope');
    });
  });
});
