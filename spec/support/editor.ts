/**
 * An editor launching an agent the way Zed does: a command line whose first word is looked up
 * on the PATH of the environment the editor gives it (`agent_servers.*.command`, `args`,
 * `env`), in its own process group, spoken to with the official ACP SDK client
 * (`client(...).connect(ndJsonStream(...))`) over its stdio. What the launch tests
 * (spec/e2e/launch-*.spec.ts) drive `warden acp` with.
 *
 * `close()` does what an editor does when it quits: closes the agent's stdin, then SIGTERM and
 * SIGKILL to its process group when it does not exit; it always waits for the exit.
 */
import { client, methods, ndJsonStream, PROTOCOL_VERSION, type SessionNotification } from '@agentclientprotocol/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { stderrOf } from './warden-process.js';

/** What a prompt ended with, and the agent's text streamed during it (warden's notices left out). */
export interface PromptOutcome {
  readonly stopReason: string | undefined;
  readonly text: string;
  readonly error: { readonly code: number | undefined; readonly message: string; readonly data: unknown } | undefined;
}

/** A prompt in flight: `firstText` resolves at its first streamed agent text. */
export interface RunningPrompt {
  readonly outcome: Promise<PromptOutcome>;
  readonly firstText: Promise<void>;
}

/** A `session/update` as the editor received it: its kind, and its text for a text chunk. */
export interface ReceivedUpdate {
  readonly sessionUpdate: string;
  readonly text?: string;
  /** acp-warden's own notice (restarted, back, …), rendered as an agent message. */
  readonly notice: boolean;
}

/** The launched agent, with the editor's side of the connection. */
export interface EditorSession {
  readonly pid: number;
  /** Everything the agent wrote to stderr so far. */
  stderr(): string;
  /** How it exited, once it did. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  initialize(): Promise<{ agentInfo?: { name?: string; version?: string } | null; protocolVersion: number; agentCapabilities?: Record<string, unknown> }>;
  newSession(cwd: string): Promise<string>;
  prompt(sessionId: string, text: string): RunningPrompt;
  /** Every `session/update` of the session received so far, in order, warden's notices included. */
  received(sessionId: string): readonly ReceivedUpdate[];
  cancel(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link launch}. */
export interface LaunchOptions {
  /** The whole environment the editor gives the agent (PATH included): nothing else is inherited. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Per request; default 60 s (real CLIs start slowly on a busy machine). */
  readonly requestTimeoutMs?: number;
}

/** acp-warden's rendering of a notice for an editor without `session.notices` (src/acp/agent-server.ts, noticeAsText). */
const isNotice = (update: SessionNotification['update']) => Boolean((update as { _meta?: Record<string, unknown> | null })._meta?.['acp-warden/notice']);

/**
 * Spawns `command args` (the command found on `options.env.PATH`, as `execvp` does) and
 * connects the SDK client to it. Permission requests are answered with the first allow option.
 */
export function launch(command: string, args: readonly string[], options: LaunchOptions): EditorSession {
  const child: ChildProcess = spawn(command, [...args], { cwd: options.cwd, env: { ...options.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const stderr = stderrOf(child, { keep: 20_000 });
  child.stdin?.on('error', () => {}); // EPIPE once the agent is gone
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', () => resolve({ code: null, signal: null }));
  });

  // Updates per session, and who is waiting for the first text of the prompt in flight.
  const texts = new Map<string, string[]>();
  const firstTextWaiters = new Map<string, () => void>();
  const received = new Map<string, ReceivedUpdate[]>();
  const app = client({ name: 'launch-test-editor' })
    .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
      const update = params.update;
      const text = 'content' in update && update.content && !Array.isArray(update.content) && update.content.type === 'text' ? update.content.text : undefined;
      const log = received.get(params.sessionId) ?? [];
      received.set(params.sessionId, log);
      log.push({ sessionUpdate: update.sessionUpdate, ...(text === undefined ? {} : { text }), notice: isNotice(update) });
      if (update.sessionUpdate !== 'agent_message_chunk' || update.content.type !== 'text') return;
      if (isNotice(update)) return;
      texts.get(params.sessionId)?.push(update.content.text);
      firstTextWaiters.get(params.sessionId)?.();
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      const allow = params.options.find((option) => option.kind.startsWith('allow_'));
      return { outcome: allow ? { outcome: 'selected' as const, optionId: allow.optionId } : { outcome: 'cancelled' as const } };
    });
  const connection = app.connect(ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>));
  const agent = connection.agent;

  async function request<T>(method: string, params: unknown, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        (agent.request(method as never, params as never) as Promise<T>).catch((error: Error & { code?: unknown }) => {
          // A JSON-RPC error is the agent's answer; a closed connection is the agent gone: say why.
          if (typeof error.code === 'number') throw error;
          throw new Error(`${error.message} during ${what}; the agent's stderr:\n${stderr()}`);
        }),
        exited.then(({ code, signal }) => Promise.reject(new Error(`the agent exited (code ${code}, signal ${signal}) during ${what}; its stderr:\n${stderr()}`))),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer to ${what} in ${timeoutMs} ms; the agent's stderr:\n${stderr()}`)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    pid: child.pid as number,
    stderr,
    exited,
    initialize: () => request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: 'launch-test-editor', version: '1.0.0' },
    }, 'initialize'),
    async newSession(cwd) {
      const result = await request<{ sessionId: string }>(methods.agent.session.new, { cwd, mcpServers: [] }, 'session/new');
      texts.set(result.sessionId, []);
      return result.sessionId;
    },
    prompt(sessionId, text) {
      const collected: string[] = [];
      texts.set(sessionId, collected);
      const firstText = new Promise<void>((resolve) => firstTextWaiters.set(sessionId, resolve));
      const outcome = request<{ stopReason: string }>(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }, `session/prompt "${text}"`).then(
        (result) => ({ stopReason: result.stopReason, text: collected.join(''), error: undefined }),
        (error: { code?: number; message?: string; data?: unknown }) => ({ stopReason: undefined, text: collected.join(''), error: { code: error.code, message: String(error.message ?? error), data: error.data } }),
      );
      return { outcome, firstText };
    },
    received: (sessionId) => received.get(sessionId) ?? [],
    cancel: (sessionId) => agent.notify(methods.agent.session.cancel, { sessionId }),
    async close() {
      child.stdin?.end();
      const signalGroup = (signal: NodeJS.Signals) => {
        try {
          process.kill(-(child.pid as number), signal);
        } catch {
          // already gone
        }
      };
      const within = (ms: number) => Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
      if (!(await within(15_000))) {
        signalGroup('SIGTERM');
        if (!(await within(10_000))) signalGroup('SIGKILL');
      }
      await exited;
    },
  };
}
