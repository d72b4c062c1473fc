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
 * - `claude` / `codex` (the embedding API, `host.newSession`, kept for issue 15's count).
 *
 * Each path runs one session, one warm-up prompt (the agent is up and initialized), then the
 * measured prompt. What is counted:
 *
 * - down: every actor that receives an event from the editor's sending of the prompt to the
 *   port's `port.write` of it (the line for the agent);
 * - up: every actor that receives an event from the first event after that write that is not
 *   the port's own (the agent's first line being read) to the editor's receipt of the turn's
 *   first `session/update`.
 *
 * The ends are not counted: the editor's connection (`connection` and its `request-*`
 * children, in the agent server that serves the editor) and the port. Everything else that
 * receives an event in the window is counted, whatever it was doing: that over-counts rather
 * than under-counts. One kind of actor is on the path without receiving an event: one that
 * relays what a child emits from a listener (`ref.on(...)`), inside the child's own step. Each
 * is counted as a relay of the actors it relays for (see `relayLogics`): the agent server
 * both ways, a native agent's ACP client and its connection both ways, the hub and an adapter
 * agent up. A lookup that sends straight to an actor's mailbox and keeps nothing of the
 * message (a `routeSession` line) is not an actor crossed.
 */
import { once } from 'node:events';
import { PassThrough, Readable, Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { WebSocket, WebSocketServer } from 'ws';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { createHost, type Host } from '../../src/index.js';
import { stdioTransport } from '../../src/jsonrpc/stdio-transport.js';
import { webSocketTransport } from '../../src/jsonrpc/websocket-transport.js';

const support = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));
const fakeClaude = { command: support('fake-claude.mjs'), env: { FAKE_CLAUDE_FIXTURE: 'hello', FAKE_CLAUDE_LOOP: '1' } };
const fakeCodex = { command: support('fake-codex.mjs'), env: { FAKE_CODEX_FIXTURE: 'hello' } };

/** The paths measured. */
export type PromptPathKind = 'stdio' | 'serve' | 'native' | 'claude' | 'codex';

/** What one prompt's path measured. */
export interface PromptPath {
  /** Actors that received an event between the editor's request and the port's write, in order of first receipt. */
  readonly down: readonly string[];
  /** Actors that received an event between the agent's first line and the editor's first update, in order of first receipt. */
  readonly up: readonly string[];
  /** Events delivered to actors over the whole turn (`xstate.*` lifecycle events excluded). */
  readonly events: number;
}

interface Delivery {
  readonly to: AnyActorRef | undefined;
  readonly type: string;
  /** A mark of the editor's: its prompt sent, its first update of the turn received. */
  readonly mark?: 'sent' | 'updated';
}

interface ActorFacts {
  readonly id: string;
  readonly parent: AnyActorRef | undefined;
  readonly logic: string | undefined;
}

/** What the measured editor does: its session, a warm-up prompt, then the measured prompt. */
interface Editor {
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

/** Records inspection events, the actors' facts, and the editor's marks. */
class Recorder {
  recording = false;
  readonly deliveries: Delivery[] = [];
  readonly actors = new Map<AnyActorRef, ActorFacts>();
  readonly observer = {
    next: (event: InspectionEvent) => {
      const ref = event.actorRef as AnyActorRef;
      if (!this.actors.has(ref)) {
        const logic = (ref as unknown as { logic?: { config?: { name?: string; id?: string }; id?: string } }).logic;
        this.actors.set(ref, { id: ref.id, parent: (ref as unknown as { _parent?: AnyActorRef })._parent, logic: logic?.config?.name ?? logic?.id });
      }
      if (!this.recording) return;
      // An actor started on the path (a request's own actor) is on it too.
      if (event.type === '@xstate.actor') this.deliveries.push({ to: ref, type: 'started' });
      else if (event.type === '@xstate.event' && !event.event.type.startsWith('xstate.')) this.deliveries.push({ to: ref, type: event.event.type });
    },
  };

  mark(mark: 'sent' | 'updated'): void {
    if (this.recording) this.deliveries.push({ to: undefined, type: mark, mark });
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
  const agent = path === 'native' ? `acp:${process.execPath} ${support('sdk-agent.mjs')}` : path === 'codex' ? 'codex' : 'claude';
  const fake = path === 'codex' ? fakeCodex : fakeClaude;
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
    await editor.prompt(sessionId, 'hello', () => recorder.mark('updated'));
    recorder.recording = false;
    return countOf(recorder, path);
  } finally {
    await editor.close();
    await host.stop();
  }
}

function countOf(recorder: Recorder, path: PromptPathKind): PromptPath {
  const { deliveries } = recorder;
  const written = deliveries.findIndex((delivery) => delivery.to?.id === 'port' && delivery.type === 'port.write');
  const read = deliveries.findIndex((delivery, index) => index > written && delivery.to !== undefined && delivery.to.id !== 'port');
  const updated = deliveries.findIndex((delivery) => delivery.mark === 'updated');
  if (written < 0 || read < 0 || updated < read) {
    throw new Error(`the ${path} prompt's path was not seen whole: ${deliveries.map((delivery) => `${delivery.to ? recorder.label(delivery.to) : delivery.mark}:${delivery.type}`).join(', ')}`);
  }
  // The editor's side (the embedding's own client, `program`) is the editor, not the path.
  const isEditor = (ref: AnyActorRef): boolean => ref.id === 'program' || (recorder.parentOf(ref) !== undefined && isEditor(recorder.parentOf(ref) as AnyActorRef));
  // The agent server that serves the editor: the parent of its handler, the first actor the prompt reaches.
  const handler = deliveries.find((delivery) => delivery.to && !isEditor(delivery.to))?.to;
  const server = handler ? recorder.parentOf(handler) : undefined;
  const isEnd = (ref: AnyActorRef) => isEditor(ref) || ref.id === 'port' || (recorder.parentOf(ref) === server && (ref.id === 'connection' || /^request-/.test(ref.id)));
  /**
   * The actors of a window, in order of first receipt; each with its relays just before it
   * (down) or after it (up): each ancestor whose logic relays that way by a listener, and, up,
   * the ACP client (and its connection) under a passthrough that received the agent's output
   * (they read the agent's lines and hand them on).
   */
  const actorsOf = (from: number, to: number, direction: 'down' | 'up'): string[] => {
    const seen: string[] = [];
    const add = (ref: AnyActorRef) => {
      if (isEnd(ref)) return;
      const label = recorder.label(ref);
      if (!seen.includes(label)) seen.push(label);
    };
    for (const delivery of deliveries.slice(from, to)) {
      const ref = delivery.to;
      if (!ref || isEnd(ref)) continue;
      const relays: AnyActorRef[] = [];
      for (let parent = recorder.parentOf(ref); parent; parent = recorder.parentOf(parent)) {
        const logic = recorder.actors.get(parent)?.logic;
        if (logic && (relayLogics[direction] as readonly string[]).includes(logic)) relays.push(parent);
      }
      if (direction === 'up' && recorder.actors.get(ref)?.logic === 'acpPassthrough') {
        for (const [actor, facts] of recorder.actors) {
          if (facts.logic !== 'acpAgentClient' || !descends(recorder, actor, ref)) continue;
          const connection = [...recorder.actors.entries()].find(([, child]) => child.parent === actor && child.id === 'connection')?.[0];
          relays.unshift(actor, ...(connection ? [connection] : []));
        }
      }
      if (direction === 'down') {
        for (const relay of relays.reverse()) add(relay);
        add(ref);
      } else {
        for (const relay of relays.filter((relay) => descends(recorder, relay, ref))) add(relay);
        add(ref);
        for (const relay of relays.filter((relay) => !descends(recorder, relay, ref))) add(relay);
      }
    }
    return seen;
  };
  return {
    down: actorsOf(0, written, 'down'),
    up: actorsOf(read, updated, 'up'),
    events: deliveries.filter((delivery) => delivery.to).length,
  };
}

/**
 * The logics that relay by a listener on a child's emitted events, each way: the agent server
 * (the editor's requests to its handler, the handler's output to the editor), a JSON-RPC
 * connection and the ACP client that owns it (a native agent's lines), the hub (its host
 * agent's output), an adapter agent (its session adapters' output). Down, an adapter agent is
 * reached through its `routeSession` line, a lookup that sends straight to the adapter.
 */
const relayLogics = {
  down: ['acpAgentServer', 'acpAgentClient', 'connection'],
  up: ['acpAgentServer', 'acpAgentClient', 'connection', 'connectionHub', 'adapterAgent'],
} as const satisfies Record<'down' | 'up', readonly string[]>;

/** Whether `ref` has `ancestor` among its parents. */
function descends(recorder: Recorder, ref: AnyActorRef, ancestor: AnyActorRef): boolean {
  for (let parent = recorder.parentOf(ref); parent; parent = recorder.parentOf(parent)) if (parent === ancestor) return true;
  return false;
}

/** The SDK's client over a stdio transport on in-process pipes, served as `warden acp` serves its stdio. */
function stdioEditor(host: Host): Editor {
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
async function webSocketEditor(host: Host): Promise<Editor> {
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
