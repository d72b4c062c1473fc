/**
 * `session/list` of the host agent with Codex behind it: the journal's sessions, then
 * Codex's own threads (`thread/list` on a short-lived fake `codex app-server`, whose thread
 * store the tests seed with threads warden never journaled), the ones the journal maps left
 * out; `session/load` of a listed thread journals it and resumes it on Codex.
 */
import { expect } from 'chai';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoAgent } from '../../src/acp/demo-agent.js';
import { RESUME_META_KEY, type NativeAgent } from '../../src/protocol/native-agent.js';
import { createAdapterAgent } from '../../src/adapters/adapter-agent.js';
import { codexAdapter } from '../../src/adapters/codex/adapter.js';
import { AGENT_META_KEY, createHostAgent, SKIPPED_META_KEY, type HostAgentOptions } from '../../src/host/host-agent.js';
import type { Journal } from '../../src/journal/journal.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { isAlive, waitUntil } from '../support/processes.js';
import { errorOf, initialized, type Editor } from '../support/raw-editor.js';
import { nextMillisecond } from '../support/settle.js';

const fakeCodex = fileURLToPath(new URL('../support/fake-codex.mjs', import.meta.url));

interface Listed {
  sessions: Array<{ sessionId: string; cwd: string; title?: string | null; updatedAt?: string | null; _meta?: Record<string, unknown> }>;
  nextCursor?: string;
  _meta?: Record<string, unknown>;
}

/** Thread ids as Codex makes them (UUIDv7). */
const thread = (n: number) => `01a22c91-0000-7000-8000-${String(n).padStart(12, '0')}`;

describe('host agent: session/list and session/load of Codex threads warden never journaled (fake app-server)', function () {
  this.timeout(30_000);

  let base: string;
  let journal: Journal;
  let store: string;
  let methodLog: string;
  let argvLog: string;
  const editors: Editor[] = [];

  /** A Codex adapter agent on the fake app-server, its threads in `store`; `pageSize` threads per `thread/list`. */
  const codex = (pageSize = 50, executable = fakeCodex): NativeAgent =>
    createAdapterAgent({
      definition: { ...codexAdapter, list: { ...codexAdapter.list!, pageSize } },
      executable,
      env: { FAKE_CODEX_FIXTURE: 'hello', FAKE_CODEX_THREADS: store, FAKE_CODEX_METHOD_LOG: methodLog, FAKE_CODEX_ARGV_LOG: argvLog },
    });

  async function host(options: Partial<HostAgentOptions> & { pageSize?: number } = {}): Promise<Editor> {
    const { pageSize, ...rest } = options;
    const resolve = (name: string): NativeAgent => {
      if (name === 'codex') return codex(pageSize);
      if (name === 'demo') return demoAgent({ wordDelayMs: 1 });
      throw new Error(`unknown agent ${name}`);
    };
    const editor = await initialized(createHostAgent({ defaultAgent: 'codex', resolve, journal, ...rest }));
    editors.push(editor);
    return editor;
  }

  /** Threads on the fake Codex's disk that warden never started. */
  function seed(...threads: Array<{ id: string; cwd: string; preview: string; updatedAt: number; name?: string }>): void {
    for (const entry of threads) appendFileSync(store, `${JSON.stringify({ createdAt: entry.updatedAt, source: 'cli', ...entry })}\n`);
  }

  const methods = () => (existsSync(methodLog) ? readFileSync(methodLog, 'utf8').trim().split('\n') : []);
  const dir = (name: string) => {
    const path = join(base, name);
    mkdirSync(path, { recursive: true });
    return path;
  };

  /** Every page of `session/list`, following the cursors. */
  async function allPages(editor: Editor, params: Record<string, unknown> = {}): Promise<Listed[]> {
    const pages: Listed[] = [];
    let cursor: string | undefined;
    do {
      const page = (await editor.request('session/list', { ...params, ...(cursor ? { cursor } : {}) })) as Listed;
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor && pages.length < 20);
    return pages;
  }

  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-host-codex-list-')));
    journal = sqliteJournal(':memory:');
    store = join(base, 'threads.ndjson');
    methodLog = join(base, 'methods.log');
    argvLog = join(base, 'argv.log');
  });

  afterEach(async () => {
    for (const editor of editors.splice(0)) editor.server.stop();
    journal.close();
    const pids = existsSync(argvLog) ? readFileSync(argvLog, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { pid: number }).pid) : [];
    for (const pid of pids) await waitUntil(() => !isAlive(pid), `fake codex ${pid} to be gone`);
    rmSync(base, { recursive: true, force: true });
  });

  it('lists the journal\'s sessions, then the Codex threads it does not map, with the agent and the resume state in _meta', async () => {
    const project = dir('project');
    seed({ id: thread(1), cwd: project, preview: 'started by the codex CLI\nand more', updatedAt: 1796044000 });
    const editor = await host();
    // A session warden started and journaled: its thread is on Codex's disk too, after its first turn.
    const { sessionId } = (await editor.request('session/new', { cwd: project, mcpServers: [] })) as { sessionId: string };
    expect(await editor.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'say hi' }] })).to.deep.equal({ stopReason: 'end_turn' });
    const journaledThread = (journal.getSession(sessionId)?.resume as { threadId: string }).threadId;
    expect(readFileSync(store, 'utf8')).to.contain(journaledThread);

    const listed = (await editor.request('session/list', {})) as Listed;
    expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([sessionId, thread(1)]);
    expect(listed.sessions[1]).to.deep.equal({
      sessionId: thread(1),
      cwd: project,
      title: 'started by the codex CLI',
      updatedAt: new Date(1796044000 * 1000).toISOString(),
      _meta: { [AGENT_META_KEY]: 'codex', [RESUME_META_KEY]: { threadId: thread(1) } },
    });
    expect(listed).to.not.have.property('nextCursor');
    expect(listed).to.not.have.property('_meta');
    // The short-lived app-server did the handshake and one thread/list, most recently updated first.
    expect(methods().filter((line) => line.startsWith('thread/list'))).to.deep.equal(['thread/list {"cursor":null,"limit":50,"sortKey":"updated_at"}']);
  });

  it('session/load of a listed thread journals it on Codex and resumes that thread: the fake gets thread/resume of it, the next prompt runs in it, and the journal lists it from then on', async () => {
    const project = dir('project');
    seed({ id: thread(7), cwd: project, preview: 'an old conversation', updatedAt: 1796044000 });
    const editor = await host();
    const first = (await editor.request('session/list', {})) as Listed;
    expect(first.sessions.map((session) => session.sessionId)).to.deep.equal([thread(7)]);

    expect(await editor.request('session/load', { sessionId: thread(7), cwd: project, mcpServers: [] })).to.have.property('modes');
    expect(journal.getSession(thread(7))).to.deep.include({ agent: 'codex', cwd: project, resume: { threadId: thread(7) }, state: 'open' });
    expect(methods().filter((line) => line.startsWith('thread/'))).to.include(`thread/resume ${JSON.stringify(thread(7))}`);
    expect(methods().filter((line) => line.startsWith('thread/start'))).to.deep.equal([]);

    expect(await editor.request('session/prompt', { sessionId: thread(7), prompt: [{ type: 'text', text: 'go on' }] })).to.deep.equal({ stopReason: 'end_turn' });
    expect(methods().find((line) => line.startsWith('turn/start'))).to.equal(`turn/start ${JSON.stringify(thread(7))}`);

    // Listed once, from the journal now (its state and restarts in _meta), not again as a Codex thread.
    const again = (await editor.request('session/list', {})) as Listed;
    expect(again.sessions.map((session) => session.sessionId)).to.deep.equal([thread(7)]);
    expect(again.sessions[0]?._meta).to.include({ [AGENT_META_KEY]: 'codex', 'acp-warden/state': 'open' });
  });

  it('a restarted host with the listed thread\'s agent and resume state in _meta resumes it too; an id known to neither the journal nor a listing is -32002', async () => {
    const project = dir('project');
    seed({ id: thread(8), cwd: project, preview: 'listed by an earlier host', updatedAt: 1796044000 });
    const editor = await host();
    const unknown = await errorOf(editor.request('session/resume', { sessionId: thread(9), cwd: project, mcpServers: [] }));
    expect(unknown.code).to.equal(-32002);
    expect(journal.getSession(thread(9))).to.equal(undefined);
    // Not listed by this host, but the request says which agent keeps it and how to resume it.
    await editor.request('session/resume', { sessionId: thread(8), cwd: project, mcpServers: [], _meta: { [AGENT_META_KEY]: 'codex', [RESUME_META_KEY]: { threadId: thread(8) } } });
    expect(journal.getSession(thread(8))).to.deep.include({ agent: 'codex', resume: { threadId: thread(8) } });
    expect(methods()).to.include(`thread/resume ${JSON.stringify(thread(8))}`);
  });

  it('pages through the journal, then Codex, with opaque cursors: every session once, in order, and a cursor we did not make is -32602', async () => {
    const a = dir('a');
    seed(
      { id: thread(1), cwd: a, preview: 'oldest thread', updatedAt: 1796044001 },
      { id: thread(2), cwd: a, preview: 'middle thread', updatedAt: 1796044002 },
      { id: thread(3), cwd: a, preview: 'newest thread', updatedAt: 1796044003 },
    );
    const editor = await host({ listPageSize: 1, pageSize: 1 });
    const older = (await editor.request('session/new', { cwd: a, mcpServers: [], _meta: { [AGENT_META_KEY]: 'demo' } })) as { sessionId: string };
    await nextMillisecond(); // stamped later: listed first
    const newer = (await editor.request('session/new', { cwd: a, mcpServers: [], _meta: { [AGENT_META_KEY]: 'demo' } })) as { sessionId: string };

    const pages = await allPages(editor);
    const ids = pages.flatMap((page) => page.sessions.map((session) => session.sessionId));
    expect(ids).to.deep.equal([newer.sessionId, older.sessionId, thread(3), thread(2), thread(1)]);
    // Journal pages, then the journal's last page with Codex's first, then Codex's pages.
    expect(pages.map((page) => page.sessions.length)).to.deep.equal([1, 2, 1, 1]);
    expect(pages.at(-1)).to.not.have.property('nextCursor');
    for (const page of pages.slice(0, -1)) expect(page.nextCursor).to.be.a('string').and.not.contain('|');
    // Each Codex page came from its own short-lived app-server, with Codex's cursor passed back.
    const lists = methods().filter((line) => line.startsWith('thread/list')).map((line) => JSON.parse(line.slice('thread/list '.length)) as { cursor: string | null; limit: number });
    expect(lists.map((params) => params.limit)).to.deep.equal([1, 1, 1]);
    expect(lists[0]?.cursor).to.equal(null);
    expect(lists[1]?.cursor).to.be.a('string').and.contain(thread(3));

    const bad = await errorOf(editor.request('session/list', { cursor: 'not-ours' }));
    expect(bad.code).to.equal(-32602);
  });

  it('filters by cwd in both phases: the journal exactly, Codex with its exact cwd filter', async () => {
    const a = dir('a');
    const b = dir('b');
    seed({ id: thread(1), cwd: a, preview: 'in a', updatedAt: 1796044001 }, { id: thread(2), cwd: b, preview: 'in b', updatedAt: 1796044002 });
    const editor = await host();
    const inA = (await editor.request('session/new', { cwd: a, mcpServers: [], _meta: { [AGENT_META_KEY]: 'demo' } })) as { sessionId: string };
    await editor.request('session/new', { cwd: b, mcpServers: [], _meta: { [AGENT_META_KEY]: 'demo' } });
    const listed = (await editor.request('session/list', { cwd: a })) as Listed;
    expect(listed.sessions.map((session) => [session.sessionId, session.cwd])).to.deep.equal([[inA.sessionId, a], [thread(1), a]]);
    expect(methods().filter((line) => line.startsWith('thread/list'))).to.deep.equal([`thread/list {"cursor":null,"limit":50,"sortKey":"updated_at","cwd":${JSON.stringify(a)}}`]);
  });

  it('an agent that cannot list is skipped: Codex not installed, or its executable gone, leaves the journal\'s sessions listed and says why in _meta', async () => {
    const notInstalled = await initialized(createHostAgent({
      defaultAgent: 'demo',
      listAgents: ['codex'],
      journal,
      resolve: (name) => {
        if (name === 'demo') return demoAgent({ wordDelayMs: 1 });
        throw new Error(`Agent "${name}" cannot run: "codex" is not installed (not found on the PATH).`);
      },
    }));
    editors.push(notInstalled);
    const { sessionId } = (await notInstalled.request('session/new', { cwd: '/w', mcpServers: [] })) as { sessionId: string };
    const listed = (await notInstalled.request('session/list', {})) as Listed;
    expect(listed.sessions.map((session) => session.sessionId)).to.deep.equal([sessionId]);
    expect(listed._meta?.[SKIPPED_META_KEY]).to.deep.equal([{ agent: 'codex', reason: 'Agent "codex" cannot run: "codex" is not installed (not found on the PATH).' }]);

    const gone = await initialized(createHostAgent({
      defaultAgent: 'demo',
      listAgents: ['codex'],
      journal,
      resolve: (name) => (name === 'demo' ? demoAgent({ wordDelayMs: 1 }) : codex(50, join(base, 'no-such-codex'))),
    }));
    editors.push(gone);
    const second = (await gone.request('session/list', {})) as Listed;
    expect(second.sessions.map((session) => session.sessionId)).to.deep.equal([sessionId]);
    const skipped = second._meta?.[SKIPPED_META_KEY] as Array<{ agent: string; reason: string }>;
    expect(skipped.map((entry) => entry.agent)).to.deep.equal(['codex']);
    expect(skipped[0]?.reason).to.contain('could not list its sessions').and.contain('no-such-codex');
  });

  it('asks no agent that does not list: a demo-only host answers from the journal alone', async () => {
    const editor = await initialized(createHostAgent({ defaultAgent: 'demo', journal, resolve: () => demoAgent({ wordDelayMs: 1 }) }));
    editors.push(editor);
    await editor.request('session/new', { cwd: '/w', mcpServers: [] });
    const listed = (await editor.request('session/list', {})) as Listed;
    expect(listed.sessions).to.have.length(1);
    expect(listed).to.not.have.property('_meta');
    expect(methods()).to.deep.equal([]);
  });
});
