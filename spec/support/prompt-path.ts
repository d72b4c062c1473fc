/**
 * Counts the actors one prompt crosses between the editor's JSON-RPC connection and the agent's
 * port, from the inspection stream of a real host, on the three paths an editor reaches an agent:
 *
 * - `stdio`: the SDK's client (`client(...).connect(ndJsonStream(...))`) talking to an agent
 *   server over a stdio transport on a pair of in-process pipes, served by `host.serve` as
 *   `warden acp` serves its stdin and stdout; the fake Claude Code CLI (spec/support/fake-claude.mjs).
 * - `serve`: a real WebSocket client (the `ws` package, JSON-RPC by hand) of the host's hub
 *   (`host.hub().attach` of each accepted socket, as `warden serve` does); the same fake CLI.
 * - `native`: the stdio path to a native ACP agent (`acp:` spec/support/sdk-agent.mjs) through
 *   the passthrough.
 * - `claude` / `codex`: the embedding API (`host.newSession`: the stdio path over a memory pair).
 *
 * Each path runs one session, one warm-up prompt (the agent is up and initialized), then the
 * measured prompt. The windows:
 *
 * - down: from the editor's sending of the prompt to the port's `port.write` of it (the line
 *   for the agent);
 * - up: from the port's handing on of the agent's first line after that write (`port.message`)
 *   to the editor's receipt of the turn's first `session/update`.
 *
 * An actor is on the path when, in the window, it receives an event (the inspection stream's
 * `@xstate.event`, or `@xstate.actor` for one started), emits an event that a listener takes
 * (`ref.on(...)`), or owns such a listener: a hand-off through a listener runs in the emitter's
 * step, so the inspection stream alone does not show it. A listener's owner is the module that
 * registered it (`ownerOfModule`). A function call is not a hand-off (a lookup that sends
 * straight to an actor's mailbox, a journal append). The ends are not counted: the two wires,
 * and the editor's own actors (the embedding's client). A wire is what reads and writes the
 * lines at one end, without deciding anything about the prompt: on the editor's side its
 * JSON-RPC connection (`connection` of the agent server that serves the editor, and its
 * `request-*` children); on the agent's side the port, and, for an agent that speaks JSON-RPC
 * on it (a native ACP agent), the JSON-RPC connection that frames its lines (`connection` of
 * the ACP client, its `request-*` children, and the listener its transport puts on the port,
 * registered from src/jsonrpc/): the same connection logic as the editor's, at the other end.
 * The rule is the same on every path; only the native path has a JSON-RPC connection on the
 * agent's side (Claude Code's and Codex's lines are read by their session adapter, which counts).
 * Everything else in the window counts, whatever it was doing: that over-counts rather than
 * under-counts.
 */
import { once } from 'node:events';
import { PassThrough, Readable, Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { WebSocket, WebSocketServer } from 'ws';
import { createActor, fromCallback, type AnyActorRef, type InspectionEvent } from 'xstate';
import { createHost, type Host } from '../../src/index.js';
import { stdioTransport } from '../../src/jsonrpc/stdio-transport.js';
import { webSocketTransport } from '../../src/jsonrpc/websocket-transport.js';

const support = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));
// 50 ms before each line: the host's work after the prompt's write (its journaling, answered on a
// later turn of the event loop) ends before the agent's first line, so that it is not counted as up.
const fakeClaude = { command: support('fake-claude.mjs'), env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_LOOP: '1', FAKE_CLAUDE_DELAY_MS: '50' } };
const fakeCodex = { command: support('fake-codex.mjs'), env: { FAKE_CODEX_FIXTURE: 'hello' } };

/** The paths measured. */
export type PromptPathKind = 'stdio' | 'serve' | 'native' | 'claude' | 'codex';

/** What one prompt's path measured. */
export interface PromptPath {
  /** Actors on the path from the editor's request to the port's write, in order of first sight. */
  readonly down: readonly string[];
  /** Actors on the path from the agent's first line to the editor's first update, in order of first sight. */
  readonly up: readonly string[];
  /** Events delivered to actors over the whole turn (`xstate.*` lifecycle events excluded). */
  readonly events: number;
}

type Delivery =
  /** An event delivered to `to` (or `to` started). */
  | { readonly kind: 'event'; readonly to: AnyActorRef; readonly type: string }
  /** A listener of `owner` took an event `emitter` emitted. */
  | { readonly kind: 'listener'; readonly emitter: AnyActorRef; readonly owner: string | undefined; readonly type: string }
  /** A mark of the editor's: its prompt sent, its first update of the turn received. */
  | { readonly kind: 'mark'; readonly mark: 'sent' | 'updated' };

interface ActorFacts {
  readonly id: string;
  readonly parent: AnyActorRef | undefined;
  readonly logic: string | undefined;
}

/** What the measured editor does: its session, a warm-up prompt, then the measured prompt. */
export interface Editor {
  newSession(): Promise<string>;
  prompt(sessionId: string, text: string, onFirstUpdate: () => void): Promise<unknown>;
  close(): Promise<void>;
}

/** The logic names this count tells apart (several actors are called `agent`). */
const roleOfLogic: Record<string, string> = {
  acpAgentServer: 'agent server',
  hostAgent: 'host agent',
  connectionAgent: 'connection agent',
  connectionHub: 'hub',
  acpPassthrough: 'passthrough',
  acpAgentClient: 'ACP client',
  adapterAgent: 'adapter agent',
};

/** The owner of a listener that a wire (a JSON-RPC connection's transport) registered: an end, not counted. */
const wire = 'the wire';

/**
 * Whose a listener is, by the module that registered it (the first of these on the stack).
 * A listener registered elsewhere (the host's event publishing, telemetry) hands nothing on
 * the path; what it sends to an actor shows as that actor's event.
 */
const ownerOfModule: ReadonlyArray<readonly [RegExp, string]> = [
  // A JSON-RPC transport's listener (a port's lines to its connection): the wire's, an end.
  [/\/src\/jsonrpc\//, wire],
  [/\/src\/acp\/(agent-server|server-[a-z-]+|editor-requests|request-gate|update-gate)\.ts/, 'agent server'],
  [/\/src\/acp\/agent-client\.ts/, 'ACP client'],
  [/\/src\/serve\/(connection-hub|hub-[a-z-]+)\.ts/, 'hub'],
  [/\/src\/serve\/connection-agent\.ts/, 'connection agent'],
  [/\/src\/host\/(host-agent\.ts|agent\/)/, 'host agent'],
  [/\/src\/session\//, 'session machine'],
  [/\/src\/adapters\/adapter-(agent|agent-live|session-lines|session-list)\.ts/, 'adapter agent'],
  [/\/src\/adapters\/(port-link|cli-session)\.ts/, 'session adapter'],
  [/\/src\/adapters\/passthrough\//, 'passthrough'],
];

function listenerOwner(stack: string | undefined): string | undefined {
  for (const line of (stack ?? '').split('\n').slice(2)) {
    for (const [module, owner] of ownerOfModule) if (module.test(line)) return owner;
  }
  return undefined;
}

/** Records inspection events, listener hand-offs, the actors' facts, and the editor's marks. */
class Recorder {
  recording = false;
  readonly deliveries: Delivery[] = [];
  readonly actors = new Map<AnyActorRef, ActorFacts>();
  readonly observer = {
    next: (event: InspectionEvent) => {
      const ref = event.actorRef as AnyActorRef;
      this.note(ref);
      if (!this.recording) return;
      // An actor started on the path (a request's own actor) is on it too.
      if (event.type === '@xstate.actor') this.deliveries.push({ kind: 'event', to: ref, type: 'started' });
      else if (event.type === '@xstate.event' && !event.event.type.startsWith('xstate.')) this.deliveries.push({ kind: 'event', to: ref, type: event.event.type });
    },
  };

  note(ref: AnyActorRef): void {
    if (this.actors.has(ref)) return;
    const logic = (ref as unknown as { logic?: { config?: { name?: string; id?: string }; id?: string } }).logic;
    this.actors.set(ref, { id: ref.id, parent: (ref as unknown as { _parent?: AnyActorRef })._parent, logic: logic?.config?.name ?? logic?.id });
  }

  /**
   * Wraps every listener registered from now on (`ActorRef.on`), so that each hand-off through
   * one is seen; `restore` undoes it.
   */
  watchListeners(): { restore(): void } {
    const prototype = Object.getPrototypeOf(createActor(fromCallback(() => {}))) as { on: (this: AnyActorRef, type: string, handler: (event: unknown) => void) => unknown };
    const original = prototype.on;
    const recorder = this;
    prototype.on = function (this: AnyActorRef, type: string, handler: (event: unknown) => void) {
      const owner = listenerOwner(new Error().stack);
      const emitter = this;
      return original.call(this, type, (event: unknown) => {
        if (recorder.recording) {
          recorder.note(emitter);
          recorder.deliveries.push({ kind: 'listener', emitter, owner, type: (event as { type?: string }).type ?? type });
        }
        return handler(event);
      });
    };
    return { restore: () => void (prototype.on = original) };
  }

  mark(mark: 'sent' | 'updated'): void {
    if (this.recording) this.deliveries.push({ kind: 'mark', mark });
  }

  label(ref: AnyActorRef): string {
    const facts = this.actors.get(ref);
    const role = facts?.logic ? roleOfLogic[facts.logic] : undefined;
    if (role) return role;
    const id = facts?.id ?? ref.id;
    if (/^session:/.test(id)) return 'session machine';
    if (id === 'adapter') return 'session adapter';
    if (id === 'connection') return `connection of ${facts?.parent ? this.label(facts.parent) : 'a root'}`;
    // A request's own actor is its connection's: the two are one JSON-RPC connection.
    if (/^request-/.test(id) && facts?.parent) return this.label(facts.parent);
    if (/^agent:/.test(id)) return `${id.replace(/:.*/, ':<name>')} (${facts?.logic ?? 'agent'})`;
    return id;
  }

  parentOf(ref: AnyActorRef): AnyActorRef | undefined {
    return this.actors.get(ref)?.parent;
  }
}

/** Runs `path`'s measurement (a few seconds; starts and stops one host and one agent subprocess). */
export async function measurePromptPath(path: PromptPathKind = 'stdio'): Promise<PromptPath> {
  const recorder = new Recorder();
  const listeners = recorder.watchListeners();
  const agent = path === 'native' ? `acp:${process.execPath} ${support('sdk-agent.mjs')}` : path === 'codex' ? 'codex' : 'claude';
  const fake = path === 'codex' ? fakeCodex : fakeClaude;
  try {
    const host = createHost({
      store: ':memory:',
      defaultAgent: agent,
      ...(path === 'native' ? {} : { agentOptions: { agentCommand: fake.command, env: fake.env } }),
      inspect: recorder.observer,
      permission: () => ({ outcome: 'cancelled' }),
    });
    const editor = path === 'serve' ? await webSocketEditor(host) : path === 'claude' || path === 'codex' ? embeddingEditor(host) : stdioEditor(host);
    try {
      const sessionId = await editor.newSession();
      // Codex's session/new already waited for the app-server's thread; the others warm up with a first prompt.
      if (path !== 'codex') await editor.prompt(sessionId, 'hello', () => {});
      recorder.recording = true;
      recorder.mark('sent');
      // The SDK agent answers `hello` in the same breath as its updates: its answer's path would
      // share the up window. A tool call of 50 ms puts the first update ahead of the answer alone.
      await editor.prompt(sessionId, path === 'native' ? 'tool 50' : 'hello', () => recorder.mark('updated'));
      recorder.recording = false;
      return countOf(recorder, path);
    } finally {
      await editor.close();
      await host.stop();
    }
  } finally {
    listeners.restore();
  }
}

function countOf(recorder: Recorder, path: PromptPathKind): PromptPath {
  const { deliveries } = recorder;
  const written = deliveries.findIndex((delivery) => delivery.kind === 'event' && delivery.to.id === 'port' && delivery.type === 'port.write');
  // The agent's first line: the port hands it to whoever reads it.
  const read = deliveries.findIndex((delivery, index) => index > written && delivery.kind === 'listener' && delivery.emitter.id === 'port' && delivery.type === 'port.message');
  const updated = deliveries.findIndex((delivery) => delivery.kind === 'mark' && delivery.mark === 'updated');
  const described = (delivery: Delivery) => (delivery.kind === 'event' ? `${recorder.label(delivery.to)}:${delivery.type}` : delivery.kind === 'listener' ? `${recorder.label(delivery.emitter)}→${delivery.owner}:${delivery.type}` : delivery.mark);
  if (written < 0 || read < 0 || updated < read) throw new Error(`the ${path} prompt's path was not seen whole: ${deliveries.map(described).join(', ')}`);
  // The editor's side (the embedding's own client, `program`) is the editor, not the path.
  const isEditor = (ref: AnyActorRef): boolean => ref.id === 'program' || (recorder.parentOf(ref) !== undefined && isEditor(recorder.parentOf(ref) as AnyActorRef));
  // A wire's JSON-RPC connection: the editor's (of the agent server that serves it) or the agent's (of the ACP client that speaks to its port).
  const onAWire = (ref: AnyActorRef | undefined) => ref !== undefined && ['acpAgentServer', 'acpAgentClient'].includes(recorder.actors.get(ref)?.logic ?? '');
  const isWireConnection = (ref: AnyActorRef): boolean => (ref.id === 'connection' && onAWire(recorder.parentOf(ref))) || (/^request-/.test(ref.id) && recorder.parentOf(ref) !== undefined && isWireConnection(recorder.parentOf(ref) as AnyActorRef));
  const isEnd = (ref: AnyActorRef) => isEditor(ref) || ref.id === 'port' || isWireConnection(ref);
  const actorsOf = (from: number, to: number): string[] => {
    const seen: string[] = [];
    const add = (label: string) => {
      if (!seen.includes(label)) seen.push(label);
    };
    for (const delivery of deliveries.slice(from, to)) {
      if (delivery.kind === 'event' && !isEnd(delivery.to)) add(recorder.label(delivery.to));
      if (delivery.kind === 'listener' && !isEditor(delivery.emitter) && delivery.owner) {
        if (!isEnd(delivery.emitter)) add(recorder.label(delivery.emitter));
        if (delivery.owner !== wire) add(delivery.owner);
      }
    }
    return seen;
  };
  if ((globalThis as { PROMPT_PATH_TRACE?: boolean }).PROMPT_PATH_TRACE) console.log(deliveries.map(described).join('\n'));
  return { down: actorsOf(0, written), up: actorsOf(read, updated), events: deliveries.filter((delivery) => delivery.kind === 'event').length };
}

/** The SDK's client over a stdio transport on in-process pipes, served as `warden acp` serves its stdio. */
export function stdioEditor(host: Host): Editor {
  const toHost = new PassThrough();
  const fromHost = new PassThrough();
  host.serve(stdioTransport(toHost, fromHost));
  let onUpdate: (() => void) | undefined;
  const app = client({ name: 'prompt-path-editor' })
    .onNotification(methods.client.session.update, () => {
      onUpdate?.();
      onUpdate = undefined;
    })
    .onRequest(methods.client.session.requestPermission, () => ({ outcome: { outcome: 'cancelled' as const } }));
  const agent = app.connect(ndJsonStream(Writable.toWeb(toHost) as WritableStream<Uint8Array>, Readable.toWeb(fromHost) as ReadableStream<Uint8Array>)).agent;
  const ready = agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: 'prompt-path-editor', version: '1.0.0' } });
  return {
    async newSession() {
      await ready;
      return (await agent.request(methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] })).sessionId;
    },
    prompt(sessionId, text, onFirstUpdate) {
      onUpdate = onFirstUpdate;
      return agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
    },
    async close() {
      toHost.end();
    },
  };
}

/** A real WebSocket client of the host's hub, JSON-RPC written by hand. */
export async function webSocketEditor(host: Host): Promise<Editor> {
  const hub = host.hub();
  const sockets = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  sockets.on('connection', (socket) => hub.attach(webSocketTransport(socket), { peer: 'prompt-path' }));
  await once(sockets, 'listening');
  const socket = new WebSocket(`ws://127.0.0.1:${(sockets.address() as AddressInfo).port}`);
  await once(socket, 'open');
  const answers = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  let onUpdate: (() => void) | undefined;
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; method?: string; result?: unknown; error?: unknown };
    if (message.method === 'session/update') {
      onUpdate?.();
      onUpdate = undefined;
    } else if (message.method === undefined && typeof message.id === 'number') answers.get(message.id)?.(message);
  });
  let nextId = 1;
  const request = (method: string, params: unknown) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      answers.set(id, (message) => (message.error ? reject(new Error(`${method}: ${JSON.stringify(message.error)}`)) : resolve(message.result)));
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  await request('initialize', { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  return {
    async newSession() {
      return ((await request('session/new', { cwd: process.cwd(), mcpServers: [] })) as { sessionId: string }).sessionId;
    },
    prompt(sessionId, text, onFirstUpdate) {
      onUpdate = onFirstUpdate;
      return request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
    },
    async close() {
      socket.close();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

/** The embedding API: `host.newSession` and its prompts (an in-process ACP client over a memory pair). */
function embeddingEditor(host: Host): Editor {
  let session: Awaited<ReturnType<Host['newSession']>> | undefined;
  return {
    async newSession() {
      session = await host.newSession({ cwd: process.cwd() });
      return session.sessionId;
    },
    async prompt(_sessionId, text, onFirstUpdate) {
      const run = (session as NonNullable<typeof session>).prompt(text);
      for await (const _update of run) {
        onFirstUpdate();
        onFirstUpdate = () => {};
      }
      return run.result;
    },
    async close() {},
  };
}
