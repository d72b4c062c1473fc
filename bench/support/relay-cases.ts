/**
 * The relay bench's cases that run in a process of their own making (bench/relay.ts, and one
 * case a process in bench/relay-isolated.ts): the flood agent, the editor that counts its
 * lines, warden's in-process relays (the agent server over the passthrough; the host with a
 * journal) and the JSON.parse + JSON.stringify baseline they are measured against.
 */
import { PassThrough, Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createActor } from 'xstate';
import { agentServerLogic } from '../../src/acp/agent-server.js';
import { createAcpPassthrough } from '../../src/adapters/acp-passthrough.js';
import { createHost, stopServers } from '../../src/runtime/host.js';
import { stdioTransport } from '../../src/jsonrpc/stdio-transport.js';
import { memberTextOf, withMemberText } from '../../src/jsonrpc/json-text.js';
import { sqliteJournal } from '../../src/journal/sqlite-journal.js';
import { entryText } from '../../src/journal/entry-text.js';
import { jsonLines, LineFramer } from '../../src/port/line-framer.js';
import { isHotSessionUpdate } from '../../src/acp/hot-update-check.js';
import { relayFloor, type FloorLayout, type FloorParts } from './relay-floor.js';
import { check, now, since, withDeadline } from './measure.js';
import { chunkUpdate } from './chunk-update.js';

export const floodAgent = fileURLToPath(new URL('./flood-agent.mjs', import.meta.url));
/** Updates per prompt (one repetition). */
export const updates = 2_000;
export const sessionId = 'sess_flood';

/** The params of update `index`, as the flood agent builds them. */
function updateParams(index: number) {
  return { sessionId, update: chunkUpdate(index) };
}
const lastMessageId = `"msg_${String(updates - 1).padStart(8, '0')}"`;

// ---------------------------------------------------------------------------------------
// The editor: counts the update lines it gets, answers nothing, matches responses by id

export class Editor {
  #pending = '';
  #decoder = new TextDecoder();
  #waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  #nextId = 1;
  count = 0;
  first = 0n;
  elapsed = 0;
  lastUpdate = '';

  /** Forgets the previous prompt's updates. */
  reset(): void {
    this.count = 0;
    this.first = 0n;
    this.elapsed = 0;
    this.lastUpdate = '';
  }

  /** Text or bytes as they come out of warden's stdout (or the SDK's stream): lines, in order. */
  push(chunk: string | Uint8Array): void {
    this.#pending += typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = this.#pending.indexOf('\n')) >= 0) {
      const line = this.#pending.slice(0, newline);
      this.#pending = this.#pending.slice(newline + 1);
      this.#line(line);
    }
  }

  #line(line: string): void {
    if (line.includes('"session/update"')) {
      this.count += 1;
      if (this.count === 1) this.first = now();
      if (this.count === updates) {
        this.elapsed = since(this.first);
        this.lastUpdate = line;
      }
      return;
    }
    const message = JSON.parse(line) as { id?: unknown; result?: unknown; error?: unknown };
    if (typeof message.id === 'number') this.#waiting.get(message.id)?.(message);
  }

  /** A request line for `send`, and the promise of its answer. */
  request(method: string, params: unknown): { line: string; answer: Promise<unknown> } {
    const id = this.#nextId++;
    const answer = new Promise<unknown>((resolve, reject) => {
      this.#waiting.set(id, (message) => {
        this.#waiting.delete(id);
        if (message.error !== undefined) reject(new Error(`${method} failed: ${JSON.stringify(message.error)}`));
        else resolve(message.result);
      });
    });
    return { line: `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`, answer };
  }

  /** Checks one prompt's worth of updates and returns ns per update. */
  perUpdate(what: string): number {
    check(this.count === updates && this.lastUpdate.includes(lastMessageId), `${what}: the editor got all ${updates} updates, the last last (got ${this.count})`);
    return this.elapsed / (updates - 1);
  }
}

/** A relay under test: one prompt (N updates) per call; ns per update. */
export interface Relay {
  prompt(): Promise<number>;
  close(): Promise<void>;
}

export const promptParams = { sessionId, prompt: [{ type: 'text', text: 'flood' }] };

// ---------------------------------------------------------------------------------------
// Warden

/**
 * The parts of warden the in-process cases put together: from src/ (run through tsx, as
 * bench/relay.ts does), or from a tsc build, the code a user runs ({@link builtWarden}).
 */
export interface WardenParts extends FloorParts {
  readonly agentServerLogic: typeof agentServerLogic;
  readonly createAcpPassthrough: typeof createAcpPassthrough;
  readonly createHost: typeof createHost;
  readonly stopServers: typeof stopServers;
  readonly stdioTransport: typeof stdioTransport;
}

/** Warden's parts from src/. */
const sourceWarden: WardenParts = { agentServerLogic, createAcpPassthrough, createHost, stopServers, stdioTransport, sqliteJournal, withMemberText, memberTextOf, entryText, LineFramer, jsonLines, isHotSessionUpdate };

/** Warden's parts from a tsc build's `dist` directory (bench/support/build-warden.ts). */
export async function builtWarden(dist: string): Promise<WardenParts> {
  const load = async <T>(path: string) => (await import(pathToFileURL(join(dist, path)).href)) as T;
  const [server, passthrough, host, stdio, text, journal, stored, framing, hot] = await Promise.all([
    load<{ agentServerLogic: typeof agentServerLogic }>('acp/agent-server.js'),
    load<{ createAcpPassthrough: typeof createAcpPassthrough }>('adapters/acp-passthrough.js'),
    load<{ createHost: typeof createHost; stopServers: typeof stopServers }>('runtime/host.js'),
    load<{ stdioTransport: typeof stdioTransport }>('jsonrpc/stdio-transport.js'),
    load<Pick<FloorParts, 'withMemberText' | 'memberTextOf'>>('jsonrpc/json-text.js'),
    load<Pick<FloorParts, 'sqliteJournal'>>('journal/sqlite-journal.js'),
    load<Pick<FloorParts, 'entryText'>>('journal/entry-text.js'),
    load<Pick<FloorParts, 'LineFramer' | 'jsonLines'>>('port/line-framer.js'),
    load<Pick<FloorParts, 'isHotSessionUpdate'>>('acp/hot-update-check.js'),
  ]);
  return {
    agentServerLogic: server.agentServerLogic,
    createAcpPassthrough: passthrough.createAcpPassthrough,
    createHost: host.createHost,
    stopServers: host.stopServers,
    stdioTransport: stdio.stdioTransport,
    sqliteJournal: journal.sqliteJournal,
    withMemberText: text.withMemberText,
    memberTextOf: text.memberTextOf,
    entryText: stored.entryText,
    LineFramer: framing.LineFramer,
    jsonLines: framing.jsonLines,
    isHotSessionUpdate: hot.isHotSessionUpdate,
  };
}

/** The editor's two streams: a PassThrough (warden's input) and a Writable that hands the editor what warden writes. */
function editorStreams(editor: Editor) {
  const input = new PassThrough();
  const output = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      editor.push(typeof chunk === 'string' ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      done();
    },
  });
  return { input, output };
}

/** Warden's editor side: `stdioTransport` over the editor's streams. */
function wardenStdio(editor: Editor, parts: WardenParts = sourceWarden) {
  const { input, output } = editorStreams(editor);
  return { input, transport: parts.stdioTransport(input, output) };
}

function floodPassthrough(parts: WardenParts = sourceWarden) {
  return parts.createAcpPassthrough({ name: 'flood', executable: process.execPath, args: [floodAgent, String(updates)] });
}

/** The editor's side of a session with warden: initialize, session/new, then one prompt per call. */
export async function wardenSession(editor: Editor, input: Writable, stop: () => Promise<void>, what: string): Promise<Relay> {
  const call = async (method: string, params: unknown) => {
    const { line, answer } = editor.request(method, params);
    input.write(line);
    return withDeadline(answer, `${what}: ${method}`);
  };
  await call('initialize', { protocolVersion: 1, clientCapabilities: {} });
  const opened = (await call('session/new', { cwd: tmpdir(), mcpServers: [] })) as { sessionId?: string };
  check(opened.sessionId === sessionId, `${what}: session opened`);
  return {
    async prompt() {
      editor.reset();
      const result = (await call('session/prompt', promptParams)) as { stopReason?: string };
      check(result.stopReason === 'end_turn', `${what}: the prompt ended`);
      return editor.perUpdate(what);
    },
    close: stop,
  };
}

/** The agent server serving the passthrough directly: no host, no journal. */
export async function wardenPassthrough(parts: WardenParts = sourceWarden): Promise<Relay> {
  const editor = new Editor();
  const { input, transport } = wardenStdio(editor, parts);
  const server = createActor(parts.agentServerLogic, { input: { transport, agent: floodPassthrough(parts), name: 'editor' } }).start();
  return wardenSession(editor, input, () => parts.stopServers([server]), 'warden passthrough');
}

/** `warden acp`'s path: the host (journal, session charts, live view tap) serving the passthrough. */
export async function wardenHost(store: string, parts: WardenParts = sourceWarden): Promise<Relay> {
  const editor = new Editor();
  const { input, transport } = wardenStdio(editor, parts);
  const host = parts.createHost({ agents: { flood: floodPassthrough(parts) }, defaultAgent: 'flood', store });
  host.serve(transport);
  const relay = await wardenSession(editor, input, () => host.stop(), `warden host (${store === ':memory:' ? 'memory' : 'file'} journal)`);
  return relay;
}

/** A floor (relay-floor.ts): the required work with no layer between its parts, on a journal file `store` laid out as `layout`. */
export async function floorRelay(layout: FloorLayout, store: string, parts: WardenParts = sourceWarden): Promise<Relay> {
  const editor = new Editor();
  const { input, output } = editorStreams(editor);
  const floor = relayFloor(parts, layout, store, process.execPath, [floodAgent, String(updates)], input, output);
  return wardenSession(editor, input, () => floor.close(), `floor (${layout})`);
}

// ---------------------------------------------------------------------------------------
// The baseline: JSON.parse + JSON.stringify of the same line

export const lines = Array.from({ length: updates }, (_, index) => JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: updateParams(index) }));

export function baseline(): number {
  let out = '';
  const start = now();
  for (const line of lines) out = JSON.stringify(JSON.parse(line));
  const elapsed = since(start);
  check(out === lines[updates - 1], 'baseline: the last line came out as it went in');
  return elapsed / updates;
}

